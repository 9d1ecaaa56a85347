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
