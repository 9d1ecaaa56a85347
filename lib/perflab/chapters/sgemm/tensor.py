"""The tensor-core rungs of the SGEMM ladder: TF32 through mma.sync (08) and 3xTF32 (09).

Both kernels share one design (kernels/01-sgemm/mma_tf32.cuh): a BM x BN block tile,
BK-deep k-tiles streamed through a `stages`-deep cp.async pipeline, one WM x WN warp tile
per warp built from m16n8k8 MMAs. Tile sizes are template parameters; `validate` rejects
a combination the kernel cannot run and says why. Split-K (gridDim.z) is chosen
automatically when there are too few output tiles to fill the GPU.

Rung 08 reads A and B^T: a pre-pass (round_tf32 on A, round_tf32_transpose on B, in
mma_tf32.cuh; launched by `enqueue`, inside whatever is timed) writes A rounded to TF32
and B rounded and transposed to scratch arrays, so both operands reach the GEMM with k
contiguous and both fragments come from ldmatrix; the GEMM feeds their bits to the tensor
cores as they are. The pre-pass costs one read and one write of A and of B.

Rung 09 keeps B as it comes. PRE_ROUND (09 only) moves its fp32 -> big + small split out
of the main loop: a pre-pass leaves each operand as big + small (22 significant bits) and
the loop splits it in 3 instructions instead of ~5. 0: split in the loop; 1: pre-pass;
2 (default): the pre-pass unless split-K is used (a short GEMM over few output tiles,
where the pass over A and B would be a large share of the time). After 09's GEMM a last
pass (fix_not_finite) computes the elements that came out not finite again in fp32: NaN
and ±Inf, which three TF32 products cannot carry; the pre-pass's flag lets it stop at
once when no input needs it.

Importing this module touches no GPU: CuPy is imported inside `enqueue` only.
"""
from __future__ import annotations

import functools
import numbers

from ...errors import ConfigError
from ...kernels import get_kernel, launch
from .variant import GemmVariant, aligned, ceil_div, require, smem_fits, spec

FILES = {"tf32": "08_tf32_mma.cu", "3xtf32": "09_3xtf32.cu"}
KERNELS = {"tf32": "sgemm_tf32_mma", "3xtf32": "sgemm_3xtf32"}
NAMES = {"tf32": "08-tf32-mma", "3xtf32": "09-3xtf32"}
KEYS = ("BM", "BN", "BK", "WM", "WN", "stages")

#: Registers the kernel needs besides its WM*WN/32 accumulators, from the compile report
#: of every configuration in PARAM_SPACE (09: both PRE_ROUND modes; ptxas, sm_89/90): TF32
#: <= 126 (the fragments are double-buffered) and 3xTF32 <= 112 over the accumulators for
#: 64 x 64 warp tiles. Used to refuse blocks that cannot fit 64K registers per SM (they
#: would spill or fail to launch), before compiling them.
_REG_OVERHEAD = {"tf32": 127, "3xtf32": 112}

_TILE_DEFAULTS = {"BM": 128, "BN": 256, "BK": 16, "WM": 64, "WN": 64, "stages": 6, "slices": 0}
DEFAULTS = {"tf32": dict(_TILE_DEFAULTS), "3xtf32": {**_TILE_DEFAULTS, "PRE_ROUND": 2}}

#: The sweep: block shapes, k-tile depth and pipeline depth at the 64 x 64 warp tile.
_TILE_SPACE = {"BM": [64, 128, 256], "BN": [128, 256], "BK": [16, 32], "WM": [64],
               "WN": [64], "stages": [4, 6]}
PARAM_SPACE = {"tf32": dict(_TILE_SPACE), "3xtf32": {**_TILE_SPACE, "PRE_ROUND": [2]}}

#: slices = 0 chooses automatically; splits below this many k-tiles each are not worth it.
_MIN_KTILES_PER_SPLIT = 4


def _tiles(p: dict) -> tuple[int, ...]:
    return tuple(int(p[k]) for k in KEYS)


