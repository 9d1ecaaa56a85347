"""The kernels of chapter 8 as chapter 1 `GemmVariant`s (kernels/08-matmul/): the case
study's naive and 32x32 tiled SGEMM, the tiled kernel with thread coarsening (2 and 4
outputs per thread, along a row or along a column of C), and the tiled kernel reading a
column-major B (plain, corner-turned, corner-turned into a padded tile).

    from perflab.chapters.matmul import variants
    v = variants.get("coarse-m4")
    v.run(A, B, C, v.params())          # operands checked, then enqueued

Every variant reads row-major float32 A (M x K) and writes row-major C (M x N); B (K x N)
is row-major, except for the column-major variants (`ColMajorB`), which take B in Fortran
order (`cupy.asfortranarray(B)`). The operand checks are chapter 1's
(`sgemm.variant.operands`: dtype, shape, contiguity, C overlapping A or B), plus the
4-byte alignment a float32 pointer needs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import ConfigError
from ...kernels import KernelSpec, get_kernel, launch
from ..sgemm.variant import GemmVariant, ceil_div, i32, operands, require
from . import CHAPTER

#: The grid's y (and z) limit.
GRID_YZ = 65535
INT32_MAX = 2**31 - 1


def spec(file: str, fn: str, template: tuple = ()) -> KernelSpec:
    """A kernel of this chapter: `file` under kernels/08-matmul/."""
    return KernelSpec(f"{CHAPTER}/{file}", fn, template=template)


def aligned4(name: str, **arrays) -> None:
    """Every float32 operand must start on 4 bytes: a float32 view of a byte buffer at an
    odd offset would make each load a misaligned access, a fault that loses the CUDA
    context. ConfigError names the operand."""
    for nm, x in arrays.items():
        if x.data.ptr % 4:
            raise ConfigError(f"{name}: {nm} starts {x.data.ptr % 4} bytes past a 4-byte "
                              f"boundary, and a float32 must start on one; pass a copy "
                              f"({nm}.copy())")


class _AsRowMajor:
    """A Fortran-ordered B (K x N) shown to chapter 1's operand check as the row-major
    K x N it stands for: same dtype, shape, bytes and pointer, contiguous in its layout."""

    class _Flags:
        def __init__(self, contiguous: bool):
            self.c_contiguous = contiguous

    def __init__(self, B):
        self.dtype, self.ndim, self.shape = B.dtype, B.ndim, B.shape
        self.data, self.nbytes = B.data, B.nbytes
        self.flags = self._Flags(B.flags.f_contiguous)


def operands_colmajor(name: str, A, B, C) -> tuple[int, int, int]:
    """(M, N, K) for a kernel that reads B column-major, or ConfigError: chapter 1's
    checks, with B required in Fortran order (a clear error names the fix)."""
    if (getattr(B, "dtype", None) == np.float32 and getattr(B, "ndim", None) == 2
            and not B.flags.f_contiguous):
        raise ConfigError(f"{name}: B must be column-major (Fortran order) for this "
                          "kernel; pass cupy.asfortranarray(B)")
    if getattr(B, "dtype", None) != np.float32 or getattr(B, "ndim", None) != 2:
        return operands(name, A, B, C)          # chapter 1's message for dtype / ndim
    return operands(name, A, _AsRowMajor(B), C)


@dataclass(frozen=True, kw_only=True)
class RowMajor(GemmVariant):
    """A chapter-8 kernel: chapter 1's operand checks and the 4-byte alignment (`run`
    checks them, then the parameters, `validate`, then launches)."""

    b_layout: str = "row"

    def operands(self, A, B, C) -> tuple[int, int, int]:
        dims = operands(self.name, A, B, C) if self.b_layout == "row" else \
            operands_colmajor(self.name, A, B, C)
        aligned4(self.name, A=A, B=B, C=C)
        return dims


# -------------------------------------------------------------------------- the kernels

def _grid_check(name: str, gx: int, gy: int) -> None:
    require(gy <= GRID_YZ, name, f"grid.y = {gy} exceeds {GRID_YZ}: M is too large for "
            "one launch of this kernel")
    require(gx <= INT32_MAX, name, f"grid.x = {gx} exceeds {INT32_MAX}")


def _tile(p) -> int:
    T = int(p.get("TILE", 32))
    return T


def _validate_tile(name: str, p: dict, M: int, N: int, K: int, tiles_m: int, tiles_n: int):
    T = _tile(p)
    require(1 <= T <= 32, name, f"TILE={T}: a TILE x TILE block needs 1 <= TILE <= 32")
    require(max(M, N, K) <= INT32_MAX, name,
            f"M, N, K = {M}, {N}, {K}: the kernels take 32-bit dimensions")
    _grid_check(name, tiles_n, tiles_m)


# naive ---------------------------------------------------------------------------------
_NAIVE = spec("naive.cu", "matmul_naive")


def _naive_validate(p, M, N, K, device):
    _validate_tile("naive", {"TILE": 32}, M, N, K, ceil_div(M, 32), ceil_div(N, 32))


def _naive_enqueue(A, B, C, p):
    (M, K), N = A.shape, B.shape[1]
    launch(get_kernel(_NAIVE), (ceil_div(N, 32), ceil_div(M, 32)), (32, 32),
           (A, B, C) + i32(M, N, K))


# tiled ---------------------------------------------------------------------------------
def _tiled_spec(p):
    """The SGEMM ladder's rung 03, the same kernel line for line (one file, two chapters)."""
    return KernelSpec("01-sgemm/03_smem_tiling.cu", "sgemm_smem", template=(_tile(p),))


def _tiled_validate(p, M, N, K, device):
    T = _tile(p)
    _validate_tile("tiled", p, M, N, K, ceil_div(M, T), ceil_div(N, T))


