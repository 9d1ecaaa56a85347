"""Timing: CUDA events through `cupyx.profiler.benchmark`, warm-up first, the median of
many runs, each timed region inside an NVTX range named chapter/experiment/variant.

Memory-bound work whose working set would sit in L2 is timed over rotated copies of its
inputs (`rotations`), so every timed call reads from device memory, as a cold call would.
"""
from __future__ import annotations

import contextlib
import itertools
import math

import numpy as np


@contextlib.contextmanager
def nvtx_range(name: str):
    """An NVTX range (package `nvtx`; CuPy's own NVTX binding where `nvtx` is missing)."""
    try:
        import nvtx
    except ImportError:
        nvtx = None
    if nvtx is not None:
        with nvtx.annotate(name, domain="perflab"):
            yield
        return
    from cupy.cuda import nvtx as cnvtx
    cnvtx.RangePush(name)
    try:
        yield
    finally:
        cnvtx.RangePop()


def rotations(bytes_per_call: int, l2_bytes: int, factor: int = 4, cap: int = 16) -> int:
    """How many input copies to rotate through so that they cover `factor` × L2."""
    if bytes_per_call <= 0:
        return 1
    return max(1, min(cap, math.ceil(factor * l2_bytes / bytes_per_call)))


def benchmark(fn, args_sets, name: str, *, n_repeat: int = 50, n_warmup: int = 5,
              max_duration: float = 2.0) -> dict:
    """Time `fn(*args)` cycling through `args_sets` (one tuple per rotated input copy).

    Returns median, 20th and 80th percentile, min (all ms) and the number of timed runs.
    """
    cycle = itertools.cycle(args_sets)

    def call():
        fn(*next(cycle))

    from cupyx.profiler import benchmark as cupy_benchmark

    with nvtx_range(name):
        res = cupy_benchmark(call, (), n_repeat=n_repeat, n_warmup=n_warmup,
                             max_duration=max_duration, name=name)
    t = np.asarray(res.gpu_times).reshape(-1) * 1e3
    if t.size == 0:
        raise RuntimeError(f"{name}: no timed runs")
    return summarize(t)


def summarize(times_ms) -> dict:
    """Median, 20th and 80th percentile, min (ms) and the number of timed runs."""
    t = np.asarray(times_ms, dtype=float)
    p20, median, p80 = np.percentile(t, [20, 50, 80])
    return {"median_ms": float(median), "p20_ms": float(p20), "p80_ms": float(p80),
            "min_ms": float(t.min()), "n_timed": int(t.size)}


def repeats_for(once_s: float, budget_s: float) -> tuple[int, int]:
    """(n_repeat, n_warmup) for a call that took `once_s` seconds untimed: a slow one gets
    one warm-up and a few repeats, a fast one many, all within about `budget_s`."""
    return int(min(200, max(5, budget_s / max(once_s, 1e-6)))), (1 if once_s > 0.05 else 10)


def as_metrics(t: dict) -> dict:
    """The times of a `benchmark` (or one entry of an `interleaved`) result as row
    metrics: name -> (value, "ms"); the per-round list stays out."""
    return {k: (v, "ms") for k, v in t.items()
            if k.endswith("_ms") and isinstance(v, (int, float))}


def interleaved(calls: dict, prefix: str, *, rounds: int = 9, n_repeat: int = 20,
                n_warmup: int = 2) -> dict:
    """Time several calls alternately: `rounds` rounds, in each of which every call runs
    `n_repeat` timed times (after `n_warmup` untimed), the order rotated from round to
    round. `calls` maps a name to (fn, args_sets). The card's clock and power state drift
    with what ran before; interleaving puts every call under the same drift, so ratios
    taken round by round (`ratio`) are fair where two separate timed runs are not.

    Returns name -> the `summarize` fields over all timed runs, plus "round_ms": the
    median of each round (in the order the rounds ran).
    """
    from cupyx.profiler import benchmark as cupy_benchmark

    names = list(calls)
    cycles = {k: itertools.cycle(calls[k][1]) for k in names}
    times = {k: [] for k in names}
    per_round = {k: [] for k in names}
    for r in range(rounds):
        shift = r % len(names)
        for k in names[shift:] + names[:shift]:
            fn, cyc = calls[k][0], cycles[k]
            with nvtx_range(f"{prefix}/{k}"):
                res = cupy_benchmark(lambda: fn(*next(cyc)), (), n_repeat=n_repeat,
                                     n_warmup=n_warmup, name=k)
            t = np.asarray(res.gpu_times).reshape(-1) * 1e3
            if t.size == 0:
                raise RuntimeError(f"{prefix}/{k}: no timed runs")
            times[k].extend(t.tolist())
            per_round[k].append(float(np.median(t)))
    return {k: {**summarize(times[k]), "round_ms": per_round[k]} for k in names}


