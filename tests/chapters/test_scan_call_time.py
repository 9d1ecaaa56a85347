"""Chapter 3's "What a call costs" (scan.call_time) without a GPU: the three ways
timing.interleaved times a call with `ahead`, round by round; the page's numbers from its rows (the
floor, what 4x asks); on a GPU: the experiment at a small size, every call timed and its
parts in order."""
from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest

from perflab import registry, timing
from perflab.chapters.scan import calltime, report


def test_interleaved_with_ahead_times_each_call_three_ways_round_by_round(monkeypatch):
    import cupyx.profiler

    order = []
    # a drifting clock: round r runs 1 + r/2 times slower; b's work is twice a's, its host
    # part four times
    work = {"a": 1.0, "b": 2.0}
    host = {"a": 0.5, "b": 2.0}

    def rnd():
        return (len(order) - 1) // 2

    def fake(fn, args, n_repeat, n_warmup, name):
        order.append(name)
        f = 1 + 0.5 * rnd()
        return types.SimpleNamespace(
            gpu_times=np.full((1, n_repeat), (work[name] + host[name]) * f / 1e3),
            cpu_times=np.full(n_repeat, host[name] * f / 1e3))

    def queued(fn, ahead, n):
        ahead()
        return [work[order[-1]] * (1 + 0.5 * rnd())] * n

    monkeypatch.setattr(cupyx.profiler, "benchmark", fake)
    monkeypatch.setattr(timing, "queued_ms", queued)
    aheads = []
    res = timing.interleaved({"a": (lambda: None, [()]), "b": (lambda: None, [()])}, "t",
                             rounds=3, n_repeat=4, ahead=lambda: aheads.append(1))
    assert order == ["a", "b", "b", "a", "a", "b"] and len(aheads) == 6
    assert res["a"]["round_queued_ms"] == pytest.approx([1.0, 1.5, 2.0])
    assert res["b"]["host_ms"] == pytest.approx(3.0)            # the median round's
    assert res["b"]["median_ms"] == pytest.approx(6.0)
    assert timing.ratio(res, "b", "a", "round_queued_ms")["ratio"] == pytest.approx(2.0)
    assert timing.ratio(res, "b", "a")["ratio"] == pytest.approx(4.0 / 1.5)
    assert timing.ratio(res, "b", "a", "round_host_ms")["ratio"] == pytest.approx(4.0)


def _rows(torch_call=0.2, enc=(0.078, 0.0125, 0.069), raw=(0.074, 0.007, 0.069)):
    n, runs = 1 << 25, 4_000_000
    rows = []
    parts = {"rle rounds": enc, "rle rounds, prepared launch alone": raw,
             "read ceiling": (0.041, 0.011, 0.032), "copy": (0.072, 0.007, 0.066),
             "torch.unique_consecutive": (torch_call, 0.195, 0.19), "an empty call": (0.0026, 0.0002, 0.0013)}
    for v, (c, h, q) in parts.items():
        rows.append({"variant": v, "n": n, "runs": runs, "call_ms": c, "host_ms": h,
                     "queued_ms": q, "lead_ms": c - q,
                     "x_torch": torch_call / c if v != "torch.unique_consecutive" else np.nan,
                     "x_torch_min": np.nan, "x_torch_max": np.nan, "x_torch_queued": np.nan,
                     "kernels_ms": 0.1 if v == "torch.unique_consecutive" else np.nan,
                     "correct": True if v in ("rle rounds", "torch.unique_consecutive") else None})
    return pd.DataFrame(rows)


def test_the_floor_and_what_4x_asks_come_from_the_rows():
    s = report.call_time_summary(_rows())
    assert s["ct_ok"] and s["ct_torch_ok"] and s["ct_n_log2"] == 25
    copy_rate = 8 * (1 << 25) / 66e-6
    assert s["ct_write_us"] == pytest.approx(8 * 4e6 / copy_rate * 1e6)
    assert s["ct_floor_queued_us"] == pytest.approx(32 + s["ct_write_us"])
    assert s["ct_floor_call_us"] == pytest.approx(s["ct_floor_queued_us"] + 5)   # raw lead
    assert s["ct_need_call_us"] == pytest.approx(50)
    assert s["ct_need_queued_us"] == pytest.approx(50 - 9)
    assert s["ct_need_queued_lean_us"] == pytest.approx(50 - 5)
    assert s["ct_python_us"] == pytest.approx(4)
    over = 69 - s["ct_floor_queued_us"]
    assert s["ct_enc_over_floor_us"] == pytest.approx(over)
    assert s["ct_overhead_cut_pct"] == pytest.approx(100 * (1 - (41 - s["ct_floor_queued_us"]) / over))
    assert s["ct_torch_kernels_pct"] == pytest.approx(50)
    t = report.targets_call_time(s)
    assert not t["met"].iloc[0] and t["measured"].iloc[0].startswith("2.56")


def test_4x_is_met_only_when_the_call_is_4x_and_right():
    rows = _rows(torch_call=0.4)
    assert report.targets_call_time(report.call_time_summary(rows))["met"].iloc[0]
    rows.loc[rows.variant == "rle rounds", "correct"] = False
    assert not report.targets_call_time(report.call_time_summary(rows))["met"].iloc[0]


def test_the_table_keeps_the_page_order():
    t = report.call_time_table(_rows())
    assert list(t["call"]) == [label for _, label in report.CALL_TIME_NAMED.values()]
    assert t["lead_us"].iloc[0] == pytest.approx(9)


def test_the_experiment_names_its_kernels():
    e = registry.get("scan.call_time")
    assert {s.file for s in e.kernels()} == {"03-scan/20_rle_rounds.cu", "00-machine/read.cu",
                                             "00-machine/spin.cu"}
    assert calltime.CALLS[0] == "rle rounds" and len(calltime.CALLS) == len(report.CALL_TIME_NAMED)


# -- on a GPU -----------------------------------------------------------------------------
@pytest.mark.gpu
def test_call_time_at_a_small_size(monkeypatch):
    from perflab import device, store
    monkeypatch.setenv("PERFLAB_MODE", "live")
    exp = registry.get("scan.call_time")
    rows = registry.execute(exp, exp.small, store.new_run(device.current().as_dict()))
    by = {r["variant"]: r for r in rows}
    assert by["rle rounds"]["correct"] is True
    for v in ("rle rounds", "rle rounds, prepared launch alone", "read ceiling", "copy",
              "an empty call"):
        m = {k: d["value"] for k, d in by[v]["metrics"].items()}
        assert 0 < m["queued_ms"] <= m["call_ms"] + 0.005 and 0 < m["host_ms"], v
        assert len(by[v]["rounds"]["round_ms"]) == exp.small["rounds"]


@pytest.mark.gpu
def test_the_spin_holds_the_stream(monkeypatch):
    import cupy as cp
    monkeypatch.setenv("PERFLAB_MODE", "live")
    wait = calltime.ahead(200_000)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    wait()
    stop.record()
    stop.synchronize()
    assert cp.cuda.get_elapsed_time(start, stop) >= 0.19


def test_the_figure_draws_each_call_and_the_4x_line():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    report.call_time_figure(ax, _rows())
    assert [t.get_text() for t in ax.get_yticklabels()][-1] == "floor of an encoder"
    assert ax.lines[0].get_xdata()[0] == pytest.approx(50)          # 4 x the 200 us call
    plt.close(fig)
