"""The view × limit × block-shape explorer of chapter 7: pick a view of the set, an
iteration limit and the block shape of the one-pixel kernel, read the recorded time, the
iteration rate and the share of lane-steps doing useful work (or, in Jupyter on a GPU,
re-render, check and time it live)."""
from __future__ import annotations

import pandas as pd

from ...explorer import Explorer, Field
from . import gpu
from .experiments import GPU_VIEWS, SWEEP_ITERS, sweep_reason

BX = (8, 16, 32, 64, 256)
BY = (1, 4, 8, 16)


def block_explorer(rows: pd.DataFrame, kernel: str = "pixel") -> Explorer:
    """An explorer over the rows of mandelbrot.sweep (replayed or live) for `kernel`."""
    return Explorer(
        f"mandelbrot-{kernel.replace(' ', '-')}", rows, experiment="mandelbrot.sweep",
        match={"variant": kernel},
        params={"view": list(GPU_VIEWS), "max_iter": list(SWEEP_ITERS), "bx": list(BX),
                "by": list(BY)},
        defaults={"view": "seahorse", "max_iter": 1024, "bx": 32, "by": 4},
        labels={"bx": lambda v: f"{v} threads in x", "by": lambda v: f"{v} in y"},
        title=f"{gpu.kernel(kernel).label}: time by view, iteration limit and block shape",
        fields=[Field("median_ms", digits=3, suffix=" ms"),
                Field("Giter/s", digits=0, suffix=" Giter/s"),
                Field("useful_frac", digits=3, prefix="useful lane-steps ")],
        reason=sweep_reason, measure=lambda p: _measure(kernel, p))


def _measure(kernel: str, p: dict) -> pd.DataFrame:
    """Render, check and time one configuration on this GPU (live), as a frame."""
    from ... import lab
    from .experiments import sweep

    ctx = lab.live_context("mandelbrot.sweep")
    sweep(ctx, views=(p["view"],), iters=(int(p["max_iter"]),),
          blocks=((int(p["bx"]), int(p["by"])),), kernels=(kernel,))
    return lab.frame(ctx.rows, source="live")
