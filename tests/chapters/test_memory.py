"""The memory chapter (perflab.chapters.memory) without a GPU: the models the chapter predicts
with (conflict degree, chain layout and the walk the host expects), bad input, every
kernel compiled offline with the load operator it names; and on a GPU the correctness
pass."""
from __future__ import annotations

import math

import numpy as np
import pytest

from perflab import registry
from perflab.chapters.memory import experiments as ex
from perflab.chapters.memory import latency
from perflab.errors import ConfigError


def test_experiments_are_registered_under_the_chapter():
    exps = {n: e for n, e in registry.all_experiments().items() if n.startswith("memory.")}
    assert {"memory.latency", "memory.operators", "memory.banks", "memory.coalescing",
            "memory.inflight", "memory.stride_chase", "memory.profile"} <= set(exps)
    assert all(e.chapter == "02-memory" for e in exps.values())


@pytest.mark.parametrize("stride", range(1, 33))
def test_conflict_degree_is_gcd_without_padding(stride):
    assert ex.conflict_degree(stride, pad=False) == math.gcd(stride, 32)


def test_padding_removes_the_power_of_two_conflicts_and_costs_elsewhere():
    """One pad word per 32 fixes the column walk it is made for (power-of-two strides) and
    makes every other stride but 1 two-way; stride 31 lands all lanes but 0 in bank 31."""
    assert all(ex.conflict_degree(1 << k, pad=True) == 1 for k in range(6))
    others = [s for s in range(3, 31) if s & (s - 1)]
    assert all(ex.conflict_degree(s, pad=True) == 2 for s in others)
    assert ex.conflict_degree(31, pad=True) == 31


def test_slots_cover_the_working_set_one_line_each_then_spread():
    assert latency.slots_for(4096) == (32, 128)
    m, slot = latency.slots_for(8 << 30)
    assert m == latency.MAX_SLOTS and m * slot == 8 << 30
    assert latency.slots_for(1 << 20, stride=8) == (1 << 17, 8)


@pytest.mark.parametrize("bad", [(64, None), (4100, None), (1 << 20, 4), (1 << 20, 12),
                                 (1 << 20, 0), (1 << 20, 1 << 20), (3 << 20, 1 << 21)])
def test_bad_chains_are_refused(bad):
    with pytest.raises(ConfigError):
        latency.slots_for(*bad)


def test_unknown_operator_is_refused():
    with pytest.raises(ConfigError, match="load operator"):
        latency.chase_spec("lu2")


def test_the_walk_the_host_expects():
    """Addresses are base + 8 · index (base 0 here); the sum covers warm and timed steps."""
    order = np.array([0, 96, 32, 64])          # element indices of a 4-slot cycle
    ch = latency.Chain(None, order, 1024, 128, "random")
    # 7 steps from order[0]: 96, 32, 64, 0, 96, 32, 64
    assert ch.expect(4, 3) == (8 * 64, 8 * (96 + 32 + 64 + 0 + 96 + 32 + 64))
    strided = latency.Chain(None, None, 1024, 256, "strided", slots=4)   # 0, 32, 64, 96
    assert strided.start == 0
    assert strided.expect(1, 4) == (8 * 32, 8 * (32 + 64 + 96 + 0 + 32))


def test_a_random_cycle_is_walked_in_full_first():
    ch = latency.Chain(None, np.arange(1 << 20), 8 << 30, 8192, "random")
    assert latency.warm_steps(ch) == 1 << 20
    huge = latency.Chain(None, None, 4 << 30, 8, "strided", slots=1 << 29)
    assert latency.warm_steps(huge) == 256


def test_staircase_sizes_are_sorted_by_level_and_cover_past_l2():
    s = ex.staircase_sizes()
    assert s[0] == 2048 and max(s) == 8 << 30
    assert len(set(s)) == len(s)
    assert sum(8 << 20 <= x < 128 << 20 for x in s) >= 16     # dense where the L2 ends


def test_operators_compile_to_distinct_sass_loads():
    """The five operators are five different loads in sm_90 SASS (offline NVRTC)."""
    from perflab import compile_report as cr
    loads = {}
    for op in latency.OPS:
        sass = cr.sass(latency.chase_spec(op), "sm_90")
        loads[op] = sorted(set(__import__("re").findall(r"\bLDG\.E[A-Z0-9.]*", sass)))
    assert loads["plain"] == ["LDG.E.64"]
    assert loads["cg"] == ["LDG.E.64.STRONG.GPU"]
    assert loads["nc"] == ["LDG.E.64.CONSTANT"]
    assert len({tuple(v) for v in loads.values()}) == 5


