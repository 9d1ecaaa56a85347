"""Replay: the same `run` call returns recorded rows without a GPU, refuses stale rows in
CI, names what to re-record, and rejects unknown experiments and parameters."""
from __future__ import annotations

import pytest

import perflab
from perflab import lab, registry, store
from perflab.errors import NoGPUError, ResultsError, UnknownExperimentError
from tests.test_store import make_row, tmp_lab  # noqa: F401  (fixture)


@pytest.fixture
def demo_exp(monkeypatch, tmp_lab):  # noqa: F811
    monkeypatch.setenv("PERFLAB_MODE", "replay")
    monkeypatch.setenv("PERFLAB_DEVICE", "demo-gpu")
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("PERFLAB_STRICT", raising=False)
    with registry.isolated():
        @registry.experiment("demo.exp", chapter="00-demo")
        def demo(ctx, n=4, sizes=(1, 2)):
            raise AssertionError("a replay must not execute the experiment")

        path = store.file_for("demo-gpu", "00-demo", "demo.exp")
        store.write(path, "demo.exp", "00-demo", {"n": 4, "sizes": [1, 2]},
                    [make_row("a", 1.5), make_row("b", 2.5)])
        yield path


def test_replay_returns_the_rows_with_provenance(demo_exp):
    df = perflab.run("demo.exp")
    assert list(df["variant"]) == ["a", "b"]
    assert list(df["TB/s"]) == [1.5, 2.5]
    assert df.attrs["units"]["TB/s"] == "TB/s"
    assert not df["stale"].any()
    cap = perflab.caption(df)
    assert cap.startswith("recorded on Demo GPU · 2026-11-29 · commit abc")


def test_replay_with_the_recorded_params(demo_exp):
    assert len(perflab.run("demo.exp", n=4, sizes=(1, 2))) == 2


def test_replay_with_other_params_says_what_differs(demo_exp):
    with pytest.raises(ResultsError, match=r"n=4 \(asked 8\).*perflab record --chapter 00-demo"):
        perflab.run("demo.exp", n=8)


def test_unknown_parameter(demo_exp):
    with pytest.raises(TypeError, match="takes"):
        perflab.run("demo.exp", bogus=1)


def test_unknown_experiment_lists_known_ones(demo_exp):
    with pytest.raises(UnknownExperimentError, match="demo.exp"):
        perflab.run("no.such")


def test_stale_rows_warn_locally_and_fail_in_ci(demo_exp, monkeypatch):
    (store.paths.KERNELS / "demo" / "scale.cu").write_text("// changed\n")
    with pytest.warns(UserWarning, match="kernels/demo/scale.cu"):
        df = perflab.run("demo.exp")
    assert df["stale"].all() and "STALE" in perflab.caption(df)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(ResultsError, match="re-record them on a GPU"):
        perflab.run("demo.exp")


def test_missing_recording_names_the_command(demo_exp, monkeypatch):
    monkeypatch.setenv("PERFLAB_DEVICE", "other-gpu")
    with pytest.raises(ResultsError, match="perflab record --chapter 00-demo"):
        perflab.run("demo.exp")


def test_live_without_gpu_is_an_error(demo_exp, monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")
    from perflab import device
    monkeypatch.setattr(device, "probe", lambda: (None, "no driver (test)"))
    with pytest.raises(NoGPUError, match="no driver"):
        perflab.run("demo.exp")


def test_caption_live():
    df = lab.frame([make_row(sha="0" * 64)], source="live")
    assert lab.caption(df).startswith("measured live on Demo GPU")