def queued_ms(fn, ahead, n: int) -> list:
    """GPU times (ms) of `n` calls of `fn`, each enqueued behind `ahead()` (GPU work that
    lasts longer than the host takes to enqueue the call): events around each call then
    time its work on the GPU, and the gaps inside it, without the host's lead."""
    import cupy as cp
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    out = []
    for _ in range(n):
        ahead()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        out.append(cp.cuda.get_elapsed_time(start, stop))
    return out


def call_parts(calls: dict, prefix: str, ahead, *, rounds: int = 5, n_repeat: int = 20,
               n_warmup: int = 2) -> dict:
    """Where a call's time goes. Each call of `calls` (name -> fn) is timed three ways in
    every round, the order rotated from round to round as in `interleaved`:
      call    events around the call with the GPU idle before it, as `interleaved` times
              it: the host's time up to the call's first launch counts;
      host    the host's time in the call (cupyx.profiler.benchmark's CPU times);
      queued  events around the call enqueued behind `ahead()` (`queued_ms`): its work on
              the GPU and the gaps inside it (a wait for the host), the host's lead hidden.
    Returns name -> {"call_ms", "host_ms", "queued_ms": medians over every timed run,
    "round_ms", "round_host_ms", "round_queued_ms": each round's median}; `ratio` takes
    its ratios round by round (key="round_queued_ms" for the queued ones)."""
    from cupyx.profiler import benchmark as cupy_benchmark

    names = list(calls)
    runs = {k: {"call": [], "host": [], "queued": []} for k in names}
    rounds_of = {k: {"round_ms": [], "round_host_ms": [], "round_queued_ms": []} for k in names}
    for r in range(rounds):
        shift = r % len(names)
        for k in names[shift:] + names[:shift]:
            fn = calls[k]
            with nvtx_range(f"{prefix}/{k}"):
                res = cupy_benchmark(fn, (), n_repeat=n_repeat, n_warmup=n_warmup, name=k)
                q = queued_ms(fn, ahead, n_repeat)
            parts = {"call": np.asarray(res.gpu_times).reshape(-1) * 1e3,
                     "host": np.asarray(res.cpu_times).reshape(-1) * 1e3,
                     "queued": np.asarray(q, dtype=float)}
            for part, t in parts.items():
                if t.size == 0:
                    raise RuntimeError(f"{prefix}/{k}: no timed runs")
                runs[k][part].extend(t.tolist())
                key = "round_ms" if part == "call" else f"round_{part}_ms"
                rounds_of[k][key].append(float(np.median(t)))
    return {k: {**{f"{part}_ms": float(np.median(v)) for part, v in runs[k].items()},
                **rounds_of[k]} for k in names}


def ratio(res: dict, slow: str, fast: str, key: str = "round_ms") -> dict:
    """How many times faster `fast` ran than `slow` in an `interleaved` (or `call_parts`)
    result, round by round: the median of the per-round ratios and their spread (min,
    max). `key`: which per-round times (call_parts: "round_queued_ms", "round_host_ms")."""
    a = np.asarray(res[slow][key], dtype=float)
    b = np.asarray(res[fast][key], dtype=float)
    if a.size != b.size or a.size == 0:
        raise ValueError(f"{slow!r} and {fast!r} were not timed in the same rounds")
    r = a / b
    return {"ratio": float(np.median(r)), "ratio_min": float(r.min()),
            "ratio_max": float(r.max()), "rounds": int(r.size)}
