"""Correct before fast: compare a kernel's output with a float64 reference.

The error is the relative Frobenius norm ‖out − ref‖ / ‖ref‖ computed in float64 (for a
matrix product this is the RRMSE the SGEMM case study uses). The output buffer is poisoned with NaN
before the kernel runs, so an element the kernel never wrote makes the error NaN, and NaN
never passes.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

#: Tolerances on the relative error, by the arithmetic the kernel uses. float32
#: accumulation lands far under 1e-4 at the lab's sizes; TF32 operands carry a 10-bit
#: mantissa (unit roundoff 2^-11 ≈ 4.9e-4), so a TF32 product lands near 3e-4.
TOLERANCE = {
    "fp32": 1e-4,
    "3xtf32": 1e-4,
    "tf32": 5e-3,
    "exact": 0.0,
}


@dataclass(frozen=True)
class Check:
    correct: bool
    rel_err: float
    tolerance: float
    unwritten: int          # elements still NaN (never written) or non-finite

    def as_dict(self) -> dict:
        return {"correct": self.correct, "rel_err": self.rel_err,
                "tolerance": self.tolerance, "unwritten": self.unwritten}


def seed() -> int:
    """A fresh random seed for the input of a check; its row records it, so that a wrong
    result can be reproduced."""
    return int.from_bytes(os.urandom(4), "little")


def poison(arr) -> None:
    """Fill an output buffer with NaN (floats) or a sentinel (integers: the most negative
    value, or for unsigned types the largest) before a launch."""
    import cupy as cp

    if arr.dtype.kind == "f":
        arr.fill(cp.nan)
    else:
        info = cp.iinfo(arr.dtype)     # unsigned: the maximum (the minimum is 0)
        arr.fill(info.max if info.min == 0 else info.min)


def compare(out, ref, precision: str) -> Check:
    """Relative error of `out` against the float64 reference `ref` (CuPy or NumPy arrays)."""
    try:
        import cupy as cp
        xp = cp.get_array_module(out, ref)
    except ImportError:  # NumPy-only (CPU tests)
        import numpy as xp
    if precision not in TOLERANCE:
        raise ValueError(f"unknown precision {precision!r}; known: {sorted(TOLERANCE)}")
    if out.shape != ref.shape:
        raise ValueError(f"output shape {out.shape} differs from reference {ref.shape}")
    o = out.astype(xp.float64)
    r = ref.astype(xp.float64)
    bad = int((~xp.isfinite(o)).sum())
    num = float(xp.linalg.norm((o - r).ravel()))
    den = float(xp.linalg.norm(r.ravel()))
    rel = num / den if den > 0 else (0.0 if num == 0 else math.inf)
    if bad:
        rel = math.nan
    tol = TOLERANCE[precision]
    ok = bad == 0 and math.isfinite(rel) and rel <= tol
    return Check(ok, rel, tol, bad)
