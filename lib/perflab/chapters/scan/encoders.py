"""The one-pass encoders' experiments: scan.rle_bulk (17) and scan.rle_room (25 and 24)."""
from __future__ import annotations

import numpy as np

from ... import device, race
from ...errors import refusal
from ...kernels import checked, get_kernel
from ...registry import experiment
from ...vendors import as_torch, release, torch_or_none
from .. import machine
from . import ops, rle
from .bulk import shape_name, shape_params
from .experiments import (RLE_KINDS, RLE_SPECS, back_to_back, check_rle, encode_once,
                          race_encoders, runs_metrics, seed, torch_runs)

#: the sizes an encoder is checked at on every kind of runs, and past 2^30 / 2^31
CHECK_SIZES = (0, 1, 31, 4097, 1000003, (1 << 25) + 5)
LARGE = ((1 << 30) + 1, (1 << 31) + 5)
#: the names of 25's and 24's rows
ROOM_NAME, GRAPH_NAME = "rle room", "rle graph"


def stress(ctx, variant: str, calls: int, sizes) -> None:
    """`calls` encodes back to back (back_to_back) over four rotating inputs a size."""
    for n in sizes:
        s = seed()
        rng = np.random.default_rng(s)
        xs = [rle.make_runs(n, kind, rng) for kind in ("short", "long", "mixed", "distinct")]
        want = [int((x[1:] != x[:-1]).sum()) + 1 for x in xs]
        encs = [rle.Encoder(n) for _ in xs]
        back_to_back(ctx, f"rle {variant}", calls,
                     lambda k: encs[k % 4].encode(xs[k % 4], variant, check=False)[2],
                     lambda k: want[k % 4],
                     lambda: sum(not check_rle(x, e.values, e.lengths, e.count)[0].correct
                                 for x, e in zip(xs, encs)),
                     params={"n": n, "calls": calls, "part": "stress"},
                     kernels=RLE_SPECS[variant](), seed=s)
        del xs, encs
        release()


def check_replay(ctx, sizes, kinds) -> None:
    """25's graph replayed: a second call on the same array, checked (part "replay")."""
    for m in sizes:
        for kind in kinds:
            s = seed()
            x = rle.make_runs(m, kind, np.random.default_rng(s))
            enc = rle.Encoder(m)
            checked(lambda: enc.encode(x, "room"), f"{ROOM_NAME} (first call)")
            enc.poison()
            checked(lambda: enc.encode(x, "room"), f"{ROOM_NAME} (replayed)")
            chk, runs = check_rle(x, enc.values, enc.lengths, enc.count)
            call = enc.graph_call()
            ctx.row(variant=ROOM_NAME, params={"n": m, "kind": kind, "part": "replay",
                                               "graphs": call.graphs.graphs if call else 0},
                    metrics={"runs": (runs, "1")}, check=chk, kernels=[rle.room_spec()],
                    seed=s)
            del x, enc
            release()


#: the encoders call_time_rows times: row name -> encode options (their kernels: plan_spec)
CALL_ENCODERS = {ROOM_NAME: {"variant": "room"}, GRAPH_NAME: {"variant": "room", "head_bytes": 8}}


def call_time_rows(ctx, n: int, rounds: int, n_repeat: int) -> None:
    """CALL_ENCODERS and torch on runs of 1-15, raced behind the spin (machine.ahead): each
    call's time, its host part and its work alone, and the ratios to torch on each."""
    torch, vendor = torch_or_none(), "torch.unique_consecutive"
    s = seed()
    x = rle.make_runs(n, "short", np.random.default_rng(s))
    state = {}

    def encoder(name, opts):
        enc = rle.Encoder(n)

        def judge():
            for _ in range(2):                  # (a graph: the second call replays it)
                enc.poison()
                checked(lambda: enc.encode(x, check=False, **opts), name)
            chk, state["runs"] = check_rle(x, enc.values, enc.lengths, enc.count)
            state["last"] = enc
            return chk
        return race.Entry(name, lambda: enc.encode(x, check=False, **opts), check=judge,
                          kernels=[plan_spec(name)], metrics=runs_metrics(state),
                          derived=call_metrics)
    entries = [encoder(name, opts) for name, opts in CALL_ENCODERS.items()]
    if torch is not None:
        tx = as_torch(x)
        entries.append(race.Entry(
            vendor, lambda: torch.unique_consecutive(tx, return_counts=True),
            check=lambda: torch_runs(torch, tx, state["last"], state["runs"]),
            baseline="x_torch", metrics=runs_metrics(state), derived=call_metrics))
    race.run(ctx, entries, params={"n": n, "kind": "short", "part": "call time",
                                   "ahead_ns": machine.AHEAD_NS},
             ahead=machine.ahead(), rounds=rounds, n_repeat=n_repeat, seed=s)
    del x, entries
    release()


def call_metrics(m: dict) -> dict:
    """A call-time row's call (its median time) and the host's lead (call less queued)."""
    if "queued_ms" not in m:
        return {}
    call = m["median_ms"][0]
    return {"call_ms": (call, "ms"), "lead_ms": (call - m["queued_ms"][0], "ms")}


