"""The tenth and eleventh tries' experiments: the re-read encoder (21,
kernels/03-scan/21_rle_reread.cu), 20's rounds with nothing held in shared memory: each
segment read from memory into the counters' registers to count its heads, and read again,
from L2, by the writers once its start is known; and the mask-walk encoder (22,
22_rle_walk.cu): 21's counters leave the heads as masks, and the writers walk the bits and
load only the heads' values; compute capability 9.0 and later.

  scan.rle_reread    21 checked at the edge sizes on every kind of runs, past 2^30 and
                     past 2^31 (refused), 1000 calls back to back; then 21 by shape at
                     2^25 on every kind of runs with its three diagnostics, and 20 at
                     its default, in the same rounds as 15, torch.unique_consecutive, the
                     copy and the read ceiling
  scan.reread_profile 21 and its diagnostics once each under Nsight Compute: time, warp
                     instructions executed, issue activity, DRAM bytes
  scan.rle_walk      22 checked as 21 is; then 22 by shape with its diagnostics, 21 and 20
                     at their defaults, in the same rounds as 15, torch, the copy and the
                     read ceiling
  scan.walk_profile  22 and its diagnostics once each under Nsight Compute
"""
from __future__ import annotations

from ...errors import ConfigError
from ...registry import experiment
from .. import machine
from . import ops, rle
from .bulk import one_pass_entry
from .experiments import RLE_KINDS, RLE_SPECS, race_encoders
from .lean import (LEAN_CHECK_SIZES, LEAN_LARGE, check_encoder, profile_encoders,
                   profile_or_bulk_missing)
from .rounds import rounds_name, rounds_params

#: the profiled segments: 21 (22) at its default and with each diagnostic
REREAD_PROFILE_DIAGS = (0, 1, 2, 3)
#: each encoder's row name, shape rule, kernel, call on an Encoder
MODES = {"reread": ("rle reread", rle.check_reread_shape, rle.reread_spec, "_reread"),
         "walk": ("rle walk", rle.check_walk_shape, rle.walk_spec, "_walk")}


def reread_params(shape) -> dict:
    c, w, kib, sl, mb, pf = shape
    return {"counters": c, "writers": w, "segment_kib": kib, "slots": sl,
            "blocks_per_sm": mb, "prefetch": pf}


def reread_name(shape, mode: str = "reread") -> str:
    c, w, kib, sl, mb, pf = shape
    return (f"{MODES[mode][0]} {c}+{w} warps, {kib} KiB, {sl} slots, {mb} a SM"
            + (", prefetch" if pf else ""))


def reread_reason(shape, mode: str = "reread") -> str | None:
    try:
        MODES[mode][1](shape)
    except ConfigError as exc:
        return str(exc)
    return None


def _reread_specs():
    return ([rle.reread_spec(sh) for sh in rle.REREAD_SHAPES]
            + [rle.reread_spec(rle.REREAD, d) for d in rle.REREAD_DIAGNOSTICS]
            + [rle.rounds_spec()] + RLE_SPECS["chunked"]() + rle.decode_specs()
            + [machine.read_spec()])


@experiment("scan.rle_reread", title="The re-read encoder (21) by shape, against 20 and PyTorch",
            small={"n": 100003, "kinds": ("short", "distinct"), "check_sizes": (0, 1, 31, 4097),
                   "large": (), "calls": 20, "stress_sizes": (1000003,)},
            sweep=True, requires=ops.bulk_missing, kernels=_reread_specs)
def rle_reread(ctx, n=1 << 25, kinds=RLE_KINDS, shapes=rle.REREAD_SHAPES,
               diags=tuple(rle.REREAD_DIAGNOSTICS), check_sizes=LEAN_CHECK_SIZES,
               large=LEAN_LARGE, calls=1000, stress_sizes=(1000003, 1 << 24)):
    """21 at its default checked (reference runs and a round trip) at `check_sizes` on
    every kind of runs, at 2^30 + 1 and past 2^31 - 1 elements (refused with its reason),
    and over `calls` back-to-back calls; then each shape of 21 on each kind of runs at n,
    checked, and timed round by round with 21's diagnostics (1: no runs written; 2: and
    no words, nobody waits; 3: and no heads counted, the counters' loads alone), 20 at its
    default, the chunked encoder (15), torch.unique_consecutive(return_counts=True), the
    copy of the input and the read ceiling."""
    _race(ctx, "reread", n, kinds, shapes, diags, check_sizes, large, calls, stress_sizes,
          rle.REREAD, {})


