"""The results store: atomic writes, validation that names the file, staleness."""
from __future__ import annotations

import json
import shutil

import pytest

from perflab import paths, store
from perflab.errors import ResultsError
from perflab.kernels import source_sha256


@pytest.fixture
def tmp_lab(tmp_path, monkeypatch):
    """An empty results/ and a kernels/ with one kernel file and one header."""
    kdir = tmp_path / "kernels"
    (kdir / "demo").mkdir(parents=True)
    (kdir / "demo" / "common.cuh").write_text("#define SCALE 2.0f\n")
    (kdir / "demo" / "scale.cu").write_text(
        '#include "demo/common.cuh"\n'
        'extern "C" __global__ void scale(float* x) { x[threadIdx.x] *= SCALE; }\n')
    monkeypatch.setattr(paths, "KERNELS", kdir)
    monkeypatch.setattr(paths, "RESULTS", tmp_path / "results")
    return tmp_path


def make_row(variant="v", value=1.0, sha=None, file="demo/scale.cu", run_id="r1"):
    return {
        "experiment": "demo.exp", "chapter": "00-demo", "variant": variant,
        "params": {"n": 4}, "metrics": {"TB/s": {"value": value, "unit": "TB/s"}},
        "correct": True, "rel_err": 0.0, "launch": {},
        "kernels": [{"file": file, "name": "scale", "options": [],
                     "sha256": sha or source_sha256(file)}],
        "provenance": {"run_id": run_id, "date": "2026-11-29T00:00:00+00:00",
                       "git_commit": "abc", "device": {"name": "Demo GPU", "slug": "demo-gpu"}},
    }


def test_write_then_load_roundtrip(tmp_lab):
    path = store.file_for("demo-gpu", "00-demo", "demo.exp")
    store.write(path, "demo.exp", "00-demo", {"n": 4}, [make_row()])
    doc = store.load(path)
    assert doc["rows"][0]["metrics"]["TB/s"]["value"] == 1.0
    assert doc["params"] == {"n": 4}
    assert not list(path.parent.glob(".*")), "the temporary file must be renamed away"
    assert store.find("demo.exp", "demo-gpu") == path


def test_write_refuses_incomplete_rows(tmp_lab):
    row = make_row()
    del row["provenance"]
    with pytest.raises(ResultsError, match="lacks"):
        store.write(store.file_for("d", "c", "demo.exp"), "demo.exp", "c", {}, [row])


@pytest.mark.parametrize("damage, message", [
    (lambda p: p.write_text("{not json"), "not valid JSON"),
    (lambda p: p.write_text(json.dumps({"schema": 99, "rows": []})), "schema"),
    (lambda p: _edit(p, lambda d: d["rows"][0].pop("metrics")), "lacks"),
    (lambda p: _edit(p, lambda d: d["rows"][0]["metrics"].update(x=3)), "value/unit"),
    (lambda p: _edit(p, lambda d: d["rows"][0]["provenance"].pop("run_id")), "run_id"),
])
def test_corrupt_file_is_named(tmp_lab, damage, message):
    path = store.file_for("demo-gpu", "00-demo", "demo.exp")
    store.write(path, "demo.exp", "00-demo", {}, [make_row()])
    damage(path)
    with pytest.raises(ResultsError) as err:
        store.load(path)
    assert "results/demo-gpu/00-demo/demo.exp.json" in str(err.value) or str(path) in str(err.value)
    assert message in str(err.value)


def _edit(path, fn):
    doc = json.loads(path.read_text())
    fn(doc)
    path.write_text(json.dumps(doc))


def test_sha_covers_included_headers(tmp_lab):
    before = source_sha256("demo/scale.cu")
    (paths.KERNELS / "demo" / "common.cuh").write_text("#define SCALE 3.0f\n")
    assert source_sha256("demo/scale.cu") != before


def test_a_move_keeps_the_sha_and_an_edit_changes_it(tmp_lab):
    """The hash is of the text compiled, not of where the files sit: the chapter folder
    renamed, the header moved and the #include rewritten to match leave it unchanged."""
    before = source_sha256("demo/scale.cu")
    kdir = paths.KERNELS
    (kdir / "02-demo" / "include").mkdir(parents=True)
    (kdir / "demo" / "common.cuh").rename(kdir / "02-demo" / "include" / "common.cuh")
    (kdir / "02-demo" / "scale.cu").write_text(
        (kdir / "demo" / "scale.cu").read_text().replace('"demo/common.cuh"', '"include/common.cuh"'))
    (kdir / "demo" / "scale.cu").unlink()
    assert source_sha256("02-demo/scale.cu") == before
    (kdir / "02-demo" / "include" / "common.cuh").write_text("#define SCALE 2.5f\n")
    assert source_sha256("02-demo/scale.cu") != before


def test_compiled_text_changes_with_a_header(tmp_lab):
    """CuPy's compile cache is keyed on the text handed to NVRTC: an edited header must
    change that text, or the cubin compiled before the edit would be served."""
    from perflab.kernels import read_source

    before = read_source("demo/scale.cu")
    (paths.KERNELS / "demo" / "common.cuh").write_text("#define SCALE 3.0f\n")
    after = read_source("demo/scale.cu")
    assert before != after
    assert before.split("\n", 1)[1] == after.split("\n", 1)[1]   # the .cu itself is unchanged


