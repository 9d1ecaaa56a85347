"""The arithmetic the audit judges results by, with no GPU: the float64 error bound of a
GEMM for its precision and accumulation, and the IEEE class (finite, NaN, +Inf, -Inf)
each element of C must have when A or B hold NaN or infinities.

The bound (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1 and §4.2): a
dot product of K terms summed in any order, each product and each partial sum rounded
with unit roundoff u, satisfies

    |fl(a·b) − a·b| ≤ γ_K |a|·|b|,        γ_n = n u / (1 − n u).

Any summation tree over K products has depth at most K (K − 1 additions and a product),
so the same γ_K covers the sequential loop of the naive and tiled kernels, the blocked
orders of the register-tiled ones and the split-K sums. Operands rounded first (TF32:
u_in = 2^-11; 3xTF32: 22 significant bits kept, u_in = 2^-21 counting the dropped
small·small product) contribute (1 + u_in)² − 1 per product. Tensor cores accumulate with
truncation rather than rounding to nearest (Fasi et al., "Numerical behavior of NVIDIA
tensor cores", PeerJ CS 2021), so their accumulation gets u = 2^-23, twice FP32's.
"""
from __future__ import annotations

import math

import numpy as np

U_FP32 = 2.0 ** -24

#: precision -> (operand rounding u_in, accumulation u)
UNITS = {
    "fp32": (0.0, U_FP32),
    "tf32": (2.0 ** -11, 2.0 ** -23),
    "3xtf32": (2.0 ** -21, 2.0 ** -23),
}

CLASSES = {0: "finite", 1: "NaN", 2: "+Inf", 3: "-Inf"}


def gamma(n: int, u: float = U_FP32) -> float:
    """γ_n = n·u / (1 − n·u); ValueError where n·u ≥ 1 (no bound exists)."""
    if n < 0:
        raise ValueError(f"gamma: n = {n} must be >= 0")
    nu = n * u
    if nu >= 1:
        raise ValueError(f"gamma: n·u = {nu} >= 1, the bound does not exist")
    return nu / (1 - nu)


def relative_bound(K: int, precision: str) -> float:
    """The factor θ with |Ĉ − C| ≤ θ · (|A|·|B|) elementwise, for a K-term accumulation in
    `precision`: (1 + u_in)² (1 + γ_K(u)) − 1."""
    if precision not in UNITS:
        raise ValueError(f"unknown precision {precision!r}; known: {sorted(UNITS)}")
    if K < 1:
        raise ValueError(f"K = {K}: a GEMM needs K >= 1")
    u_in, u = UNITS[precision]
    return (1 + u_in) ** 2 * (1 + gamma(K, u)) - 1


def bound_ratio(C, ref, abs_product, K: int, precision: str) -> float:
    """max over elements of |C − ref| / (θ_K · (|A|·|B|)): ≤ 1 when the result is within
    the bound. Elements where |A|·|B| is 0 must be exact (the ratio is inf otherwise)."""
    xp = _xp(C)
    err = xp.abs(C.astype(xp.float64) - ref.astype(xp.float64))
    lim = relative_bound(K, precision) * abs_product.astype(xp.float64)
    bad = xp.isnan(err)
    if bool(bad.any()):
        return math.inf
    zero = lim == 0
    if bool((err[zero] > 0).any()):
        return math.inf
    lim = xp.where(zero, 1.0, lim)
    return float((err / lim).max()) if err.size else 0.0


def classify(x):
    """Elementwise class codes (CLASSES) of a float array."""
    xp = _xp(x)
    out = xp.zeros(x.shape, dtype=xp.int8)
    out[xp.isnan(x)] = 1
    out[xp.isposinf(x)] = 2
    out[xp.isneginf(x)] = 3
    return out


def expected_classes(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The class each element of C = A @ B has under IEEE arithmetic when the finite
    products and sums do not overflow: NaN if a term is NaN (NaN operand, or ±Inf × 0) or
    the terms hold both +Inf and −Inf, else ±Inf if a term is, else finite. Host NumPy,
    one (M, K, N) array of products: for the audit's small matrices."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        P = A[:, :, None] * B[None, :, :]
    nan = np.isnan(P).any(axis=1)
    pos = np.isposinf(P).any(axis=1)
    neg = np.isneginf(P).any(axis=1)
    out = np.zeros(nan.shape, dtype=np.int8)
    out[pos] = 2
    out[neg] = 3
    out[nan | (pos & neg)] = 1
    return out


def class_mismatch(got, want) -> str | None:
    """None when the class maps agree, else a short account of the first disagreements."""
    got = np.asarray(got)
    want = np.asarray(want)
    diff = np.argwhere(got != want)
    if diff.size == 0:
        return None
    shown = ", ".join(f"C[{i},{j}] {CLASSES[int(got[i, j])]} (want {CLASSES[int(want[i, j])]})"
                      for i, j in diff[:3])
    return f"{len(diff)} elements differ: {shown}"


def _xp(x):
    try:
        import cupy as cp
        return cp.get_array_module(x)
    except ImportError:
        return np
