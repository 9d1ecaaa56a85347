"""What a call costs: the encoder's time split into the host's part and the GPU's, next to
the PyTorch call it is measured against (chapter 3, "What a call costs").

  scan.call_time   20 at its default (the call its races time, and its prepared launch
                   alone), the read ceiling, the copy, torch.unique_consecutive and an
                   empty call at 2^25 int32 on runs of 1-15, each timed three ways in the
                   same rounds (perflab.timing.interleaved with `ahead`): with the GPU idle before the
                   call (as the races time it), the host's time in it, and enqueued behind
                   spin.cu so that only its work on the GPU counts; PyTorch's kernels'
                   own time from its profiler
"""
from __future__ import annotations

import numpy as np

from ...correctness import Check
from ...kernels import KernelSpec, checked, get_kernel, launch
from ...registry import experiment
from ...timing import interleaved, ratio
from .. import machine
from . import ops, rle
from .experiments import (TORCH_VIEWS, as_torch, check_rle, seed, torch_gpu_events,
                          torch_or_none)

#: how long the kernel ahead of a queued call spins: far longer than any call's host part
AHEAD_NS = 300_000
#: the calls, in the order of the page's table
CALLS = ("rle rounds", "rle rounds, prepared launch alone", "read ceiling", "copy",
         "torch.unique_consecutive", "an empty call")


def spin_spec() -> KernelSpec:
    return KernelSpec("00-machine/spin.cu", "spin_ns")


def ahead(ns: int = AHEAD_NS):
    """A call that enqueues `ns` nanoseconds of one spinning thread (spin.cu)."""
    k = get_kernel(spin_spec())
    t = np.uint64(ns)
    return lambda: launch(k, 1, 1, (t,))


def torch_kernels_ms(fn, calls: int = 10) -> float | None:
    """The summed duration (ms) of the GPU kernels and copies one call of `fn` runs, as
    PyTorch's profiler records them (the mean of `calls` calls); None where it cannot."""
    if torch_or_none() is None:
        return None
    try:
        us = sum(e.time_range.elapsed_us() for e in torch_gpu_events(fn, calls))
        return us / calls / 1e3 if us > 0 else None
    except Exception:             # the profiler is optional
        return None


def _prepared(enc, x):
    """20's prepared launch alone: its argument buffer's values fixed once, only the epoch
    advanced (through the shared look-back state, so calls of either kind can follow)."""
    run, tile = enc._rd
    n = x.size
    tiles = -(-n // tile)
    st = ops.state()
    counter, lo, hi, _ = st.split_args(tiles)
    grid = min(tiles, run.grid)

    def call():
        st.epoch += 1
        run(grid, x, enc.values, enc.lengths, enc.count, n, counter, tiles, lo, hi, st.epoch)
    return call


@experiment("scan.call_time", title="What a call costs: the host's part and the GPU's, 20 against PyTorch",
            small={"n": 100003, "rounds": 2, "n_repeat": 3}, requires=ops.bulk_missing,
            kernels=lambda: [rle.rounds_spec(rle.ROUNDS), machine.read_spec(), spin_spec()])
def call_time(ctx, n=1 << 25, rounds=7, n_repeat=20):
    """20 at its default shape on runs of 1-15 at n int32, checked (reference runs and a
    round trip; torch.unique_consecutive against its runs), then timed three ways in the
    same `rounds` rounds (timing.interleaved with `ahead`: the call with the GPU idle before it, the
    host's time in it, the call enqueued behind AHEAD_NS of spin.cu) with its prepared
    launch alone, the read ceiling, the copy, torch.unique_consecutive and an empty call;
    the torch call's kernels timed by PyTorch's profiler."""
    import cupy as cp
    torch = torch_or_none()
    s = seed()
    x = rle.make_runs(n, "short", np.random.default_rng(s))
    enc = rle.Encoder(n)
    enc.count.fill(-1)
    enc.values.fill(np.iinfo(np.int32).min)
    enc.lengths.fill(-1)
    checked(lambda: enc._rounds(x), "rle rounds")
    chk, runs = check_rle(x, enc.values, enc.lengths, enc.count)
    calls = {}
    if chk.correct:
        calls["rle rounds"] = lambda: enc._rounds(x)
        calls["rle rounds, prepared launch alone"] = _prepared(enc, x)
    calls["read ceiling"] = machine.read_once(x)
    b = cp.empty_like(x)
    calls["copy"] = lambda: b.data.copy_from_device(x.data, x.nbytes)
    t_ok, t_kernels = None, None
    if torch is not None and chk.correct:
        tx = as_torch(x)
        vals, counts = torch.unique_consecutive(tx, return_counts=True)
        t_ok = (vals.numel() == runs
                and bool((torch.from_dlpack(enc.values[:runs]) == vals).all())
                and bool((torch.from_dlpack(enc.lengths[:runs]).long() == counts).all()))
        del vals, counts
        if t_ok:
            calls["torch.unique_consecutive"] = lambda: torch.unique_consecutive(tx, return_counts=True)
            t_kernels = torch_kernels_ms(calls["torch.unique_consecutive"])
    calls["an empty call"] = lambda: None
    res = {}
    if ctx.timing:
        wait = ahead()
        for k, fn in calls.items():          # warm-up, and any launch error surfaces here
            checked(fn, f"{k} (warm-up)")
        res = checked(lambda: interleaved({k: (fn, [()]) for k, fn in calls.items()},
                                          f"{ctx.exp.chapter}/{ctx.exp.name}", rounds=rounds,
                                          n_repeat=n_repeat, ahead=wait), "call_time")
    kernels = {"rle rounds": [rle.rounds_spec(rle.ROUNDS)],
               "rle rounds, prepared launch alone": [rle.rounds_spec(rle.ROUNDS)],
               "read ceiling": [machine.read_spec()]}
    for v in CALLS:
        if v not in calls and v != "rle rounds":      # (20's row says why it was not timed)
            continue
        if v == "rle rounds":
            check = chk
        elif v == "torch.unique_consecutive" and t_ok is not None:
            check = Check(t_ok, 0.0 if t_ok else 1.0, 0.0, 0)
        else:
            check = None
        metrics = {"runs": (runs, "1")}
        if v in res:
            t = res[v]
            metrics.update({"call_ms": (t["median_ms"], "ms"), "host_ms": (t["host_ms"], "ms"),
                            "queued_ms": (t["queued_ms"], "ms"),
                            "lead_ms": (t["median_ms"] - t["queued_ms"], "ms")})
            if "torch.unique_consecutive" in res and v != "torch.unique_consecutive":
                for key, name in (("round_ms", "x_torch"), ("round_queued_ms", "x_torch_queued")):
                    r = ratio(res, "torch.unique_consecutive", v, key)
                    metrics[name] = (r["ratio"], "x")
                    metrics[name + "_min"] = (r["ratio_min"], "x")
                    metrics[name + "_max"] = (r["ratio_max"], "x")
        if v == "torch.unique_consecutive" and t_kernels is not None:
            metrics["kernels_ms"] = (t_kernels, "ms")
        extra = {}
        if v in res:
            extra["rounds"] = {k: res[v][k] for k in ("round_ms", "round_host_ms", "round_queued_ms")}
        ctx.row(variant=v, params={"n": n, "kind": "short", "part": "call time",
                                   "ahead_ns": AHEAD_NS},
                metrics=metrics, check=check, kernels=kernels.get(v, []),
                seed=s, **extra)
    del x, calls
    TORCH_VIEWS.clear()
    cp.get_default_memory_pool().free_all_blocks()