def threads(p: dict) -> int:
    BM, BN, BK, WM, WN, _ = _tiles(p)
    return (BM // WM) * (BN // WN) * 32


def smem_bytes(p: dict) -> int:
    BM, BN, BK, _, _, S = _tiles(p)
    return S * (BM * BK + BK * BN) * 4


def check_tiles(name: str, p: dict, keys, reg_overhead: int, device: dict | None) -> None:
    """Refuse, with the reason, a block the mma_tf32.cuh design cannot run (rungs 08, 09
    and 11): parameters `keys` not integers, a k-tile depth the swizzle lacks, warp tiles
    that are not whole MMAs or do not divide the block tile, loads that do not split into
    16-byte chunks per thread, a pipeline depth out of range, more shared memory than
    `device` gives a block, more registers (`reg_overhead` besides the accumulators) than
    a thread or an SM has."""
    for k in keys:
        v = p.get(k)
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise ConfigError(f"{name}: parameter {k} must be an integer, got {v!r}")
    BM, BN, BK, WM, WN, S = _tiles(p)
    require(BK in (16, 32), name, f"BK={BK}; the shared-memory swizzle is built for BK 16 or 32")
    require(WM >= 16 and WM % 16 == 0, name,
            f"WM={WM} must be a multiple of 16 (the MMA tile is 16 rows)")
    require(WN >= 32 and WN % 32 == 0, name,
            f"WN={WN} must be a multiple of 32 (the B swizzle spans 4 n8-tiles)")
    require(BM % WM == 0 and BN % WN == 0, name,
            f"warp tile {WM}x{WN} does not divide block tile {BM}x{BN}")
    t = threads(p)
    require(t <= 1024, name, f"{BM // WM}x{BN // WN} warps = {t} threads, over 1024 per block")
    require(t % (BK // 4) == 0 and BM % (t // (BK // 4)) == 0, name,
            f"{t} threads x 16 B do not tile the {BM}x{BK} A tile evenly "
            f"({BM * BK // 4} chunks of 16 B)")
    require(t % (BN // 4) == 0 and BK % (t // (BN // 4)) == 0, name,
            f"{t} threads x 16 B do not tile the {BK}x{BN} B tile evenly ({BK * BN // 4} "
            f"chunks of 16 B: need threads to be a multiple of {BN // 4} and "
            f"{BK}x{BN // 4} chunks a multiple of threads)")
    require(2 <= S <= 8, name, f"stages={S}; the pipeline needs 2 to 8 stages")
    per_stage = smem_bytes(p) // S
    fit = int(device["smem_per_block_optin"]) // per_stage if device else S
    smem_fits(name, smem_bytes(p), device,
              f"{S} stages x ({BM}x{BK} + {BK}x{BN}) floats"
              + (f" (stages={fit} would fit)" if 2 <= fit < S else ""))
    regs = WM * WN // 32 + reg_overhead
    require(regs <= 255, name, f"a {WM}x{WN} warp tile needs {WM * WN // 32} accumulator "
            f"registers per thread, ~{regs} in all: over the 255 limit")
    require(regs * t <= 65536, name,
            f"{t} threads x ~{regs} registers = {regs * t}, over the 65536 registers of an SM")


def _validate(precision: str, p: dict, M: int, N: int, K: int, device: dict | None) -> None:
    name = NAMES[precision]
    check_tiles(name, p, DEFAULTS[precision], _REG_OVERHEAD[precision], device)
    if precision == "tf32":
        require(ceil_div(K, 32) <= 65535, name,
                f"K={K}; the transposing pre-pass covers K in 32-row blocks along the "
                "grid's y axis (at most 65535), so K <= 2097120")
    require(p["slices"] >= 0, name, f"slices={p['slices']}; use 0 (automatic) or >= 1")
    if precision == "3xtf32":
        require(p["PRE_ROUND"] in (0, 1, 2), name,
                f"PRE_ROUND={p['PRE_ROUND']}; use 0 (split in the main loop), 1 (pre-pass) "
                "or 2 (pre-pass unless split-K)")


@functools.lru_cache(maxsize=None)
def _sm_count() -> int:
    from ...device import current
    return current().sms


def slices(p: dict, M: int, N: int, K: int, sms: int) -> int:
    """How many K slices `enqueue` launches: p['slices'] if set, else enough for ~one
    wave of blocks (one per SM) when the output has fewer tiles than the GPU has SMs,
    each slice keeping at least _MIN_KTILES_PER_SPLIT k-tiles; trimmed so none is empty."""
    BM, BN, BK = p["BM"], p["BN"], p["BK"]
    tiles = ceil_div(M, BM) * ceil_div(N, BN)
    kt = ceil_div(K, BK)
    s = p["slices"]
    if s == 0:
        s = max(1, sms // tiles) if tiles < sms else 1
        s = min(s, max(1, kt // _MIN_KTILES_PER_SPLIT))
    s = max(1, min(s, kt, 65535))
    return ceil_div(kt, ceil_div(kt, s))    # no empty slice


def pre_round(p: dict, n_slices: int) -> bool:
    """Whether `enqueue` passes over the operands before the GEMM: always for 08 (it
    rounds A and rounds and transposes B); for 09 as PRE_ROUND says (see above)."""
    if "PRE_ROUND" not in p:
        return True
    return p["PRE_ROUND"] == 1 or (p["PRE_ROUND"] == 2 and n_slices == 1)


def _gemm_spec(precision: str, p: dict, pre: bool, al: bool, ed: bool):
    """08 has an untested form (EDGE false: every k-tile of every block inside the
    matrices, 16-byte aligned) besides the tested one; 09 only the tested one, with the
    PRE flag."""
    flags = (al, ed or not al) if precision == "tf32" else (pre, al)
    return spec(FILES[precision], KERNELS[precision], template=_tiles(p) + flags)


def _prepass_specs(precision: str) -> list:
    if precision == "tf32":
        return [spec(FILES["tf32"], "round_tf32"),
                spec(FILES["tf32"], "round_tf32_transpose")]
    return [spec(FILES["3xtf32"], "round_3xtf32")]


def _specs(precision: str, p: dict) -> list:
    """Every kernel `enqueue` may launch with these parameters (both alignment paths, both
    modes PRE_ROUND allows, the pre-pass, and the split-K reduction unless slices is 1)."""
    if precision == "tf32":
        pre = (True,)
    else:
        pre = {0: (False,), 1: (True,), 2: (True, False)}.get(p.get("PRE_ROUND", 2), (True, False))
    forms = ((True, False), (True, True), (False, True))
    out = [_gemm_spec(precision, p, pr, al, ed) for pr in pre for al, ed in forms
           if precision == "tf32" or ed]
    if True in pre:
        out += _prepass_specs(precision)
    if p.get("slices", 0) != 1:
        out += [spec(FILES[precision], "splitk_reduce", template=(v,)) for v in (True, False)]
    if precision == "3xtf32":
        out.append(spec(FILES[precision], "fix_not_finite"))
    return out


def _enqueue(precision: str, A, B, C, p: dict) -> None:
    import cupy as cp

    (M, K), N = A.shape, B.shape[1]
    s = slices(p, M, N, K, _sm_count())
    pre = pre_round(p, s)
    A0, B0, flag = A, B, None                 # the operands as given (09's last pass)
    if pre:
        # Rounded copies of the operands (08: A, and B transposed to N x K; 09: big + small,
        # 22 bits), made here so that any timing of the call includes them. Fresh CuPy
        # arrays are 256-byte aligned.
        specs = _prepass_specs(precision)
        rnd = get_kernel(specs[0])
        blocks = lambda x: max(1, min(ceil_div(x.size // 4 or 1, 256), _sm_count() * 8))
        A2 = cp.empty_like(A)
        # 09's pre-pass also raises a flag where an input needs the special-value pass.
        flag = None if precision == "tf32" else cp.zeros(1, dtype=cp.int32)
        extra = () if flag is None else (flag,)
        launch(rnd, (blocks(A), 1, 1), (256, 1, 1), (A, A2, cp.int64(A.size)) + extra)
        if precision == "tf32":
            B2 = cp.empty((N, K), dtype=cp.float32)
            launch(get_kernel(specs[1]), (ceil_div(N, 32), ceil_div(K, 32), 1), (256, 1, 1),
                   (B, B2, cp.int32(K), cp.int32(N)))
        else:
            B2 = cp.empty_like(B)
            launch(rnd, (blocks(B), 1, 1), (256, 1, 1), (B, B2, cp.int64(B.size)) + extra)
        A, B = A2, B2
    al = aligned(A, B, C, cols=(N, K))
    edge = bool(M % p["BM"] or N % p["BN"] or K % p["BK"])
    kern = get_kernel(_gemm_spec(precision, p, pre, al, edge))
    grid = (ceil_div(M, p["BM"]) * ceil_div(N, p["BN"]), 1, s)
    out = C if s == 1 else cp.empty((s, M, N), dtype=cp.float32)
    launch(kern, grid, (threads(p), 1, 1),
           (A, B, out, cp.int32(M), cp.int32(N), cp.int32(K)), shared_mem=smem_bytes(p))
    if s > 1:
        vec = (M * N) % 4 == 0 and C.data.ptr % 16 == 0
        red = get_kernel(spec(FILES[precision], "splitk_reduce", template=(vec,)))
        work = (M * N) // 4 if vec else M * N
        blocks = max(1, min(ceil_div(work, 256), _sm_count() * 8))
        launch(red, (blocks, 1, 1), (256, 1, 1), (out, C, cp.int64(M * N), cp.int32(s)))
    if precision == "3xtf32":
        # The elements of C that came out not finite, again in fp32 from A and B as given
        # (kernels/01-sgemm/09_3xtf32.cu, "Special values"); with the pre-pass's flag down
        # it stops at once.
        launch(get_kernel(spec(FILES[precision], "fix_not_finite")),
               (max(1, min(M, _sm_count() * 8)), 1, 1), (256, 1, 1),
               (A0, B0, C, cp.int32(M), cp.int32(N), cp.int32(K),
                flag if flag is not None else cp.uint64(0)))


def _variant(precision: str, label: str, idea: str) -> GemmVariant:
    return GemmVariant(
        name=NAMES[precision], label=label, precision=precision, idea=idea,
        kernels=functools.partial(_specs, precision),
        enqueue=functools.partial(_enqueue, precision),
        default_params=DEFAULTS[precision], param_space=PARAM_SPACE[precision],
        validate=functools.partial(_validate, precision),
    )


VARIANTS: list[GemmVariant] = [
    _variant("tf32", "TF32 tensor cores (mma.sync m16n8k8)",
             "Multiply on the tensor cores: operands rounded to TF32 (10-bit mantissa) and B "
             "transposed by a pre-pass, both fragments loaded with ldmatrix from a "
             "6-stage cp.async pipeline through swizzled shared memory."),
    _variant("3xtf32", "3xTF32: split operands, three products per step",
             "Split each operand into a TF32 big part and a TF32 remainder and add three "
             "products, buying back fp32 accuracy for 3x the tensor-core work."),
]
