"""A chapter is added by files alone: the template's chapter is written into a throwaway
copy of the layout, discovered (nothing lists it), its experiment replays a synthetic
recorded row through `lab.run`, its kernel compiles offline, and it is gone afterwards."""
from __future__ import annotations

import sys

import pytest
import yaml

import perflab.chapters
from perflab import compile_report, lab, paths, registry, scaffold, store
from perflab.errors import ConfigError
from tests.test_store import make_row


@pytest.fixture
def layout(tmp_path, monkeypatch):
    """An empty repository layout: chapters/, kernels/, results/, lib/perflab/chapters/."""
    for d in ("chapters", "kernels", "results", "lib/perflab/chapters", "tests/chapters"):
        (tmp_path / d).mkdir(parents=True)
    monkeypatch.setattr(paths, "KERNELS", tmp_path / "kernels")
    monkeypatch.setattr(paths, "RESULTS", tmp_path / "results")
    monkeypatch.setenv("PERFLAB_CACHE_DIR", str(tmp_path / "cache"))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("perflab.chapters.demo")]:
        del sys.modules[name]


def test_a_chapter_is_added_by_files_alone(layout, monkeypatch):
    written = scaffold.new_chapter(42, "demo", "A demo chapter", root=layout)
    rel = sorted(p.relative_to(layout).as_posix() for p in written)
    assert rel == sorted(["chapters/42-demo.md", "chapters/notes/42-demo.md",
                          "kernels/42-demo/scale.cu", "lib/perflab/chapters/demo/__init__.py",
                          "lib/perflab/chapters/demo/experiments.py",
                          "lib/perflab/chapters/demo/report.py",
                          "lib/perflab/chapters/demo/diagrams.py",
                          "tests/chapters/test_demo.py"])
    page = (layout / "chapters/42-demo.md").read_text()
    assert yaml.safe_load(page.split("---\n", 2)[1])["kernelspec"]["name"] == "python3"
    assert "# A demo chapter" in page and "../kernels/42-demo/scale.cu" in page
    assert scaffold.toc_line(42, "demo") == "      - file: chapters/42-demo"

    with registry.isolated():
        monkeypatch.setattr(perflab.chapters, "__path__",
                            [*perflab.chapters.__path__, str(layout / "lib/perflab/chapters")])
        exp = registry.get("demo.scale")                # found by discovery
        assert exp.chapter == "42-demo" and "42-demo" in registry.chapters()
        spec = exp.kernels()[0]
        assert spec.file == "42-demo/scale.cu"
        assert compile_report.resources(spec, "sm_90")["registers"] > 0

        # The template's experiment is one race (perflab.race): the kernel and the copy
        # of its bytes, in the same rounds.
        import inspect
        src = inspect.getsource(exp.func)
        assert "race.run(" in src and "race.copy_of(" in src
        # Its rows as `make record` would write them, replayed by the same call a page makes.
        row = make_row("scale", 3.9, file=spec.file, run_id="synthetic")
        row["metrics"].update(of_copy={"value": 0.93, "unit": "1"})
        copy = make_row("copy", 4.2, file=spec.file, run_id="synthetic")
        copy["kernels"] = []
        for r in (row, copy):
            r.update(experiment="demo.scale", chapter="42-demo", params={"n": 1 << 26})
        store.write(store.file_for("demo-gpu", "42-demo", "demo.scale"), "demo.scale",
                    "42-demo", exp.params({}), [row, copy])
        monkeypatch.setenv("PERFLAB_MODE", "replay")
        monkeypatch.setenv("PERFLAB_DEVICE", "demo-gpu")
        df = lab.run("demo.scale")
        assert list(df["TB/s"]) == [3.9, 4.2] and not df["stale"].any()
        assert list(df["of_copy"])[0] == 0.93
        # the package has the lab's shape, and its report and diagram work on those rows
        import importlib
        pkg = importlib.import_module("perflab.chapters.demo")
        roles = perflab.chapters.module_roles(pkg)
        assert set(perflab.chapters.REQUIRED) <= set(roles) and all(roles.values())
        report = importlib.import_module("perflab.chapters.demo.report")
        assert report.scale_facts(df) == {"best_tbs": 3.9, "of_copy": 93.0}
        # its page quotes exactly the facts its report gives, and its targets read them
        from perflab import book, targets
        facts = book.page_facts(report.PAGE_FACTS["42-demo"], lab.run)
        assert set(facts) == book.cited("42-demo", root=layout) | targets.keys(
            report.TARGETS["42-demo"])
        assert list(targets.table(report.TARGETS["42-demo"], facts)["met"]) == [True]
        import matplotlib
        matplotlib.use("Agg")
        fig = importlib.import_module("perflab.chapters.demo.diagrams").threads_figure()
        assert any("grey: threads past n" in ax.get_xlabel() for ax in fig.axes)
        assert lab.caption(df).startswith("recorded on Demo GPU")
    assert "demo.scale" not in registry.all_experiments()


def test_a_taken_number_or_slug_is_refused(layout):
    scaffold.new_chapter(42, "demo", "A demo chapter", root=layout)
    with pytest.raises(ConfigError, match="already taken by 42-demo.md"):
        scaffold.new_chapter(42, "other", "Another", root=layout)
    with pytest.raises(ConfigError, match="already taken"):
        scaffold.new_chapter(43, "demo", "Again", root=layout)
    with pytest.raises(ConfigError, match="lower-case letters"):
        scaffold.new_chapter(44, "Bad-Slug", "Bad", root=layout)


def test_every_chapter_has_its_files():
    """Each discovered chapter package has its page, its kernels folder (when it has
    kernels), its tests and its notes, under one chapter id; and every NN-slug page has
    a package."""
    root = paths.ROOT
    found = perflab.chapters.discover()
    for slug, pkg in found.items():
        ch = pkg.CHAPTER
        assert (root / "chapters" / f"{ch}.md").is_file(), ch
        assert (root / "chapters" / "notes" / f"{ch}.md").is_file(), ch
        assert (root / "tests" / "chapters" / f"test_{slug}.py").is_file(), ch
        files = {s.file.split("/")[0] for e in registry.all_experiments().values()
                 if e.chapter == ch for s in e.kernels()}
        # Its own kernels live in kernels/<ch>/; another chapter's, only as that chapter
        # publishes them (chapter 2 races chapter 0's copy kernel against cudaMemcpy).
        chapters = {p.CHAPTER for p in found.values()}
        assert files - {ch} <= chapters, f"{ch} launches kernels outside kernels/: {files}"
    pages = {p.stem for p in (root / "chapters").glob("[0-9][0-9]-*.md")} - {"99-execution"}
    # A package may own more than one page (PAGES, its CHAPTER first): the scan package's
    # code, kernels, results and notes serve the scan page and the run-length page.
    owned = [pg for pkg in found.values() for pg in getattr(pkg, "PAGES", (pkg.CHAPTER,))]
    assert all(getattr(pkg, "PAGES", (pkg.CHAPTER,))[0] == pkg.CHAPTER for pkg in found.values())
    assert len(owned) == len(set(owned)) and pages == set(owned)
