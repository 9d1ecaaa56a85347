"""What every kernel of chapter 6 is checked against, and the library it is raced with.

- `reference`: the convolution in float64, NumPy or CuPy alike (the array module of its
  input): the input padded with r zeros on every side, then one shifted slice per tap,
  weighted and summed. Zero boundary, correlation form (see variants.py).
- `library`: cupyx.scipy.ndimage.convolve with mode="constant", cval=0 (the same zero
  boundary) and the filter flipped, because scipy's convolve flips it and the kernels
  here do not.
- `fresh`: random float32 inputs and filters, made on the host (NumPy) or the GPU.
"""
from __future__ import annotations

import itertools

import numpy as np


def reference(x, f, op: str = "conv"):
    """float64 correlation of `x` with `f`, zeros outside `x` (xp: x's array module).

    op "conv": f has shape (k,) * x.ndim. op "depthwise": x is (D, H, W), f is (D, k, k),
    and slice z of x is correlated in 2D with f[z]."""
    try:
        import cupy as cp
        xp = cp.get_array_module(x)
    except ImportError:
        xp = np
    fh = np.asarray(f.get() if hasattr(f, "get") else f, dtype=np.float64)
    r = (fh.shape[-1] - 1) // 2
    x64 = x.astype(xp.float64)
    out = xp.zeros(x.shape, dtype=xp.float64)
    if op == "depthwise":
        D, H, W = x.shape
        p = xp.pad(x64, ((0, 0), (r, r), (r, r)))
        fd = xp.asarray(fh)
        for i, j in itertools.product(range(2 * r + 1), repeat=2):
            out += fd[:, i, j][:, None, None] * p[:, i:i + H, j:j + W]
        return out
    p = xp.pad(x64, [(r, r)] * x.ndim)
    for idx in itertools.product(range(2 * r + 1), repeat=x.ndim):
        w = float(fh[idx])
        if w != 0.0:
            out += w * p[tuple(slice(i, i + n) for i, n in zip(idx, x.shape))]
    return out


def library(x, f, out):
    """cupyx.scipy.ndimage.convolve computing what the kernels compute (a callable)."""
    import cupy as cp
    from cupyx.scipy.ndimage import convolve

    flipped = cp.ascontiguousarray(cp.asarray(f)[(slice(None, None, -1),) * f.ndim])
    return lambda: convolve(x, flipped, output=out, mode="constant", cval=0.0)


def fresh(shape, rng: np.random.Generator, xp=np):
    """Uniform(-1, 1) float32 of `shape`, made with `rng` on the host, on xp."""
    a = rng.uniform(-1.0, 1.0, size=tuple(shape)).astype(np.float32)
    return a if xp is np else xp.asarray(a)


def fresh_device(shape):
    """Uniform(-1, 1) float32 made on the GPU (large arrays), fresh every call."""
    import cupy as cp
    return cp.random.uniform(-1.0, 1.0, size=tuple(shape), dtype=cp.float32)


def filter_for(dims: int, r: int, rng: np.random.Generator, op: str = "conv",
               depth: int = 0) -> np.ndarray:
    """A random float32 filter of radius r: normal taps, scaled so the outputs stay of the
    inputs' size (the relative error of a sum does not hinge on the scale)."""
    k = 2 * r + 1
    shape = (depth, k, k) if op == "depthwise" else (k,) * dims
    taps = k * k if op == "depthwise" else k ** dims
    return (rng.standard_normal(shape) / np.sqrt(taps)).astype(np.float32)
