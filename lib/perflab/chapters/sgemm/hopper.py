"""Rung 10 of the SGEMM ladder: TF32 wgmma fed by TMA (kernels/01-sgemm/10_wgmma_tma.cu).

Hopper only (compute capability 9.x; the kernel is compiled for sm_90a): `validate`
refuses any other GPU with a ConfigError that says so.

The GEMM reads A and B as they are stored, through two tensor maps
(cuTensorMapEncodeTiled, from the CUDA driver through ctypes) of element type TFLOAT32, so
that the copy engine rounds every value to TF32 on its way into shared memory. The maps
are made once per pair of operand addresses and shapes and kept with the launch plan. A
tensor map's row stride must be a multiple of 16 bytes: where a row of A (K % 4) or of B
(N % 4) does not start on 16 bytes, that operand is first copied into a scratch array with
padded rows (kept per shape and reused by every call: calls must be issued on one stream,
as the lab does, or two calls in flight at once would write the same scratch).

Parameters: BN (128: two consumer warpgroups; 64: one), stages (4), cluster (1; 2 makes
two blocks of one tile-row share A's tile through a multicast copy).

Importing this module touches no GPU: CuPy and the driver are reached inside `enqueue`.
"""
from __future__ import annotations

import ctypes
import functools
import numbers
from collections import OrderedDict

import numpy as np

from ...errors import ConfigError
from ...kernels import KernelSpec, Step, check_launch, get_kernel, run_steps
from .variant import KDIR, GemmVariant, ceil_div, require

NAME = "10-wgmma-tma"
FILE = f"{KDIR}/10_wgmma_tma.cu"
ARCH = "sm_90a"
OPTIONS = (f"-arch={ARCH}",)
BK, BM = 32, 256           # k per stage; rows of C per block (the wgmma's N)

DEFAULTS = {"BN": 128, "stages": 4, "cluster": 1}
PARAM_SPACE = {"BN": [64, 128], "stages": [3, 4], "cluster": [1, 2]}
#: The tensor maps' element type: CU_TENSOR_MAP_DATA_TYPE_TFLOAT32. TMA rounds each fp32
#: value to TF32 as it copies it (with FLOAT32, 7, the tensor core would truncate instead).
TFLOAT32 = 11


def smem_bytes(p: dict) -> int:
    """Shared memory one block asks for: the stages plus 1 KB to align them on 1024 bytes."""
    return int(p["stages"]) * (BM + int(p["BN"])) * BK * 4 + 1024


