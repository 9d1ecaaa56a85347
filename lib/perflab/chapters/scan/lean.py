"""The seventh try's experiments: the lean encoder (18, kernels/03-scan/18_rle_lean.cu),
17 on fewer instructions a step and several blocks an SM; compute capability 9.0 and
later.

  scan.rle_lean      18 checked at the edge sizes on every kind of runs, past 2^30 and
                     past 2^31 (refused), 1000 calls back to back; then 18 by shape at
                     2^25 on every kind of runs with its four diagnostics and 17 at its
                     default, in the same rounds as 15, torch.unique_consecutive, the
                     copy and the read ceiling
  scan.lean_profile  17 and 18 and their diagnostics once each under Nsight Compute:
                     time, warp instructions executed, issue activity, DRAM bytes
"""
from __future__ import annotations

import time

import numpy as np

from ...correctness import Check
from ...errors import ConfigError
from ...kernels import checked
from ...registry import experiment
from .. import machine
from . import ops, rle
from .bulk import one_pass_entry, shape_name, shape_params
from .experiments import (RLE_KINDS, RLE_SPECS, encode_once, check_rle, profile_missing,
                          race_encoders, seed)

#: the sizes 18 is checked at on every kind of runs (scan.rle_lean), and past 2^30 / 2^31
LEAN_CHECK_SIZES = (0, 1, 31, 4097, 1000003, (1 << 25) + 5)
LEAN_LARGE = ((1 << 30) + 1, (1 << 31) + 5)
#: the profiled segments: 17 and 18 at their defaults and with each diagnostic
PROFILE_DIAGS = (0, 1, 2, 3, 4)


def lean_name(shape) -> str:
    return f"rle lean {shape_name(shape)}, {shape[7]} a SM"


def lean_reason(shape) -> str | None:
    try:
        rle.check_lean_shape(shape)
    except ConfigError as exc:
        return str(exc)
    return None


def _lean_specs():
    return ([rle.lean_spec(sh) for sh in rle.LEAN_SHAPES]
            + [rle.lean_spec(rle.LEAN, d) for d in rle.BULK_DIAGNOSTICS]
            + [rle.bulk_spec()] + RLE_SPECS["chunked"]() + RLE_SPECS["fused"]()
            + rle.decode_specs() + [machine.read_spec()])


def stress(ctx, mode: str, calls: int, sizes) -> None:
    """`calls` encodes by encoder `mode` launched back to back without a host wait over
    four rotating inputs of each size; each call's count is copied on the GPU and compared
    with its input's at the end, and the last outputs are checked whole."""
    import cupy as cp
    spec = {"lean": rle.lean_spec, "masks": rle.masks_spec, "rounds": rle.rounds_spec,
            "reread": rle.reread_spec, "walk": rle.walk_spec, "ballot": rle.ballot_spec,
            "graph": rle.graph_spec, "room": rle.room_spec}[mode]()
    for n in sizes:
        s = seed()
        rng = np.random.default_rng(s)
        xs = [rle.make_runs(n, ("short", "long", "mixed", "distinct")[k], rng) for k in range(4)]
        want = [int((x[1:] != x[:-1]).sum()) + 1 for x in xs]
        encs = [rle.Encoder(n) for _ in xs]
        counts = cp.empty(calls, dtype=cp.int32)
        t0 = time.perf_counter()
        for k in range(calls):
            encs[k % 4].encode(xs[k % 4], mode, check=False)
            counts[k:k + 1] = encs[k % 4].count
        checked(lambda: None, f"rle {mode} stress")
        wall = time.perf_counter() - t0
        got = cp.asnumpy(counts)
        wrong = int(sum(got[k] != want[k % 4] for k in range(calls)))
        wrong += sum(not check_rle(x, e.values, e.lengths, e.count)[0].correct
                     for x, e in zip(xs, encs))
        ctx.row(variant=f"rle {mode}", params={"n": n, "calls": calls, "part": "stress"},
                metrics={"wall_s": (wall, "s"), "wrong_calls": (wrong, "1")},
                check=Check(wrong == 0, float(wrong), 0.0, 0), kernels=[spec], seed=s)
        del xs, encs, counts
        cp.get_default_memory_pool().free_all_blocks()


def check_encoder(ctx, mode: str, kinds, check_sizes, large, calls: int, stress_sizes) -> None:
    """Encoder `mode` at its default checked (reference runs and a round trip) at
    `check_sizes` on every kind of runs (rows part "check"), at the `large` sizes on short
    runs (part "large": past 2^31 - 1 a refusal row) and over `calls` back-to-back calls
    at `stress_sizes` (part "stress")."""
    for m in check_sizes:
        for kind in kinds:
            encode_once(ctx, m, seed(), mode, {"n": m, "kind": kind, "part": "check"}, kind)
    for m in large:
        encode_once(ctx, m, seed(), mode, {"n": m, "kind": "short", "part": "large"})
    if calls:
        stress(ctx, mode, calls, stress_sizes)


@experiment("scan.rle_lean", title="The lean encoder (18) by shape, against 17, 15 and PyTorch",
            small={"n": 100003, "kinds": ("short", "distinct"), "check_sizes": (0, 1, 31, 4097),
                   "large": (), "calls": 20, "stress_sizes": (1000003,)},
            sweep=True, requires=ops.bulk_missing, kernels=_lean_specs)
