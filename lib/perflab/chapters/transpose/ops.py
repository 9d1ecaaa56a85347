"""The transposes of chapter 5 as one Python call, and the checks that turn a bad input or a
configuration that cannot run into a ConfigError with the reason.

    out = transpose(a)                                  # the fastest rung, its default tile
    out = transpose(a, variant="coarsened", tile=32, rows=8)

`a` is a C-contiguous 2-D CuPy array of float32, float64 or int32 (rows x cols); the result
is its transpose (cols x rows), C-contiguous. Every rung is in kernels/05-transpose/, one
idea per file; `VARIANTS` lists them in the order the chapter climbs them.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...errors import ConfigError
from ...kernels import KernelSpec, get_kernel, launch
from . import CHAPTER

#: The element types the kernels are instantiated for: NumPy name -> C++ type.
DTYPES = {"float32": "float", "float64": "double", "int32": "int"}
#: A block may declare at most this much static shared memory (every GPU since Volta).
STATIC_SMEM = 48 * 1024
MAX_THREADS = 1024
#: Grids are at most this many blocks high; the kernels loop over the rest.
MAX_GRID_Y = 65535
#: Every side must fit the kernels' 32-bit row and column indices.
MAX_SIDE = (1 << 31) - 1


@dataclass(frozen=True)
class Rung:
    file: str                  # under kernels/05-transpose/
    kernel: str
    block: tuple | None        # fixed (x, y) threads, or None: set by TILE and ROWS
    row_read: bool | None = None     # the naive kernel's template flag


RUNGS = {
    "naive-rows": Rung("01_naive.cu", "transpose_naive", (32, 8), True),
    "naive-cols": Rung("01_naive.cu", "transpose_naive", (32, 8), False),
    "tiled": Rung("02_tiled.cu", "transpose_tiled", (32, 32)),
    "padded": Rung("03_padded.cu", "transpose_padded", (32, 32)),
    "swizzled": Rung("04_swizzled.cu", "transpose_swizzled", (32, 32)),
    "coarsened": Rung("05_coarsened.cu", "transpose_coarsened", None),
    "wide": Rung("06_wide.cu", "transpose_wide", None),
}
VARIANTS = tuple(RUNGS)
#: The rungs with a tile and rows of threads to choose.
TUNABLE = ("coarsened", "wide")


def itemsize(dtype: str) -> int:
    return {"float32": 4, "float64": 8, "int32": 4}[dtype]


def default_tile(variant: str, dtype: str) -> tuple[int, int]:
    """(TILE, ROWS) a tunable rung uses unless told: the classic 32 × 8 for the padded
    tile; for the wide rung 16 chunks of 16 bytes per tile row, 16 rows of threads."""
    if variant == "coarsened":
        return 32, 8
    return (64 if itemsize(dtype) == 4 else 32), 16


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def config_problem(variant: str, dtype: str, tile: int | None = None,
                   rows: int | None = None) -> str | None:
    """Why `variant` cannot run for `dtype` with this TILE and ROWS, or None."""
    if variant not in RUNGS:
        return f"unknown variant {variant!r}; the rungs are {', '.join(VARIANTS)}"
    if dtype not in DTYPES:
        return (f"dtype {dtype} is not supported: the kernels are built for "
                f"{', '.join(DTYPES)}")
    if variant not in TUNABLE:
        if tile is not None or rows is not None:
            bx, by = RUNGS[variant].block
            return (f"{variant!r} has a fixed block of {bx} × {by} threads; TILE and ROWS "
                    f"are for {' and '.join(repr(t) for t in TUNABLE)}")
        return None
    t, r = default_tile(variant, dtype) if tile is None and rows is None else (tile, rows)
    if t is None or r is None:
        return "give both TILE and ROWS, or neither"
    size = itemsize(dtype)
    if not (_pow2(t) and _pow2(r)):
        return f"TILE = {t} and ROWS = {r} must be powers of two"
    if variant == "coarsened":
        if r > t:
            return (f"ROWS = {r} rows of threads for a tile of {t} rows: each thread moves "
                    f"TILE / ROWS rows, so ROWS cannot exceed TILE")
        threads = t * r
        smem = t * (t + 1) * size
        what = "the padded tile"
    else:
        v = 16 // size
        ch = t // v
        if ch < 8:
            return (f"TILE = {t} {dtype} is {ch} chunks of 16 bytes per row; the swizzle "
                    f"needs at least 8 (TILE ≥ {8 * v})")
        if r > ch:
            return (f"ROWS = {r} rows of threads for {ch} rows of {v} × {v} micro-tiles: "
                    f"ROWS cannot exceed TILE / {v} = {ch}")
        threads = ch * r
        smem = t * t * size
        what = "the tile"
    if threads > MAX_THREADS:
        return (f"a block of {threads} threads (TILE × ROWS"
                f"{'' if variant == 'coarsened' else ' / ' + str(16 // size)}); "
                f"a block holds at most {MAX_THREADS}")
    if smem > STATIC_SMEM:
        return (f"{what} needs {smem:,} B of static shared memory; a block may declare at "
                f"most 48 KiB ({STATIC_SMEM:,} B)")
    return None


def spec(variant: str, dtype: str = "float32", tile: int | None = None,
         rows: int | None = None) -> KernelSpec:
    """The kernel instantiation of a rung (ConfigError where it cannot run)."""
    why = config_problem(variant, dtype, tile, rows)
    if why:
        raise ConfigError(why)
    rung, ctype = RUNGS[variant], DTYPES[dtype]
    if variant in TUNABLE:
        t, r = (tile, rows) if tile is not None else default_tile(variant, dtype)
        return KernelSpec(f"{CHAPTER}/{rung.file}", rung.kernel, template=(ctype, t, r))
    if rung.row_read is not None:
        return KernelSpec(f"{CHAPTER}/{rung.file}", rung.kernel, template=(ctype, rung.row_read))
    return KernelSpec(f"{CHAPTER}/{rung.file}", rung.kernel, template=(ctype,))


def geometry(variant: str, dtype: str, shape: tuple[int, int], tile: int | None = None,
             rows: int | None = None) -> tuple[tuple, tuple]:
    """(grid, block) of a rung for a rows × cols input; the grid's height is capped and
    the kernels loop over what it does not cover."""
    nr, nc = shape
    rung = RUNGS[variant]
    if rung.row_read is not None:
        fast, slow = (nc, nr) if rung.row_read else (nr, nc)
        return (-(-fast // 32), min(-(-slow // 8), MAX_GRID_Y)), rung.block
    if variant in TUNABLE:
        t, r = (tile, rows) if tile is not None else default_tile(variant, dtype)
        bx = t if variant == "coarsened" else t // (16 // itemsize(dtype))
        block = (bx, r)
    else:
        t, block = 32, rung.block
    return (-(-nc // t), min(-(-nr // t), MAX_GRID_Y)), block


def operand_problem(a, out=None) -> str | None:
    """Why `a` (and `out`, if given) cannot be transposed by these kernels, or None. Any
    array with ndim, shape, dtype and flags (NumPy or CuPy) can be asked."""
    if not all(hasattr(a, k) for k in ("ndim", "shape", "dtype", "flags")):
        return f"expects an array; got {type(a).__name__}"
    if a.ndim != 2:
        return f"expects a 2-D matrix; got a {a.ndim}-D array of shape {tuple(a.shape)}"
    dt = str(a.dtype)
    if dt not in DTYPES:
        return (f"dtype {dt} is not supported: the kernels are built for "
                f"{', '.join(DTYPES)}")
    if not a.flags.c_contiguous:
        hint = (" (it is column-major: a.T of a row-major matrix is already its transpose, "
                "as a view)" if a.flags.f_contiguous else "")
        return (f"expects a C-contiguous (row-major) matrix; this one has strides "
                f"{tuple(a.strides)}{hint}; make one with cupy.ascontiguousarray(a)")
    if max(a.shape) > MAX_SIDE:
        return (f"a side of {max(a.shape):,} elements: the kernels index rows and columns "
                f"with 32-bit integers (at most {MAX_SIDE:,})")
    if out is None:
        return None
    want = (a.shape[1], a.shape[0])
    if getattr(out, "ndim", None) != 2 or tuple(out.shape) != want:
        return f"out must have shape {want} (cols × rows of the input); got {tuple(getattr(out, 'shape', ()))}"
    if str(out.dtype) != dt:
        return f"out has dtype {out.dtype}; the input's is {dt}"
    if not out.flags.c_contiguous:
        return "out must be C-contiguous (row-major)"
    if _overlap(a, out):
        return "out overlaps the input: a transpose cannot run in place"
    return None


def _span(x) -> tuple[int, int] | None:
    ptr = getattr(getattr(x, "data", None), "ptr", None)
    if ptr is None:
        ai = getattr(x, "__array_interface__", None)
        ptr = ai["data"][0] if ai else None
    return None if ptr is None else (int(ptr), int(ptr) + int(x.nbytes))


def _overlap(a, b) -> bool:
    sa, sb = _span(a), _span(b)
    return bool(sa and sb and a.nbytes and b.nbytes and sa[0] < sb[1] and sb[0] < sa[1])


def vec_ok(a, out) -> bool:
    """Whether every row of `a` and of `out` starts on a 16-byte boundary, as the wide
    rung's vector path needs."""
    v = 16 // a.dtype.itemsize
    return (a.shape[0] % v == 0 and a.shape[1] % v == 0
            and a.data.ptr % 16 == 0 and out.data.ptr % 16 == 0)


