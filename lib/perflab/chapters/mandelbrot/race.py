"""Interleaved timing across the CPU and the GPU: every call timed in every round, the
order rotated from round to round, so that a ratio (AVX-512 against scalar, the GPU
against the best CPU path) is taken round by round under the same conditions.

timing.interleaved does this for GPU calls (CUDA events); here a call is ("host", fn),
timed with perf_counter around each call (perflab.host.benchmark), or ("gpu", fn), timed
with CUDA events (cupyx.profiler.benchmark). The result has timing.interleaved's shape,
so timing.ratio reads it."""
from __future__ import annotations

from time import perf_counter_ns

import numpy as np

from ...timing import nvtx_range, once_s, summarize


def _once(kind: str, fn) -> float:
    """Seconds of one untimed call (which also warms it up)."""
    if kind == "gpu":
        return once_s(fn)
    t = perf_counter_ns()
    fn()
    return (perf_counter_ns() - t) / 1e9


def _times(kind: str, fn, n: int, name: str) -> list[float]:
    """Milliseconds of `n` timed calls (after one untimed)."""
    if kind == "gpu":
        from cupyx.profiler import benchmark
        with nvtx_range(name):
            res = benchmark(fn, (), n_repeat=n, n_warmup=1, name=name)
        return (np.asarray(res.gpu_times).reshape(-1) * 1e3).tolist()
    fn()
    out = []
    for _ in range(n):
        t = perf_counter_ns()
        fn()
        out.append((perf_counter_ns() - t) / 1e6)
    return out


def interleaved(calls: dict, prefix: str, *, budget_s: float = 2.0, rounds: int = 5,
                max_repeat: int = 100) -> dict:
    """Time `calls` (name -> (kind, fn)) alternately: `rounds` rounds, each call given
    about budget_s / (rounds × len(calls)) seconds per round (one call at least). Returns
    name -> summarize() of all its timed calls plus "round_ms", the median of each round."""
    names = list(calls)
    share = budget_s / (rounds * max(len(names), 1))
    reps = {k: int(min(max_repeat, max(1, share / max(_once(*calls[k]), 1e-6))))
            for k in names}
    times = {k: [] for k in names}
    per_round = {k: [] for k in names}
    for r in range(rounds):
        shift = r % len(names)
        for k in names[shift:] + names[:shift]:
            kind, fn = calls[k]
            t = _times(kind, fn, reps[k], f"{prefix}/{k}")
            times[k].extend(t)
            per_round[k].append(float(np.median(t)))
    return {k: {**summarize(times[k]), "round_ms": per_round[k]} for k in names}
