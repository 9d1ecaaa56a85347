"""Every kernel of chapter 3 once at small sizes, each result checked: small enough to run
under compute-sanitizer (memcheck, racecheck) in seconds.

    compute-sanitizer --tool memcheck python -m perflab.chapters.scan.smoke

(`python -m perflab sanitize --chapter 03-scan` runs the chapter's whole correctness
pass the same way.) Exits 1 if a result is wrong."""
from __future__ import annotations

import sys

import numpy as np

#: the encoders that run on any GPU of compute capability 8.0 and later (23 to 25)
ONE_LAUNCH = ("ballot", "graph", "room")


def main(sizes=(1, 31, 4097, 100003), only: str | None = None) -> int:
    """Every kernel, or with only="pipelined", "staged", "lookahead", "chunked", "bulk",
    "lean", "masks", "rounds", "reread", "walk", "ballot", "graph" or "room" (argument or
    $SCAN_SMOKE_ONLY)
    that scan alone (08 with its encoder 09, 10, 12 with 13, 14 with 15, 16 with 17 to 22;
    "lean", "masks", "rounds", "reread", "walk", "ballot", "graph", "room": the encoder 18
    to 25 alone; 16 to 22 where the GPU can run them, 23 to 25 everywhere)."""
    import os

    import cupy as cp

    from . import ops, rle
    from .experiments import check_rle, check_scan, fresh

    cp.cuda.set_allocator(None)        # one cudaMalloc per array: overruns leave it
    only = only or os.environ.get("SCAN_SMOKE_ONLY")
    extra = (only,) if only else ("pipelined", "staged", "lookahead", "chunked")
    if "bulk" not in extra and ops.bulk_missing() is None and not only:
        extra += ("bulk",)
    variants = () if only else ops.RACED
    bad = 0
    for n in sizes:
        for dt in ops.CTYPES:
            x = fresh(n, dt, n)
            for v in variants:
                for inc in (True, False):
                    ok = check_scan(ops.scan(x, inclusive=inc, variant=v), x, inc).correct
                    bad += not ok
                    print(f"{'ok  ' if ok else 'FAIL'} scan {v:12s} {dt:7s} n={n} "
                          f"{'inclusive' if inc else 'exclusive'}", flush=True)
            x = fresh(n, dt, n)
            for v in (e for e in extra if e not in rle.SM90[1:] + ONE_LAUNCH):
                for inc in (True, False):
                    out = cp.empty_like(x)
                    ops.enqueue(x, out, inc, v)
                    ok = check_scan(out, x, inc).correct
                    bad += not ok
                    print(f"{'ok  ' if ok else 'FAIL'} scan {v:12s} {dt:7s} n={n} "
                          f"{'inclusive' if inc else 'exclusive'}", flush=True)
        x = fresh(n, "int32", n)
        for lb in ops.LOOKBACKS if variants else ():
            for g in ops.GRIDS:
                out = cp.empty_like(x)
                ops.enqueue(x, out, True, "single-pass", lookback=lb, grid=g)
                ok = check_scan(out, x, True).correct
                bad += not ok
                print(f"{'ok  ' if ok else 'FAIL'} scan {lb} look-back, {g} n={n}", flush=True)
        enc = rle.Encoder(n)
        for kind in ("short", "equal", "distinct"):
            x = rle.make_runs(n, kind, np.random.default_rng(n))
            encoders = (tuple(e for e in extra if e in rle.ALL)
                        + (rle.SM90[1:] if "bulk" in extra else ())
                        + (() if only else ONE_LAUNCH))
            for v in (rle.ENCODERS if variants else ()) + encoders:
                ok = check_rle(x, *enc.encode(x, v))[0].correct
                bad += not ok
                print(f"{'ok  ' if ok else 'FAIL'} rle {v} {kind} n={n}", flush=True)
    print(f"{bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
