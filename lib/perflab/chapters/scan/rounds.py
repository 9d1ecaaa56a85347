"""The ninth try's experiment: the rounds encoder (20, kernels/03-scan/20_rle_rounds.cu),
no chain at all: the grid resident at once, moving through the input in rounds of one
segment a block, every block reading every block's count; compute capability 9.0 and
later.

  scan.rle_rounds    20 checked at the edge sizes on every kind of runs, past 2^30 and
                     past 2^31 (refused), 1000 calls back to back; then 20 by shape at
                     2^25 on every kind of runs with its three diagnostics, 19 and 18 at
                     their defaults, in the same rounds as 15, torch.unique_consecutive,
                     the copy and the read ceiling
  scan.rounds_profile 20 and its diagnostics once each under Nsight Compute: time, warp
                     instructions executed, issue activity, DRAM bytes
"""
from __future__ import annotations

from ...errors import ConfigError
from ...registry import experiment
from .. import machine
from . import ops, rle
from .bulk import one_pass_entry, shape_params
from .experiments import RLE_KINDS, RLE_SPECS, race_encoders
from .lean import (LEAN_CHECK_SIZES, LEAN_LARGE, check_encoder, lean_name,
                   profile_encoders, profile_or_bulk_missing)
from .masks import masks_name, masks_params


#: the profiled segments: 20 at its default and with each diagnostic
ROUNDS_PROFILE_DIAGS = (0, 1, 2, 3)


def rounds_params(shape) -> dict:
    c, w, kib, stg, sl, mb = shape
    return {"counters": c, "writers": w, "segment_kib": kib, "stages": stg, "slots": sl,
            "blocks_per_sm": mb}


def rounds_name(shape) -> str:
    c, w, kib, stg, sl, mb = shape
    return f"rle rounds {c}+{w} warps, {kib} KiB x {stg}, {sl} slots, {mb} a SM"


def rounds_reason(shape) -> str | None:
    try:
        rle.check_rounds_shape(shape)
    except ConfigError as exc:
        return str(exc)
    return None


def _rounds_specs():
    return ([rle.rounds_spec(sh) for sh in rle.ROUNDS_SHAPES]
            + [rle.rounds_spec(rle.ROUNDS, d) for d in rle.ROUNDS_DIAGNOSTICS]
            + [rle.masks_spec(), rle.lean_spec()] + RLE_SPECS["chunked"]()
            + rle.decode_specs() + [machine.read_spec()])


@experiment("scan.rle_rounds", title="The rounds encoder (20) by shape, against 19, 18 and PyTorch",
            small={"n": 100003, "kinds": ("short", "distinct"), "check_sizes": (0, 1, 31, 4097),
                   "large": (), "calls": 20, "stress_sizes": (1000003,)},
            sweep=True, requires=ops.bulk_missing, kernels=_rounds_specs)
def rle_rounds(ctx, n=1 << 25, kinds=RLE_KINDS, shapes=rle.ROUNDS_SHAPES,
               diags=tuple(rle.ROUNDS_DIAGNOSTICS), check_sizes=LEAN_CHECK_SIZES,
               large=LEAN_LARGE, calls=1000, stress_sizes=(1000003, 1 << 24)):
    """20 at its default checked (reference runs and a round trip) at `check_sizes` on
    every kind of runs, at 2^30 + 1 and past 2^31 - 1 elements (refused with its reason),
    and over `calls` back-to-back calls; then each shape of 20 on each kind of runs at n,
    checked, and timed round by round with 20's diagnostics (1: no runs written; 2: and
    no words, nobody waits; 3: and no heads counted, the ring alone), 19 and 18 at their
    defaults, the chunked encoder (15), torch.unique_consecutive(return_counts=True), the
    copy of the input and the read ceiling."""
    check_encoder(ctx, "rounds", kinds, check_sizes, large, calls, stress_sizes)
    entries = {}
    plan = [(sh, 0) for sh in shapes] + [(rle.ROUNDS, d) for d in diags]
    for sh, d in plan:
        name = rounds_name(sh) + (f" diagnostic {d}" if d else "")
        params = {**rounds_params(sh), "diagnostic": d, "part": "race"}
        if d:
            params["removed"] = rle.ROUNDS_DIAGNOSTICS[d]
        why = rounds_reason(sh)
        if why:
            ctx.row(variant=name, params={"n": n, **params}, metrics={}, invalid=why)
            continue
        entries[name] = one_pass_entry(n, lambda enc, x, sh=sh, d=d: enc._rounds(x, sh, d),
                                       params, rle.rounds_spec(sh, d), check=not d)
    entries[masks_name(rle.MASKS)] = one_pass_entry(
        n, lambda enc, x: enc._masks(x), {**masks_params(rle.MASKS), "part": "race"},
        rle.masks_spec())
    entries[lean_name(rle.LEAN)] = one_pass_entry(
        n, lambda enc, x: enc._lean(x), {**shape_params(rle.LEAN), "blocks_per_sm": rle.LEAN[7],
                                         "part": "race"}, rle.lean_spec())
    race_encoders(ctx, n, kinds, entries, ("chunked",),
                  ceilings={"read ceiling": (machine.read_once, [machine.read_spec()])})


@experiment("scan.rounds_profile", title="What 20 executes: instructions and issue under the profiler",
            small={"n": None}, requires=profile_or_bulk_missing,
            kernels=lambda: [rle.rounds_spec(rle.ROUNDS, d) for d in ROUNDS_PROFILE_DIAGS])
def rounds_profile(ctx, n=1 << 25, diags=ROUNDS_PROFILE_DIAGS):
    """20 at its default shape and with each diagnostic, once each under Nsight Compute
    (clocks untouched) at n int32 on runs of 1-15: the kernel's time, the warp
    instructions it executed, how often its schedulers issued one, and its DRAM bytes
    against the input's 4n."""
    if not ctx.timing or not n:
        return
    profile_encoders(ctx, n, (("rle rounds", rle.ROUNDS),), diags)
