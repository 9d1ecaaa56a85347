"""Interleaved timing without a GPU: the order of the rounds and the round-by-round ratio
(cupyx.profiler.benchmark replaced by a fake whose times depend on the round)."""
from __future__ import annotations

import types

import numpy as np
import pytest

from perflab import timing


def test_rounds_rotate_and_ratios_are_taken_round_by_round(monkeypatch):
    import cupyx.profiler

    order, rnd = [], {"n": 0}
    # a clock that drifts: everything slows down round after round; b is always 2x a
    base = {"a": 1.0, "b": 2.0, "c": 4.0}

    def fake(fn, args, n_repeat, n_warmup, name):
        order.append(name)
        fn()
        r = (len(order) - 1) // 3          # the round this call belongs to
        return types.SimpleNamespace(gpu_times=np.full((1, n_repeat), base[name] * (1 + 0.5 * r) / 1e3))

    monkeypatch.setattr(cupyx.profiler, "benchmark", fake)
    calls = {k: (lambda: None, [()]) for k in base}
    res = timing.interleaved(calls, "t", rounds=3, n_repeat=4)
    assert order == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert [len(res[k]["round_ms"]) for k in base] == [3, 3, 3]
    r = timing.ratio(res, "b", "a")
    assert r["ratio"] == pytest.approx(2.0) and r["rounds"] == 3
    assert r["ratio_min"] == pytest.approx(2.0) and r["ratio_max"] == pytest.approx(2.0)
    assert "round_ms" not in timing.as_metrics(res["a"])


def test_ratio_refuses_calls_not_timed_together():
    with pytest.raises(ValueError, match="same rounds"):
        timing.ratio({"a": {"round_ms": [1, 2]}, "b": {"round_ms": [1]}}, "a", "b")


def _old_plan(once: dict, budget_s: float, rounds: int):
    """Context.time_interleaved's sizing before slow rounds had their own rule."""
    n = int(min(200, max(3, budget_s / (rounds * max(sum(once.values()), 1e-6)))))
    return rounds, n, 1 if max(once.values()) > 0.05 else 3


@pytest.mark.parametrize("once", [
    {"a": 1e-5}, {"a": 1e-5, "b": 3e-3, "c": 0.04}, {"naive": 0.117, "cuBLAS": 0.0013},
    {"smem": 0.13, "cuBLAS": 0.022, "tf32": 0.005}, {"a": 0.06, "b": 0.06, "c": 0.079}])
@pytest.mark.parametrize("budget_s,rounds", [(3.0, 9), (0.05, 3), (0.6, 5), (8.0, 9)])
def test_a_round_under_0_2_s_is_sized_as_before(once, budget_s, rounds):
    assert sum(once.values()) <= timing.SLOW_ROUND_S
    assert timing.interleaved_plan(once, budget_s, rounds) == _old_plan(once, budget_s, rounds)


def test_a_slow_round_gets_fewer_rounds_repeats_and_warm_ups():
    """One round of single calls over 0.2 s: 3 rounds at most (2 over 1 s), a repeat at
    least, no warm-up for calls over 50 ms: the matmul chapter's largest sizes (the
    recorded medians of 10 kernels at 8192^3, 8192^2 x 4096, 4096^2 x 8192)."""
    big = {"naive": 0.206, "tiled": 0.129, "rest": 0.865}            # 1.2 s a round
    assert timing.interleaved_plan(big, 0.6, 5) == (2, 1, 0)        # twice timed
    assert timing.interleaved_plan({"naive": 0.103, "rest": 0.5}, 0.6, 5) == (3, 1, 0)
    # ten calls of 30 ms: a slow round, but every call is warmed up as before
    assert timing.interleaved_plan({k: 0.03 for k in "abcdefghij"}, 0.6, 5) == (3, 1, 3)
    assert timing.interleaved_plan({"a": 0.3}, 9.0, 2) == (2, 15, 0)  # never more rounds


def test_host_calls_are_timed_on_the_host_clock_with_their_own_counts(monkeypatch):
    """Calls named in `host` run on the CPU, perf_counter around each (no CUDA events, no
    GPU needed); every call runs its own count; a GPU call beside them goes through
    cupyx's benchmark as before, with its own count and warm-up."""
    import cupyx.profiler

    seen = {}

    def fake(fn, args, n_repeat, n_warmup, name):
        seen.setdefault(name, []).append((n_repeat, n_warmup))
        return types.SimpleNamespace(gpu_times=np.full((1, n_repeat), 1e-3))

    monkeypatch.setattr(cupyx.profiler, "benchmark", fake)
    ran = {"a": 0, "b": 0}

    def count(k):
        def fn():
            ran[k] += 1
        return fn
    calls = {"a": (count("a"), [()]), "b": (count("b"), [()]), "k": (lambda: None, [()])}
    res = timing.interleaved(calls, "t", rounds=3, n_repeat={"a": 2, "b": 5, "k": 40},
                             n_warmup=1, host=("a", "b"))
    assert ran == {"a": 3 * (2 + 1), "b": 3 * (5 + 1)}          # one warm-up a round
    assert [res[k]["n_timed"] for k in calls] == [6, 15, 120]
    assert seen == {"k": [(40, 1)] * 3} and res["k"]["median_ms"] == pytest.approx(1.0)
    assert all(len(res[k]["round_ms"]) == 3 and res[k]["min_ms"] >= 0 for k in calls)


