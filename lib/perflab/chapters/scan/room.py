"""The seventeenth try's experiment: room in L1 for the walkers' loads (25,
kernels/03-scan/25_rle_room.cu: 24 with 6 bytes a staged head); any GPU of compute
capability 8.0 and later.

  scan.rle_room   25 checked at the edge sizes on every kind of runs (its first call and
                  its graph replayed), past 2^30 and past 2^31 (refused), 1000 calls back
                  to back; then, at 2^25 on every kind of runs and in the same rounds as
                  15, torch.unique_consecutive, the copy and the read ceiling, 25 and 24 at
                  shapes that leave the SM's L1 more or less room for the loads in flight
                  (L1_PLAN); then 25, 24 and the torch call at 2^25 on runs of 1-15 timed
                  three ways (the call, its host part, its GPU work alone)
"""
from __future__ import annotations

from ...kernels import get_kernel
from ...registry import experiment
from .. import machine
from . import rle
from .ballot import ballot_params
from .bulk import one_pass_entry
from .calltime import spin_spec
from .experiments import RLE_KINDS, RLE_SPECS, race_encoders
from .graph import GRAPH_NAME, GRAPH_SMALL, call_time_rows, check_replay
from .lean import LEAN_CHECK_SIZES, LEAN_LARGE, check_encoder

#: the name of 25's rows
ROOM_NAME = "rle room"
#: 24 at 288 staged heads a walker (its other shape as BALLOT)
GRAPH_288 = rle.BALLOT[:3] + (288,) + rle.BALLOT[4:]
#: the race's encoders: row name -> (encoder, shape, its SMs split with the least L1). 24
#: at 384 and 288 staged heads (8 bytes a head), at 288 with the least L1, and at 288 with
#: twice the loads a walker (32 chunks a batch); 25 (6 bytes a head), with twice the loads,
#: and with the least L1.
L1_PLAN = {
    ROOM_NAME: ("room", rle.ROOM, False),
    "rle room, 32 chunks a batch": ("room", rle.ROOM[:2] + (32,) + rle.ROOM[3:], False),
    "rle room, least L1": ("room", rle.ROOM, True),
    GRAPH_NAME: ("graph", rle.BALLOT, False),
    "rle graph, 288 heads": ("graph", GRAPH_288, False),
    "rle graph, 288 heads, least L1": ("graph", GRAPH_288, True),
    "rle graph, 288 heads, 32 chunks a batch": ("graph", GRAPH_288[:2] + (32,) + GRAPH_288[3:],
                                                False),
}
#: the shared memory (KiB) an SM of compute capability 9.0 can be split at; the rest of
#: its 256 KiB is L1 (CUDA's Hopper tuning guide). A launch takes the smallest split that
#: holds its resident blocks, or the largest when its kernel asks for all shared memory.
SM90_SPLITS_KIB = (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)
#: shared memory the system keeps for each resident block (compute capability 8.0 and later)
RESERVED_A_BLOCK = 1024


def l1_room(static: int, smem: int, blocks: int, all_shared: bool, cc: str) -> dict:
    """What `blocks` blocks an SM of a kernel with `static` B of static and `smem` B of
    dynamic shared memory take of the SM (KiB, with the bytes the system keeps a block) and
    the L1 left to it (KiB, inferred from the split: the smallest that holds them, or the
    largest with `all_shared`; None on a GPU that is not compute capability 9.0, or where
    they do not fit)."""
    need = blocks * (smem + static + RESERVED_A_BLOCK)
    fits = [c for c in SM90_SPLITS_KIB if c * 1024 >= need]
    split = (SM90_SPLITS_KIB[-1] if all_shared else fits[0]) if cc == "9.0" and fits else None
    return {"shared_kib_sm": round(need / 1024, 1),
            "l1_kib": None if split is None else 256 - split}


def plan_spec(name: str):
    """The KernelSpec of a race entry of L1_PLAN."""
    mode, shape, all_shared = L1_PLAN[name]
    return (rle.room_spec if mode == "room" else rle.graph_spec)(shape, 0, all_shared)


def plan_params(name: str, cc: str) -> dict:
    """A race entry's row params: 23's shape params, the bytes a staged head, whether it
    asks for all shared memory, what its blocks take of an SM, the L1 left, and the bytes
    of loads its walkers can have in flight an SM (KiB)."""
    mode, shape, all_shared = L1_PLAN[name]
    room = mode == "room"
    smem = (rle.room_smem if room else rle.ballot_smem)(shape)
    return {**ballot_params(shape), "diagnostic": 0, "part": "race",
            "bytes_a_head": 6 if room else 8, "all_shared": all_shared,
            **l1_room(int(get_kernel(plan_spec(name)).attributes["shared_size_bytes"]), smem,
                      shape[4], all_shared, cc),
            "in_flight_kib": shape[0] * shape[4] * shape[2] * 128 / 1024}


def _specs():
    return ([plan_spec(name) for name in L1_PLAN]
            + [rle.ballot_spec()] + RLE_SPECS["chunked"]() + rle.decode_specs()
            + [machine.read_spec(), spin_spec()])


@experiment("scan.rle_room", title="Room in L1 for the loads (25), against 24 at its shapes and PyTorch",
            small=GRAPH_SMALL, sweep=True, kernels=_specs)
def rle_room(ctx, n=1 << 25, kinds=RLE_KINDS, check_sizes=LEAN_CHECK_SIZES,
             large=LEAN_LARGE, calls=1000, stress_sizes=(1000003, 1 << 24),
             replay_sizes=(1, 31, 4097, 1000003, (1 << 25) + 5), rounds=7, n_repeat=20):
    """25 checked (reference runs and a round trip) at `check_sizes` on every kind of runs,
    at 2^30 + 1 and past 2^31 - 1 elements (refused with its reason), its graph replayed
    at `replay_sizes` on every kind, and over `calls` back-to-back calls; then L1_PLAN's
    encoders (25 and 24 at shapes that leave L1 more or less room for the loads in
    flight) on each kind of runs at n, timed round by round with the chunked encoder
    (15), torch.unique_consecutive(return_counts=True), the copy of the input and the
    read ceiling; then 25, 24 and the torch call timed three ways (call_time_rows)."""
    from ...device import current
    cc = current().compute_capability
    check_encoder(ctx, "room", kinds, check_sizes, large, calls, stress_sizes)
    check_replay(ctx, replay_sizes, kinds, "room", ROOM_NAME, rle.room_spec)
    entries = {}
    for name, (mode, shape, all_shared) in L1_PLAN.items():
        def run(enc, x, m=mode, sh=shape, a=all_shared):
            getattr(enc, "_" + m)(x, sh, 0, a)
        entries[name] = one_pass_entry(n, run, plan_params(name, cc), plan_spec(name))
    race_encoders(ctx, n, kinds, entries, ("chunked",),
                  ceilings={"read ceiling": (machine.read_once, [machine.read_spec()])})
    call_time_rows(ctx, n, rounds, n_repeat,
                   {ROOM_NAME: ("room", lambda: [rle.room_spec()]),
                    GRAPH_NAME: ("graph", lambda: [rle.graph_spec()])})
