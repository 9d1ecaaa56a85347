"""The CPU side: the C paths (scalar, AVX2, AVX-512, each with one or two vectors in
flight, on one core or all), built and loaded through perflab.host and chosen at run time
by the CPU's flags; and what a Python user would write instead (NumPy, Numba).

Every path fills an int32 count map from the same float32 grid (views.Grid) and gives the
scalar reference's count at every pixel: the C files are compiled with -ffp-contract=off
(mandel.h says why), NumPy rounds every operation to float32, and Numba compiles without
fastmath (LLVM then fuses nothing)."""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ... import host
from ...errors import ConfigError, UnsupportedISAError
from . import CHAPTER
from .views import Grid, check_iter

CDEF_ARGS = ("int32_t *out, int64_t w, int64_t h, float x0, float y0, float dx, float dy, "
             "int32_t max_iter, int32_t threads")
COMMON_FLAGS = ("-ffp-contract=off", "-fopenmp")


def _source(file: str, functions: tuple[str, ...], flags: tuple[str, ...]) -> host.HostSource:
    cdef = "\n".join(f"int {f}({CDEF_ARGS});" for f in functions)
    return host.HostSource(f"{CHAPTER}/{file}", cdef, flags=flags + COMMON_FLAGS)


# -fno-tree-vectorize: the scalar path stays scalar (no auto-vectorised outer loop).
SCALAR = _source("scalar.c", ("mandel_scalar", "mandel_scalar_x2"), ("-fno-tree-vectorize",))
AVX2 = _source("avx2.c", ("mandel_avx2", "mandel_avx2_x2"), ("-mavx2",))
AVX512 = _source("avx512.c", ("mandel_avx512", "mandel_avx512_x2"), ("-mavx512f",))


@dataclass(frozen=True)
class CPath:
    """One C entry point: its source, the instruction set the CPU needs for it, the pixels
    one vector holds, and how many vectors it keeps in flight per iteration."""
    name: str
    src: host.HostSource
    function: str
    isa: str | None              # a /proc/cpuinfo flag, or None (any x86-64 or Arm CPU)
    lanes: int
    in_flight: int

    def runs_here(self) -> str | None:
        """Why this path cannot run on this machine, or None."""
        why = host.unavailable()
        if why:
            return why
        if self.isa and not host.supports(self.isa):
            return f"this CPU ({host.cpu_info()['model']}) has no {self.isa}"
        return None

    def entry(self) -> dict:
        return self.src.kernel_entry(self.function)


C_PATHS = {p.name: p for p in (
    CPath("scalar", SCALAR, "mandel_scalar", None, 1, 1),
    CPath("scalar ×2", SCALAR, "mandel_scalar_x2", None, 1, 2),
    CPath("AVX2", AVX2, "mandel_avx2", "avx2", 8, 1),
    CPath("AVX2 ×2", AVX2, "mandel_avx2_x2", "avx2", 8, 2),
    CPath("AVX-512", AVX512, "mandel_avx512", "avx512f", 16, 1),
    CPath("AVX-512 ×2", AVX512, "mandel_avx512_x2", "avx512f", 16, 2),
)}


def runnable() -> list[CPath]:
    """The C paths this CPU runs (the dispatch: by the CPU's flags, at run time)."""
    return [p for p in C_PATHS.values() if p.runs_here() is None]


def widest() -> list[CPath]:
    """The paths of the widest vector this CPU runs (one and two in flight)."""
    ok = runnable()
    if not ok:
        return []
    lanes = max(p.lanes for p in ok)
    return [p for p in ok if p.lanes == lanes]


def c_render(path: CPath, grid: Grid, max_iter: int, threads: int = 1,
             out: np.ndarray | None = None) -> np.ndarray:
    """The count map of `grid` by C path `path` on `threads` cores (0: all). Raises
    UnsupportedISAError where the CPU lacks the path's instruction set, ConfigError for
    a bad limit or thread count."""
    check_iter(max_iter)
    if not isinstance(threads, (int, np.integer)) or threads < 0:
        raise ConfigError(f"threads must be 0 (every core) or a positive count, not {threads!r}")
    if path.isa and not host.supports(path.isa):
        raise UnsupportedISAError(
            f"the {path.name} path needs {path.isa}; this CPU ({host.cpu_info()['model']}) "
            f"lacks it. Paths this CPU runs: {', '.join(p.name for p in runnable())}")
    fn = getattr(host.load(path.src), path.function)
    if out is None:
        out = np.empty((grid.h, grid.w), np.int32)
    if out.shape != (grid.h, grid.w) or out.dtype != np.int32 or not out.flags.c_contiguous:
        raise ConfigError(f"output must be a C-contiguous int32 array of shape "
                          f"{(grid.h, grid.w)}, not {out.dtype} {out.shape}")
    rc = fn(host.pointer(out), grid.w, grid.h, *(float(a) for a in grid.args()), int(max_iter),
            int(threads))
    if rc != 0:
        raise ConfigError(f"{path.function} refused its arguments (w={grid.w}, h={grid.h}, "
                          f"max_iter={max_iter}, threads={threads})")
    return out


