"""Rung 11, split-K on the tensor cores with the operands as stored
(kernels/01-sgemm/11_tf32_splitk.cu): the skinny problem without rung 08's pre-pass.

The GEMM kernel reads A as a k-panel and B as an n-panel straight from the matrices (rung
09's loaders and fragment addressing, mma_tf32.cuh), rounds each fragment value to TF32 in
the loop, and writes each of `slices` partial products to a workspace (kept with the
launch plan); splitk_sum adds them in a fixed order, in parallel over the slices. With
one slice the GEMM writes C and there is nothing to add. `slices` = 0 chooses enough slices to
give every SM `blocks_per_sm` blocks (from the driver's occupancy answer for this kernel),
keeping at least MIN_KTILES k-tiles in each.

A call is its two launches: the launch plan (kernels, grid, workspace) is computed once per
problem shape, alignment and parameters (perflab.kernels.Plans).
"""
from __future__ import annotations

from ...kernels import Plans, Step, blocks_per_sm, check_launch, get_kernel, run_steps
from .tensor import check_tiles, smem_bytes, threads
from .variant import GemmVariant, aligned, ceil_div, i32, require, spec

FILE = "11_tf32_splitk.cu"
NAME = "11-tf32-split-k"
DEFAULTS = {"BM": 128, "BN": 128, "BK": 32, "WM": 64, "WN": 64, "stages": 4, "slices": 0}
PARAM_SPACE = {"BK": [16, 32], "stages": [3, 4, 6], "slices": [0, 32, 64, 128, 256]}
#: Each automatic slice keeps at least this many k-tiles (fewer and the pipeline is all
#: prologue).
MIN_KTILES = 4
#: Threads of splitk_sum per output word: 8 groups of 32.
SUM_GROUPS = 8
#: Registers besides the WM*WN/32 accumulators (fragments, addresses, loader state), from
#: the compile report (sm_90) of the configurations in PARAM_SPACE; used to refuse blocks
#: that cannot fit an SM's registers before compiling them.
_REG_OVERHEAD = 80


def validate(p: dict, M: int, N: int, K: int, device: dict | None) -> None:
    check_tiles(NAME, p, DEFAULTS, _REG_OVERHEAD, device)
    require(p["slices"] >= 0, NAME, f"slices={p['slices']}; use 0 (automatic) or >= 1")
    require(p["slices"] <= 65535, NAME, f"slices={p['slices']}; gridDim.z is at most 65535")


def _gemm_spec(p: dict, al: bool):
    tiles = tuple(int(p[k]) for k in ("BM", "BN", "BK", "WM", "WN", "stages"))
    return spec(FILE, "sgemm_tf32_splitk", template=tiles + (bool(al),))


def _sum_spec(vec: bool):
    return spec(FILE, "splitk_sum", template=(bool(vec), SUM_GROUPS))


def kernels(p: dict) -> list:
    return [_gemm_spec(p, al) for al in (True, False)] + [_sum_spec(v) for v in (True, False)]


def slices(p: dict, M: int, N: int, K: int, sms: int, per_sm: int) -> int:
    """The slices a call launches: p['slices'] if set, else enough blocks for `per_sm`
    blocks on each of `sms` SMs, at least MIN_KTILES k-tiles each; trimmed so that no
    slice is empty."""
    kt = ceil_div(K, int(p["BK"]))
    tiles = ceil_div(M, int(p["BM"])) * ceil_div(N, int(p["BN"]))
    s = int(p["slices"])
    if s == 0:
        s = max(1, min((sms * per_sm) // tiles, kt // MIN_KTILES))
    s = max(1, min(s, kt, 65535))
    return ceil_div(kt, ceil_div(kt, s))


PLANS = Plans()


def _plan(M, N, K, al: bool, vec: bool, p: dict):
    import cupy as cp
    from ...device import current

    gemm = get_kernel(_gemm_spec(p, al))
    t, smem = threads(p), smem_bytes(p)
    dev = current()
    s = slices(p, M, N, K, dev.sms, max(1, blocks_per_sm(gemm, t, smem)))
    grid = (ceil_div(M, p["BM"]) * ceil_div(N, p["BN"]), 1, s)
    check_launch(gemm, grid, (t, 1, 1), smem)
    if s == 1:      # one slice: the GEMM writes C, nothing to add
        return None, [Step(gemm, grid, (t, 1, 1), "ABC", i32(M, N, K), smem)]
    work = cp.empty((s, M, N), dtype=cp.float32)
    red = get_kernel(_sum_spec(vec))
    words = (M * N) // 4 if vec else M * N
    rgrid = (ceil_div(words, 32), 1, 1)
    check_launch(red, rgrid, (32 * SUM_GROUPS, 1, 1))
    return work, [Step(gemm, grid, (t, 1, 1), "ABW", i32(M, N, K), smem),
                  Step(red, rgrid, (32 * SUM_GROUPS, 1, 1), "WC",
                       (cp.int64(M * N), cp.int32(s)))]


def enqueue(A, B, C, p: dict) -> None:
    (M, K), N = A.shape, B.shape[1]
    al = aligned(A, B, C, cols=(N, K))
    vec = (M * N) % 4 == 0 and C.data.ptr % 16 == 0
    key = (M, N, K, al, vec, tuple(sorted(p.items())))
    work, steps = PLANS.get(key, lambda: _plan(M, N, K, al, vec, p))
    run_steps(steps, {"A": A, "B": B, "C": C, "W": work})


VARIANT = GemmVariant(
    name=NAME, label="TF32 split-K, operands as stored", precision="tf32",
    idea="For problems with few output tiles: many K slices on the tensor cores, A and B "
         "read as they are stored and rounded to TF32 in the loop (no pre-pass), the "
         "slices summed in parallel in a fixed order.",
    kernels=kernels, enqueue=enqueue, default_params=DEFAULTS, param_space=PARAM_SPACE,
    validate=validate,
)