def test_stale_rows_are_listed(tmp_lab):
    path = store.file_for("demo-gpu", "00-demo", "demo.exp")
    store.write(path, "demo.exp", "00-demo", {}, [make_row("fresh"), make_row("old", sha="0" * 64)])
    stale = store.all_stale()
    assert [(s[1], s[2], s[3]) for s in stale] == [("demo.exp", "old", ["demo/scale.cu"])]
    (paths.KERNELS / "demo" / "scale.cu").write_text("// edited\n")
    assert {s[2] for s in store.all_stale()} == {"fresh", "old"}


def test_missing_kernel_file_makes_a_row_stale(tmp_lab):
    row = make_row()
    row["kernels"][0]["file"] = "demo/gone.cu"
    assert store.stale_kernels(row) == ["demo/gone.cu"]


def test_a_live_experiments_row_of_a_retired_file_is_stale(tmp_lab, monkeypatch):
    """A file that left kernels/ is held against the last commit that had it only for an
    archived experiment; a live experiment's row that names it measured code the
    experiment no longer runs."""
    row = make_row()
    source = (paths.KERNELS / "demo" / "scale.cu").read_text()
    row["kernels"][0]["file"] = "demo/retired.cu"
    held = tmp_lab / "held"
    (held / "demo").mkdir(parents=True)
    (held / "demo" / "retired.cu").write_text(source)
    shutil.copy(paths.KERNELS / "demo" / "common.cuh", held / "demo" / "common.cuh")
    row["kernels"][0]["sha256"] = source_sha256("demo/retired.cu", held)
    monkeypatch.setattr(store, "retired_at", lambda f: "abc1234")
    (tmp_lab / "archived").mkdir()     # the archived code's commit, without the file
    monkeypatch.setattr(store, "kernels_at",
                        lambda c: held if c == "abc1234" else tmp_lab / "archived")
    assert store.stale_kernels(row) == ["demo/retired.cu"]
    assert store.stale_kernels(row, at="0000000") == []
    row["kernels"][0]["sha256"] = "0" * 64
    assert store.stale_kernels(row, at="0000000") == ["demo/retired.cu"]


def test_named_commit_wins_over_the_copys_git(monkeypatch):
    """A tree copied to a GPU machine may carry an older .git: the commit the caller names
    is the one recorded."""
    monkeypatch.setenv("PERFLAB_GIT_COMMIT", "0123abc")
    run = store.new_run({"name": "test"})
    assert run["git_commit"] == "0123abc" and run["git_dirty"] is None
    monkeypatch.delenv("PERFLAB_GIT_COMMIT")
    assert store.new_run({"name": "test"})["git_commit"] != "0123abc"


def test_rows_from_a_tree_with_uncommitted_changes_are_refused(tmp_lab, monkeypatch):
    row = make_row()
    row["provenance"]["git_dirty"] = True
    path = store.file_for("demo-gpu", "00-demo", "demo.exp")
    monkeypatch.delenv(store.ALLOW_UNCOMMITTED, raising=False)
    with pytest.raises(ResultsError, match="differ from commit abc.*Commit first"):
        store.write(path, "demo.exp", "00-demo", {"n": 4}, [row])
    assert not path.exists()
    monkeypatch.setenv(store.ALLOW_UNCOMMITTED, "1")
    store.write(path, "demo.exp", "00-demo", {"n": 4}, [row])
    assert store.load(path)["rows"][0]["provenance"]["git_dirty"] is True


def test_provenance_names_rows_whose_commit_does_not_hold_their_kernel(tmp_lab, monkeypatch):
    """A row must name a commit of this history whose kernels hash to the row's sha256."""
    import subprocess

    def git(*args):
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              cwd=tmp_lab, check=True, capture_output=True, text=True).stdout.strip()
    monkeypatch.setattr(store.paths, "ROOT", tmp_lab)
    git("init", "-q")
    git("add", "kernels")
    git("commit", "-qm", "kernels")
    first = git("rev-parse", "HEAD")
    good = make_row("good")
    good["provenance"]["git_commit"] = first[:7] + "+wip"     # an older row's form
    (tmp_lab / "kernels" / "demo" / "common.cuh").write_text("#define SCALE 3.0f\n")
    git("commit", "-qam", "scale 3")
    edited = make_row("edited")                                # measured after the edit ...
    edited["provenance"]["git_commit"] = first                 # ... but naming the first commit
    lost = make_row("lost")
    lost["provenance"]["git_commit"] = "0" * 40
    path = store.file_for("demo-gpu", "00-demo", "demo.exp")
    store.write(path, "demo.exp", "00-demo", {"n": 4}, [good, edited, lost])
    problems = {variant: what for _, _, variant, what in store.provenance_problems()}
    assert set(problems) == {"edited", "lost"}
    assert problems["edited"] == f"kernels/demo/scale.cu at {first} does not hash to the row's sha256"
    assert "is not in this repository's history" in problems["lost"]