def threads(p: dict) -> int:
    return 128 * (int(p["BN"]) // 64 + 1)


def gemm_spec(p: dict) -> KernelSpec:
    """The GEMM kernel's instantiation for parameters `p`."""
    return KernelSpec(FILE, "sgemm_wgmma_tma",
                      template=(int(p["BN"]) // 64, int(p["stages"]), int(p["cluster"])),
                      options=OPTIONS)


def _prepass_specs() -> list[KernelSpec]:
    return [KernelSpec(FILE, "pad_copy", template=(v,), options=OPTIONS) for v in (True, False)]


def _specs(p: dict) -> list[KernelSpec]:
    """Every kernel `enqueue` may launch with these parameters."""
    return [gemm_spec(p)] + _prepass_specs()


def hopper_only(device: dict | None, name: str = NAME) -> None:
    """ConfigError (from rung `name`) unless `device` (a device dict; None: the current GPU
    if there is one) has compute capability 9.x."""
    if device is None:
        from ...device import probe
        info, _ = probe()
        if info is None:
            return
        device = info.as_dict()
    cc = str(device.get("compute_capability", ""))
    if not cc.startswith("9."):
        raise ConfigError(
            f"{name}: wgmma and the tensor-memory copies need a Hopper GPU (compute "
            f"capability 9.x, compiled for {ARCH}); {device.get('name', 'this GPU')} has "
            f"compute capability {cc or 'unknown'}. Rung 08 (08-tf32-mma) runs TF32 on "
            "any GPU from compute capability 8.0", short=f"needs {ARCH[:5]} (wgmma and TMA)")


def _validate(p: dict, M: int, N: int, K: int, device: dict | None) -> None:
    integers(p, DEFAULTS, NAME)
    hopper_only(device)
    require(p["BN"] in (64, 128), NAME,
            f"BN={p['BN']}; the block tile is 64 columns per consumer warpgroup, 1 or 2 of "
            "them: BN 64 or 128")
    require(2 <= p["stages"] <= 8, NAME, f"stages={p['stages']}; the pipeline needs 2 to 8")
    require(p["cluster"] in (1, 2), NAME,
            f"cluster={p['cluster']}; 1 (no cluster) or 2 (two blocks of one tile-row share "
            "A's tile, each loading half of it for both)")
    fits(NAME, smem_bytes(p), f"{p['stages']} stages x (256 + {p['BN']}) x {BK} floats + 1 KB",
         M, N, K, device)


def integers(p: dict, keys, name: str) -> None:
    """ConfigError (from rung `name`) unless every parameter in `keys` is an integer."""
    for k in keys:
        v = p.get(k)
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise ConfigError(f"{name}: parameter {k} must be an integer, got {v!r}")


def fits(name: str, need: int, what: str, M: int, N: int, K: int, device: dict | None) -> None:
    """ConfigError (from rung `name`) unless `need` bytes of shared memory (`what` says how
    they add up) fit a block of `device` (an H100/H200's limit when None) and M x N x K fits
    the tensor maps (coordinates under 2^31, rows of padded floats under 2^40 bytes)."""
    limit = int(device["smem_per_block_optin"]) if device else 232448
    require(need <= limit, name,
            f"{what} = {need} B of shared memory, over the {limit} B a block may use"
            + (f" on {device.get('name')}" if device else " on an H100/H200"))
    require(max(M, N, K) < 2**31 and ceil_div(max(K, N), 4) * 4 * max(M, K) < 2**40, name,
            f"{M}x{N}x{K} is too large for the tensor maps")


# ---- tensor maps ---------------------------------------------------------------------

_SWIZZLE_128B = 3
_L2_PROMOTION_256B = 3
_OOB_FILL_ZEROS = 0

#: The kernel's parameter: two CUtensorMap (128 bytes each), A's then B's.
MAPS_DTYPE = np.dtype([("a", np.uint64, (16,)), ("b", np.uint64, (16,))])


@functools.lru_cache(maxsize=1)
def encode_tiled():
    """The driver's cuTensorMapEncodeTiled (libcuda.so.1 through ctypes), argument types set."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        f = lib.cuTensorMapEncodeTiled
    except (OSError, AttributeError) as exc:
        raise ConfigError(f"{NAME}: cuTensorMapEncodeTiled from the CUDA driver "
                          f"(libcuda.so.1) is not available: {exc}") from None
    f.restype = ctypes.c_int
    u32p, u64p = ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint64)
    f.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, u64p, u64p,
                  u32p, u32p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    return f


def tensor_map(ptr: int, rows: int, cols: int, ld: int, box_rows: int,
               dtype: int = TFLOAT32) -> np.ndarray:
    """The 128 bytes of a CUtensorMap for a row-major fp32 matrix at device address `ptr`
    (rows x cols, ld floats between rows, ld*4 a multiple of 16), read in boxes of
    box_rows x 32 floats into shared memory with the 128-byte swizzle; boxes past the
    edges are filled with zeros. `dtype`: 7 (FLOAT32) or 11 (TFLOAT32, rounded on load)."""
    buf = ctypes.create_string_buffer(128 + 64)
    addr = (ctypes.addressof(buf) + 63) & ~63        # CUtensorMap is 64-byte aligned
    dims = (ctypes.c_uint64 * 2)(cols, rows)
    strides = (ctypes.c_uint64 * 1)(ld * 4)
    box = (ctypes.c_uint32 * 2)(BK, box_rows)
    estr = (ctypes.c_uint32 * 2)(1, 1)
    err = encode_tiled()(addr, dtype, 2, ptr, dims, strides, box, estr, 0, _SWIZZLE_128B,
                          _L2_PROMOTION_256B, _OOB_FILL_ZEROS)
    if err != 0:
        raise ConfigError(f"{NAME}: cuTensorMapEncodeTiled failed with CUresult {err} for a "
                          f"{rows}x{cols} matrix (ld {ld}) at {ptr:#x}, box {box_rows}x{BK}")
    return np.frombuffer(ctypes.string_at(addr, 128), dtype=np.uint64).copy()


# ---- plans: tensor maps, scratch copies and launches --------------------------------

_PLANS: OrderedDict = OrderedDict()
_KEEP = 32           # plans kept (LRU): one per pair of operand addresses and shapes
_SCRATCH: dict = {}  # (device, which, rows, ld) -> scratch array for a padded copy


def scratch(dev: int, which: str, rows: int, ld: int):
    import cupy as cp
    key = (dev, which, rows, ld)
    if key not in _SCRATCH:
        for k in [k for k in _SCRATCH if k[:2] == (dev, which)]:
            del _SCRATCH[k]              # one shape per operand and device
        _SCRATCH[key] = cp.empty((rows, ld), dtype=cp.float32)
    return _SCRATCH[key]


def copy_step(src: str, dst: str, X, rows: int, cols: int, ld: int, specs=None):
    """The padded copy of X (rows x cols) into rows of ld floats, as a plan's step; `specs`:
    the two pad_copy instantiations to use (rung 10's by default)."""
    vec4 = cols % 4 == 0 and X.data.ptr % 16 == 0
    k = get_kernel((specs or _prepass_specs())[0 if vec4 else 1])
    grid = (max(1, min(ceil_div(cols, 256 * (4 if vec4 else 1)), 64)), min(rows, 65535))
    check_launch(k, grid, (256,), 0)
    return Step(k, grid, (256,), src + dst, (np.int32(rows), np.int32(cols), np.int32(ld)))


def operand(dev: int, src: str, dst: str, X, rows: int, cols: int, arrays: dict, steps: list,
            specs=None) -> tuple[int, int]:
    """The address and row length (floats) at which a tensor map reads X (rows x cols, the
    call's array `src`): X as stored when every row starts on 16 bytes, else the scratch
    array `dst` (added to `arrays`) that a padded copy (added to `steps`; `specs` as for
    copy_step) fills."""
    if cols % 4 or X.data.ptr % 16:
        ld = ceil_div(cols, 4) * 4
        Y = arrays[dst] = scratch(dev, src, rows, ld)
        steps.append(copy_step(src, dst, X, rows, cols, ld, specs))
        return Y.data.ptr, ld
    return X.data.ptr, cols


def _plan(A, B, C, p: dict, dev: int):
    (M, K), N = A.shape, B.shape[1]
    steps, arrays = [], {}
    # A (M x K) is read K-major as stored; B (K x N) n-contiguous as stored. A row that
    # does not start on 16 bytes sends that operand through a padded copy.
    a_ptr, lda = operand(dev, "A", "X", A, M, K, arrays, steps)
    b_ptr, ldb = operand(dev, "B", "Y", B, K, N, arrays, steps)
    maps = np.zeros((), dtype=MAPS_DTYPE)
    CL = int(p["cluster"])
    maps["a"] = tensor_map(a_ptr, M, K, lda, BM // CL)
    maps["b"] = tensor_map(b_ptr, K, N, ldb, 32)
    gemm = get_kernel(gemm_spec(p))
    # Clusters of CL blocks along a tile-row; a last, partial cluster runs a block whose
    # tile lies past N (it loads its half of A for its peer and stores nothing).
    grid = (ceil_div(M, BM) * ceil_div(ceil_div(N, int(p["BN"])), CL) * CL,)
    block, smem = (threads(p),), smem_bytes(p)
    check_launch(gemm, grid, block, smem)
    arrays["T"] = maps[()]         # a numpy.void of 256 bytes: CuPy passes it by value
    steps.append(Step(gemm, grid, block, "TC", (np.int32(M), np.int32(N), np.int32(K)), smem))
    return arrays, steps


def _enqueue(A, B, C, p: dict) -> None:
    import cupy as cp

    dev = cp.cuda.runtime.getDevice()
    key = (dev, A.shape, B.shape, A.data.ptr, B.data.ptr, int(p["BN"]), int(p["stages"]),
           int(p["cluster"]))
    arrays, steps = cached_plan(_PLANS, key, lambda: _plan(A, B, C, p, dev))
    run_steps(steps, {"A": A, "B": B, "C": C, **arrays})


def cached_plan(plans: OrderedDict, key, build, keep: int = _KEEP):
    """The plan for `key` in `plans` (least recently used first), built by `build()` when
    absent; at most `keep` plans are kept."""
    plan = plans.get(key)
    if plan is None:
        while len(plans) >= keep:
            plans.popitem(last=False)
        plan = plans[key] = build()
    else:
        plans.move_to_end(key)
    return plan


VARIANT = GemmVariant(
    name=NAME, label="TF32 wgmma + TMA (Hopper)", precision="tf32",
    idea="Hopper's asynchronous path: the copy engine (TMA) moves whole swizzled tiles of A "
         "and B, as stored and rounded to TF32 on the way, into a 4-stage mbarrier pipeline "
         "filled by a producer warpgroup; two consumer warpgroups compute C^T = B^T A^T with "
         "64x256x8 wgmma, B^T from registers and A from shared memory: no pre-pass.",
    kernels=_specs, enqueue=_enqueue, default_params=DEFAULTS, param_space=PARAM_SPACE,
    validate=_validate,
)
