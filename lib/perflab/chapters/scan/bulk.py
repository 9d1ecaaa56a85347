"""The bulk-copy single pass (16, compute capability 9.0+): scan.bulk, its shapes raced,
and scan.bulk_profile, 16 and 17 under Nsight Compute."""
from __future__ import annotations

import numpy as np

from ... import race
from ...errors import refusal
from ...profile import REPLAYED
from ...registry import experiment
from ...vendors import release
from . import ops, rle
from .experiments import (check_tile_scans, ours, profile_missing, profile_rows, scan_entry,
                          time_set, timed_input, vendor_entries)

#: the sizes scan.bulk times (2^25: the encoder's size, where the ring's fill and drain weigh)
BULK_SIZES = (1 << 28, 1 << 25)


def shape_params(shape) -> dict:
    return dict(zip(("scanners", "reducers", "tile_kib", "stages", "width", "delay_ns",
                     "elems_per_lane"), shape))


def shape_name(shape) -> str:
    sc, rd, kib, st, wd, d = shape[:6]
    return (f"{sc}+{rd} warps, {kib} KiB x {st}"
            + ("" if wd == ops.BULK[4] else f", sequencer x{wd}")
            + ("" if d == ops.BULK[5] else f", {d} ns")
            + (f", {shape[6]} a lane" if len(shape) > 6 else ""))


@experiment("scan.bulk", title="A sequencer instead of look-backs: the bulk-copy single pass by shape",
            small={"sizes": (1000003,), "wide_bytes": 1 << 22}, sweep=True,
            requires=ops.bulk_missing,
            kernels=lambda: ([ops.bulk_spec("int32", sh) for sh in ops.BULK_SWEEP]
                             + [ops.bulk_spec("int32", sh, lookback=False)
                                for sh in ops.BULK_DIAGNOSTIC]
                             + [s for dt in ("int32", "int64", "float32")
                                for s in ops.specs("bulk", dt, True)]
                             + ops.specs("single-pass", "int32", True)),
            # 16 at its default shape (the only one the page quotes), with its diagnostic
            reader={"sweep": (ops.BULK,)})
def bulk(ctx, sizes=BULK_SIZES, sweep=ops.BULK_SWEEP, diagnostic=ops.BULK_DIAGNOSTIC,
         wide_bytes=1 << 30):
    """Every shape of 16 at each size, int32 inclusive, checked, then raced with the copy,
    torch.cumsum, 03 and 16 without its sequencer (each tile scanned alone); then 16 on
    int64 (two status words) and float32, `wide_bytes` of input."""
    for n in sizes:
        s, x, sets = timed_input(ctx, n)
        entries = []
        for sh, lb in [(sh, True) for sh in sweep] + [(sh, False) for sh in diagnostic]:
            name = f"bulk {shape_name(sh)}" + ("" if lb else " without sequencer")
            params = {"kernel": "bulk", "lookback": lb, **shape_params(sh)}
            why = refusal(ops.check_bulk, "int32", sh)
            if why:
                ctx.row(variant=name, params={"n": n, "dtype": "int32", **params}, metrics={},
                        invalid=why)
                continue
            judge = None if lb else (lambda o, a, t=sh[2] * 256: check_tile_scans(o, a, t))
            entries.append(scan_entry(
                name, lambda a, o, sh=sh, lb=lb: ops.enqueue_bulk(a, o, True, sh, lb), x, sets,
                True, [ops.bulk_spec("int32", sh, True, lb)], judge=judge, params=params))
        entries.append(scan_entry("single-pass", ours("single-pass", True), x, sets, True,
                                  ops.specs("single-pass", "int32", True)))
        entries += vendor_entries(x, sets, ("torch.cumsum",))
        race.run(ctx, entries, params={"n": n, "dtype": "int32"}, budget_s=6.0, seed=s)
        del sets, x, entries
        release()
    if wide_bytes:
        for dt in ("int64", "float32"):
            n = wide_bytes // np.dtype(dt).itemsize
            time_set(ctx, n, dt, (True,), ("bulk",), budget_s=2.0, part="dtype")


def _profile_or_bulk_missing():
    return ops.bulk_missing() or profile_missing()


@experiment("scan.bulk_profile", title="What the bulk-copy scan and encoder move: DRAM counters",
            small={"segments": ()}, requires=_profile_or_bulk_missing,
            kernels=lambda: ops.specs("bulk", "int32", True) + [rle.bulk_spec()],
            # a recorded check: a reader's run shows the recorded counters of the two
            # segments the pages quote; plan="full" profiles where Nsight Compute is installed
            reader={}, replay_reader=REPLAYED)
def bulk_profile(ctx, segments=(("bulk", 1 << 28), ("rle bulk", 1 << 25))):
    """16 at 2^28 and 17 at 2^25 under Nsight Compute: DRAM bytes over the input's 4n."""
    def derive(n, m):
        return {f"dram_{k}_over_input": (m[f"dram_{k}_MB"][0] * 1e6 / (4 * n), "x")
                for k in ("read", "write") if f"dram_{k}_MB" in m}
    profile_rows(ctx, segments, lambda v: ops.specs("bulk", "int32", True) if v == "bulk"
                 else [rle.bulk_spec()], derive=derive)
