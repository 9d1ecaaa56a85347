"""Timing: CUDA events through `cupyx.profiler.benchmark`, warm-up first, the median of
many runs, each timed region inside an NVTX range named chapter/experiment/variant.

Memory-bound work whose working set would sit in L2 is timed over rotated copies of its
inputs (`rotations`), so every timed call reads from device memory, as a cold call would.
"""
from __future__ import annotations

import contextlib
import itertools
import math
import time

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


def once_s(fn, what: str | None = None) -> float:
    """Seconds of one call of `fn` on the GPU, CUDA events around it: the untimed call that
    warms a kernel up and sizes its timed runs. With `what`, the call is checked
    (kernels.checked: the device synchronized, a CUDA error named after `what`)."""
    import cupy as cp
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    if what is None:
        fn()
    else:
        from .kernels import checked
        checked(fn, what)
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) / 1e3


def repeats_for(once_s: float, budget_s: float) -> tuple[int, int]:
    """(n_repeat, n_warmup) for a call that took `once_s` seconds untimed: a slow one gets
    one warm-up and a few repeats, a fast one many, all within about `budget_s`."""
    return int(min(200, max(5, budget_s / max(once_s, 1e-6)))), (1 if once_s > 0.05 else 10)


#: Seconds of one round of single calls above which an interleaved timing is a slow one
#: (interleaved_plan): fewer rounds, repeats and warm-ups.
SLOW_ROUND_S = 0.2


def interleaved_plan(once: dict, budget_s: float, rounds: int) -> tuple[int, int, int]:
    """(rounds, n_repeat, n_warmup) of an `interleaved` timing of calls that took `once`
    (name -> seconds of one untimed call) in about `budget_s` seconds in all: `rounds`
    rounds of 3 to 200 repeats of each call (the budget's share), after 3 untimed calls (1
    where a call takes over 50 ms). Where one round of single calls takes over
    SLOW_ROUND_S (over 1 s), at most 3 rounds (2), a repeat at least, and no untimed call
    for calls over 50 ms (the sizing call has just warmed them): a matmul of seconds runs
    twice timed, not 27 times."""
    total, slowest = sum(once.values()), max(once.values())
    slow = total > SLOW_ROUND_S
    if slow:
        rounds = min(rounds, 2 if total > 1.0 else 3)
    n = int(min(200, max(1 if slow else 3, budget_s / (rounds * max(total, 1e-6)))))
    return rounds, n, (0 if slow else 1) if slowest > 0.05 else 3


def as_metrics(t: dict) -> dict:
    """The times of a `benchmark` (or one entry of an `interleaved`) result as row
    metrics: name -> (value, "ms"); the per-round list stays out."""
    return {k: (v, "ms") for k, v in t.items()
            if k.endswith("_ms") and isinstance(v, (int, float))}


