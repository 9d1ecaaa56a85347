"""The command line without a GPU: show, stale, list, unknown names, and the widget's
replay path (recorded lookup and the reason for an invalid configuration)."""
from __future__ import annotations

import pytest

from perflab import cli, store
from tests.test_store import make_row, tmp_lab  # noqa: F401  (fixture)


def test_list_names_every_chapter(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "00-machine" in out and "sgemm.ladder" in out


def test_show_prints_rows_and_caption(tmp_lab, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setenv("PERFLAB_DEVICE", "demo-gpu")
    path = store.file_for("demo-gpu", "00-machine", "ceilings.copy")
    row = make_row("kernel-vec4", 4.0)
    row["experiment"] = "ceilings.copy"
    store.write(path, "ceilings.copy", "00-machine", {}, [row])
    assert cli.main(["show", "ceilings.copy"]) == 0
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


def test_widget_gives_the_reason_for_an_invalid_configuration(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "replay")
    from perflab.sgemm import get
    from perflab.widgets import explore

    v = get("06-warptiling")
    bad = {k: v.default_params[k] for k in v.default_params}
    bad.update(WM=48, auto_shape=False)   # 48 does not divide BM=128
    res = explore("06-warptiling", bad)
    assert res["status"] == "invalid" and "06-warptiling" in res["message"]


def test_widget_looks_up_the_recorded_sweep(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "replay")
    from perflab import lab
    from perflab.sgemm import get
    from perflab.widgets import explore

    df = lab.replay("sgemm.sweep")
    v = get("06-warptiling")
    sel = df[(df["variant"] == v.name) & df["TFLOP/s"].notna()]
    sel = sel[sel["auto_shape"] == False]  # noqa: E712  (a swept, not the default, row)
    row = sel.iloc[len(sel) // 2]
    params = {k: (row[k].item() if hasattr(row[k], "item") else row[k])
              for k in v.default_params}
    params = {k: (int(x) if isinstance(x, float) else x) for k, x in params.items()}
    res = explore(v.name, params)
    assert res["status"] == "recorded"
    assert res["TFLOP/s"] == pytest.approx(row["TFLOP/s"])