# -- 17: the bulk-copy encoder, by shape ---------------------------------------------------
@experiment("scan.rle_bulk", title="The bulk-copy encoder (17) by shape, against PyTorch",
            small={"n": 100003, "kinds": ("short", "distinct")}, sweep=True,
            requires=ops.bulk_missing,
            kernels=lambda: [rle.bulk_spec(sh) for sh in rle.BULK_SHAPES] + [machine.read_spec()],
            # 17 at its default on runs of 1-15, and the read ceiling the page quotes
            reader={"kinds": ("short",), "shapes": (rle.BULK,)})
def rle_bulk(ctx, n=1 << 25, kinds=RLE_KINDS, shapes=rle.BULK_SHAPES):
    entries = {}
    for sh in shapes:
        name = f"rle bulk {shape_name(sh)}"
        # ("diagnostic": 0, as the rows had it when 17 had its parts-removed diagnostics)
        params = {**shape_params(sh), "diagnostic": 0}
        why = refusal(rle.check_bulk_shape, sh)
        if why:
            ctx.row(variant=name, params={"n": n, **params}, metrics={}, invalid=why)
            continue
        entries[name] = (params, [rle.bulk_spec(sh)], {"variant": "bulk", "shape": sh},
                         rle.Encoder(n))
    race_encoders(ctx, n, kinds, entries, ("fused",), ceiling=True)


# -- 25: room in L1 for the loads in flight --------------------------------------------------
#: 24 at 288 staged heads a walker (its other shape as BALLOT)
GRAPH_288 = rle.BALLOT[:3] + (288,) + rle.BALLOT[4:]
#: the race's encoders: row name -> (bytes a staged head, shape, least L1)
L1_PLAN = {
    ROOM_NAME: (6, rle.ROOM, False),
    "rle room, 32 chunks a batch": (6, rle.ROOM[:2] + (32,) + rle.ROOM[3:], False),
    "rle room, least L1": (6, rle.ROOM, True),
    GRAPH_NAME: (8, rle.BALLOT, False),
    "rle graph, 288 heads": (8, GRAPH_288, False),
    "rle graph, 288 heads, least L1": (8, GRAPH_288, True),
    "rle graph, 288 heads, 32 chunks a batch": (8, GRAPH_288[:2] + (32,) + GRAPH_288[3:], False),
}


def plan_spec(name: str):
    head_bytes, shape, all_shared = L1_PLAN[name]
    return (rle.room_spec if head_bytes == 6 else rle.graph_spec)(shape, all_shared)


def plan_params(name: str, cc: str) -> dict:
    """An L1_PLAN entry's row params: shape, head bytes, split, L1 left, loads in flight."""
    head_bytes, shape, all_shared = L1_PLAN[name]
    names = ("warps", "piece", "batch", "cap", "blocks_per_sm", "width", "sequencer")
    return {**dict(zip(names, shape)), "tile": shape[0] * shape[1], "diagnostic": 0, "part": "race",
            "bytes_a_head": head_bytes, "all_shared": all_shared,
            **device.l1_room(int(get_kernel(plan_spec(name)).attributes["shared_size_bytes"]),
                             rle.ballot_smem(shape, head_bytes), shape[4], all_shared, cc),
            "in_flight_kib": shape[0] * shape[4] * shape[2] * 128 / 1024}


@experiment("scan.rle_room", title="Room in L1 for the loads (25), against 24 at its shapes and PyTorch",
            small=dict(n=100003, kinds=("short", "distinct"), check_sizes=(0, 1, 31, 4097),
                       large=(), calls=20, stress_sizes=(1000003,), replay_sizes=(1, 4097),
                       rounds=2, n_repeat=3), sweep=True,
            kernels=lambda: ([plan_spec(name) for name in L1_PLAN] + rle.decode_specs()
                             + [machine.read_spec(), machine.read_write_spec(),
                                machine.spin_spec()]),
            # runs of 1-15 (the page's race and call time), the refusal past 2^31, fewer stress and replay sizes
            reader={"kinds": ("short",), "large": ((1 << 31) + 5,), "stress_sizes": (1000003,), "replay_sizes": (1, 4097, 1000003)})
def rle_room(ctx, n=1 << 25, kinds=RLE_KINDS, check_sizes=CHECK_SIZES, large=LARGE,
             calls=1000, stress_sizes=(1000003, 1 << 24),
             replay_sizes=(1, 31, 4097, 1000003, (1 << 25) + 5), rounds=7, n_repeat=20):
    """25 checked, L1_PLAN's encoders raced with 05, torch, ceiling and floor; call time."""
    cc = device.current().compute_capability
    for m in check_sizes:
        for kind in kinds:
            encode_once(ctx, m, seed(), "room", {"n": m, "kind": kind, "part": "check"}, kind)
    for m in large:
        encode_once(ctx, m, seed(), "room", {"n": m, "kind": "short", "part": "large"})
    if calls:
        stress(ctx, "room", calls, stress_sizes)
    check_replay(ctx, replay_sizes, kinds)
    entries = {name: (plan_params(name, cc), [plan_spec(name)],
                      {"variant": "room", "shape": shape, "head_bytes": head_bytes,
                       "all_shared": all_shared}, rle.Encoder(n))
               for name, (head_bytes, shape, all_shared) in L1_PLAN.items()}
    race_encoders(ctx, n, kinds, entries, ("fused",), ceiling=True, floor=True)
    call_time_rows(ctx, n, rounds, n_repeat)
