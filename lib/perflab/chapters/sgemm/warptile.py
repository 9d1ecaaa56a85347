"""Rung 06, warp tiles fed by a cp.async pipeline (kernels/01-sgemm/06_warptiling.cu), and
the tile machinery rung 07 shares: the parameter checks, the kernel forms, the choice of
block shape per problem."""
from __future__ import annotations

import functools

from ...kernels import Plans, Step, check_launch, get_kernel, run_steps
from .variant import GemmVariant, aligned, ceil_div, i32, require, smem_fits, spec

KEYS = ("BM", "BN", "BK", "WM", "WN", "TM", "TN", "stages")

#: Block shapes 06 chooses from when auto_shape is on: (tile parameters, relative speed
#: of one full wave). 128x256 with 8x16 thread tiles (one block per SM) is the fastest
#: tile; 128x128 with 8x8 (two blocks per SM) fills the last wave in steps half as big.
#: Relative speeds from the H200 sweep at 4096^3 (sgemm.sweep, run d26869b420dc):
#: 128x256x32, 3 stages 49.1 TFLOP/s; 128x128x32, 2 stages 46.1 -> 0.94.
SHAPES = (
    ({"BM": 128, "BN": 256, "BK": 32, "WM": 64, "WN": 64, "TM": 8, "TN": 16, "stages": 3}, 1.00),
    ({"BM": 128, "BN": 128, "BK": 32, "WM": 64, "WN": 32, "TM": 8, "TN": 8, "stages": 2}, 0.94),
)
FASTEST = SHAPES[0][0]

#: The (ALIGNED, EDGE) instantiations of 06/07 kernels: a problem with no edge tiles has
#: N % 4 == 0, so the untested kernel exists only in its 16-byte-copy form.
FORMS = ((True, False), (True, True), (False, True))


