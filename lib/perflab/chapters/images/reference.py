"""What chapter 4's kernels must compute, computed another way: exact integer references
(NumPy or CuPy, whichever module the input belongs to), the photograph, and the bytes
each kernel must move.

- VecAdd: a + b in float64 (the float32 sum is that, correctly rounded).
- RGB -> gray: (77 R + 150 G + 29 B + 128) >> 8, in int32: BT.601's weights times 256.
- Box blur of radius R: the (2R+1)² window sum of an image padded by repeating its edge
  pixels (SciPy's mode "nearest"), from a summed-area table, then (sum + D/2) // D with
  D = (2R+1)²: round to nearest, exact. The kernels sum the window directly (or with
  running sums); agreeing with a summed-area table is a check by another route.
"""
from __future__ import annotations

import hashlib

import numpy as np

#: The photograph: Matplotlib's sample image of Grace Hopper (ships with Matplotlib).
PHOTO = "grace_hopper.jpg"
#: Luma weights (× 256) and the rounding constant, as in kernels/04-images/luma.cuh.
WEIGHTS = (77, 150, 29)


def _xp(x):
    try:
        import cupy as cp
        return cp.get_array_module(x)
    except ImportError:                       # a machine without CuPy: NumPy only
        return np


def vecadd_ref(a, b):
    return a.astype(np.float64) + b.astype(np.float64)


def gray_ref(rgb):
    """Exact integer luma of a uint8 H × W × 3 image, as uint8."""
    x = rgb.astype(np.int32)
    r, g, b = WEIGHTS
    return ((r * x[..., 0] + g * x[..., 1] + b * x[..., 2] + 128) >> 8).astype(np.uint8)


def blur_ref(img, radius: int):
    """Exact (2R+1)² box mean of a uint8 H × W image, edges clamped, rounded to nearest."""
    xp = _xp(img)
    k = 2 * radius + 1
    p = xp.pad(img.astype(np.int64), radius, mode="edge")
    s = xp.zeros((p.shape[0] + 1, p.shape[1] + 1), dtype=np.int64)
    s[1:, 1:] = p.cumsum(0).cumsum(1)
    h, w = img.shape
    win = s[k:k + h, k:k + w] - s[:h, k:k + w] - s[k:k + h, :w] + s[:h, :w]
    d = k * k
    return ((win + d // 2) // d).astype(np.uint8)


def blur_brute(img: np.ndarray, radius: int) -> np.ndarray:
    """The same blur pixel by pixel with clamped indices (NumPy; small images only): what
    the naive kernel does, to test the summed-area reference against."""
    h, w = img.shape
    out = np.empty_like(img)
    d = (2 * radius + 1) ** 2
    for y in range(h):
        for x in range(w):
            s = 0
            for dy in range(-radius, radius + 1):
                yy = min(max(y + dy, 0), h - 1)
                for dx in range(-radius, radius + 1):
                    s += int(img[yy, min(max(x + dx, 0), w - 1)])
            out[y, x] = (s + d // 2) // d
    return out


def photo() -> np.ndarray:
    """The photograph as a uint8 H × W × 3 NumPy array (600 × 512 × 3)."""
    import matplotlib.image as mpimg
    from matplotlib import cbook

    img = mpimg.imread(cbook.get_sample_data(PHOTO, asfileobj=False))
    if img.dtype != np.uint8:                                  # a PNG would come as floats
        img = (np.clip(img, 0, 1) * 255).round().astype(np.uint8)
    return np.ascontiguousarray(img[..., :3])


def tiled(img: np.ndarray, height: int, width: int) -> np.ndarray:
    """`img` repeated to cover height × width (and cut there)."""
    reps = (-(-height // img.shape[0]), -(-width // img.shape[1])) + (1,) * (img.ndim - 2)
    return np.ascontiguousarray(np.tile(img, reps)[:height, :width])


def digest(arr) -> str:
    """sha256 of an array's bytes (C order): the recorded fingerprint of a kernel's output."""
    a = arr.get() if hasattr(arr, "get") else np.asarray(arr)
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


# ---- the bytes each kernel must move, and the arithmetic it does -----------------------

def vecadd_bytes(n: int) -> int:
    """Two float32 arrays read, one written."""
    return 12 * n


def gray_bytes(h: int, w: int) -> int:
    """Three bytes of RGB read and one byte of gray written per pixel."""
    return 4 * h * w


def blur_bytes(h: int, w: int) -> int:
    """One byte read and one written per pixel (the halo is read again from cache)."""
    return 2 * h * w


#: Arithmetic per output element, as the reference algorithm defines it (the roofline's
#: operations): VecAdd 1 add; gray 3 multiplies and 3 adds (the rounding constant
#: included; the shift not counted); blur (2R+1)² − 1 adds and one divide.
def ops_per_element(kind: str, radius: int = 0) -> float:
    if kind == "vecadd":
        return 1.0
    if kind == "gray":
        return 6.0
    if kind == "blur":
        return float((2 * radius + 1) ** 2)
    raise ValueError(f"unknown kernel kind {kind!r}")
