"""The fifteenth try's experiments: 23 launched as a CUDA graph (24,
kernels/03-scan/24_rle_graph.cu), its epoch a word in device memory, so that a call's
only host work is the graph's launch; any GPU of compute capability 8.0 and later.

  scan.rle_graph    24 checked at the edge sizes on every kind of runs (its first call,
                    recorded as a launch, and its graph replayed into poisoned outputs),
                    past 2^30 and past 2^31 (refused), 1000 calls back to back; then 24
                    and 23 at 2^25 on every kind of runs in the same rounds as 15,
                    torch.unique_consecutive, the copy and the read ceiling; then 24, 23
                    and the torch call at 2^25 on runs of 1-15 timed three ways (the call,
                    its host part, its GPU work alone behind a spinning kernel)
"""
from __future__ import annotations

import numpy as np

from ...correctness import Check
from ...kernels import checked
from ...registry import experiment
from ...timing import interleaved, ratio
from .. import machine
from . import rle
from .ballot import ballot_params
from .bulk import one_pass_entry
from .calltime import AHEAD_NS, ahead, spin_spec
from .experiments import (RLE_KINDS, RLE_SPECS, TORCH_VIEWS, as_torch, check_rle,
                          race_encoders, seed, torch_or_none)
from .lean import LEAN_CHECK_SIZES, LEAN_LARGE, check_encoder

#: the names of 24's and 23's rows
GRAPH_NAME = "rle graph"
BALLOT_NAME = "rle ballot"
#: the calls the call-time part times, in the page's order
CALL_PARTS = (GRAPH_NAME, BALLOT_NAME, "torch.unique_consecutive")


def _specs():
    return ([rle.graph_spec(), rle.ballot_spec()] + RLE_SPECS["chunked"]()
            + rle.decode_specs() + [machine.read_spec(), spin_spec()])


def check_replay(ctx, sizes, kinds) -> None:
    """24's graph replayed: at each size and kind of runs one call builds the graph, a
    second one, into poisoned outputs, only launches it; that one is checked (rows part
    "replay")."""
    import cupy as cp
    for m in sizes:
        for kind in kinds:
            s = seed()
            x = rle.make_runs(m, kind, np.random.default_rng(s))
            enc = rle.Encoder(m)
            checked(lambda: enc.encode(x, "graph"), "rle graph (first call)")
            enc.values.fill(np.iinfo(np.int32).min)
            enc.lengths.fill(-1)
            enc.count.fill(-1)
            checked(lambda: enc.encode(x, "graph"), "rle graph (replayed)")
            chk, runs = check_rle(x, enc.values, enc.lengths, enc.count)
            ctx.row(variant=GRAPH_NAME, params={"n": m, "kind": kind, "part": "replay",
                                                "graphs": enc._gr[0].graphs},
                    metrics={"runs": (runs, "1")}, check=chk, kernels=[rle.graph_spec()],
                    seed=s)
            del x, enc
            cp.get_default_memory_pool().free_all_blocks()


