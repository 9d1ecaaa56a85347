"""Chapter 4's kernels as Python calls, every input checked before anything is launched.

    c = vecadd(a, b, variant="vec4")                 # float32, 1-D, same shape
    g = rgb_to_gray(rgb, variant="vec16px")          # uint8 height × width × 3 -> height × width
    o = box_blur(g, radius=4, variant="sliding")     # uint8 height × width, (2R+1)² box

Each `*_call` returns a zero-argument function that launches the kernel(s) on arrays
already checked (what the experiments time); the plain calls run it and return `out`.
Bad input (a NumPy array, the wrong dtype, shape or channel count, a non-contiguous or
misaligned view, a block the GPU cannot run) raises ConfigError with the reason.

Variants (one idea each, kernels/04-images/):
  vecadd       "per-element" 01_vecadd.cu · "grid-stride" 02_vecadd_grid_stride.cu ·
               "vec4" 03_vecadd_vec4.cu
  rgb_to_gray  "per-pixel" 04_gray.cu (2-D grid) · "vec4px", "vec16px" 05_gray_vec.cu
  box_blur     "naive" 06_blur.cu · "tiled" 07_blur_tiled.cu · "sliding" 08_blur_sliding.cu
"""
from __future__ import annotations

import numpy as np

from ...errors import ConfigError
from ...kernels import KernelSpec, blocks_per_sm, check_block2d, get_kernel, launch
from . import CHAPTER

VECADD = ("per-element", "grid-stride", "vec4")
GRAY = ("per-pixel", "vec4px", "vec16px")
BLUR = ("naive", "tiled", "sliding")
#: float4 vectors per thread of the vec4 VecAdd (chapter 0's copy kernel uses 4 too).
VEC4_UNROLL = 4
#: Output rows per warp of the sliding blur, and its warps per block. 64 = 1 + 7 · 9: with
#: R = 4 every strip's rows come in whole groups of 2R + 1.
SLIDING_ROWS, SLIDING_WARPS = 64, 4
#: Output columns per warp of the sliding blur (lanes 1 … 30, four columns each).
SLIDING_COLS = 120
#: Radii each blur takes: the sliding blur reads R columns from its neighbour lanes' four,
#: so R ≤ 4; the others compile for any radius, and are offered for those the correctness
#: pass covers (1 and 4) and between.
MAX_RADIUS = {"naive": 4, "tiled": 4, "sliding": 4}
DEFAULT_BLOCK = (32, 8)
MAX_GRID_Y = 65535


# ---- kernel specs ------------------------------------------------------------------------

def vecadd_spec(variant: str) -> KernelSpec:
    if variant == "per-element":
        return KernelSpec(f"{CHAPTER}/01_vecadd.cu", "vecadd")
    if variant == "grid-stride":
        return KernelSpec(f"{CHAPTER}/02_vecadd_grid_stride.cu", "vecadd_grid_stride")
    if variant == "vec4":
        return KernelSpec(f"{CHAPTER}/03_vecadd_vec4.cu", "vecadd_vec4", template=(VEC4_UNROLL,))
    raise ConfigError(f"unknown VecAdd variant {variant!r}; known: {', '.join(VECADD)}")


def gray_spec(variant: str) -> KernelSpec:
    if variant == "per-pixel":
        return KernelSpec(f"{CHAPTER}/04_gray.cu", "rgb_to_gray")
    if variant in ("vec4px", "vec16px"):
        return KernelSpec(f"{CHAPTER}/05_gray_vec.cu", "rgb_to_gray_vec",
                          template=(gray_pixels(variant),))
    raise ConfigError(f"unknown RGB-to-gray variant {variant!r}; known: {', '.join(GRAY)}")


def gray_pixels(variant: str) -> int:
    """Pixels per thread of a gray variant."""
    return {"per-pixel": 1, "vec4px": 4, "vec16px": 16}[variant]