def plan(a, out, variant: str, tile: int | None = None, rows: int | None = None):
    """A call that enqueues `variant` on (a, out), every check made and the kernel
    compiled first (the call is then only its launch). Raises ConfigError."""
    import numpy as np

    why = operand_problem(a, out) or config_problem(variant, str(a.dtype), tile, rows)
    if why:
        raise ConfigError(why)
    if a.size == 0:
        return lambda: None
    k = get_kernel(spec(variant, str(a.dtype), tile, rows))
    grid, block = geometry(variant, str(a.dtype), a.shape, tile, rows)
    args = (a, out, np.int32(a.shape[0]), np.int32(a.shape[1]))
    if variant == "wide":
        args += (np.int32(vec_ok(a, out)),)
    return lambda: launch(k, grid, block, args)


def transpose(a, out=None, variant: str = "wide", tile: int | None = None,
              rows: int | None = None):
    """out = a.T, C-contiguous, computed by one rung of the chapter."""
    import cupy as cp

    for name, x in (("a", a), ("out", out)):
        if x is not None and not isinstance(x, cp.ndarray):
            raise ConfigError(f"{name} must be a CuPy array on the GPU; got "
                              f"{type(x).__module__}.{type(x).__name__} (move it there "
                              "with cupy.asarray)")
    why = operand_problem(a)
    if why:
        raise ConfigError(why)
    if out is None:
        out = cp.empty((a.shape[1], a.shape[0]), dtype=a.dtype)
    plan(a, out, variant, tile, rows)()
    return out
