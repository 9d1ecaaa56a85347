"""The command line without a GPU: show, stale, list, unknown names."""
from __future__ import annotations

from perflab import cli, store
from tests.test_store import make_row, tmp_lab  # noqa: F401  (fixture)


def test_list_names_every_chapter(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "00-machine" in out and "sgemm.ladder" in out


def test_show_prints_rows_and_caption(tmp_lab, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setenv("PERFLAB_DEVICE", "demo-gpu")
    path = store.file_for("demo-gpu", "00-machine", "machine.copy")
    row = make_row("kernel-vec4", 4.0)
    row["experiment"] = "machine.copy"
    store.write(path, "machine.copy", "00-machine", {}, [row])
    assert cli.main(["show", "machine.copy"]) == 0
    out = capsys.readouterr().out
    assert "recorded on Demo GPU" in out and "kernel-vec4" in out


def test_show_unknown_experiment_lists_known(capsys):
    assert cli.main(["show", "no.such"]) == 2
    assert "known experiments" in capsys.readouterr().err


def test_stale_exit_status(tmp_lab, capsys):  # noqa: F811
    path = store.file_for("demo-gpu", "00-machine", "demo.exp")
    store.write(path, "demo.exp", "00-machine", {}, [make_row()])
    assert cli.main(["stale"]) == 0
    (store.paths.KERNELS / "demo" / "scale.cu").write_text("// changed\n")
    assert cli.main(["stale"]) == 1
    out = capsys.readouterr().out
    assert "STALE" in out and "python -m perflab record --chapter 00-machine" in out


def test_compile_report_takes_its_own_options(capsys):
    assert cli.main(["compile-report", "--arch", "sm_90", "--kernel", "copy_vec4"]) == 0
    out = capsys.readouterr().out
    assert "copy_vec4" in out and "sm_90" in out and "sm_89" not in out
