"""The tile-shape explorer of chapter 5: choose TILE and the rows of threads of the padded
transpose (05_coarsened.cu) and read its recorded speed as a fraction of the copy measured
in the same rounds, or the reason the shape cannot run; with a GPU, in Jupyter, measure
it live."""
from __future__ import annotations

import functools

import pandas as pd

from ...explorer import Explorer, Field
from . import ops
from .experiments import BLOCK_ROWS, TILES, tile_reason

SHAPE = (8192, 8192)


def tile_explorer(tiles: pd.DataFrame) -> Explorer:
    return Explorer(
        "transpose-tile", tiles, experiment="transpose.tiles",
        match={"variant": "coarsened", "dtype": "float32", "rows": SHAPE[0], "cols": SHAPE[1]},
        params={"tile": list(TILES), "block_rows": list(BLOCK_ROWS)},
        labels={"tile": lambda t: f"{t} × {t}", "block_rows": lambda r: f"{r} rows of threads"},
        defaults=dict(zip(("tile", "block_rows"), ops.default_tile("coarsened", "float32"))),
        title="Padded transpose of 8192² float32: TILE × rows of threads per block",
        fields=[Field("of_copy", digits=3, suffix="× copy"),
                Field("TB/s", digits=2, suffix=" TB/s"),
                Field("blocks_per_sm", digits=0, suffix=" blocks per SM"),
                Field("inflight_per_sm", digits=0, suffix=" B of tiles in flight per SM")],
        reason=lambda p: tile_reason("coarsened", int(p["tile"]), int(p["block_rows"])),
        measure=lambda p: _measure(int(p["tile"]), int(p["block_rows"])))


def _measure(tile: int, block_rows: int) -> pd.DataFrame:
    """Check and time one tile shape on this GPU (live), as a frame."""
    from ... import lab
    from .experiments import tile_one

    ctx, a, out, dst, ref = _live()
    return lab.frame([tile_one(ctx, a, out, dst, ref, "coarsened", tile, block_rows)],
                     source="live")


@functools.lru_cache(maxsize=1)
def _live():
    import cupy as cp

    from ... import lab
    from .experiments import inputs, seed

    ctx = lab.live_context("transpose.tiles")
    a, ref = inputs(SHAPE, "float32", seed())
    out = cp.empty((SHAPE[1], SHAPE[0]), dtype=a.dtype)
    return ctx, a, out, cp.empty_like(a), ref
