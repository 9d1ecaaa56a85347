"""Every kernel of the scan chapters once at small sizes, each result checked: small enough to run
under compute-sanitizer (memcheck, racecheck) in seconds.

    compute-sanitizer --tool memcheck python -m perflab.chapters.scan.smoke

(`python -m perflab sanitize --chapter 03-scan` runs the chapter's whole correctness
pass the same way.) Exits 1 if a result is wrong."""
from __future__ import annotations

import sys

import numpy as np

def main(sizes=(1, 31, 4097, 100003), only: str | None = None) -> int:
    """Every kernel, or with only= one variant of ops.VARIANTS or rle.VARIANTS (argument
    or $SCAN_SMOKE_ONLY) that one alone; 16 and 17 where the GPU can run them."""
    import os

    import cupy as cp

    from . import ops, rle
    from .experiments import check_rle, check_scan, fresh

    cp.cuda.set_allocator(None)        # one cudaMalloc per array: overruns leave it
    only = only or os.environ.get("SCAN_SMOKE_ONLY")
    sm90 = ops.bulk_missing() is None
    scans = [v for v in ops.VARIANTS if (only in (None, v)) and (sm90 or v != "bulk")]
    encoders = [v for v in rle.VARIANTS if (only in (None, v)) and (sm90 or v not in rle.SM90)]
    bad = 0
    for n in sizes:
        for dt in ops.CTYPES:
            x = fresh(n, dt, n)
            for v in scans:
                for inc in (True, False):
                    ok = check_scan(ops.scan(x, inclusive=inc, variant=v), x, inc).correct
                    bad += not ok
                    print(f"{'ok  ' if ok else 'FAIL'} scan {v:12s} {dt:7s} n={n} "
                          f"{'inclusive' if inc else 'exclusive'}", flush=True)
        x = fresh(n, "int32", n)
        for lb in ops.LOOKBACKS if only in (None, "single-pass") else ():
            for g in ops.GRIDS:
                out = cp.empty_like(x)
                ops.enqueue(x, out, True, "single-pass", lookback=lb, grid=g)
                ok = check_scan(out, x, True).correct
                bad += not ok
                print(f"{'ok  ' if ok else 'FAIL'} scan {lb} look-back, {g} n={n}", flush=True)
        enc = rle.Encoder(n)
        for kind in ("short", "equal", "distinct"):
            x = rle.make_runs(n, kind, np.random.default_rng(n))
            for v in encoders:
                ok = check_rle(x, *enc.encode(x, v))[0].correct
                bad += not ok
                print(f"{'ok  ' if ok else 'FAIL'} rle {v} {kind} n={n}", flush=True)
    print(f"{bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
