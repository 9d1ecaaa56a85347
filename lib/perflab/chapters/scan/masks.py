"""The eighth try's experiments: the mask encoder (19, kernels/03-scan/19_rle_masks.cu),
18 with each head found once (the reducers leave head masks in shared memory, the scanners
walk their set bits) and the sequencer's chain shared by several warps; compute capability
9.0 and later.

  scan.rle_masks     19 checked at the edge sizes on every kind of runs, past 2^30 and
                     past 2^31 (refused), 1000 calls back to back; then 19 by shape at
                     2^25 on every kind of runs with its four diagnostics, 18 and 17 at
                     their defaults, in the same rounds as 15, torch.unique_consecutive,
                     the copy and the read ceiling
  scan.masks_profile 18 and 19 and their diagnostics once each under Nsight Compute:
                     time, warp instructions executed, issue activity, DRAM bytes
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

#: the profiled segments: 18 and 19 at their defaults, and with diagnostics 1 (no scanner
#: work) and 3 (the ring and the sequencer)
MASKS_PROFILED = (("rle lean", rle.LEAN), ("rle masks", rle.MASKS))
MASKS_PROFILE_DIAGS = (0, 1, 3)


def masks_params(shape) -> dict:
    sc, rd, stg, wd, sq, d, mb, g = shape
    return {"scanners": sc, "reducers": rd, "tile_kib": sc * rle.MASK_PIECE * 4 // 1024,
            "stages": stg, "width": wd, "sequencer_warps": sq, "delay_ns": d,
            "blocks_per_sm": mb, "scanner_groups": g}


def masks_name(shape) -> str:
    sc, rd, stg, wd, sq, d, mb, g = shape
    return (f"rle masks {g} x {sc}+{rd} warps, {sc * rle.MASK_PIECE * 4 // 1024} KiB x {stg}, "
            f"sequencer {sq} x{wd}, {mb} a SM" + ("" if d == 128 else f", {d} ns"))


def masks_reason(shape) -> str | None:
    try:
        rle.check_masks_shape(shape)
    except ConfigError as exc:
        return str(exc)
    return None


def _masks_specs():
    return ([rle.masks_spec(sh) for sh in rle.MASKS_SHAPES]
            + [rle.masks_spec(rle.MASKS, d) for d in rle.BULK_DIAGNOSTICS]
            + [rle.lean_spec(), rle.bulk_spec()] + RLE_SPECS["chunked"]() + rle.decode_specs()
            + [machine.read_spec()])


@experiment("scan.rle_masks", title="The mask encoder (19) by shape, against 18, 17 and PyTorch",
            small={"n": 100003, "kinds": ("short", "distinct"), "check_sizes": (0, 1, 31, 4097),
                   "large": (), "calls": 20, "stress_sizes": (1000003,)},
            sweep=True, requires=ops.bulk_missing, kernels=_masks_specs)
def rle_masks(ctx, n=1 << 25, kinds=RLE_KINDS, shapes=rle.MASKS_SHAPES,
              diags=tuple(rle.BULK_DIAGNOSTICS), check_sizes=LEAN_CHECK_SIZES,
              large=LEAN_LARGE, calls=1000, stress_sizes=(1000003, 1 << 24)):
    """19 at its default checked (reference runs and a round trip) at `check_sizes` on
    every kind of runs, at 2^30 + 1 and past 2^31 - 1 elements (refused with its reason),
    and over `calls` back-to-back calls; then each shape of 19 on each kind of runs at n,
    checked, and timed round by round with 19's diagnostics (18's four), 18 and 17 at
    their defaults, the chunked encoder (15), torch.unique_consecutive(return_counts=True),
    the copy of the input and the read ceiling."""
    check_encoder(ctx, "masks", kinds, check_sizes, large, calls, stress_sizes)
    entries = {}
    plan = [(sh, 0) for sh in shapes] + [(rle.MASKS, d) for d in diags]
    for sh, d in plan:
        name = masks_name(sh) + (f" diagnostic {d}" if d else "")
        params = {**masks_params(sh), "diagnostic": d, "part": "race"}
        if d:
            params["removed"] = rle.BULK_DIAGNOSTICS[d]
        why = masks_reason(sh)
        if why:
            ctx.row(variant=name, params={"n": n, **params}, metrics={}, invalid=why)
            continue
        entries[name] = one_pass_entry(n, lambda enc, x, sh=sh, d=d: enc._masks(x, sh, d),
                                       params, rle.masks_spec(sh, d), check=not d)
    entries[lean_name(rle.LEAN)] = one_pass_entry(
        n, lambda enc, x: enc._lean(x), {**shape_params(rle.LEAN), "blocks_per_sm": rle.LEAN[7],
                                         "part": "race"}, rle.lean_spec())
    entries["rle bulk"] = one_pass_entry(n, lambda enc, x: enc._bulk(x),
                                         {**shape_params(rle.BULK), "part": "race"},
                                         rle.bulk_spec())
    race_encoders(ctx, n, kinds, entries, ("chunked",),
                  ceilings={"read ceiling": (machine.read_once, [machine.read_spec()])})


@experiment("scan.masks_profile", title="What 18 and 19 execute: instructions and issue under the profiler",
            small={"n": None}, requires=profile_or_bulk_missing,
            kernels=lambda: ([rle.lean_spec(rle.LEAN, d) for d in MASKS_PROFILE_DIAGS]
                             + [rle.masks_spec(rle.MASKS, d) for d in MASKS_PROFILE_DIAGS]))
def masks_profile(ctx, n=1 << 25, diags=MASKS_PROFILE_DIAGS):
    """18 and 19 at their default shapes, and with diagnostics 1 and 3, once each under
    Nsight Compute (clocks untouched) at n int32 on runs of 1-15: the kernel's time, the
    warp instructions it executed, how often its schedulers issued one, and its DRAM
    bytes against the input's 4n."""
    if not ctx.timing or not n:
        return
    profile_encoders(ctx, n, MASKS_PROFILED, diags)
