"""Rungs 01-05 of the SGEMM ladder: one thread per element (01, 02), shared-memory tiles
(03), register microtiles (04, 05). Each is a `GemmVariant`: the kernels it launches for
a set of tile parameters, how it launches them, and which combinations cannot work (`validate`
raises ConfigError with the reason, before anything is compiled)."""
from __future__ import annotations

from ...kernels import get_kernel, launch
from .variant import GemmVariant, ceil_div, i32, require, spec


# ----------------------------------------------------------------------- 01, 02 naive

def _simple(name, label, idea, file, fn, coalesced) -> GemmVariant:
    """Rung 01 or 02: a 32x32 block, one thread per element of C; `coalesced`: x walks
    columns of C."""
    kspec = spec(file, fn)

    def enqueue(A, B, C, params):
        (M, K), N = A.shape, B.shape[1]
        # 02: x walks columns of C; 01: x walks rows.
        grid = (ceil_div(N, 32), ceil_div(M, 32)) if coalesced else (ceil_div(M, 32), ceil_div(N, 32))
        launch(get_kernel(kspec), grid, (32, 32), (A, B, C) + i32(M, N, K))

    def validate(p, M, N, K, device):
        rows = ceil_div(N, 32) if not coalesced else ceil_div(M, 32)
        require(rows <= 65535, fn, f"grid.y = {rows} exceeds 65535")

    return GemmVariant(name=name, label=label, precision="fp32", idea=idea,
                   kernels=lambda p: [kspec], enqueue=enqueue, validate=validate)


# ------------------------------------------------------------------- 03 smem tiling

def _smem_spec(p):
    return spec("03_smem_tiling.cu", "sgemm_smem", template=(int(p["TILE"]),))


def _smem_validate(p, M, N, K, device):
    T = int(p["TILE"])
    require(1 <= T <= 32, "03-smem-tiling", f"TILE={T}: a TILE x TILE block needs TILE <= 32")
    require(ceil_div(M, T) <= 65535, "03-smem-tiling", "grid.y = ceil(M/TILE) exceeds 65535")


def _smem_run(A, B, C, p):
    (M, K), N = A.shape, B.shape[1]
    T = int(p["TILE"])
    launch(get_kernel(_smem_spec(p)), (ceil_div(N, T), ceil_div(M, T)), (T, T),
           (A, B, C) + i32(M, N, K))


# ------------------------------------------------------------- 04, 05 register tiling

_TILE_KEYS = ("BM", "BN", "BK", "TM", "TN")


def _blocktile_threads(name, p, max_threads):
    """Checks shared by rungs 04 and 05 (BM x BN tile, TM x TN microtile per thread);
    returns the threads per block."""
    BM, BN, BK, TM, TN = (int(p[k]) for k in _TILE_KEYS)
    require(TM % 4 == 0 and TN % 4 == 0, name,
            f"TM={TM} and TN={TN} must be multiples of 4 (microtiles are read as float4)")
    require(BM % TM == 0, name, f"the microtile must divide the tile: BM={BM} % TM={TM} != 0")
    require(BN % TN == 0, name, f"the microtile must divide the tile: BN={BN} % TN={TN} != 0")
    threads = (BM // TM) * (BN // TN)
    require(32 <= threads <= max_threads, name,
            f"(BM/TM)*(BN/TN) = {threads} threads; a block needs 32..{max_threads}")
    require((BM * BK) % threads == 0, name,
            f"(BM*BK) % threads != 0 ({BM}*{BK} % {threads}): the A tile must split evenly")
    require((BK * BN) % threads == 0, name,
            f"(BK*BN) % threads != 0 ({BK}*{BN} % {threads}): the B tile must split evenly")
    require(TM * TN <= 64, name,
            f"a {TM}x{TN} microtile needs {TM * TN} accumulators: more than 64 spills registers")
    smem = 4 * BK * ((BM + 4) + BN)
    require(smem <= 48 * 1024, name,
            f"static shared memory {smem} B exceeds 48 KB (BK*(BM+4+BN)*4)")
    return threads


def _tile_variant(name, label, idea, file, fn, max_threads, default_params,
                  param_space) -> GemmVariant:
    """Rung 04 or 05: a BM x BN block tile, a TM x TN microtile per thread, at most
    `max_threads` threads."""
    def kspec(p):
        return spec(file, fn, template=tuple(int(p[k]) for k in _TILE_KEYS))

    def validate(p, M, N, K, device):
        _blocktile_threads(name, p, max_threads)
        require(ceil_div(M, int(p["BM"])) <= 65535, name, "grid.y = ceil(M/BM) exceeds 65535")

    def enqueue(A, B, C, p):
        (M, K), N = A.shape, B.shape[1]
        threads = _blocktile_threads(name, p, max_threads)
        grid = (ceil_div(N, int(p["BN"])), ceil_div(M, int(p["BM"])))
        launch(get_kernel(kspec(p)), grid, (threads,), (A, B, C) + i32(M, N, K))

    return GemmVariant(name=name, label=label, precision="fp32", idea=idea,
                   kernels=lambda p: [kspec(p)], enqueue=enqueue,
                   default_params=default_params, param_space=param_space, validate=validate)


VARIANTS: list[GemmVariant] = [
    _simple("01-naive", "naive, one thread per element",
            "One thread per element of C; threadIdx.x walks rows, so a warp's loads of A "
            "and stores of C touch 32 different rows (uncoalesced).",
            "01_naive.cu", "sgemm_naive", coalesced=False),
    _simple("02-coalesced", "coalesced global access",
            "threadIdx.x walks columns: a warp's loads of B and stores of C are 128 "
            "contiguous bytes, and A is a broadcast.",
            "02_coalesced.cu", "sgemm_coalesced", coalesced=True),
    GemmVariant(
        name="03-smem-tiling",
        label="shared-memory tiles 32×32",
        precision="fp32",
        idea="Blocks stage TILE×TILE tiles of A and B in shared memory: every float read "
             "from global memory is reused TILE times.",
        kernels=lambda p: [_smem_spec(p)],
        enqueue=_smem_run,
        default_params={"TILE": 32},
        param_space={"TILE": [8, 16, 32]},
        validate=_smem_validate,
    ),
    _tile_variant("04-register-tiling", "register microtiles 4×4, 1024 threads",
                  "Each thread accumulates a TM×TN microtile in registers from float4 shared "
                  "loads (LDS.128): half a shared load per FMA instead of two.",
                  "04_register_tiling.cu", "sgemm_regtile", 1024,
                  {"BM": 128, "BN": 128, "BK": 8, "TM": 4, "TN": 4},
                  {"BM": [64, 128], "BN": [64, 128], "BK": [8, 16], "TM": [4, 8], "TN": [4]}),
    # 05 asks for two blocks per SM (__launch_bounds__(threads, 2)): more than 256 threads
    # would squeeze a thread under 128 registers and spill the 8x8 accumulators.
    _tile_variant("05-occupancy", "8×8 microtiles, 256 threads, 2 blocks/SM",
                  "256 threads with 8×8 microtiles (≤128 registers) so two blocks share an SM; "
                  "a quarter of a shared load per FMA.",
                  "05_occupancy.cu", "sgemm_occupancy", 256,
                  {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
                  {"BM": [64, 128], "BN": [64, 128], "BK": [8, 16], "TM": [8], "TN": [8]}),
]