def rle_lean(ctx, n=1 << 25, kinds=RLE_KINDS, shapes=rle.LEAN_SHAPES,
             diags=tuple(rle.BULK_DIAGNOSTICS), check_sizes=LEAN_CHECK_SIZES,
             large=LEAN_LARGE, calls=1000, stress_sizes=(1000003, 1 << 24)):
    """18 at its default checked (reference runs and a round trip) at `check_sizes` on
    every kind of runs, at 2^30 + 1 and past 2^31 - 1 elements (refused with its reason),
    and over `calls` back-to-back calls; then each shape of 18 on each kind of runs at n,
    checked, and timed round by round with 18's diagnostics (17's four), 17 at its
    default, the chunked encoder (15), torch.unique_consecutive(return_counts=True), the
    copy of the input and the read ceiling."""
    check_encoder(ctx, "lean", kinds, check_sizes, large, calls, stress_sizes)
    entries = {}
    plan = [(sh, 0) for sh in shapes] + [(rle.LEAN, d) for d in diags]
    for sh, d in plan:
        name = lean_name(sh) + (f" diagnostic {d}" if d else "")
        params = {**shape_params(sh), "blocks_per_sm": sh[7], "diagnostic": d, "part": "race"}
        if d:
            params["removed"] = rle.BULK_DIAGNOSTICS[d]
        why = lean_reason(sh)
        if why:
            ctx.row(variant=name, params={"n": n, **params}, metrics={}, invalid=why)
            continue
        entries[name] = one_pass_entry(n, lambda enc, x, sh=sh, d=d: enc._lean(x, sh, d),
                                       params, rle.lean_spec(sh, d), check=not d)
    entries["rle bulk"] = one_pass_entry(n, lambda enc, x: enc._bulk(x),
                                         {**shape_params(rle.BULK), "part": "race"},
                                         rle.bulk_spec())
    race_encoders(ctx, n, kinds, entries, ("chunked",),
                  ceilings={"read ceiling": (machine.read_once, [machine.read_spec()])})


def profile_or_bulk_missing():
    return ops.bulk_missing() or profile_missing()


def profile_encoders(ctx, n: int, segments, diags) -> None:
    """Each (variant, shape) of `segments` ("rle bulk" 17, "rle lean" 18, "rle masks" 19,
    "rle rounds" 20, "rle reread" 21, "rle walk" 22, "rle ballot" 23) with each diagnostic
    of `diags`, once under Nsight Compute (clocks untouched) at n int32 on runs of 1-15: a
    row with the kernel's time, its warp instructions, its issue activity and its DRAM
    bytes against the input's 4n."""
    from ...profile import profile as run_ncu
    from .masks import masks_params

    plan = [{"variant": v, "n": n, "shape": list(sh), "diag": d} for v, sh in segments
            for d in diags]
    extra = {"inst_executed": ("smsp__inst_executed.sum", "1", None)}
    for seg in run_ncu(plan, child="perflab.chapters.scan.profiling", extra_metrics=extra):
        metrics = dict(seg["metrics"])
        for k in ("read", "write"):
            if f"dram_{k}_MB" in metrics:
                metrics[f"dram_{k}_over_input"] = (metrics[f"dram_{k}_MB"][0] * 1e6 / (4 * n), "x")
        v, shape, d = seg["variant"], tuple(seg["shape"]), seg["diag"]
        names = rle.BULK_DIAGNOSTICS
        if v == "rle ballot":
            from .ballot import ballot_params
            spec, params = rle.ballot_spec(shape, d), ballot_params(shape)
            names = rle.BALLOT_DIAGNOSTICS
        elif v in ("rle reread", "rle walk"):
            from .reread import reread_params
            spec = (rle.reread_spec if v == "rle reread" else rle.walk_spec)(shape, d)
            params, names = reread_params(shape), rle.REREAD_DIAGNOSTICS
        elif v == "rle rounds":
            from .rounds import rounds_params
            spec, params = rle.rounds_spec(shape, d), rounds_params(shape)
            names = rle.ROUNDS_DIAGNOSTICS
        elif v == "rle masks":
            spec, params = rle.masks_spec(shape, d), masks_params(shape)
        elif v == "rle lean":
            spec, params = rle.lean_spec(shape, d), {**shape_params(shape),
                                                     "blocks_per_sm": shape[7]}
        else:
            spec, params = rle.bulk_spec(shape, d), shape_params(shape)
        params.update({"n": n, "kind": "short", "diagnostic": d})
        if d:
            params["removed"] = names[d]
        ctx.row(variant=v, params=params, metrics=metrics, kernels=[spec],
                profiled_kernels=", ".join(seg["kernels"]))


@experiment("scan.lean_profile", title="What 17 and 18 execute: instructions and issue under the profiler",
            small={"n": None}, requires=profile_or_bulk_missing,
            kernels=lambda: ([rle.bulk_spec(rle.BULK, d) for d in PROFILE_DIAGS]
                             + [rle.lean_spec(rle.LEAN, d) for d in PROFILE_DIAGS]))
def lean_profile(ctx, n=1 << 25, diags=PROFILE_DIAGS):
    """17 and 18 at their default shapes, and each of their diagnostics, once each under
    Nsight Compute (clocks untouched) at n int32 on runs of 1-15: the kernel's time, the
    warp instructions it executed, how often its schedulers issued one, and its DRAM
    bytes against the input's 4n."""
    if not ctx.timing or not n:
        return
    profile_encoders(ctx, n, (("rle bulk", rle.BULK), ("rle lean", rle.LEAN)), diags)