def call_time_rows(ctx, n: int, rounds: int, n_repeat: int) -> None:
    """24, 23 and torch.unique_consecutive at n int32 on runs of 1-15, checked, then timed
    in the same rounds three ways (timing.interleaved with `ahead`): the call with the GPU
    idle before it, the host's time in it, and its work alone enqueued behind AHEAD_NS of
    spin.cu (rows part "call time")."""
    import cupy as cp
    torch = torch_or_none()
    s = seed()
    x = rle.make_runs(n, "short", np.random.default_rng(s))
    encs = {GRAPH_NAME: (rle.Encoder(n), "graph"), BALLOT_NAME: (rle.Encoder(n), "ballot")}
    calls, checks, runs = {}, {}, 0
    for name, (enc, mode) in encs.items():
        for _ in range(2):                  # (24: the second call replays the graph)
            enc.values.fill(np.iinfo(np.int32).min)
            enc.lengths.fill(-1)
            enc.count.fill(-1)
            checked(lambda: enc.encode(x, mode, check=False), name)
        checks[name], runs = check_rle(x, enc.values, enc.lengths, enc.count)
        if checks[name].correct:
            calls[name] = lambda enc=enc, mode=mode: enc.encode(x, mode, check=False)
    if torch is not None and checks[BALLOT_NAME].correct:
        tx = as_torch(x)
        vals, counts = torch.unique_consecutive(tx, return_counts=True)
        enc = encs[BALLOT_NAME][0]
        ok = (vals.numel() == runs
              and bool((torch.from_dlpack(enc.values[:runs]) == vals).all())
              and bool((torch.from_dlpack(enc.lengths[:runs]).long() == counts).all()))
        del vals, counts
        checks["torch.unique_consecutive"] = Check(ok, 0.0 if ok else 1.0, 0.0, 0)
        if ok:
            calls["torch.unique_consecutive"] = lambda: torch.unique_consecutive(
                tx, return_counts=True)
    res = {}
    if ctx.timing and calls:
        for k, fn in calls.items():          # warm-up, and any launch error surfaces here
            checked(fn, f"{k} (warm-up)")
        res = checked(lambda: interleaved({k: (fn, [()]) for k, fn in calls.items()},
                                          f"{ctx.exp.chapter}/{ctx.exp.name}", rounds=rounds,
                                          n_repeat=n_repeat, ahead=ahead()), "call time")
    specs = {GRAPH_NAME: [rle.graph_spec()], BALLOT_NAME: [rle.ballot_spec()]}
    for v in CALL_PARTS:
        if v not in checks:
            continue
        metrics = {"runs": (runs, "1")}
        extra = {}
        if v in res:
            t = res[v]
            metrics.update({"call_ms": (t["median_ms"], "ms"), "host_ms": (t["host_ms"], "ms"),
                            "queued_ms": (t["queued_ms"], "ms"),
                            "lead_ms": (t["median_ms"] - t["queued_ms"], "ms")})
            if "torch.unique_consecutive" in res and v != "torch.unique_consecutive":
                for key, name in (("round_ms", "x_torch"), ("round_queued_ms", "x_torch_queued"),
                                  ("round_host_ms", "x_torch_host")):
                    r = ratio(res, "torch.unique_consecutive", v, key)
                    metrics[name] = (r["ratio"], "x")
                    metrics[name + "_min"] = (r["ratio_min"], "x")
                    metrics[name + "_max"] = (r["ratio_max"], "x")
            extra["rounds"] = {k: t[k] for k in ("round_ms", "round_host_ms", "round_queued_ms")}
        ctx.row(variant=v, params={"n": n, "kind": "short", "part": "call time",
                                   "ahead_ns": AHEAD_NS},
                metrics=metrics, check=checks[v], kernels=specs.get(v, []), seed=s, **extra)
    del x, calls, encs
    TORCH_VIEWS.clear()
    cp.get_default_memory_pool().free_all_blocks()


@experiment("scan.rle_graph", title="23 launched as a CUDA graph (24), against 23 and PyTorch",
            small={"n": 100003, "kinds": ("short", "distinct"), "check_sizes": (0, 1, 31, 4097),
                   "large": (), "calls": 20, "stress_sizes": (1000003,),
                   "replay_sizes": (1, 4097), "rounds": 2, "n_repeat": 3},
            sweep=True, kernels=_specs)
def rle_graph(ctx, n=1 << 25, kinds=RLE_KINDS, check_sizes=LEAN_CHECK_SIZES,
              large=LEAN_LARGE, calls=1000, stress_sizes=(1000003, 1 << 24),
              replay_sizes=(1, 31, 4097, 1000003, (1 << 25) + 5), rounds=7, n_repeat=20):
    """24 checked (reference runs and a round trip) at `check_sizes` on every kind of runs,
    at 2^30 + 1 and past 2^31 - 1 elements (refused with its reason), its graph replayed
    at `replay_sizes` on every kind, and over `calls` back-to-back calls; then 24 and 23
    at their default shape on each kind of runs at n, timed round by round with the
    chunked encoder (15), torch.unique_consecutive(return_counts=True), the copy of the
    input and the read ceiling; then the call-time part (call_time_rows)."""
    check_encoder(ctx, "graph", kinds, check_sizes, large, calls, stress_sizes)
    check_replay(ctx, replay_sizes, kinds)
    params = {**ballot_params(rle.BALLOT), "diagnostic": 0, "part": "race"}
    entries = {
        GRAPH_NAME: one_pass_entry(n, lambda enc, x: enc._graph(x), params, rle.graph_spec()),
        BALLOT_NAME: one_pass_entry(n, lambda enc, x: enc._ballot(x), params,
                                    rle.ballot_spec())}
    race_encoders(ctx, n, kinds, entries, ("chunked",),
                  ceilings={"read ceiling": (machine.read_once, [machine.read_spec()])})
    call_time_rows(ctx, n, rounds, n_repeat)