def caller(path: CPath, grid: Grid, max_iter: int, threads: int, out: np.ndarray):
    """A no-argument call of `path` into `out` (for timing): the library loaded and the
    arguments converted once."""
    c_render(path, grid, max_iter, threads, out)           # checks everything once
    fn = getattr(host.load(path.src), path.function)
    args = (host.pointer(out), grid.w, grid.h, *(float(a) for a in grid.args()),
            int(max_iter), int(threads))
    return lambda: fn(*args)


def reference(grid: Grid, max_iter: int) -> np.ndarray:
    """The scalar C reference (every core), or NumPy's where no C builds: the counts
    every other implementation must equal."""
    if host.unavailable() is None:
        return c_render(C_PATHS["scalar"], grid, max_iter, threads=0)
    return numpy_render(grid, max_iter)


@functools.lru_cache(maxsize=16)
def cached_reference(grid: Grid, max_iter: int) -> np.ndarray:
    """`reference`, computed once per grid and limit in a process (read-only)."""
    ref = reference(grid, max_iter)
    ref.setflags(write=False)
    return ref


# --------------------------------------------------------------------------- Python

def numpy_render(grid: Grid, max_iter: int) -> np.ndarray:
    """What a NumPy user writes: every pixel at once, the iteration as array operations in
    float32, and the pixels still iterating compacted out of the arrays as they escape."""
    check_iter(max_iter)
    f = np.float32
    cx = grid.x0 + np.arange(grid.w, dtype=f) * grid.dx
    cy = grid.y0 + np.arange(grid.h, dtype=f) * grid.dy
    cxs = np.broadcast_to(cx, (grid.h, grid.w)).ravel()
    cys = np.broadcast_to(cy[:, None], (grid.h, grid.w)).ravel()
    out = np.full(grid.w * grid.h, max_iter, np.int32)
    idx = np.arange(out.size)
    x = np.zeros(out.size, f)
    y = np.zeros(out.size, f)
    four = f(4.0)
    for n in range(max_iter):
        x2, y2 = x * x, y * y
        escaped = x2 + y2 > four
        if escaped.any():
            out[idx[escaped]] = n
            keep = ~escaped
            idx, x, y, x2, y2, cxs, cys = (a[keep] for a in (idx, x, y, x2, y2, cxs, cys))
            if idx.size == 0:
                break
        t = x * y
        y = (t + t) + cys
        x = (x2 - y2) + cxs
    return out.reshape(grid.h, grid.w)


def numba_version() -> str:
    try:
        import numba
    except ImportError:
        return "-"
    return f"Numba {numba.__version__}"


def numba_missing() -> str | None:
    try:
        import numba  # noqa: F401
    except ImportError:
        return "Numba is not installed here (pip install numba)"
    return None


@functools.lru_cache(maxsize=1)
def _numba_kernels():
    """The scalar loop under @njit, single-threaded and with prange over rows (Numba's
    parallel=True, one thread per core). No fastmath: LLVM fuses nothing."""
    import numba

    def point(cx, cy, max_iter):
        x = np.float32(0.0)
        y = np.float32(0.0)
        four = np.float32(4.0)
        n = 0
        while n < max_iter:
            x2 = x * x
            y2 = y * y
            if x2 + y2 > four:
                break
            t = x * y
            y = (t + t) + cy
            x = (x2 - y2) + cx
            n += 1
        return n

    point_j = numba.njit(point)

    def render(out, x0, y0, dx, dy, max_iter):
        h, w = out.shape
        for j in numba.prange(h):
            cy = y0 + np.float32(j) * dy
            for i in range(w):
                out[j, i] = point_j(x0 + np.float32(i) * dx, cy, max_iter)

    return numba.njit(render), numba.njit(render, parallel=True)


def numba_render(grid: Grid, max_iter: int, parallel: bool = False,
                 out: np.ndarray | None = None) -> np.ndarray:
    why = numba_missing()
    if why:
        raise ConfigError(why)
    check_iter(max_iter)
    serial, par = _numba_kernels()
    out = np.empty((grid.h, grid.w), np.int32) if out is None else out
    (par if parallel else serial)(out, *grid.args(), np.int32(max_iter))
    return out