@pytest.mark.parametrize("k", ex.STREAM_K)
@pytest.mark.parametrize("blocked", [False, True])
def test_stream_copy_keeps_exactly_k_loads_ahead_of_its_stores(k, blocked):
    """The bytes-in-flight axis counts K loads per thread: the main loop's SASS must issue
    exactly K 16-byte loads before its first store (no fewer: the compiler interleaving
    stores; no more: the compiler unrolling the loop and hoisting the next trip's loads)."""
    import re
    from perflab import compile_report as cr
    sass = cr.sass(ex.stream_spec(k, blocked), "sm_90")
    ops = "".join("L" if o.startswith("LDG") else "S"
                  for o in re.findall(r"\b(LDG\.E\.128|STG\.E\.128)", sass))
    assert ops.startswith("L" * k + "S")
    assert max(len(run) for run in re.findall("L+", ops)) == k


def test_inflight_launch_makes_the_warps_asked_for():
    for w in ex.WARPS_PER_SM:
        threads, per_sm = ex.inflight_launch(w)
        assert threads * per_sm == 32 * w and threads <= 1024


@pytest.mark.gpu
def test_every_kernel_passes_its_check(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")
    from perflab import lab
    rows = lab.check_all(chapter="02-memory")
    # rows without a check (the clocks the latency run reads) carry correct = None
    bad = [(r["experiment"], r["variant"], r["params"]) for r in rows if r["correct"] is False]
    assert not bad
    assert sum(r["correct"] is True for r in rows) >= 20


def test_a_race_checks_every_copy_before_timing_and_times_none_that_fails(monkeypatch):
    """The copy race without a GPU (NumPy buffers, timing off): a copy that writes the
    source passes, one that misses an element fails, and neither gets a time."""
    from perflab import race
    from perflab.registry import Context, get

    monkeypatch.setattr(race, "checked", lambda fn, what: fn())     # no device to sync

    src = np.random.default_rng().random(1000).astype(np.float32)
    dst = np.empty_like(src)

    def good():
        dst[:] = src

    def short():
        dst[:-1] = src[:-1]

    ctx = Context(get("memory.coalescing"), {"run_id": "t"}, timing=False)
    ex.race(ctx, {"cudaMemcpy": good, "cupy copyto": good, "short": short}, src, dst,
             lambda k: {"part": "t"}, lambda k: [], lambda k: {}, budget_s=1.0)
    rows = {r["variant"]: r for r in ctx.rows}
    assert rows["cudaMemcpy"]["correct"] and not rows["short"]["correct"]
    assert all("median_ms" not in r["metrics"] for r in rows.values())
    assert rows["short"]["metrics"]["bytes_moved"]["value"] == 2 * src.nbytes


def test_a_copy_race_keeps_its_rows(monkeypatch):
    """The copy race timed (a fake interleaved timing): the library copies are the
    baseline, the faster of them named in every row; a kernel's of_copy is taken round by
    round against it; chapter 0's copy kernel is a contestant; the launch records are the
    ones declared, the rounds the context's own."""
    from perflab import race
    from perflab.registry import Context, get

    monkeypatch.setattr(race, "checked", lambda fn, what: fn())
    src = np.arange(1000, dtype=np.float32)
    dst = np.empty_like(src)
    times = {"cudaMemcpy": [1.0, 1.0, 1.0], "cupy copyto": [1.2, 0.9, 1.2],
             "blocked K=4": [2.0, 1.0, 1.25], "chapter 0 copy_vec4": [1.0, 2.0, 1.0]}
    ctx = Context(get("memory.coalescing"), {"run_id": "t"}, timing=True, rounds=3)

    def time_interleaved(calls, budget_s=None, rounds=None):
        ctx.asked = (list(calls), budget_s, rounds)
        return {k: {"median_ms": float(np.median(times[k])), "p20_ms": 1.0, "p80_ms": 2.0,
                    "min_ms": 1.0, "n_timed": 60, "round_ms": times[k]} for k in calls}
    ctx.time_interleaved = time_interleaved

    def copy():
        dst[:] = src
    rows = ex.race(ctx, {k: copy for k in times}, src, dst, lambda k: {"part": "stream"},
                   lambda k: [], lambda k: {"grid": 8} if k == "blocked K=4" else {},
                   budget_s=6.0)
    assert ctx.asked == (list(times), 6.0, None)
    m = {k: v["value"] for k, v in rows["blocked K=4"]["metrics"].items()}
    r = rows["blocked K=4"]
    assert r["baseline"] == "cudaMemcpy" and r["launch"] == {"grid": 8}
    assert (m["of_copy"], m["of_copy_min"], m["of_copy_max"]) == pytest.approx((0.8, 0.5, 1.0))
    assert m["TB/s"] == pytest.approx(2 * src.nbytes / 1.25e-3 / 1e12) and m["rounds"] == 3
    assert m["bytes_moved"] == 2 * src.nbytes
    assert rows["cupy copyto"]["metrics"]["of_copy"]["value"] == pytest.approx(1 / 1.2)
    assert "of_copy" in rows["chapter 0 copy_vec4"]["metrics"]
    assert rows["cudaMemcpy"]["metrics"]["of_copy"]["value"] == 1.0   # the baseline itself


# ---- the diagrams and the annotated staircase -------------------------------------------

def _texts_ok(fig):
    """Every text of a figure at 9 pt or more, and the figure no wider than 7.5 in."""
    sizes = [t.get_fontsize() for ax in fig.axes for t in ax.texts]
    sizes += [t.get_fontsize() for ax in fig.axes if ax.get_legend()
              for t in ax.get_legend().get_texts()]
    return min(sizes) >= 9 and fig.get_size_inches()[0] <= 7.5


@pytest.mark.parametrize("stride", [1, 2, 3, 4, 8, 16, 32])
def test_sectors_follow_the_address_formula(stride):
    from perflab.chapters.memory import diagrams as d
    # 32 lanes × 4 bytes: 4·stride bytes apart, so min(32, 4·stride) sectors of 32 bytes
    assert len(d.sectors(stride)) == min(32, 4 * stride)
    assert len(d.lines(stride)) == min(32, stride)
    assert d.addresses(stride)[31] == 4 * stride * 31


def test_the_sector_model_is_the_recorded_prediction_and_the_profilers_count(monkeypatch):
    """The diagram's formula gives the stride sweep's recorded prediction (fetched per
    useful byte) and the profiler's sectors per request at every recorded stride."""
    import perflab as lab
    from perflab.chapters.memory import diagrams as d
    from perflab.chapters.memory import report

    monkeypatch.setenv("PERFLAB_MODE", "replay")
    coal, prof = lab.run("memory.coalescing"), lab.run("memory.profile")
    sd = report.strided_table(coal, prof)
    for _, r in sd.iterrows():
        assert d.copy_fetch_per_useful(int(r["stride"])) == pytest.approx(r["predicted_fetch_per_useful"])
        assert len(d.sectors(int(r["stride"]))) == r["gld_sectors_per_request"]


def test_coalescing_diagram_draws_the_computed_sectors():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from perflab.chapters.memory import diagrams as d

    fig = d.draw_coalescing((1, 2, 4, 8), {1: 4.0, 2: 8.0})
    ax = fig.axes[0]
    assert ax.sectors_drawn == {1: 4, 2: 8, 4: 16, 8: 32}
    shown = [t.get_text() for t in ax.texts]
    assert "4 (4)" in shown and "16" in shown and "8×" in shown
    assert _texts_ok(fig)
    plt.close(fig)


def test_staircase_is_annotated_with_the_hierarchy(monkeypatch):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import perflab as lab
    from perflab import plots
    from perflab.chapters.memory import report

    monkeypatch.setenv("PERFLAB_MODE", "replay")
    lat = lab.run("memory.latency")
    dev = plots.device_of(lat)
    fig, ax = plt.subplots(figsize=(7.5, 4.0))
    levels = report.plot_staircase(ax, lat, int(dev["l2_bytes"]), dev)
    assert [lv["level"] for lv in levels] == ["L1", "near L2", "far L2", "HBM"]
    l2 = int(dev["l2_bytes"])
    assert levels[1]["to"] == l2 / 2 and levels[2]["to"] == l2          # from the device
    assert [lv["from"] for lv in levels[1:]] == [lv["to"] for lv in levels[:-1]]
    shown = " ".join(t.get_text() for t in ax.texts)
    for lv in levels:                           # every plateau's measured value on it
        assert f"{lv['cycles']:.0f} cycles" in shown
    assert report.size_label(l2) in shown and report.size_label(dev["total_mem_bytes"]) in shown
    assert _texts_ok(fig)
    plt.close(fig)


def test_no_chapter_number_or_history_word_reaches_the_page(monkeypatch):
    """Variant names shown on the page carry no chapter number; the probe's kernel is shown
    from the lines that do not name its file."""
    import re
    from pathlib import Path

    from perflab.chapters.memory import report
    assert not re.search(r"chapter \d", report.shown("chapter 0 copy_vec4"))
    root = Path(__file__).resolve().parents[2]
    page = (root / "chapters" / "02-memory.md").read_text()
    m = re.search(r"```\{literalinclude\} \.\./kernels/02-memory/seed_probe\.cu\n(.*?)```", page, re.S)
    lines = re.search(r":lines: (\d+)-(\d+)", m.group(1))
    src = (root / "kernels" / "02-memory" / "seed_probe.cu").read_text().splitlines()
    shown = src[int(lines.group(1)) - 1:int(lines.group(2))]
    assert shown[-1] == "}" and not any("seed" in ln for ln in shown)
    assert "seed" not in page.replace("kernels/02-memory/seed_probe.cu", "")
