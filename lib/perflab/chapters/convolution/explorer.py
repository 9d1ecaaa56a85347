"""The tile-shape explorers of chapter 6: pick the block shape (BX x BY threads) and the
outputs per thread (PY rows in 2D, PZ planes in 3D) of the register-tiled kernels, read
the recorded time and bandwidth (or the reason the combination cannot run); with a GPU,
in Jupyter, measure it live."""
from __future__ import annotations

import pandas as pd

from ...explorer import Explorer, Field
from .variants import get

_SWEEP = {"2d-regtile": ("convolution.tiles2d", "PY"), "3d-regtile": ("convolution.tiles3d", "PZ")}


def reason_for(name: str, shape: tuple, r: int, device: dict | None):
    """The check the Python call makes, as the explorer's `reason`."""
    v = get(name)

    def reason(p):
        return v.reason(v.params(**{k: int(x) for k, x in p.items()}), tuple(shape), r,
                        device=device)
    return reason


def tile_explorer(name: str, rows: pd.DataFrame) -> Explorer:
    """An explorer over the rows of the tile sweep of `name` (replayed or live)."""
    v = get(name)
    exp, tile = _SWEEP[name]
    shape = tuple(rows["shape"].iloc[0])
    r = int(rows["r"].iloc[0])
    device = rows.attrs.get("provenance", {}).get("device") or None
    dims = "×".join(str(d) for d in shape)
    what = "rows" if tile == "PY" else "planes"
    return Explorer(
        f"convolution-{name}", rows, experiment=exp, match={"variant": name},
        params={k: list(v.param_space[k]) for k in ("BX", "BY", tile)},
        defaults={k: v.default_params[k] for k in ("BX", "BY", tile)},
        title=f"{name} on {dims}, radius {r}: block BX × BY threads, {tile} output {what} per thread",
        fields=[Field("TB/s", digits=2, suffix=" TB/s"),
                Field("median_ms", digits=3, suffix=" ms"),
                Field("TFLOP/s", digits=1, suffix=" TFLOP/s")],
        reason=reason_for(name, shape, r, device),
        measure=lambda p: _measure(exp, name, shape, r, p))


def _measure(exp: str, name: str, shape: tuple, r: int, p: dict) -> pd.DataFrame:
    """Check and time one configuration on this GPU (live), as a frame."""
    from ... import lab
    from .experiments import sweep

    ctx = lab.live_context(exp)
    sweep(ctx, name, shape, r, {k: (int(x),) for k, x in p.items()}, budget_s=0.2)
    return lab.frame(ctx.rows, source="live")
