"""The GPU side: the kernels, how each is launched over a grid of pixels, and its check
against the scalar C reference (count for count).

Every kernel but the FMA build is compiled with --fmad=false, so that it computes the
reference's float32 numbers and its count at every pixel; the FMA build (NVRTC's default,
--fmad=true) fuses products into sums, and its mismatches are counted and located."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ...correctness import Check
from ...errors import ConfigError
from ...kernels import KernelSpec, check_block2d
from . import CHAPTER
from .views import Grid, check_iter

EXACT = ("--fmad=false",)
#: The FMA build may differ from the reference at this fraction of pixels at most: those
#: whose orbit passes close enough to the escape radius (or is chaotic enough) for one
#: rounding to move the escape. Every other kernel must match at every pixel.
FMA_TOLERANCE = 0.01
CHUNKS = (4, 8, 16, 32)
DEFAULT_CHUNK = 16
#: Block shapes (threads in x, threads in y) the explorer offers.
BLOCKS = ((32, 1), (32, 4), (32, 8), (16, 8), (16, 16), (8, 8), (64, 4), (256, 1))
DEFAULT_BLOCK = (32, 4)


@dataclass(frozen=True)
class GpuKernel:
    """A kernel and how it covers the image: `per_thread` pixels along x per thread
    (1 or 2), or `lane` (one working lane per warp, 32 pixels each, 1-D blocks)."""
    name: str
    label: str
    spec: KernelSpec
    per_thread: int = 1
    lane: bool = False
    exact: bool = True

    @property
    def tolerance(self) -> float:
        return 0.0 if self.exact else FMA_TOLERANCE


def chunked_spec(u: int) -> KernelSpec:
    if u not in CHUNKS:
        raise ConfigError(f"chunk of {u} steps: the chunked kernel is built for U in {CHUNKS}")
    return KernelSpec(f"{CHAPTER}/chunked.cu", "mandel_chunked", template=(u,), options=EXACT)


def _kernels() -> dict[str, GpuKernel]:
    ks = [GpuKernel("pixel", "one pixel per thread",
                    KernelSpec(f"{CHAPTER}/pixel.cu", "mandel_pixel", options=EXACT)),
          GpuKernel("pixel FMA", "one pixel per thread, FMA build (--fmad=true)",
                    KernelSpec(f"{CHAPTER}/pixel.cu", "mandel_pixel", options=("--fmad=true",)),
                    exact=False),
          GpuKernel("one lane",
                    "one working lane per warp (the RTX 4000 Ada portfolio's first GPU version)",
                    KernelSpec(f"{CHAPTER}/one_lane.cu", "mandel_one_lane", options=EXACT),
                    lane=True),
          GpuKernel("two pixels", "two pixels per thread, in flight together",
                    KernelSpec(f"{CHAPTER}/two_pixels.cu", "mandel_two_pixels", options=EXACT),
                    per_thread=2)]
    ks += [GpuKernel(f"chunked U={u}", f"one pixel per thread, escape tested per {u} steps",
                     chunked_spec(u)) for u in CHUNKS]
    return {k.name: k for k in ks}


KERNELS = _kernels()


def kernel(name: str) -> GpuKernel:
    if name not in KERNELS:
        raise ConfigError(f"unknown kernel {name!r}; the kernels are {', '.join(KERNELS)}")
    return KERNELS[name]


def check_block(block) -> tuple[int, int]:
    """A block shape (threads in x, in y) every GPU of the lab runs, in whole warps, or
    ConfigError."""
    bx, by = check_block2d(block)
    if (bx * by) % 32:
        raise ConfigError(f"block shape {bx} x {by} has {bx * by} threads, not a whole "
                          "number of 32-thread warps: the last warp would run part-empty")
    return bx, by


def launch_dims(k: GpuKernel, grid: Grid, block) -> tuple[tuple, tuple]:
    """(grid, block) of the launch of `k` over `grid` with `block` threads (x, y)."""
    if k.lane:
        n = grid.w * grid.h
        return (-(-n // 256),), (256,)
    bx, by = check_block(block)
    gx, gy = -(-grid.w // (bx * k.per_thread)), -(-grid.h // by)
    if gy > 65535:
        raise ConfigError(f"{grid.h} rows in blocks of {by} make {gy} blocks in y; a launch "
                          "has at most 65535: use a taller block")
    return (gx, gy), (bx, by)


def caller(k: GpuKernel, grid: Grid, max_iter: int, out, block=DEFAULT_BLOCK):
    """A no-argument launch of `k` writing the counts of `grid` into `out` (a CuPy int32
    array of grid.h x grid.w)."""
    from ...kernels import get_kernel, launch

    check_iter(max_iter)
    if out.shape != (grid.h, grid.w) or out.dtype != np.int32:
        raise ConfigError(f"output must be int32 of shape {(grid.h, grid.w)}, not "
                          f"{out.dtype} {out.shape}")
    g, b = launch_dims(k, grid, block)
    fn = get_kernel(k.spec)
    args = (out, np.int32(grid.w), np.int32(grid.h), *grid.args(), np.int32(max_iter))
    return lambda: launch(fn, g, b, args)


# --------------------------------------------------------------------------- the check

@dataclass(frozen=True)
class CountCheck:
    """A count map against the reference: how many pixels differ, where, and by how much."""
    check: Check
    pixels: int
    mismatches: int
    max_diff: int
    unwritten: int
    where: list                 # [[i, j, reference, got], ...] (the first `keep`)
    sha256: str                 # of the count map (int32, row-major)

    def metrics(self) -> dict:
        return {"mismatches": (self.mismatches, "pixels"),
                "mismatch_frac": (self.mismatches / self.pixels, "1"),
                "max_count_diff": (self.max_diff, "iterations"),
                "unwritten": (self.unwritten, "pixels")}


def counts_sha256(counts: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(counts, dtype=np.int32).tobytes()).hexdigest()


def compare_counts(got, ref: np.ndarray, tolerance: float, keep: int = 20000) -> CountCheck:
    """`got` (NumPy or CuPy) against the reference counts: correct when every pixel was
    written and at most `tolerance` of them differ (0: none may)."""
    got = got.get() if hasattr(got, "get") else np.asarray(got)
    if got.shape != ref.shape:
        raise ValueError(f"count map {got.shape} differs in shape from the reference {ref.shape}")
    poisoned = np.iinfo(np.int32).min
    unwritten = int((got == poisoned).sum())
    diff = got != ref
    n = int(diff.sum())
    jj, ii = np.nonzero(diff)
    where = np.stack([ii, jj, ref[diff], got[diff]], axis=1)[:keep].tolist() if n else []
    max_diff = int(np.abs(got.astype(np.int64) - ref)[diff].max()) if n else 0
    frac = n / ref.size
    ok = unwritten == 0 and frac <= tolerance
    return CountCheck(Check(ok, frac, tolerance, unwritten), int(ref.size), n, max_diff,
                      unwritten, where, counts_sha256(got))