def blur_spec(variant: str, radius: int) -> KernelSpec:
    check_radius(variant, radius)
    if variant == "naive":
        return KernelSpec(f"{CHAPTER}/06_blur.cu", "blur_naive", template=(radius,))
    if variant == "tiled":
        return KernelSpec(f"{CHAPTER}/07_blur_tiled.cu", "blur_tiled", template=(radius,))
    return KernelSpec(f"{CHAPTER}/08_blur_sliding.cu", "blur_sliding",
                      template=(radius, SLIDING_ROWS))


def check_radius(variant: str, radius) -> None:
    if variant not in BLUR:
        raise ConfigError(f"unknown blur variant {variant!r}; known: {', '.join(BLUR)}")
    hi = MAX_RADIUS[variant]
    if not isinstance(radius, (int, np.integer)) or isinstance(radius, bool) \
            or not 1 <= int(radius) <= hi:
        raise ConfigError(f"radius={radius!r}: the {variant} blur takes an integer radius "
                          f"from 1 to {hi} (a {2 * hi + 1}×{2 * hi + 1} box at most)"
                          + (": its lanes borrow R columns from a neighbour's four"
                             if variant == "sliding" else ""))


# ---- input checks --------------------------------------------------------------------------

def _ptr(x) -> int:
    """The address of an array's first element (CuPy or NumPy)."""
    data = getattr(x, "data", None)
    if hasattr(data, "ptr"):
        return int(data.ptr)
    return int(x.__array_interface__["data"][0])


def check_layout(x, name: str, dtype, ndim: int, *, channels: int | None = None,
                 align: int = 1) -> None:
    """ConfigError unless `x` (any array: the layout checks work on NumPy arrays too) has
    `dtype`, `ndim` dimensions (and `channels` in the last), no zero-sized dimension, is
    C-contiguous and starts at a multiple of `align` bytes."""
    want = np.dtype(dtype)
    if x.dtype != want:
        hint = (" (an image of floats? convert with (img * 255).round().astype(uint8))"
                if want == np.uint8 and x.dtype.kind == "f" else "")
        raise ConfigError(f"{name} has dtype {x.dtype}; this kernel takes {want}{hint}")
    if x.ndim != ndim:
        what = {1: "a 1-D array", 2: "a height × width image",
                3: f"a height × width × {channels} image"}[ndim]
        raise ConfigError(f"{name} has shape {tuple(x.shape)}: expected {what}")
    if channels is not None and x.shape[-1] != channels:
        extra = " (RGBA? drop alpha: img[..., :3].copy())" if x.shape[-1] == 4 else ""
        raise ConfigError(f"{name} has {x.shape[-1]} channels in shape {tuple(x.shape)}; "
                          f"expected {channels} (interleaved RGB){extra}")
    if any(s == 0 for s in x.shape):
        raise ConfigError(f"{name} has shape {tuple(x.shape)}: nothing to compute on an "
                          "empty array")
    if not x.flags.c_contiguous:
        raise ConfigError(f"{name} is not C-contiguous (a transposed or strided view, "
                          f"strides {tuple(x.strides)}): pass a contiguous copy, x.copy()")
    if align > 1 and _ptr(x) % align:
        raise ConfigError(f"{name} starts at an address that is not a multiple of {align} "
                          "bytes (a slice of a larger array?): the kernel loads "
                          f"{align}-byte vectors; pass a copy, x.copy()")


def _check_gpu(x, name: str) -> None:
    import cupy as cp
    if not isinstance(x, cp.ndarray):
        raise ConfigError(f"{name} must be a CuPy array on the GPU, not {type(x).__name__} "
                          "(cupy.asarray(x) copies it there)")


def _overlap(a, b) -> bool:
    a0, b0 = _ptr(a), _ptr(b)
    return a0 < b0 + b.nbytes and b0 < a0 + a.nbytes


def _image_out(out, shape, name_in, inputs, align):
    """ConfigError unless `out` is a uint8 image of `shape` that overlaps no input."""
    _check_gpu(out, "out")
    check_layout(out, "out", np.uint8, 2, align=align)
    if tuple(out.shape) != tuple(shape):
        raise ConfigError(f"out has shape {tuple(out.shape)}; {name_in} needs {tuple(shape)}")
    if any(_overlap(out, x) for x in inputs):
        raise ConfigError("out overlaps an input: these kernels read neighbours (the blur) "
                          "or whole vectors that another thread writes; pass a separate array")


