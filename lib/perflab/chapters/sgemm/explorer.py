"""The tile-size explorer of chapter 1: choose a configuration of rung 06 or 08 and read
its recorded speed, ratio to cuBLAS and error (or the reason it cannot run); with a GPU,
in Jupyter, measure it live."""
from __future__ import annotations

import functools

import pandas as pd

from ...errors import refusal
from ...explorer import Explorer, Field
from . import get
from .experiments import SWEEP_SIZE, Problem, baselines, run_variant


def tile_explorer(variant_name: str, sweep: pd.DataFrame, size=SWEEP_SIZE) -> Explorer:
    """An explorer over `sweep` (the rows of sgemm.sweep, replayed or live) for one rung:
    a control for every parameter the sweep varies, the others fixed at their value."""
    v = get(variant_name)
    M, N, K = size
    device = sweep.attrs.get("provenance", {}).get("device") or None
    space = {k: opts for k, opts in v.param_space.items() if len(opts) > 1}
    fixed = {k: opts[0] for k, opts in v.param_space.items() if len(opts) == 1}
    base = "fp32" if v.precision == "fp32" else "tf32"

    def reason(p):
        return refusal(v.check, {**v.default_params, **fixed, **p}, M, N, K, device)

    return Explorer(
        f"sgemm-{variant_name}", sweep, experiment="sgemm.sweep",
        match={"variant": v.name, "M": M, "N": N, "K": K, **fixed},
        params=space, defaults=v.default_params, title=f"{v.name}: {v.label}",
        fields=[Field("TFLOP/s", digits=1, suffix=" TFLOP/s"),
                Field(f"vs_cublas_{base}", digits=2, suffix=f"× cuBLAS {base.upper()}"),
                Field("rel_err", digits=1, style="exp", prefix="rel. error "),
                Field("median_ms", digits=3, suffix=" ms")],
        reason=reason,
        measure=lambda p: _measure(v.name, tuple(size), {**v.default_params, **fixed, **p}))


def _measure(name: str, size: tuple, params: dict) -> pd.DataFrame:
    """Compile, check and time one configuration on this GPU (live), as a frame."""
    from ... import lab

    ctx, prob, base = _live(size)
    row = run_variant(ctx, prob, get(name), params, base)
    return lab.frame([row], source="live")


@functools.lru_cache(maxsize=2)
def _live(size: tuple):
    """One live context per size: fresh inputs and cuBLAS measured once in this process."""
    from ... import lab

    ctx = lab.live_context("sgemm.sweep")
    prob = Problem(*size, timing=True)
    return ctx, prob, baselines(ctx, prob)
