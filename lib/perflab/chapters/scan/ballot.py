"""The twelfth try's experiments: the ballot encoder (23, kernels/03-scan/23_rle_ballot.cu),
one pass in which each warp finds its heads by ballots and stages them in shared memory at
once, so a tile holds only its runs while it looks back; any GPU of compute capability 8.0
and later.

  scan.rle_ballot    23 checked at the edge sizes on every kind of runs, past 2^30 and
                     past 2^31 (refused), 1000 calls back to back; then 23 by shape at
                     2^25 on every kind of runs with its three diagnostics, and 22 and 20
                     at their defaults (where the GPU runs them), in the same rounds as 15,
                     torch.unique_consecutive, the copy and the read ceiling
  scan.ballot_profile 23 and its diagnostics once each under Nsight Compute: time, warp
                     instructions executed, issue activity, DRAM bytes
"""
from __future__ import annotations

from ...errors import ConfigError
from ...registry import experiment
from .. import machine
from . import ops, rle
from .bulk import one_pass_entry
from .experiments import RLE_KINDS, RLE_SPECS, profile_missing, race_encoders
from .lean import LEAN_CHECK_SIZES, LEAN_LARGE, check_encoder, profile_encoders
from .reread import reread_name, reread_params
from .rounds import rounds_name, rounds_params

#: the profiled kernels: 23 at its default and with each diagnostic
BALLOT_PROFILE_DIAGS = (0, 1, 2, 3)


def ballot_params(shape) -> dict:
    w, piece, batch, cap, mb, width, seq = shape
    return {"warps": w, "piece": piece, "batch": batch, "cap": cap, "blocks_per_sm": mb,
            "width": width, "sequencer": seq, "tile": w * piece}


def ballot_name(shape) -> str:
    w, piece, batch, cap, mb, width, seq = shape
    chain = f"sequencer {seq}" if seq else f"look-back width {width}"
    return (f"rle ballot {w} warps x {piece}, {batch} in flight, {cap} staged, {mb} a SM, "
            f"{chain}")


def ballot_reason(shape) -> str | None:
    try:
        rle.check_ballot_shape(shape)
    except ConfigError as exc:
        return str(exc)
    return None


def _ballot_specs():
    return ([rle.ballot_spec(sh) for sh in rle.BALLOT_SHAPES]
            + [rle.ballot_spec(rle.BALLOT, d) for d in rle.BALLOT_DIAGNOSTICS]
            + [rle.walk_spec(), rle.rounds_spec()] + RLE_SPECS["chunked"]()
            + rle.decode_specs() + [machine.read_spec()])


@experiment("scan.rle_ballot", title="The ballot encoder (23) by shape, against 22, 20 and PyTorch",
            small={"n": 100003, "kinds": ("short", "distinct"), "check_sizes": (0, 1, 31, 4097),
                   "large": (), "calls": 20, "stress_sizes": (1000003,)},
            sweep=True, kernels=_ballot_specs)
def rle_ballot(ctx, n=1 << 25, kinds=RLE_KINDS, shapes=rle.BALLOT_SHAPES,
               diags=tuple(rle.BALLOT_DIAGNOSTICS), check_sizes=LEAN_CHECK_SIZES,
               large=LEAN_LARGE, calls=1000, stress_sizes=(1000003, 1 << 24)):
    """23 at its default checked (reference runs and a round trip) at `check_sizes` on
    every kind of runs, at 2^30 + 1 and past 2^31 - 1 elements (refused with its reason),
    and over `calls` back-to-back calls; then each shape of 23 on each kind of runs at n,
    checked, and timed round by round with 23's diagnostics (1: no look-back; 2: no runs
    written; 3: neither), 22 and 20 at their defaults where the GPU runs them (compute
    capability 9.0), the chunked encoder (15), torch.unique_consecutive(return_counts=True),
    the copy of the input and the read ceiling."""
    check_encoder(ctx, "ballot", kinds, check_sizes, large, calls, stress_sizes)
    entries = {}
    plan = [(sh, 0) for sh in shapes] + [(rle.BALLOT, d) for d in diags]
    for sh, d in plan:
        name = ballot_name(sh) + (f" diagnostic {d}" if d else "")
        params = {**ballot_params(sh), "diagnostic": d, "part": "race"}
        if d:
            params["removed"] = rle.BALLOT_DIAGNOSTICS[d]
        why = ballot_reason(sh)
        if why:
            ctx.row(variant=name, params={"n": n, **params}, metrics={}, invalid=why)
            continue
        entries[name] = one_pass_entry(
            n, lambda enc, x, sh=sh, d=d: enc._ballot(x, sh, d), params, rle.ballot_spec(sh, d),
            check=not d)
    if ops.bulk_missing() is None:
        entries[reread_name(rle.WALK, "walk")] = one_pass_entry(
            n, lambda enc, x: enc._walk(x), {**reread_params(rle.WALK), "part": "race"},
            rle.walk_spec())
        entries[rounds_name(rle.ROUNDS)] = one_pass_entry(
            n, lambda enc, x: enc._rounds(x), {**rounds_params(rle.ROUNDS), "part": "race"},
            rle.rounds_spec())
    race_encoders(ctx, n, kinds, entries, ("chunked",),
                  ceilings={"read ceiling": (machine.read_once, [machine.read_spec()])})


@experiment("scan.ballot_profile", title="What 23 executes: instructions and issue under the profiler",
            small={"n": None}, requires=profile_missing,
            kernels=lambda: [rle.ballot_spec(rle.BALLOT, d) for d in BALLOT_PROFILE_DIAGS])
def ballot_profile(ctx, n=1 << 25, diags=BALLOT_PROFILE_DIAGS):
    """23 at its default shape and with each diagnostic, once each under Nsight Compute
    (clocks untouched) at n int32 on runs of 1-15: the kernel's time, the warp
    instructions it executed, how often its schedulers issued one, and its DRAM bytes
    against the input's 4n."""
    if not ctx.timing or not n:
        return
    profile_encoders(ctx, n, (("rle ballot", rle.BALLOT),), diags)
