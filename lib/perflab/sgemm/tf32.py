"""The tensor-core rungs of the SGEMM ladder: TF32 through mma.sync (08) and 3xTF32 (09).

Both kernels share one design (kernels/matmul/mma_tf32.cuh): a BM x BN block tile, BK-deep
k-tiles streamed through a STAGES-deep cp.async pipeline, one WM x WN warp tile per warp
built from m16n8k8 MMAs. Tile sizes are template parameters; `validate` rejects a
combination the kernel cannot run and says why. Split-K (gridDim.z) is chosen
automatically when there are too few output tiles to fill the GPU.

Rung 08 reads A and B^T: a pre-pass (round_tf32 on A, round_tf32_transpose on B, in
mma_tf32.cuh; launched by `run`, inside whatever `run` is timed by) writes A rounded to
TF32 and B rounded and transposed to scratch arrays, so both operands reach the GEMM with
k contiguous and both fragments come from ldmatrix; the GEMM feeds their bits to the
tensor cores as they are. The pre-pass costs one read and one write of A and of B.

Rung 09 keeps B as it comes. PRE_ROUND (09 only) moves its fp32 -> big + small split out
of the main loop: a pre-pass leaves each operand as big + small (22 significant bits) and
the loop splits it in 3 instructions instead of ~5. 0: split in the loop; 1: pre-pass;
2 (default): the pre-pass unless split-K is used (a short GEMM over few output tiles,
where the pass over A and B would be a large share of the time).

Importing this module touches no GPU: CuPy is imported inside `run` only.
"""
from __future__ import annotations

import functools
import numbers

from ..errors import ConfigError
from ..kernels import KernelSpec, get_kernel, launch
from .base import Variant, ceil_div

FILES = {"tf32": "matmul/08_tf32_mma.cu", "3xtf32": "matmul/09_3xtf32.cu"}
KERNELS = {"tf32": "sgemm_tf32_mma", "3xtf32": "sgemm_3xtf32"}

#: Shared memory a block may opt in to on sm_90 (227 KB). Smaller GPUs have less (sm_89:
#: 99 KB, sm_80: 163 KB): `launch` names that limit if a configuration exceeds it.
SMEM_LIMIT = 227 * 1024

#: Registers the kernel needs besides its WM*WN/32 accumulators, from the compile report
#: of every configuration in PARAM_SPACE (09: both PRE_ROUND modes; ptxas, sm_89/90): TF32
#: <= 126 (the fragments are double-buffered) and 3xTF32 <= 112 over the accumulators for
#: 64 x 64 warp tiles. Used to refuse blocks that cannot fit 64K registers per SM (they
#: would spill or fail to launch), before compiling them.
_REG_OVERHEAD = {"tf32": 127, "3xtf32": 112}

_TILE_DEFAULTS = {"BM": 128, "BN": 256, "BK": 16, "WM": 64, "WN": 64, "STAGES": 6, "split_k": 0}
DEFAULTS = {"tf32": dict(_TILE_DEFAULTS), "3xtf32": {**_TILE_DEFAULTS, "PRE_ROUND": 2}}

#: The sweep: block shapes, k-tile depth and pipeline depth at the 64 x 64 warp tile.
_TILE_SPACE = {"BM": [64, 128, 256], "BN": [128, 256], "BK": [16, 32], "WM": [64],
               "WN": [64], "STAGES": [4, 6]}
PARAM_SPACE = {"tf32": dict(_TILE_SPACE), "3xtf32": {**_TILE_SPACE, "PRE_ROUND": [2]}}

#: split_k = 0 chooses automatically; splits below this many k-tiles each are not worth it.
_MIN_KTILES_PER_SPLIT = 4


def _tiles(p: dict) -> tuple[int, int, int, int, int, int]:
    return tuple(int(p[k]) for k in ("BM", "BN", "BK", "WM", "WN", "STAGES"))