#: The blocks this chapter's 2-D kernels run: any a GPU runs (else ConfigError, the reason).
check_block = check_block2d


def grid2d(width: int, height: int, block) -> tuple[tuple, tuple]:
    """(grid, block) covering a width × height image with 2-D blocks, checked."""
    bx, by = check_block(block)
    gy = -(-height // by)
    if gy > MAX_GRID_Y:
        raise ConfigError(f"height {height} with {by} rows per block needs {gy} blocks in y, "
                          f"more than the grid's {MAX_GRID_Y}: use a taller block")
    return (-(-width // bx), gy), (bx, by)


# ---- VecAdd --------------------------------------------------------------------------------

def vecadd_call(a, b, out, variant: str = "vec4", block: int = 256):
    """A function that launches c = a + b on checked arrays (float32, 1-D, same shape)."""
    spec = vecadd_spec(variant)
    align = 16 if variant == "vec4" else 4
    for x, nm in ((a, "a"), (b, "b")):
        _check_gpu(x, nm)
        check_layout(x, nm, np.float32, 1, align=align)
    if a.shape != b.shape:
        raise ConfigError(f"a has shape {a.shape} and b {b.shape}: add arrays of one shape")
    if out is None:
        raise ConfigError("vecadd_call needs an output array (vecadd() makes one)")
    _check_gpu(out, "out")
    check_layout(out, "out", np.float32, 1, align=align)
    if out.shape != a.shape:
        raise ConfigError(f"out has shape {out.shape}; a + b has {a.shape}")
    for x, nm in ((a, "a"), (b, "b")):
        if _overlap(out, x) and _ptr(out) != _ptr(x):
            raise ConfigError(f"out overlaps {nm} shifted by {_ptr(out) - _ptr(x)} bytes: "
                              "a thread would read what another writes; in place (out is "
                              f"{nm}) is fine, a shifted view is not")
    if variant == "vec4" and block != 256:
        raise ConfigError("the vec4 VecAdd is compiled for 256-thread blocks "
                          "(__launch_bounds__(256))")
    if not 32 <= block <= 1024 or block % 32:
        raise ConfigError(f"block={block}: whole warps, 32 to 1024 threads")
    n = int(a.size)
    k = get_kernel(spec)
    if variant == "per-element":
        grid = -(-n // block)
    elif variant == "grid-stride":
        from ...device import current
        grid = min(-(-n // block), current().sms * blocks_per_sm(k, block))
    else:
        grid = max(1, -(-(n // 4) // (block * VEC4_UNROLL)))
    args = (a, b, out, np.int64(n))
    cfg = {"grid": grid, "block": block}
    return (lambda: launch(k, grid, block, args)), cfg


def vecadd(a, b, out=None, *, variant: str = "vec4", block: int = 256):
    import cupy as cp
    if out is None and isinstance(a, cp.ndarray):
        out = cp.empty_like(a)
    fn, _ = vecadd_call(a, b, out, variant, block)
    fn()
    return out


# ---- RGB -> gray ---------------------------------------------------------------------------

def gray_call(rgb, out, variant: str = "vec16px", block=None):
    """A function that launches the gray conversion of a checked uint8 H × W × 3 image."""
    spec = gray_spec(variant)
    _check_gpu(rgb, "rgb")
    check_layout(rgb, "rgb", np.uint8, 3, channels=3, align=1 if variant == "per-pixel" else 16)
    h, w = int(rgb.shape[0]), int(rgb.shape[1])
    if out is None:
        raise ConfigError("gray_call needs an output array (rgb_to_gray() makes one)")
    _image_out(out, (h, w), "rgb", (rgb,), 1 if variant == "per-pixel" else 16)
    k = get_kernel(spec)
    if variant == "per-pixel":
        grid, blk = grid2d(w, h, block or DEFAULT_BLOCK)
        args = (rgb, out, np.int32(w), np.int32(h))
    else:
        if block is not None and not isinstance(block, (int, np.integer)):
            raise ConfigError(f"block={block!r}: the {variant} kernel runs a 1-D grid; give "
                              "threads per block")
        blk = int(block or 256)
        if not 32 <= blk <= 1024 or blk % 32:
            raise ConfigError(f"block={blk}: whole warps, 32 to 1024 threads")
        threads = -(-(h * w) // gray_pixels(variant))
        grid = -(-threads // blk)
        args = (rgb, out, np.int64(h * w))
    return (lambda: launch(k, grid, blk, args)), {"grid": grid, "block": blk}


def rgb_to_gray(rgb, out=None, *, variant: str = "vec16px", block=None):
    import cupy as cp
    if out is None and isinstance(rgb, cp.ndarray) and rgb.ndim == 3:
        out = cp.empty(rgb.shape[:2], dtype=cp.uint8)
    fn, _ = gray_call(rgb, out, variant, block)
    fn()
    return out


# ---- box blur ------------------------------------------------------------------------------

def blur_call(gray, out, radius: int = 4, variant: str = "sliding", block=None):
    """A function that launches the (2·radius+1)² box blur of a checked uint8 H × W image
    (edges clamped, mean rounded to nearest)."""
    spec = blur_spec(variant, radius)
    _check_gpu(gray, "gray")
    check_layout(gray, "gray", np.uint8, 2, align=4 if variant == "sliding" else 1)
    h, w = int(gray.shape[0]), int(gray.shape[1])
    if out is None:
        raise ConfigError("blur_call needs an output array (box_blur() makes one)")
    _image_out(out, (h, w), "gray", (gray,), 4 if variant == "sliding" else 1)
    k = get_kernel(spec)
    args = (gray, out, np.int32(w), np.int32(h))
    if variant == "sliding":
        if block is not None:
            raise ConfigError(f"block={block!r}: the sliding blur's blocks are fixed at "
                              f"32 × {SLIDING_WARPS} threads (a warp per strip)")
        strips = -(-w // SLIDING_COLS)
        grid = (-(-strips // SLIDING_WARPS), -(-h // SLIDING_ROWS))
        if grid[1] > MAX_GRID_Y:
            raise ConfigError(f"height {h}: more than {MAX_GRID_Y} strips of {SLIDING_ROWS} rows")
        blk = (32, SLIDING_WARPS)
        return (lambda: launch(k, grid, blk, args)), {"grid": grid, "block": blk}
    grid, blk = grid2d(w, h, block or DEFAULT_BLOCK)
    smem = tile_bytes(blk, radius) if variant == "tiled" else 0
    return (lambda: launch(k, grid, blk, args, shared_mem=smem)), \
        {"grid": grid, "block": blk, "shared_mem": smem}


def tile_bytes(block, radius: int) -> int:
    """Shared memory of the tiled blur's tile: (bx + 2R)(by + 2R) bytes."""
    bx, by = block
    return (bx + 2 * radius) * (by + 2 * radius)


def box_blur(gray, radius: int = 4, out=None, *, variant: str = "sliding", block=None):
    import cupy as cp
    if out is None and isinstance(gray, cp.ndarray) and gray.ndim == 2:
        out = cp.empty(gray.shape, dtype=cp.uint8)
    fn, _ = blur_call(gray, out, radius, variant, block)
    fn()
    return out


# ---- the library baselines ("what a Python user writes") --------------------------------

def cupy_add(a, b, out):
    """CuPy's elementwise a + b (into `out`, so that it can be poisoned and checked)."""
    import cupy as cp
    return cp.add(a, b, out=out)


def cupy_gray(rgb, out):
    """The same integer luma written in CuPy array operations: one kernel per operation."""
    import cupy as cp
    x = rgb.astype(np.uint16)
    cp.copyto(out, (77 * x[..., 0] + 150 * x[..., 1] + 29 * x[..., 2] + 128) >> 8,
              casting="unsafe")
    return out


def cupyx_blur(gray, out, radius: int):
    """cupyx.scipy.ndimage.uniform_filter on the same uint8 image, edges mode "nearest":
    two 1-D passes, each truncating its mean to uint8 (SciPy's rule)."""
    from cupyx.scipy import ndimage
    return ndimage.uniform_filter(gray, size=2 * radius + 1, mode="nearest", output=out)