def test_a_race_of_host_calls_only_needs_no_gpu(monkeypatch):
    import cupyx.profiler

    monkeypatch.setattr(cupyx.profiler, "benchmark", lambda *a, **k: pytest.fail("a GPU timer"))
    res = timing.interleaved({"a": (lambda: None, [()]), "b": (lambda: sum(range(100)), [()])},
                             "t", rounds=3, n_repeat=4, host=("a", "b"))
    assert set(res) == {"a", "b"} and res["b"]["n_timed"] == 12 and res["b"]["median_ms"] > 0
    with pytest.raises(ValueError, match="ahead"):
        timing.interleaved({"a": (lambda: None, [()])}, "t", host=("a",), ahead=lambda: None)


def test_each_call_of_a_mixed_race_gets_its_share_of_the_budget():
    """budget 2 s, 5 rounds, 4 calls: 0.1 s a call a round; a 1 ms kernel is capped at
    100, a 40 ms CPU path gets 2, a 0.5 s one still 1."""
    once = {"kernel": 1e-3, "fast": 4e-2, "slow": 0.5, "nothing": 0.0}
    assert timing.repeats_each(once, 2.0, 5) == {"kernel": 100, "fast": 2, "slow": 1,
                                                 "nothing": 100}


class _Exp:
    chapter, name = "00-test", "test.race"


def _sizing(monkeypatch, once: dict):
    """Context.time_interleaved with its untimed calls and the interleaved timing faked:
    what it passes to timing.interleaved."""
    from perflab import kernels, registry

    got = {}
    monkeypatch.setattr(timing, "once_s",
                        lambda fn, what=None: once[what.split("/")[-1].split()[0]])
    monkeypatch.setattr(timing, "host_once_s", lambda fn: once["host"])
    monkeypatch.setattr(timing, "interleaved", lambda calls, prefix, **kw: got.update(kw) or {})
    monkeypatch.setattr(kernels, "checked",
                        lambda fn, what: got.setdefault("checked", what) and fn())
    ctx = registry.Context(_Exp(), {})
    return ctx, got


def test_a_gpu_race_is_sized_as_before(monkeypatch):
    """Without host calls, one count for every call (the budget over the rounds and the
    calls' summed time, 3 to 200) and 3 warm-ups where every call is quick; a slow round
    under interleaved_plan's rule (fewer rounds, repeats and warm-ups)."""
    ctx, got = _sizing(monkeypatch, {"a": 1e-4, "b": 4e-4})
    ctx.time_interleaved({"a": (None, [()]), "b": (None, [()])}, budget_s=1.8, rounds=9)
    assert got == {"rounds": 9, "n_repeat": 200, "n_warmup": 3, "ahead": None,
                   "checked": "00-test/test.race"}
    ctx, got = _sizing(monkeypatch, {"a": 0.01, "b": 0.06})
    ctx.time_interleaved({"a": (None, [()]), "b": (None, [()])}, budget_s=9.0, rounds=9)
    assert got["n_repeat"] == 14 and got["n_warmup"] == 1
    ctx, got = _sizing(monkeypatch, {"a": 0.15, "b": 0.9})
    ctx.time_interleaved({"a": (None, [()]), "b": (None, [()])}, budget_s=0.6, rounds=5)
    assert (got["rounds"], got["n_repeat"], got["n_warmup"]) == (2, 1, 0)



def test_a_race_of_fixed_counts_behind_ahead_takes_them_as_given(monkeypatch):
    """`n_repeat` fixes the timed calls a round (two warm-ups after the untimed call, the
    rounds asked for or the context's, however slow a round); `ahead` reaches the timing;
    neither goes with host calls, which are sized per call on the host's clock."""
    spin = object()
    ctx, got = _sizing(monkeypatch, {"a": 0.15, "b": 0.9})
    ctx.time_interleaved({"a": (None, [()]), "b": (None, [()])}, rounds=7, n_repeat=20,
                         ahead=spin)
    assert (got["rounds"], got["n_repeat"], got["n_warmup"], got["ahead"]) == (7, 20, 2, spin)
    ctx.time_interleaved({"a": (None, [()])}, n_repeat=3)
    assert got["rounds"] == ctx.rounds and got["n_repeat"] == 3
    with pytest.raises(ValueError, match="host"):
        ctx.time_interleaved({"a": (None, [()]), "host": (None, [()])}, host=("host",),
                             ahead=spin)

def test_a_race_with_host_calls_sizes_each_call(monkeypatch):
    ctx, got = _sizing(monkeypatch, {"k": 1e-3, "host": 0.04})
    ctx.time_interleaved({"k": (None, [()]), "cpu": (None, [()])}, budget_s=1.0, rounds=5,
                         host=["cpu"])
    assert got["n_repeat"] == {"k": 100, "cpu": 2} and got["n_warmup"] == 1
    assert got["host"] == ["cpu"] and got["checked"]             # a kernel: checked
    ctx, got = _sizing(monkeypatch, {"host": 0.04})
    ctx.time_interleaved({"cpu": (None, [()])}, budget_s=1.0, rounds=5, host=["cpu"])
    assert got["n_repeat"] == {"cpu": 5} and "checked" not in got    # host calls only
