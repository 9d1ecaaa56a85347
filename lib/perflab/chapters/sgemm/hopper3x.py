"""Rung 12 of the SGEMM ladder: 3xTF32 on wgmma (kernels/01-sgemm/12_3xtf32_wgmma.cu).

Rung 09's three products per step on rung 10's Hopper pipeline, each chunk of `chunk`
k-tiles (32 values of k each) summed into a fresh partial that an fp32 add folds into the
accumulator: the tensor core's truncating accumulation then biases a chunk, not all of K.
`chunk` 0 is one chunk of all of K (rung 09's chaining, for the comparison).

A call is three or four launches: the pre-pass split_a (A's big and small TF32 parts into
two scratch arrays with 16-byte rows, and a flag raised where A or B holds NaN, +-Inf or a
value >= 2^48), where B's rows do not start on 16 bytes rung 10's padded copy of B, the
GEMM, and rung 09's fix_not_finite (which stops at once when the flag is down). Scratch
arrays are kept per shape (calls on one stream, as with rung 10).

Hopper only (compute capability 9.x, compiled for sm_90a), refused elsewhere with the
reason. Importing this module touches no GPU.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ...kernels import KernelSpec, Step, check_launch, get_kernel, run_steps
from . import hopper
from .variant import KDIR, GemmVariant, ceil_div, require

NAME = "12-3xtf32-wgmma"
FILE = f"{KDIR}/12_3xtf32_wgmma.cu"
OPTIONS = hopper.OPTIONS
BK, BM, BN = 32, 128, 128            # k per stage; the block tile (rows, columns of C)
THREADS = 384                        # a producer and two consumer warpgroups
FLOAT32 = 7                          # CU_TENSOR_MAP_DATA_TYPE_FLOAT32: no rounding by TMA

DEFAULTS = {"stages": 4, "chunk": 2}
PARAM_SPACE = {"stages": [3, 4], "chunk": [0, 1, 2, 4, 8, 32]}

MAPS_DTYPE = np.dtype([("hi", np.uint64, (16,)), ("lo", np.uint64, (16,)),
                       ("b", np.uint64, (16,))])


def smem_bytes(p: dict) -> int:
    """Per stage A's two parts (2 x 16 KB) and B (16 KB), plus 1 KB of alignment."""
    return int(p["stages"]) * (2 * BM + BN) * BK * 4 + 1024


def gemm_spec(p: dict) -> KernelSpec:
    return KernelSpec(FILE, "sgemm_3xtf32_wgmma", template=(int(p["stages"]), int(p["chunk"])),
                      options=OPTIONS)


def _split_specs() -> list[KernelSpec]:
    return [KernelSpec(FILE, "split_a", template=(v,), options=OPTIONS) for v in (True, False)]


def _pad_specs() -> list[KernelSpec]:
    return [KernelSpec(FILE, "pad_copy", template=(v,), options=OPTIONS) for v in (True, False)]


def _fix_spec() -> KernelSpec:
    return KernelSpec(f"{KDIR}/09_3xtf32.cu", "fix_not_finite")


def _specs(p: dict) -> list[KernelSpec]:
    """Every kernel `enqueue` may launch."""
    return [gemm_spec(p)] + _split_specs() + _pad_specs() + [_fix_spec()]


def _validate(p: dict, M: int, N: int, K: int, device: dict | None) -> None:
    hopper.integers(p, DEFAULTS, NAME)
    hopper.hopper_only(device, NAME)
    require(2 <= p["stages"] <= 8, NAME, f"stages={p['stages']}; the pipeline needs 2 to 8")
    require(p["chunk"] >= 0, NAME,
            f"chunk={p['chunk']}; the k-tiles summed into one partial: 1 or more, or 0 for "
            "all of K in one")
    hopper.fits(NAME, smem_bytes(p),
                f"{p['stages']} stages x (2 x {BM} + {BN}) x {BK} floats + 1 KB", M, N, K, device)


_PLANS: OrderedDict = OrderedDict()     # launch plans, as rung 10's (hopper.cached_plan)


def _plan(A, B, C, p: dict, dev: int):
    import cupy as cp
    from ...device import current

    (M, K), N = A.shape, B.shape[1]
    Kp = ceil_div(K, 4) * 4
    arrays = {"H": hopper.scratch(dev, "A big", M, Kp),
              "L": hopper.scratch(dev, "A small", M, Kp),
              "F": cp.zeros(1, dtype=cp.int32)}
    vec4 = K % 4 == 0 and A.data.ptr % 16 == 0
    split = get_kernel(_split_specs()[0 if vec4 else 1])
    grid = (max(1, min(ceil_div(K, 256 * (4 if vec4 else 1)), 64)), min(M, 65535))
    check_launch(split, grid, (256,), 0)
    steps = [Step(split, grid, (256,), "ABHLF",
                  (np.int32(M), np.int32(K), np.int32(Kp), np.int64(K * N)))]
    b_ptr, ldb = hopper.operand(dev, "B", "Y", B, K, N, arrays, steps, _pad_specs())
    maps = np.zeros((), dtype=MAPS_DTYPE)
    maps["hi"] = hopper.tensor_map(arrays["H"].data.ptr, M, K, Kp, BM, FLOAT32)
    maps["lo"] = hopper.tensor_map(arrays["L"].data.ptr, M, K, Kp, BM, FLOAT32)
    maps["b"] = hopper.tensor_map(b_ptr, K, N, ldb, 32, FLOAT32)
    arrays["T"] = maps[()]
    gemm = get_kernel(gemm_spec(p))
    ggrid, smem = (ceil_div(M, BM) * ceil_div(N, BN),), smem_bytes(p)
    check_launch(gemm, ggrid, (THREADS,), smem)
    steps.append(Step(gemm, ggrid, (THREADS,), "TC", (np.int32(M), np.int32(N), np.int32(K)),
                      smem))
    fix = get_kernel(_fix_spec())
    fgrid = (max(1, min(M, current().sms * 8)),)
    check_launch(fix, fgrid, (256,), 0)
    steps.append(Step(fix, fgrid, (256,), "ABC",
                      (np.int32(M), np.int32(N), np.int32(K), arrays["F"])))
    return arrays, steps


def _enqueue(A, B, C, p: dict) -> None:
    import cupy as cp

    dev = cp.cuda.runtime.getDevice()
    key = (dev, A.shape, B.shape, A.data.ptr, B.data.ptr, int(p["stages"]), int(p["chunk"]))
    arrays, steps = hopper.cached_plan(_PLANS, key, lambda: _plan(A, B, C, p, dev))
    flag = arrays["F"]
    cp.cuda.runtime.memsetAsync(flag.data.ptr, 0, 4, cp.cuda.get_current_stream().ptr)
    run_steps(steps, {"A": A, "B": B, "C": C, **arrays})


VARIANT = GemmVariant(
    name=NAME, label="3xTF32 on wgmma (Hopper)", precision="3xtf32",
    idea="Rung 09's three products per step on rung 10's wgmma + TMA pipeline, with each "
         "chunk of k summed into a fresh partial and added in fp32, so that the tensor "
         "core's truncating accumulation no longer biases all of K: FP32-class error at "
         "tensor-core speed.",
    kernels=_specs, enqueue=_enqueue, default_params=DEFAULTS, param_space=PARAM_SPACE,
    validate=_validate,
)