def _race(ctx, mode, n, kinds, shapes, diags, check_sizes, large, calls, stress_sizes,
          default, others) -> None:
    """Encoder `mode` (21 or 22) checked at its default, then raced by shape with its
    diagnostics at `default`, `others` (row name -> entry), 20 at its default, 15, torch,
    the copy and the read ceiling."""
    check_encoder(ctx, mode, kinds, check_sizes, large, calls, stress_sizes)
    _, _, spec, call = MODES[mode]
    entries = {}
    plan = [(sh, 0) for sh in shapes] + [(default, d) for d in diags]
    for sh, d in plan:
        name = reread_name(sh, mode) + (f" diagnostic {d}" if d else "")
        params = {**reread_params(sh), "diagnostic": d, "part": "race"}
        if d:
            params["removed"] = rle.REREAD_DIAGNOSTICS[d]
        why = reread_reason(sh, mode)
        if why:
            ctx.row(variant=name, params={"n": n, **params}, metrics={}, invalid=why)
            continue
        entries[name] = one_pass_entry(
            n, lambda enc, x, sh=sh, d=d: getattr(enc, call)(x, sh, d), params, spec(sh, d),
            check=not d)
    entries.update(others)
    entries[rounds_name(rle.ROUNDS)] = one_pass_entry(
        n, lambda enc, x: enc._rounds(x), {**rounds_params(rle.ROUNDS), "part": "race"},
        rle.rounds_spec())
    race_encoders(ctx, n, kinds, entries, ("chunked",),
                  ceilings={"read ceiling": (machine.read_once, [machine.read_spec()])})


@experiment("scan.reread_profile", title="What 21 executes: instructions and issue under the profiler",
            small={"n": None}, requires=profile_or_bulk_missing,
            kernels=lambda: [rle.reread_spec(rle.REREAD, d) for d in REREAD_PROFILE_DIAGS])
def reread_profile(ctx, n=1 << 25, diags=REREAD_PROFILE_DIAGS):
    """21 at its default shape and with each diagnostic, once each under Nsight Compute
    (clocks untouched) at n int32 on runs of 1-15: the kernel's time, the warp
    instructions it executed, how often its schedulers issued one, and its DRAM bytes
    against the input's 4n (its re-reads, if they hit L2, add nothing)."""
    if not ctx.timing or not n:
        return
    profile_encoders(ctx, n, (("rle reread", rle.REREAD),), diags)


def _walk_specs():
    return ([rle.walk_spec(sh) for sh in rle.WALK_SHAPES]
            + [rle.walk_spec(rle.WALK, d) for d in rle.REREAD_DIAGNOSTICS]
            + [rle.reread_spec(), rle.rounds_spec()] + RLE_SPECS["chunked"]()
            + rle.decode_specs() + [machine.read_spec()])


@experiment("scan.rle_walk", title="The mask-walk encoder (22) by shape, against 21, 20 and PyTorch",
            small={"n": 100003, "kinds": ("short", "distinct"), "check_sizes": (0, 1, 31, 4097),
                   "large": (), "calls": 20, "stress_sizes": (1000003,)},
            sweep=True, requires=ops.bulk_missing, kernels=_walk_specs)
def rle_walk(ctx, n=1 << 25, kinds=RLE_KINDS, shapes=rle.WALK_SHAPES,
             diags=tuple(rle.REREAD_DIAGNOSTICS), check_sizes=LEAN_CHECK_SIZES,
             large=LEAN_LARGE, calls=1000, stress_sizes=(1000003, 1 << 24)):
    """22 at its default checked (reference runs and a round trip) at `check_sizes` on
    every kind of runs, at 2^30 + 1 and past 2^31 - 1 elements (refused with its reason),
    and over `calls` back-to-back calls; then each shape of 22 on each kind of runs at n,
    checked, and timed round by round with 22's diagnostics (21's three), 21 and 20 at
    their defaults, the chunked encoder (15), torch.unique_consecutive(return_counts=True),
    the copy of the input and the read ceiling."""
    others = {reread_name(rle.REREAD): one_pass_entry(
        n, lambda enc, x: enc._reread(x), {**reread_params(rle.REREAD), "part": "race"},
        rle.reread_spec())}
    _race(ctx, "walk", n, kinds, shapes, diags, check_sizes, large, calls, stress_sizes,
          rle.WALK, others)


@experiment("scan.walk_profile", title="What 22 executes: instructions and issue under the profiler",
            small={"n": None}, requires=profile_or_bulk_missing,
            kernels=lambda: [rle.walk_spec(rle.WALK, d) for d in REREAD_PROFILE_DIAGS])
def walk_profile(ctx, n=1 << 25, diags=REREAD_PROFILE_DIAGS):
    """22 at its default shape and with each diagnostic, once each under Nsight Compute
    (clocks untouched) at n int32 on runs of 1-15: the kernel's time, the warp
    instructions it executed, how often its schedulers issued one, and its DRAM bytes
    against the input's 4n."""
    if not ctx.timing or not n:
        return
    profile_encoders(ctx, n, (("rle walk", rle.WALK),), diags)
