"""For the tests that run a chapter's race builder without a GPU: a real Context whose
timing is faked (fixed per-round times by name, every call still run once), NumPy arrays
standing in for CuPy's where a race makes its copies, and the race's synchronizing check
wrapper left out."""
from __future__ import annotations

import numpy as np

from perflab import race, registry
from perflab.correctness import Check
from perflab.timing import summarize

OK = Check(True, 0.0, 0.0, 0)


class _Memory:
    """CuPy's MemoryPointer, for what a copy calls: copy_from_device (cudaMemcpy)."""

    def __init__(self, arr):
        self.arr = arr

    def copy_from_device(self, src, nbytes):
        self.arr.view(np.uint8).reshape(-1)[:nbytes] = src.arr.view(np.uint8).reshape(-1)[:nbytes]


class DevArray(np.ndarray):
    """A NumPy array with CuPy's `.data` (a MemoryPointer a cudaMemcpy copies between)."""

    @property
    def data(self):
        return _Memory(self)


def device(a) -> DevArray:
    return np.ascontiguousarray(a).view(DevArray)


def fake_cupy(monkeypatch) -> None:
    """cupy.random.random / uniform / randint, empty, empty_like and copyto on NumPy."""
    import cupy

    rng = np.random.default_rng(7)
    monkeypatch.setattr(cupy.random, "random",
                        lambda n, dtype=np.float64: device(rng.random(n).astype(dtype)))
    monkeypatch.setattr(cupy.random, "uniform", lambda lo, hi, size, dtype=np.float64:
                        device(rng.uniform(lo, hi, size).astype(dtype)))
    monkeypatch.setattr(cupy, "empty",
                        lambda shape, dtype=np.float32: device(np.empty(shape, dtype)))
    monkeypatch.setattr(cupy, "empty_like", lambda a: device(np.empty_like(a)))
    monkeypatch.setattr(cupy, "copyto", np.copyto)
    monkeypatch.setattr(race, "checked", lambda fn, what: fn())


def context(name: str, times: dict, default=(1.0,) * 9):
    """A Context of experiment `name` whose interleaved timing gives each call the
    per-round times `times[name]` (`default` where not given) and whose lone timing
    (Context.time) gives the first of them; every call is run once. Returns (ctx, log):
    log holds ("interleaved", names, budget_s) and ("alone", name, budget_s)."""
    ctx = registry.Context(registry.get(name), {"run_id": "test"})
    log = []

    def time_interleaved(calls, *, budget_s=None, rounds=None):
        log.append(("interleaved", list(calls), budget_s))
        for fn, sets in calls.values():
            fn(*sets[0])
        return {k: {**summarize(times.get(k, default)), "round_ms": list(times.get(k, default))}
                for k in calls}

    def time(fn, sets, variant, *, budget_s=None):
        log.append(("alone", variant, budget_s))
        fn(*sets[0])
        return summarize(times.get(variant, default)[:1])
    ctx.time_interleaved, ctx.time = time_interleaved, time
    return ctx, log


def value(row: dict, metric: str):
    return row["metrics"][metric]["value"]