def _tiled_enqueue(A, B, C, p):
    (M, K), N = A.shape, B.shape[1]
    T = _tile(p)
    launch(get_kernel(_tiled_spec(p)), (ceil_div(N, T), ceil_div(M, T)), (T, T),
           (A, B, C) + i32(M, N, K))


# coarsened -----------------------------------------------------------------------------
def _coarse_spec(p):
    return spec("coarsened.cu", "matmul_coarsened",
                template=(_tile(p), int(p["COARSE"]), p["ALONG"] == "M"))


def _coarse_grid(p, M, N):
    T, c = _tile(p), int(p["COARSE"])
    if p["ALONG"] == "M":
        return ceil_div(N, T), ceil_div(M, T * c)
    return ceil_div(N, T * c), ceil_div(M, T)


def _coarse_validate(name):
    def validate(p, M, N, K, device):
        c = int(p["COARSE"])
        require(p["ALONG"] in ("M", "N"), name, f"ALONG={p['ALONG']!r}: use 'M' or 'N'")
        # (1 + COARSE) * TILE^2 * 4 B of static shared memory: 36 KiB at most, under 48.
        require(c in (1, 2, 4, 8), name, f"COARSE={c}: use 1, 2, 4 or 8")
        gx, gy = _coarse_grid(p, M, N)
        _validate_tile(name, p, M, N, K, gy, gx)
    return validate


def _coarse_enqueue(A, B, C, p):
    (M, K), N = A.shape, B.shape[1]
    T = _tile(p)
    launch(get_kernel(_coarse_spec(p)), _coarse_grid(p, M, N), (T, T),
           (A, B, C) + i32(M, N, K))


# column-major B ------------------------------------------------------------------------
def _cm_spec(p):
    return spec("corner_turning.cu", "matmul_colmajor_b",
                template=(_tile(p), bool(p["TURN"]), int(p["PAD"])))


def _cm_validate(name):
    def validate(p, M, N, K, device):
        require(int(p["PAD"]) in (0, 1), name, f"PAD={p['PAD']}: use 0 or 1")
        T = _tile(p)
        _validate_tile(name, p, M, N, K, ceil_div(M, T), ceil_div(N, T))
    return validate


def _cm_enqueue(A, B, C, p):
    (M, K), N = A.shape, B.shape[1]
    T = _tile(p)
    launch(get_kernel(_cm_spec(p)), (ceil_div(N, T), ceil_div(M, T)), (T, T),
           (A, B, C) + i32(M, N, K))


def _coarse(name, c, along, label, idea):
    return RowMajor(name=name, label=label, precision="fp32", idea=idea,
                    kernels=lambda p: [_coarse_spec(p)], enqueue=_coarse_enqueue,
                    default_params={"TILE": 32, "COARSE": c, "ALONG": along},
                    validate=_coarse_validate(name))


def _cm(name, turn, pad, label, idea):
    return RowMajor(name=name, label=label, precision="fp32", idea=idea,
                    kernels=lambda p: [_cm_spec(p)], enqueue=_cm_enqueue,
                    default_params={"TILE": 32, "TURN": turn, "PAD": pad},
                    validate=_cm_validate(name), b_layout="col")


VARIANTS: list[RowMajor] = [
    RowMajor(name="naive", label="naive (one thread per element)", precision="fp32",
             idea="One thread per element of C from global memory; x walks columns: B and C "
                  "coalesced, A a broadcast.",
             kernels=lambda p: [_NAIVE], enqueue=_naive_enqueue, validate=_naive_validate),
    RowMajor(name="tiled", label="32×32 shared-memory tiles", precision="fp32",
             idea="Blocks stage 32×32 tiles of A and B in shared memory; every float read "
                  "from global memory is used 32 times.",
             kernels=lambda p: [_tiled_spec(p)], enqueue=_tiled_enqueue,
             default_params={"TILE": 32}, validate=_tiled_validate),
    _coarse("coarse-n2", 2, "N", "tiled, 2 outputs per thread along a row",
            "PMPP's coarsening: a thread owns 2 elements of one row of C; one A value "
            "from shared memory serves 2 FMAs."),
    _coarse("coarse-n4", 4, "N", "tiled, 4 outputs per thread along a row",
            "PMPP's coarsening with 4 elements of one row per thread."),
    _coarse("coarse-m2", 2, "M", "tiled, 2 outputs per thread along a column",
            "Coarsening down a column: one B value serves 2 FMAs and the A values come "
            "4 k at a time (LDS.128)."),
    _coarse("coarse-m4", 4, "M", "tiled, 4 outputs per thread along a column",
            "Coarsening down a column with 4 elements per thread: half a shared load per FMA."),
    _cm("cm-plain", False, 0, "column-major B, loaded as it lies",
        "B column-major and the tiled kernel's load: a warp reads 32 columns, 32 sectors "
        "for 128 useful bytes."),
    _cm("cm-turned", True, 0, "column-major B, corner-turned",
        "Corner turning: lanes walk k down a column (coalesced) and write a column of the "
        "shared tile: a 32-way bank conflict on the store."),
    _cm("cm-turned-pad", True, 1, "column-major B, corner-turned, padded tile",
        "Corner turning into a tile padded to 33 floats a row: coalesced loads and "
        "conflict-free stores."),
]


def get(name: str) -> RowMajor:
    vs = {v.name: v for v in VARIANTS}
    if name not in vs:
        raise ConfigError(f"unknown chapter-8 kernel {name!r}; known: {', '.join(vs)}")
    return vs[name]


def all_specs() -> list[KernelSpec]:
    """Every kernel instantiation the variants launch at their defaults."""
    return [s for v in VARIANTS for s in v.kernels(v.params())]
