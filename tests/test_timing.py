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