def threads(p: dict) -> int:
    BM, BN, BK, WM, WN, _ = _tiles(p)
    return (BM // WM) * (BN // WN) * 32


def smem_bytes(p: dict) -> int:
    BM, BN, BK, _, _, S = _tiles(p)
    return S * (BM * BK + BK * BN) * 4


def _validate(precision: str, p: dict, M: int, N: int, K: int) -> None:
    name = "08-tf32-mma" if precision == "tf32" else "09-3xtf32"
    for k in DEFAULTS[precision]:
        v = p.get(k)
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise ConfigError(f"{name}: parameter {k} must be an integer, got {v!r}")
    BM, BN, BK, WM, WN, S = _tiles(p)
    if BK not in (16, 32):
        raise ConfigError(f"{name}: BK={BK}; the shared-memory swizzle is built for BK 16 or 32")
    if WM < 16 or WM % 16:
        raise ConfigError(f"{name}: WM={WM} must be a multiple of 16 (the MMA tile is 16 rows)")
    if WN < 32 or WN % 32:
        raise ConfigError(f"{name}: WN={WN} must be a multiple of 32 (the B swizzle spans "
                          "4 n8-tiles)")
    if BM % WM or BN % WN:
        raise ConfigError(f"{name}: warp tile {WM}x{WN} does not divide block tile {BM}x{BN}")
    t = threads(p)
    if t > 1024:
        raise ConfigError(f"{name}: {BM // WM}x{BN // WN} warps = {t} threads, over 1024 "
                          "per block")
    if t % (BK // 4) or BM % (t // (BK // 4)):
        raise ConfigError(f"{name}: {t} threads x 16 B do not tile the {BM}x{BK} A tile "
                          f"evenly ({BM * BK // 4} chunks of 16 B)")
    if t % (BN // 4) or BK % (t // (BN // 4)):
        raise ConfigError(f"{name}: {t} threads x 16 B do not tile the {BK}x{BN} B tile "
                          f"evenly ({BK * BN // 4} chunks of 16 B: need threads to be a "
                          f"multiple of {BN // 4} and {BK}x{BN // 4} chunks a multiple of "
                          "threads)")
    if not 2 <= S <= 8:
        raise ConfigError(f"{name}: STAGES={S}; the pipeline needs 2 to 8 stages")
    sm = smem_bytes(p)
    if sm > SMEM_LIMIT:
        raise ConfigError(f"{name}: {S} stages x ({BM}x{BK} + {BK}x{BN}) floats = "
                          f"{sm // 1024} KB of shared memory, over the {SMEM_LIMIT // 1024} KB "
                          "a block may use")
    regs = WM * WN // 32 + _REG_OVERHEAD[precision]
    if regs > 255:
        raise ConfigError(f"{name}: a {WM}x{WN} warp tile needs {WM * WN // 32} accumulator "
                          f"registers per thread, ~{regs} in all: over the 255 limit")
    if regs * t > 65536:
        raise ConfigError(f"{name}: {t} threads x ~{regs} registers = {regs * t}, over the "
                          "65536 registers of an SM")
    if precision == "tf32" and ceil_div(K, 32) > 65535:
        raise ConfigError(f"{name}: K={K}; the transposing pre-pass covers K in 32-row "
                          "blocks along the grid's y axis (at most 65535), so K <= 2097120")
    if p["split_k"] < 0:
        raise ConfigError(f"{name}: split_k={p['split_k']}; use 0 (automatic) or >= 1")
    if precision == "3xtf32" and p["PRE_ROUND"] not in (0, 1, 2):
        raise ConfigError(f"{name}: PRE_ROUND={p['PRE_ROUND']}; use 0 (split in the main "
                          "loop), 1 (pre-pass) or 2 (pre-pass unless split-K)")


def aligned(A, B, C, N: int, K: int) -> bool:
    """The 16-byte fast path: every row of A and B starts on 16 bytes, and so do the bases."""
    return (K % 4 == 0 and N % 4 == 0
            and all(x.data.ptr % 16 == 0 for x in (A, B, C)))


@functools.lru_cache(maxsize=None)
def _sm_count() -> int:
    from ..device import current
    return current().sms


def splits_for(p: dict, M: int, N: int, K: int, sms: int) -> int:
    """How many K-splits `run` launches: p['split_k'] if set, else enough for ~one wave of
    blocks when the output has fewer tiles than the GPU has SMs, each split keeping at
    least _MIN_KTILES_PER_SPLIT k-tiles; trimmed so no split is empty."""
    BM, BN, BK = p["BM"], p["BN"], p["BK"]
    tiles = ceil_div(M, BM) * ceil_div(N, BN)
    kt = ceil_div(K, BK)
    s = p["split_k"]
    if s == 0:
        s = max(1, sms // tiles) if tiles < sms else 1
        s = min(s, max(1, kt // _MIN_KTILES_PER_SPLIT))
    s = max(1, min(s, kt, 65535))
    return ceil_div(kt, ceil_div(kt, s))    # no empty split


def pre_round(p: dict, splits: int) -> bool:
    """Whether `run` passes over the operands before the GEMM: always for 08 (it rounds
    A and rounds and transposes B); for 09 as PRE_ROUND says (see above)."""
    if "PRE_ROUND" not in p:
        return True
    return p["PRE_ROUND"] == 1 or (p["PRE_ROUND"] == 2 and splits == 1)


def _gemm_spec(precision: str, p: dict, pre: bool, al: bool, edge: bool) -> KernelSpec:
    """08 has an untested form (EDGE false: every k-tile of every block inside the
    matrices, 16-byte aligned) besides the tested one; 09 only the tested one, with the
    PRE flag."""
    flags = (al, edge or not al) if precision == "tf32" else (pre, al)
    return KernelSpec(FILES[precision], KERNELS[precision], template=_tiles(p) + flags)


def _prepass_specs(precision: str) -> list[KernelSpec]:
    if precision == "tf32":
        return [KernelSpec(FILES["tf32"], "round_tf32", template=(False,)),
                KernelSpec(FILES["tf32"], "round_tf32_transpose")]
    return [KernelSpec(FILES["3xtf32"], "round_tf32", template=(True,))]


def _specs(precision: str, p: dict) -> list[KernelSpec]:
    """Every kernel `run` may launch with these parameters (both alignment paths, both
    modes PRE_ROUND allows, the pre-pass, and the split-K reduction unless split_k is 1)."""
    if precision == "tf32":
        pre = (True,)
    else:
        pre = {0: (False,), 1: (True,), 2: (True, False)}.get(p.get("PRE_ROUND", 2), (True, False))
    forms = ((True, False), (True, True), (False, True))
    out = [_gemm_spec(precision, p, pr, al, ed) for pr in pre for al, ed in forms
           if precision == "tf32" or ed]
    if True in pre:
        out += _prepass_specs(precision)
    if p.get("split_k", 0) != 1:
        out += [KernelSpec(FILES[precision], "splitk_reduce", template=(v,))
                for v in (True, False)]
    return out


def _fits_device(precision: str, p: dict) -> None:
    """The defaults are sized for an H200 (192 KB of shared memory per block); a GPU with
    less opt-in shared memory (sm_89: 99 KB, sm_80: 163 KB) needs fewer stages. Say how
    many fit instead of failing at launch."""
    from ..device import current

    limit = current().smem_per_block_optin
    need = smem_bytes(p)
    if need > limit:
        per_stage = need // p["STAGES"]
        fit = limit // per_stage
        hint = (f"STAGES={fit} fits" if fit >= 2 else "a smaller BM/BN is needed")
        name = "08-tf32-mma" if precision == "tf32" else "09-3xtf32"
        raise ConfigError(f"{name}: {p['STAGES']} stages need {need // 1024} KB of shared "
                          f"memory, this GPU allows {limit // 1024} KB per block; {hint}")


def _run(precision: str, A, B, C, p: dict) -> None:
    import cupy as cp

    M, K = A.shape
    N = B.shape[1]
    for name, x in (("A", A), ("B", B), ("C", C)):
        if x.dtype != cp.float32 or not x.flags.c_contiguous:
            raise ConfigError(f"{name} must be a C-contiguous float32 array")
    if B.shape[0] != K or C.shape != (M, N):
        raise ConfigError(f"shapes do not match: A {A.shape}, B {B.shape}, C {C.shape}")
    _fits_device(precision, p)
    s = splits_for(p, M, N, K, _sm_count())
    pre = pre_round(p, s)
    if pre:
        # Rounded copies of the operands (08: A, and B transposed to N x K; 09: big + small,
        # 22 bits), made here so that any timing of `run` includes them. Fresh CuPy arrays
        # are 256-byte aligned.
        specs = _prepass_specs(precision)
        rnd = get_kernel(specs[0])
        blocks = lambda x: max(1, min(ceil_div(x.size // 4 or 1, 256), _sm_count() * 8))
        A2 = cp.empty_like(A)
        launch(rnd, (blocks(A), 1, 1), (256, 1, 1), (A, A2, cp.int64(A.size)))
        if precision == "tf32":
            B2 = cp.empty((N, K), dtype=cp.float32)
            launch(get_kernel(specs[1]), (ceil_div(N, 32), ceil_div(K, 32), 1), (256, 1, 1),
                   (B, B2, cp.int32(K), cp.int32(N)))
        else:
            B2 = cp.empty_like(B)
            launch(rnd, (blocks(B), 1, 1), (256, 1, 1), (B, B2, cp.int64(B.size)))
        A, B = A2, B2
    al = aligned(A, B, C, N, K)
    edge = bool(M % p["BM"] or N % p["BN"] or K % p["BK"])
    kern = get_kernel(_gemm_spec(precision, p, pre, al, edge))
    grid = (ceil_div(M, p["BM"]) * ceil_div(N, p["BN"]), 1, s)
    out = C if s == 1 else cp.empty((s, M, N), dtype=cp.float32)
    launch(kern, grid, (threads(p), 1, 1),
           (A, B, out, cp.int32(M), cp.int32(N), cp.int32(K)), shared_mem=smem_bytes(p))
    if s > 1:
        vec = (M * N) % 4 == 0 and C.data.ptr % 16 == 0
        red = get_kernel(KernelSpec(FILES[precision], "splitk_reduce", template=(vec,)))
        work = (M * N) // 4 if vec else M * N
        blocks = max(1, min(ceil_div(work, 256), _sm_count() * 8))
        launch(red, (blocks, 1, 1), (256, 1, 1),
               (out, C, cp.int64(M * N), cp.int32(s)))


def _variant(precision: str, name: str, label: str, idea: str) -> Variant:
    return Variant(
        name=name, label=label, precision=precision, idea=idea,
        kernels=functools.partial(_specs, precision),
        run=functools.partial(_run, precision),
        default_params=dict(DEFAULTS[precision]),
        param_space={k: list(v) for k, v in PARAM_SPACE[precision].items()},
        validate=functools.partial(_validate, precision),
    )


VARIANTS: list[Variant] = [
    _variant("tf32", "08-tf32-mma", "TF32 tensor cores (mma.sync m16n8k8)",
             "Multiply on the tensor cores: operands rounded to TF32 (10-bit mantissa) and B "
             "transposed by a pre-pass, both fragments loaded with ldmatrix from a "
             "6-stage cp.async pipeline through swizzled shared memory."),
    _variant("3xtf32", "09-3xtf32", "3xTF32: split operands, three products per step",
             "Split each operand into a TF32 big part and a TF32 remainder and add three "
             "products, buying back fp32 accuracy for 3x the tensor-core work."),
]
