"""@TITLE@: the chapter's experiments (each a function from parameters to rows)."""
from __future__ import annotations

import numpy as np

from ...correctness import compare, poison
from ...kernels import KernelSpec, get_kernel, launch
from ...registry import experiment
from ...timing import as_metrics
from . import CHAPTER


def scale_spec() -> KernelSpec:
    return KernelSpec(f"{CHAPTER}/scale.cu", "scale")


# The reader plan (reader=...) is what the page measures live by default, a chapter in
# about a minute: the values the page's figures and numbers need (a subset of the
# defaults, which are the full plan `make record` measures) or a shorter budget_s. This
# one is quick already: one array, timed for about 1.5 s, so reader={}. A slow one keeps
# what the page quotes, e.g. reader={"sizes": (1 << 26,)} of sizes=(1 << 20, ..., 1 << 30).
@experiment("@SLUG@.scale", title="y = a·x, one element per thread",
            small={"sizes": (1000003,)}, kernels=lambda: [scale_spec()], reader={})
def scale(ctx, sizes=(1 << 26,)):
    """Check y = a·x against a float64 reference on fresh random input (output poisoned
    first), then time it; bytes moved = 8 per element (a read and a write)."""
    import cupy as cp

    kernel = get_kernel(scale_spec())
    for n in sizes:
        x = cp.random.random(n, dtype=cp.float32)
        y = cp.empty_like(x)
        grid = -(-n // 256)

        def call():
            launch(kernel, grid, 256, (x, y, np.float32(2.0), np.int64(n)))

        poison(y)
        call()
        check = compare(y, 2.0 * x.astype(cp.float64), "fp32")
        metrics = {"bytes_moved": (8 * n, "B")}
        if ctx.timing and check.correct:
            t = ctx.time(call, [()], f"scale/{n}")
            metrics.update(as_metrics(t))
            metrics["TB/s"] = (8 * n / (t["median_ms"] * 1e-3) / 1e12, "TB/s")
        ctx.row(variant="scale", params={"n": n}, metrics=metrics, check=check,
                kernels=[scale_spec()], launch={"grid": grid, "block": 256})
