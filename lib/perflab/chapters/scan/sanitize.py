"""Every kernel of the scan chapters once at small sizes, each result checked, for
compute-sanitizer (scan.sanitize: a row a tool, perflab.sanitize); exits 1 if one is wrong.

    compute-sanitizer --tool memcheck python -m perflab.chapters.scan.sanitize"""
from __future__ import annotations

import os
import sys

import numpy as np

from ... import sanitize as sanitizers

def main(sizes=(1, 31, 4097, 100003), only: str | None = None) -> int:
    """Every kernel, or with only= one variant of ops.VARIANTS or rle.VARIANTS (argument
    or $SCAN_SMOKE_ONLY) that one alone; 16 and 17 where the GPU can run them."""
    import cupy as cp
    from . import ops, rle
    from .experiments import available, check_rle, check_scan, fresh

    cp.cuda.set_allocator(None)        # one cudaMalloc per array: overruns leave it
    only = only or os.environ.get("SCAN_SMOKE_ONLY")
    scans = [v for v in available(ops.VARIANTS) if only in (None, v)]
    encoders = [v for v in available(rle.VARIANTS) if only in (None, v)]
    judge = sanitizers.Tally()
    for n in sizes:
        for dt in ops.CTYPES:
            x = fresh(n, dt, n)
            for v in scans:
                for inc in (True, False):
                    judge(check_scan(ops.scan(x, inclusive=inc, variant=v), x, inc).correct,
                          f"scan {v:12s} {dt:7s} n={n} {'inclusive' if inc else 'exclusive'}")
        x = fresh(n, "int32", n)
        for lb in ops.LOOKBACKS if only in (None, "single-pass") else ():
            for g in ops.GRIDS:
                out = cp.empty_like(x)
                ops.enqueue(x, out, True, "single-pass", lookback=lb, grid=g)
                judge(check_scan(out, x, True).correct, f"scan {lb} look-back, {g} n={n}")
        enc = rle.Encoder(n)
        for kind in ("short", "equal", "distinct"):
            x = rle.make_runs(n, kind, np.random.default_rng(n))
            for v in encoders:
                judge(check_rle(x, *enc.encode(x, v))[0].correct, f"rle {v} {kind} n={n}")
    return judge.done()


def _kernels():
    from . import ops, rle
    specs = [s for v in ops.VARIANTS for dt in ops.CTYPES for inc in (True, False)
             for s in ops.specs(v, dt, inc)]
    specs += [ops.single_pass_spec("int32", lookback=lb, grid=g)
              for lb in ops.LOOKBACKS for g in ops.GRIDS]
    return specs + rle.all_specs() + [rle.bulk_spec(), rle.room_spec()]


sanitize = sanitizers.experiment(
    "scan.sanitize", drive="perflab.chapters.scan.sanitize:main", kernels=_kernels,
    title="compute-sanitizer memcheck and racecheck, every scan and encoder")


if __name__ == "__main__":
    sys.exit(main())
