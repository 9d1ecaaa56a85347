"""Chapter 2 (perflab.chapters.memory) without a GPU: the models the chapter predicts
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


def test_a_race_checks_every_copy_before_timing_and_times_none_that_fails():
    """The copy race without a GPU (NumPy buffers, timing off): a copy that writes the
    source passes, one that misses an element fails, and neither gets a time."""
    from perflab.registry import Context, get

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
