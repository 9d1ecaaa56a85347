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


def _specs():
    return ([rle.graph_spec(), rle.ballot_spec()] + RLE_SPECS["chunked"]()
            + rle.decode_specs() + [machine.read_spec(), spin_spec()])


def check_replay(ctx, sizes, kinds, mode: str = "graph", name: str = GRAPH_NAME,
                 spec=rle.graph_spec) -> None:
    """A graph-launched encoder's graph replayed (24's by default; `mode` its name in
    encode, `spec` its KernelSpec): at each size and kind of runs one call builds the
    graph, a second one, into poisoned outputs, only launches it (the same array: the
    shortest call), and that one is checked (rows part "replay")."""
    import cupy as cp
    for m in sizes:
        for kind in kinds:
            s = seed()
            x = rle.make_runs(m, kind, np.random.default_rng(s))
            enc = rle.Encoder(m)
            checked(lambda: enc.encode(x, mode), f"{name} (first call)")
            enc.values.fill(np.iinfo(np.int32).min)
            enc.lengths.fill(-1)
            enc.count.fill(-1)
            checked(lambda: enc.encode(x, mode), f"{name} (replayed)")
            chk, runs = check_rle(x, enc.values, enc.lengths, enc.count)
            call = enc.graph_call(mode)
            ctx.row(variant=name, params={"n": m, "kind": kind, "part": "replay",
                                          "graphs": call.graphs.graphs if call else 0},
                    metrics={"runs": (runs, "1")}, check=chk, kernels=[spec()], seed=s)
            del x, enc
            cp.get_default_memory_pool().free_all_blocks()


#: the encoders call_time_rows times by default: row name -> (encoder, its kernels); the
#: torch call is checked against the last one's runs
CALL_ENCODERS = {GRAPH_NAME: ("graph", lambda: [rle.graph_spec()]),
                 BALLOT_NAME: ("ballot", lambda: [rle.ballot_spec()])}


def call_time_rows(ctx, n: int, rounds: int, n_repeat: int, encoders=None) -> None:
    """The `encoders` (CALL_ENCODERS by default: 24 and 23) and torch.unique_consecutive
    at n int32 on runs of 1-15, checked, then timed in the same rounds three ways
    (timing.interleaved with `ahead`): the call with the GPU idle before it, the host's
    time in it, and its work alone enqueued behind AHEAD_NS of spin.cu (rows part "call
    time")."""
    import cupy as cp
    encoders = encoders or CALL_ENCODERS
    torch = torch_or_none()
    s = seed()
    x = rle.make_runs(n, "short", np.random.default_rng(s))
    encs = {name: (rle.Encoder(n), mode) for name, (mode, _) in encoders.items()}
    last = list(encs)[-1]
    calls, checks, runs = {}, {}, 0
    for name, (enc, mode) in encs.items():
        for _ in range(2):                  # (a graph: the second call replays it)
            enc.values.fill(np.iinfo(np.int32).min)
            enc.lengths.fill(-1)
            enc.count.fill(-1)
            checked(lambda: enc.encode(x, mode, check=False), name)
        checks[name], runs = check_rle(x, enc.values, enc.lengths, enc.count)
        if checks[name].correct:
            calls[name] = lambda enc=enc, mode=mode: enc.encode(x, mode, check=False)
    if torch is not None and checks[last].correct:
        tx = as_torch(x)
        vals, counts = torch.unique_consecutive(tx, return_counts=True)
        enc = encs[last][0]
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
    specs = {name: make() for name, (_, make) in encoders.items()}
    for v in list(encoders) + ["torch.unique_consecutive"]:
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


#: the small run (a quick pass of the whole experiment) of a graph-launched encoder's
#: experiment (scan.rle_graph, scan.rle_room)
GRAPH_SMALL = {"n": 100003, "kinds": ("short", "distinct"), "check_sizes": (0, 1, 31, 4097),
               "large": (), "calls": 20, "stress_sizes": (1000003,), "replay_sizes": (1, 4097),
               "rounds": 2, "n_repeat": 3}


@experiment("scan.rle_graph", title="23 launched as a CUDA graph (24), against 23 and PyTorch",
            small=GRAPH_SMALL, sweep=True, kernels=_specs)
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