def interleaved(calls: dict, prefix: str, *, rounds: int = 9, n_repeat: int | dict = 20,
                n_warmup: int | dict = 2, ahead=None, host=()) -> dict:
    """Time several calls alternately: `rounds` rounds, in each of which every call runs
    `n_repeat` timed times (after `n_warmup` untimed), the order rotated from round to
    round. `calls` maps a name to (fn, args_sets). The card's clock and power state drift
    with what ran before; interleaving puts every call under the same drift, so ratios
    taken round by round (`ratio`) are fair where two separate timed runs are not.

    Returns name -> the `summarize` fields over all timed runs, plus "round_ms": the
    median of each round (in the order the rounds ran). Each call is timed with events
    around it and the GPU idle before it, so the host's time up to its first launch
    counts. With `ahead` (a call that enqueues GPU work lasting longer than the host takes
    to enqueue any of `calls`), each round also times every call's host part (cupyx's CPU
    times) and its work alone, enqueued behind `ahead()` (`queued_ms`): "host_ms",
    "queued_ms" (medians over all runs), "round_host_ms" and "round_queued_ms".

    `n_repeat` and `n_warmup` may map each name to its own count (calls whose times differ
    by orders of magnitude, as a CPU path's and a kernel's do). The calls named in `host`
    run on the CPU: each is timed with perf_counter_ns around it (`host_times`), not CUDA
    events, and outside any NVTX range; a race of host calls only needs no GPU.
    """
    names = list(calls)
    host = frozenset(host)
    if ahead is not None and host:
        raise ValueError("`ahead` times GPU calls behind GPU work: no host calls with it")
    reps = n_repeat if isinstance(n_repeat, dict) else dict.fromkeys(names, n_repeat)
    warm = n_warmup if isinstance(n_warmup, dict) else dict.fromkeys(names, n_warmup)
    if any(k not in host for k in names):
        from cupyx.profiler import benchmark as cupy_benchmark
    cycles = {k: itertools.cycle(calls[k][1]) for k in names}
    parts = ("", "host", "queued") if ahead is not None else ("",)
    times = {k: {p: [] for p in parts} for k in names}
    per_round = {k: {p: [] for p in parts} for k in names}
    for r in range(rounds):
        shift = r % len(names)
        for k in names[shift:] + names[:shift]:
            fn, cyc = calls[k][0], cycles[k]

            def call():
                fn(*next(cyc))
            if k in host:
                got = {"": np.asarray(host_times(call, reps[k], warm[k]), dtype=float)}
            else:
                with nvtx_range(f"{prefix}/{k}"):
                    res = cupy_benchmark(call, (), n_repeat=reps[k], n_warmup=warm[k], name=k)
                    got = {"": np.asarray(res.gpu_times).reshape(-1) * 1e3}
                    if ahead is not None:
                        got["host"] = np.asarray(res.cpu_times).reshape(-1) * 1e3
                        got["queued"] = np.asarray(queued_ms(call, ahead, reps[k]), dtype=float)
            for p, t in got.items():
                if t.size == 0:
                    raise RuntimeError(f"{prefix}/{k}: no timed runs")
                times[k][p].extend(t.tolist())
                per_round[k][p].append(float(np.median(t)))
    out = {}
    for k in names:
        out[k] = {**summarize(times[k][""]), "round_ms": per_round[k][""]}
        for p in parts[1:]:
            out[k][f"{p}_ms"] = float(np.median(times[k][p]))
            out[k][f"round_{p}_ms"] = per_round[k][p]
    return out


def host_times(fn, n_repeat: int, n_warmup: int = 1) -> list:
    """Milliseconds of `n_repeat` calls of `fn` on the CPU, perf_counter_ns around each,
    after `n_warmup` untimed calls (a host call of `interleaved`)."""
    for _ in range(n_warmup):
        fn()
    out = []
    for _ in range(n_repeat):
        t = time.perf_counter_ns()
        fn()
        out.append((time.perf_counter_ns() - t) / 1e6)
    return out


def host_once_s(fn) -> float:
    """Seconds of one untimed call of `fn` on the CPU (perf_counter_ns around it): the call
    that warms a host call up and sizes its timed runs."""
    t = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - t) / 1e9


def repeats_each(once: dict, budget_s: float, rounds: int, cap: int = 100) -> dict:
    """name -> timed calls per round for calls whose one untimed call took `once[name]`
    seconds, each given about budget_s / (rounds × len(once)) seconds a round (one call at
    least, `cap` at most): the sizing of a race whose calls differ by orders of magnitude
    (a CPU path and a kernel), where one count for all would starve one or drown the
    other: Context.time_interleaved's sizing of a race with host calls (interleaved_plan
    sizes one of GPU calls only)."""
    share = budget_s / (rounds * max(len(once), 1))
    return {k: int(min(cap, max(1, share / max(s, 1e-6)))) for k, s in once.items()}


def queued_ms(fn, ahead, n: int) -> list:
    """GPU times (ms) of `n` calls of `fn`, each enqueued behind `ahead()` (GPU work that
    lasts longer than the host takes to enqueue the call): events around each call then
    time its work on the GPU, and the gaps inside it, without the host's lead
    (`interleaved` with `ahead`)."""
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


def ratio(res: dict, slow: str, fast: str, key: str = "round_ms") -> dict:
    """How many times faster `fast` ran than `slow` in an `interleaved` result, round by
    round: the median of the per-round ratios and their spread (min, max). `key`: which
    per-round times ("round_queued_ms" or "round_host_ms" of a run with `ahead`)."""
    a = np.asarray(res[slow][key], dtype=float)
    b = np.asarray(res[fast][key], dtype=float)
    if a.size != b.size or a.size == 0:
        raise ValueError(f"{slow!r} and {fast!r} were not timed in the same rounds")
    r = a / b
    return {"ratio": float(np.median(r)), "ratio_min": float(r.min()),
            "ratio_max": float(r.max()), "rounds": int(r.size)}
