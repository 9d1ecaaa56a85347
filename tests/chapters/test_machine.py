"""The machine chapter (perflab.chapters.machine) without a GPU: the ceilings other chapters read,
from rows, and the closed form its FMA check uses."""
from __future__ import annotations

import pandas as pd
import pytest

from perflab.chapters import machine
from perflab.chapters.machine.experiments import fma_reference


def test_ceilings_from_rows():
    copy = pd.DataFrame({"TB/s": [3.9, 4.1]})
    copy.attrs["source"] = {"kind": "recorded", "device": "X", "date": "d", "commit": "c",
                            "run_ids": ["r"]}
    fma = pd.DataFrame({"TFLOP/s": [30.0, 61.0]})
    ten = pd.DataFrame({"variant": ["mma.sync acc=8", "cuBLAS TF32", "cuBLAS FP32"],
                        "TFLOP/s": [310.0, 400.0, 50.0]})
    c = machine.ceilings_from(copy, fma, ten)
    assert c.bandwidth_Bps == pytest.approx(4.1e12)
    assert c.peaks_flops == pytest.approx({"FP32 FMA": 61e12, "TF32 mma.sync": 310e12,
                                           "TF32 cuBLAS": 400e12})


def test_ceilings_of_the_recorded_run(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "replay")
    c = machine.ceilings()
    assert 3e12 < c.bandwidth_Bps < 6e12
    assert set(c.peaks_flops) == {"FP32 FMA", "TF32 mma.sync", "TF32 cuBLAS", "TF32 wgmma"}
    # on the H200 (Hopper): cuBLAS TF32 above the mma.sync ceiling, below the wgmma one
    p = c.peaks_flops
    assert p["FP32 FMA"] < p["TF32 mma.sync"] < p["TF32 cuBLAS"] < p["TF32 wgmma"]
    assert c.source.startswith("recorded on NVIDIA H200")


def testfma_reference_is_the_iterated_map():
    x, y, z, steps = 0.125, 0.5, 0.5, 37
    for _ in range(steps):
        x = x * y + z
    assert fma_reference(1, steps, y, z) == pytest.approx(x, rel=1e-15)


# ---- the latency × parallelism diagram ---------------------------------------------------

def _texts_ok(fig):
    """Every text of a figure at 9 pt or more, and the figure no wider than 7.5 in."""
    sizes = [t.get_fontsize() for ax in fig.axes for t in ax.texts]
    sizes += [t.get_fontsize() for ax in fig.axes if ax.get_legend()
              for t in ax.get_legend().get_texts()]
    return min(sizes) >= 9 and fig.get_size_inches()[0] <= 7.5


@pytest.mark.parametrize("chains,latency", [(1, 4), (2, 4), (4, 4), (8, 4), (3, 5)])
def test_schedule_issues_min_of_chains_and_latency_per_latency(chains, latency):
    from perflab.chapters.machine.diagrams import schedule
    s = schedule(chains, latency, 4 * latency)
    issued = [(c, j, k) for c, j, k in s if j is not None]
    assert len(issued) == 4 * min(chains, latency)
    last = {}
    for c, j, _ in issued:                      # a chain's next FFMA waits for its result
        assert c - last.get(j, -latency) >= latency
        last[j] = c


def test_latency_of_the_recorded_run_and_its_diagram(monkeypatch):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import perflab as lab
    from perflab import plots
    from perflab.chapters.machine import diagrams

    monkeypatch.setenv("PERFLAB_MODE", "replay")
    fma = lab.run("machine.fma")
    dev = plots.device_of(fma)
    m = diagrams.latency_from_rows(fma, dev)
    assert 3.5 < m["cycles_per_dependent"] < 6 and m["L"] == round(m["cycles_per_dependent"])
    assert m["issue_rate"] == 1                 # 128 lanes / 4 schedulers / 32 = 1 warp-FFMA
    fig = diagrams.draw_pipeline(fma, dev)
    ax = fig.axes[0]
    L = m["L"]
    assert ax.rows == [1, 2, L]
    assert len(ax.cells) == 3 * 4 * L
    for k in ax.rows:                           # row k issues min(k, L) FFMAs every L cycles
        assert sum(j is not None for kk, _, j in ax.cells if kk == k) == 4 * min(k, L)
    shown = [t.get_text() for t in ax.texts]
    assert f"{100 * m['frac_of_best'][1]:.0f} %" in shown and "1/4" in shown
    assert _texts_ok(fig)
    plt.close(fig)


def test_targets_of_the_recorded_run(monkeypatch):
    import perflab as lab
    from perflab import book, targets
    from perflab.chapters.machine import report

    monkeypatch.setenv("PERFLAB_MODE", "replay")
    fma = lab.run("machine.fma")
    facts = book.page_facts(report.PAGE_FACTS["00-machine"], lab.run)
    t = targets.table(report.TARGETS["00-machine"], facts)
    assert len(t) == 4 and t["met"].all()
    assert report.run_label(fma).startswith("recorded run ")


def test_a_ceiling_is_timed_alone_and_its_rate_derived_by_the_race(monkeypatch):
    """machine's ceilings without a GPU: one entry checked, timed alone (ctx.time) under
    the context's budget (the NVTX name the old timing had, the row's variant its own), its
    TFLOP/s derived by the race from the declared FLOPs, then the datasheet's fraction and
    the clock read right after; a failed check gets neither time nor fraction."""
    from perflab import race
    from perflab.chapters.machine import experiments as ex
    from perflab.correctness import Check
    from perflab.registry import Context, get

    monkeypatch.setattr(race, "checked", lambda fn, what: fn())
    monkeypatch.setattr(ex, "fp32_peak_flops", lambda dev: 4e12)
    monkeypatch.setattr(ex, "clocks_now", lambda: {"sm_clock_mhz": 1980.0})
    ctx = Context(get("machine.fma"), {"run_id": "t"}, timing=True)

    def time(fn, sets, name, budget_s=None):
        ctx.asked = (name, budget_s)
        return {"median_ms": 2.0, "p20_ms": 2.0, "p80_ms": 2.0, "min_ms": 2.0, "n_timed": 40}
    ctx.time = time
    dev = type("Dev", (), {"as_dict": lambda self: {}})()

    def entry(ok):
        return race.Entry("chains4-full", lambda: None, check=lambda: Check(ok, 0.0, 1e-4, 0),
                          variant="chains=4", params={"chains": 4}, flops=4e9,
                          launch={"grid": 132, "block": 256, "blocks_per_sm": 8},
                          derived=lambda m: ex.of_datasheet(m, dev))
    r = ex.alone(ctx, entry(True))
    assert ctx.asked == ("chains4-full", None) and r["variant"] == "chains=4"
    m = {k: v["value"] for k, v in r["metrics"].items()}
    assert m["flops"] == 4e9 and m["TFLOP/s"] == pytest.approx(2.0)
    assert m["frac_of_datasheet"] == pytest.approx(0.5) and m["datasheet_TFLOP/s"] == 4.0
    assert m["sm_clock_after_mhz"] == 1980.0 and r["launch"]["blocks_per_sm"] == 8
    bad = ex.alone(ctx, entry(False))["metrics"]
    assert set(bad) == {"flops"}