def threads(p) -> int:
    return (int(p["BM"]) // int(p["WM"])) * (int(p["BN"]) // int(p["WN"])) * 32


def smem_bytes(p) -> int:
    """Dynamic shared memory of 06/07: stages * BK * ((BM + 4) + BN) floats."""
    return 4 * int(p["stages"]) * int(p["BK"]) * ((int(p["BM"]) + 4) + int(p["BN"]))


def checks(name, p, device=None) -> int:
    """Every constraint of the warp-tiled kernels; returns the threads per block."""
    BM, BN, BK, WM, WN, TM, TN, S = (int(p[k]) for k in KEYS)
    require(BM % WM == 0, name, f"BM not divisible by WM ({BM} % {WM} != 0)")
    require(BN % WN == 0, name, f"BN not divisible by WN ({BN} % {WN} != 0)")
    require(TM % 4 == 0 and TN % 4 == 0, name,
            f"TM={TM} and TN={TN} must be multiples of 4 (float4 pieces)")
    require(WM % TM == 0 and WN % TN == 0, name,
            f"the thread tile must divide the warp tile (WM={WM}, TM={TM}, WN={WN}, TN={TN})")
    require((WM // TM) * (WN // TN) == 32, name,
            f"(WM/TM)*(WN/TN) = {(WM // TM) * (WN // TN)}: a warp tile must hold exactly "
            "32 thread tiles")
    nt = threads(p)
    require(nt <= 256, name,
            f"{nt} threads per block: the kernel is built for at most 256 (8 warps)")
    require(BK % 4 == 0 and (nt * 4) % BK == 0, name,
            f"(threads*4) % BK != 0 ({nt}*4 % {BK}): the A-tile copy needs it")
    require(BN % 4 == 0 and (nt * 4) % BN == 0, name,
            f"(threads*4) % BN != 0 ({nt}*4 % {BN}): the B-tile copy needs it")
    require(S >= 2, name, f"stages={S}: a pipeline needs at least 2")
    # Up to 64 accumulators: __launch_bounds__(threads, 2), <= 128 registers per thread.
    # 65..128 (8x16 large tiles): one block per SM, up to 255 registers per thread.
    require(TM * TN <= 128, name,
            f"a {TM}x{TN} thread tile needs {TM * TN} accumulators: more than 128 spills")
    require(BK <= 32, name, f"BK={BK}: the K loop is unrolled; BK <= 32 keeps it in the "
            "instruction cache and the copies in registers")
    # Found by compiling every sweep point (ptxas -v, sm_89 and sm_90): 8x16 thread tiles
    # (up to 255 registers) spill when a thread also copies more than 80 floats a stage.
    per_thread = (BM * BK + BK * BN) // nt
    require(TM * TN <= 64 or per_thread <= 80, name,
            f"{TM}x{TN} thread tiles with {per_thread} floats copied per thread and stage "
            f"((BM*BK + BK*BN)/threads) spill registers: use more threads or a smaller BK")
    require(TM * TN > 64 or BN <= 128, name,
            f"BN={BN} with {TM}x{TN} thread tiles spills at 128 registers (the unaligned "
            "copy path): a 256-wide tile takes 8x16 thread tiles (WN=64, TN=16)")
    smem_fits(name, smem_bytes(p), device, f"stages*BK*(BM+4+BN)*4 = {S}*{BK}*{BM + 4 + BN}*4")
    return nt


def template(p, is_aligned: bool, edge: bool) -> tuple:
    """06/07 template arguments: the tile parameters, ALIGNED, EDGE (forced on when the
    copies cannot be 16 bytes wide)."""
    return tuple(int(p[k]) for k in KEYS) + (bool(is_aligned), bool(edge or not is_aligned))


def edge(p, M: int, N: int, K: int) -> bool:
    """Some tile crosses M or N, or K is not a multiple of BK: the kernel must test."""
    return bool(M % int(p["BM"]) or N % int(p["BN"]) or K % int(p["BK"]))


def _spec(p, is_aligned: bool, is_edge: bool = True):
    return spec("06_warptiling.cu", "sgemm_warptile", template=template(p, is_aligned, is_edge))


@functools.lru_cache(maxsize=None)
def gpu_slots(key: tuple, is_aligned: bool) -> int:
    """Blocks of one configuration the whole GPU holds at once (occupancy query)."""
    from ...device import current
    from ...kernels import blocks_per_sm
    p = dict(key)
    per_sm = blocks_per_sm(get_kernel(_spec(p, is_aligned)), threads(p), smem_bytes(p))
    return max(1, per_sm) * current().sms


def pick_shape(p, M, N, is_aligned) -> dict:
    """auto_shape: the block shape with the best predicted time, counting the idle slots
    of a partial last wave and the wasted area of edge tiles."""
    best, best_score = None, -1.0
    for shape, speed in SHAPES:
        q = {**p, **shape}
        BM, BN = q["BM"], q["BN"]
        blocks = ceil_div(M, BM) * ceil_div(N, BN)
        slots = gpu_slots(tuple(sorted((k, q[k]) for k in KEYS)), is_aligned)
        fill = (blocks / slots) / ceil_div(blocks, slots)   # busy fraction of the slots
        area = (M * N) / (blocks * BM * BN)                 # useful fraction of the tiles
        score = fill * area * speed
        if score > best_score:
            best, best_score = q, score
    return best


def _kernels(p):
    configs = [{**p, **s} for s, _ in SHAPES] if p.get("auto_shape") else [p]
    return [_spec(q, al, ed) for q in configs for al, ed in FORMS]


def _validate(p, M, N, K, device):
    for q in ([{**p, **s} for s, _ in SHAPES] if p.get("auto_shape") else [p]):
        checks("06-warptiling", q, device)


PLANS = Plans()


def _plan(A, B, C, p):
    (M, K), N = A.shape, B.shape[1]
    is_aligned = aligned(B, C, cols=(N,))
    q = pick_shape(p, M, N, is_aligned) if p.get("auto_shape") else p
    nt = checks("06-warptiling", q)
    kernel = get_kernel(_spec(q, is_aligned, edge(q, M, N, K)))
    grid = (ceil_div(M, int(q["BM"])) * ceil_div(N, int(q["BN"])),)
    check_launch(kernel, grid, (nt,), smem_bytes(q))
    return [Step(kernel, grid, (nt,), "ABC", i32(M, N, K), smem_bytes(q))]


def _enqueue(A, B, C, p):
    import cupy
    key = (cupy.cuda.runtime.getDevice(), A.shape, B.shape, A.data.ptr % 16,
           B.data.ptr % 16, C.data.ptr % 16, tuple(sorted(p.items())))
    run_steps(PLANS.get(key, lambda: _plan(A, B, C, p)), {"A": A, "B": B, "C": C})


VARIANT = GemmVariant(
    name="06-warptiling",
    label="warp tiles + cp.async pipeline",
    precision="fp32",
    idea="Warp tiles over a transposed, padded A tile, fed by a multi-stage cp.async "
         "pipeline; each k's fragments are read while the previous k's FFMAs run, and "
         "the block shape is picked per problem to fill the last wave.",
    kernels=_kernels,
    enqueue=_enqueue,
    # auto_shape: choose the tile per problem from SHAPES; a sweep sets it False
    # (param_space does) so that the tile parameters take effect.
    default_params={**FASTEST, "auto_shape": True},
    # WN=32/TN=8: 8x8 thread tiles, two blocks per SM. WN=64/TN=16: 8x16 thread tiles
    # (128 accumulators), one block per SM: the 128x256 / 256x128 large tiles.
    # Mismatched pairs fail validation and are skipped by a sweep.
    param_space={"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": [16, 32],
                 "WM": [64], "WN": [32, 64], "TM": [8], "TN": [8, 16],
                 "stages": [2, 3], "auto_shape": [False]},
    validate=_validate,
    auto_keys=KEYS,
)
