"""@TITLE@: the chapter's experiments (each a function from parameters to rows)."""
from __future__ import annotations

import numpy as np

from ... import race
from ...correctness import compare, poison
from ...kernels import KernelSpec, get_kernel, launch
from ...registry import experiment
from . import CHAPTER


def scale_spec() -> KernelSpec:
    return KernelSpec(f"{CHAPTER}/scale.cu", "scale")


# The reader plan (reader=...) is what the page measures live by default, a chapter in
# about a minute: the values the page's figures and numbers need (a subset of the
# defaults, which are the full plan `make record` measures) or a shorter budget_s. This
# one is quick already: one array and its copy, raced for a few seconds, so reader={}. A slow one keeps
# what the page quotes, e.g. reader={"sizes": (1 << 26,)} of sizes=(1 << 20, ..., 1 << 30).
@experiment("@SLUG@.scale", title="y = a·x, one element per thread, against the copy",
            small={"sizes": (1000003,)}, kernels=lambda: [scale_spec()], reader={})
def scale(ctx, sizes=(1 << 26,)):
    """One race a size (perflab.race): y = a·x checked against a float64 reference on fresh
    random input (output poisoned first), then timed round by round with the copy of the
    same bytes; 8 bytes an element are useful (a read and a write)."""
    import cupy as cp

    kernel = get_kernel(scale_spec())
    for n in sizes:
        x = cp.random.random(n, dtype=cp.float32)
        y = cp.empty_like(x)
        grid = -(-n // 256)

        def call(a, b, grid=grid, n=n):
            launch(kernel, grid, 256, (a, b, np.float32(2.0), np.int64(n)))

        def check(x=x, y=y, call=call):
            poison(y)
            call(x, y)
            return compare(y, 2.0 * x.astype(cp.float64), "fp32")

        race.run(ctx, [race.Entry("scale", call, [(x, y)], check=check, kernels=[scale_spec()],
                                  bytes=8 * n, extra={"launch_grid": grid}),
                       race.copy_of([(x, cp.empty_like(x))])],
                 params={"n": n})
