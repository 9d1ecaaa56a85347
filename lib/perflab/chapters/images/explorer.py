"""The block-shape explorer of chapter 4: choose one of the 2-D kernels (the per-pixel gray
conversion, the naive or the tiled blur) and a block shape, read its recorded bandwidth
and how it compares with that kernel's best shape (or, in Jupyter on a GPU, measure it)."""
from __future__ import annotations

import pandas as pd

from ...explorer import Explorer, Field
from .blocks import BLOCK_KERNELS, BLOCK_X, BLOCK_Y, block_reason


def block_explorer(rows: pd.DataFrame) -> Explorer:
    """An explorer over the rows of images.blocks (replayed or live)."""
    def reason(p):
        return block_reason(int(p["bx"]), int(p["by"]))

    return Explorer(
        "images-blocks", rows, experiment="images.blocks", match={},
        params={"kernel": [k[0] for k in BLOCK_KERNELS], "bx": list(BLOCK_X),
                "by": list(BLOCK_Y)},
        defaults={"kernel": "gray per-pixel", "bx": 32, "by": 8},
        title="Block shape (threads in x × in y) of the 2-D kernels, 8192 × 8192 pixels",
        fields=[Field("TB/s", digits=2, suffix=" TB/s"),
                Field("of_best", digits=2, suffix="× this kernel's best block"),
                Field("median_us", digits=1, suffix=" µs")],
        y="of_best", reason=reason, measure=lambda p: _measure(p, rows))


def _measure(p: dict, recorded: pd.DataFrame) -> pd.DataFrame:
    """One kernel at one block shape on this GPU (live): checked, timed, as a frame whose
    of_best compares it with the recorded best shape of the same kernel."""
    from ... import lab
    from .blocks import blocks

    ctx = lab.live_context("images.blocks")
    blocks(ctx, blocks=((int(p["bx"]), int(p["by"])),), kernels=(p["kernel"],))
    df = lab.frame(ctx.rows, source="live")
    mine = recorded[recorded["variant"] == p["kernel"]] if "variant" in recorded else recorded
    if "TB/s" in df and len(mine) and "TB/s" in mine:
        df["of_best"] = df["TB/s"] / max(float(mine["TB/s"].max()), float(df["TB/s"].max()))
    return df
