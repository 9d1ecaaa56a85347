"""The single pass's tile explorer: block × ITEMS_PER_THREAD, recorded or measured live."""
from __future__ import annotations

import functools

import pandas as pd

from ...explorer import Explorer, Field
from . import ops
from .experiments import TUNE_BLOCKS, TUNE_ITEMS, tune_reason


def tile_explorer(tune: pd.DataFrame, n: int | None = None) -> Explorer:
    n = int(n or tune["n"].max())
    return Explorer(
        "scan-tile", tune, experiment="scan.tune",
        match={"variant": "single-pass", "n": n, "dtype": "int32"},
        params={"block": list(TUNE_BLOCKS), "items": list(TUNE_ITEMS)},
        defaults={"block": ops.DEFAULT_BLOCK, "items": ops.DEFAULT_ITEMS},
        title=f"Single-pass scan of 2^{n.bit_length() - 1} int32: block size × ITEMS_PER_THREAD",
        fields=[Field("of_copy", digits=2, suffix="× copy"),
                Field("TB/s", digits=2, suffix=" TB/s"),
                Field("median_ms", digits=3, suffix=" ms")],
        reason=lambda p: tune_reason("int32", int(p["block"]), int(p["items"])),
        measure=lambda p: _measure(n, int(p["block"]), int(p["items"])))


def _measure(n: int, block: int, items: int) -> pd.DataFrame:
    """Check and time one tile shape on this GPU (live), as a frame."""
    from ... import lab
    from .experiments import tune_one

    ctx, x, sets = _live(n)
    return lab.frame([tune_one(ctx, x, sets, block, items)], source="live")


@functools.lru_cache(maxsize=1)
def _live(n: int):
    import cupy as cp

    from ... import lab
    from .experiments import timed_input

    ctx = lab.live_context("scan.tune")
    _, x, sets = timed_input(ctx, n)
    cp.cuda.Device().synchronize()
    return ctx, x, sets
