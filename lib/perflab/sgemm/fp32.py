"""The FP32 (FFMA, no tensor cores) rungs of the SGEMM ladder: kernels/matmul/01..07.

Each rung is a `Variant`: which kernels it launches for a set of tile parameters, how it
launches them, and which parameter combinations cannot work (`validate` raises
ConfigError with the reason, before anything is compiled). Nothing here touches the GPU
at import time.
"""
from __future__ import annotations

import functools

from ..errors import ConfigError
from ..kernels import KernelSpec, get_kernel, launch
from .base import Variant, ceil_div

#: Shared memory one block may opt in to on sm_90 (227 KB).
SMEM_LIMIT = 232_448


# ----------------------------------------------------------------------------- helpers

def _dims(A, B):
    M, K = A.shape
    K2, N = B.shape
    if K != K2:
        raise ConfigError(f"A is {M}x{K} but B is {K2}x{N}: inner dimensions differ")
    for nm, a in (("A", A), ("B", B)):
        flags = getattr(a, "flags", None)
        if flags is not None and not flags.c_contiguous:
            raise ConfigError(f"{nm} must be a C-contiguous (row-major) array")
    return int(M), int(N), int(K)


def _i32(*xs):
    import numpy as np
    return tuple(np.int32(x) for x in xs)


def _aligned(N: int, *arrays) -> bool:
    """16-byte loads/stores are legal: rows of B and C start on 16 bytes."""
    return N % 4 == 0 and all(a.data.ptr % 16 == 0 for a in arrays)


def _req(cond: bool, name: str, reason: str) -> None:
    if not cond:
        raise ConfigError(f"{name}: {reason}")


def _blocktile_checks(name, p, *, max_threads=1024):
    """Checks shared by rungs 04 and 05 (BM x BN tile, TM x TN microtile per thread)."""
    BM, BN, BK, TM, TN = (int(p[k]) for k in ("BM", "BN", "BK", "TM", "TN"))
    _req(TM % 4 == 0 and TN % 4 == 0, name,
         f"TM={TM} and TN={TN} must be multiples of 4 (microtiles are read as float4)")
    _req(BM % TM == 0, name, f"the microtile must divide the tile: BM={BM} % TM={TM} != 0")
    _req(BN % TN == 0, name, f"the microtile must divide the tile: BN={BN} % TN={TN} != 0")
    threads = (BM // TM) * (BN // TN)
    _req(32 <= threads <= max_threads, name,
         f"(BM/TM)*(BN/TN) = {threads} threads; a block needs 32..{max_threads}")
    _req((BM * BK) % threads == 0, name,
         f"(BM*BK) % threads != 0 ({BM}*{BK} % {threads}): the A tile must split evenly")
    _req((BK * BN) % threads == 0, name,
         f"(BK*BN) % threads != 0 ({BK}*{BN} % {threads}): the B tile must split evenly")
    _req(TM * TN <= 64, name,
         f"a {TM}x{TN} microtile needs {TM * TN} accumulators: more than 64 spills registers")
    smem = 4 * BK * ((BM + 4) + BN)
    _req(smem <= 48 * 1024, name,
         f"static shared memory {smem} B exceeds 48 KB (BK*(BM+4+BN)*4)")
    return threads


# ----------------------------------------------------------------------- 01, 02 naive

def _simple(file, fn, coalesced):
    spec = KernelSpec(file, fn)

    def run(A, B, C, params):
        M, N, K = _dims(A, B)
        if coalesced:   # x walks columns
            grid = (ceil_div(N, 32), ceil_div(M, 32))
        else:           # x walks rows
            grid = (ceil_div(M, 32), ceil_div(N, 32))
        _req(grid[1] <= 65535, fn, f"grid.y = {grid[1]} exceeds 65535")
        launch(get_kernel(spec), grid, (32, 32), (A, B, C) + _i32(M, N, K))

    return spec, run


_naive_spec, _naive_run = _simple("matmul/01_naive.cu", "sgemm_naive", coalesced=False)
_coal_spec, _coal_run = _simple("matmul/02_coalesced.cu", "sgemm_coalesced", coalesced=True)


# ------------------------------------------------------------------- 03 smem tiling

def _smem_spec(p):
    return KernelSpec("matmul/03_smem_tiling.cu", "sgemm_smem", template=(int(p["TILE"]),))


def _smem_validate(p, M, N, K):
    T = int(p["TILE"])
    _req(1 <= T <= 32, "03-smem-tiling", f"TILE={T}: a TILE x TILE block needs TILE <= 32")


def _smem_run(A, B, C, p):
    M, N, K = _dims(A, B)
    T = int(p["TILE"])
    launch(get_kernel(_smem_spec(p)), (ceil_div(N, T), ceil_div(M, T)), (T, T),
           (A, B, C) + _i32(M, N, K))


# ------------------------------------------------------------- 04, 05 register tiling

def _tile_variant(file, fn, name, max_threads):
    def spec(p):
        return KernelSpec(file, fn, template=tuple(int(p[k]) for k in
                                                   ("BM", "BN", "BK", "TM", "TN")))

    def validate(p, M, N, K):
        _blocktile_checks(name, p, max_threads=max_threads)

    def run(A, B, C, p):
        M, N, K = _dims(A, B)
        threads = _blocktile_checks(name, p, max_threads=max_threads)
        grid = (ceil_div(N, int(p["BN"])), ceil_div(M, int(p["BM"])))
        _req(grid[1] <= 65535, name, f"grid.y = {grid[1]} exceeds 65535")
        launch(get_kernel(spec(p)), grid, (threads,), (A, B, C) + _i32(M, N, K))

    return spec, validate, run


_reg_spec, _reg_validate, _reg_run = _tile_variant(
    "matmul/04_register_tiling.cu", "sgemm_regtile", "04-register-tiling", 1024)
# 05 asks for two blocks per SM (__launch_bounds__(threads, 2)): more than 256 threads
# would squeeze a thread under 128 registers and spill the 8x8 accumulators.
_occ_spec, _occ_validate, _occ_run = _tile_variant(
    "matmul/05_occupancy.cu", "sgemm_occupancy", "05-occupancy", 256)


# ------------------------------------------------------------------- 06 warp tiling

_WT_KEYS = ("BM", "BN", "BK", "WM", "WN", "TM", "TN", "stages")

#: Block shapes 06 chooses from when auto_shape is on: (tile parameters, relative speed
#: of one full wave). 128x256 with 8x16 thread tiles (one block per SM) is the fastest
#: tile; 128x128 with 8x8 (two blocks per SM) fills the last wave in steps half as big.
#: Relative speeds from the H200 sweep at 4096^3 (sgemm.sweep, run d26869b420dc):
#: 128x256x32, 3 stages 49.1 TFLOP/s; 128x128x32, 2 stages 46.1 -> 0.94.
_AUTO_SHAPES = (
    ({"BM": 128, "BN": 256, "BK": 32, "WM": 64, "WN": 64, "TM": 8, "TN": 16, "stages": 3}, 1.00),
    ({"BM": 128, "BN": 128, "BK": 32, "WM": 64, "WN": 32, "TM": 8, "TN": 8, "stages": 2}, 0.94),
)


def _wt_threads(p) -> int:
    return (int(p["BM"]) // int(p["WM"])) * (int(p["BN"]) // int(p["WN"])) * 32


def _wt_smem(p) -> int:
    """Dynamic shared memory of 06/07: STAGES * BK * ((BM + 4) + BN) floats."""
    return 4 * int(p["stages"]) * int(p["BK"]) * ((int(p["BM"]) + 4) + int(p["BN"]))


def _wt_checks(name, p):
    BM, BN, BK, WM, WN, TM, TN, S = (int(p[k]) for k in _WT_KEYS)
    _req(BM % WM == 0, name, f"BM not divisible by WM ({BM} % {WM} != 0)")
    _req(BN % WN == 0, name, f"BN not divisible by WN ({BN} % {WN} != 0)")
    _req(TM % 4 == 0 and TN % 4 == 0, name,
         f"TM={TM} and TN={TN} must be multiples of 4 (float4 pieces)")
    _req(WM % TM == 0 and WN % TN == 0, name,
         f"the thread tile must divide the warp tile (WM={WM}, TM={TM}, WN={WN}, TN={TN})")
    _req((WM // TM) * (WN // TN) == 32, name,
         f"(WM/TM)*(WN/TN) = {(WM // TM) * (WN // TN)}: a warp tile must hold exactly "
         "32 thread tiles")
    threads = _wt_threads(p)
    _req(threads <= 1024, name, f"{threads} threads per block (max 1024)")
    _req(BK % 4 == 0 and (threads * 4) % BK == 0, name,
         f"(threads*4) % BK != 0 ({threads}*4 % {BK}): the A-tile copy needs it")
    _req(BN % 4 == 0 and (threads * 4) % BN == 0, name,
         f"(threads*4) % BN != 0 ({threads}*4 % {BN}): the B-tile copy needs it")
    _req(S >= 2, name, f"stages={S}: a pipeline needs at least 2")
    _req(threads <= 256, name,
         f"{threads} threads per block: the kernel is built for at most 256 (8 warps)")
    # Up to 64 accumulators: __launch_bounds__(threads, 2), <= 128 registers per thread.
    # 65..128 (8x16 large tiles): one block per SM, up to 255 registers per thread.
    _req(TM * TN <= 128, name,
         f"a {TM}x{TN} thread tile needs {TM * TN} accumulators: more than 128 spills")
    _req(BK <= 32, name, f"BK={BK}: the K loop is unrolled; BK <= 32 keeps it in the "
         "instruction cache and the copies in registers")
    # Found by compiling every sweep point (ptxas -v, sm_89 and sm_90): 8x16 thread tiles
    # (up to 255 registers) spill when a thread also copies more than 80 floats a stage.
    per_thread = (BM * BK + BK * BN) // threads
    _req(TM * TN <= 64 or per_thread <= 80, name,
         f"{TM}x{TN} thread tiles with {per_thread} floats copied per thread and stage "
         f"((BM*BK + BK*BN)/threads) spill registers: use more threads or a smaller BK")
    _req(TM * TN > 64 or BN <= 128, name,
         f"BN={BN} with {TM}x{TN} thread tiles spills at 128 registers (the unaligned "
         "copy path): a 256-wide tile takes 8x16 thread tiles (WN=64, TN=16)")
    smem = _wt_smem(p)
    _req(smem <= SMEM_LIMIT, name,
         f"shared memory {smem} B = stages*BK*(BM+4+BN)*4 exceeds 227 KB")
    return threads


def _tile_template(p, aligned: bool, edge: bool) -> tuple:
    """06/07 template arguments: the tile parameters, ALIGNED, EDGE (forced on when the
    copies cannot be 16 bytes wide)."""
    return tuple(int(p[k]) for k in _WT_KEYS) + (bool(aligned), bool(edge or not aligned))


#: The (ALIGNED, EDGE) instantiations of 06/07 kernels: a problem with no edge tiles has
#: N % 4 == 0, so the untested kernel exists only in its 16-byte-copy form.
_FORMS = ((True, False), (True, True), (False, True))


def _edge(p, M: int, N: int, K: int) -> bool:
    """Some tile crosses M or N, or K is not a multiple of BK: the kernel must test."""
    return bool(M % int(p["BM"]) or N % int(p["BN"]) or K % int(p["BK"]))


def _wt_spec(p, aligned: bool, edge: bool = True) -> KernelSpec:
    return KernelSpec("matmul/06_warptiling.cu", "sgemm_warptile",
                      template=_tile_template(p, aligned, edge))


def _wt_shape_params(p, shape) -> dict:
    return {**p, **shape[0]}


@functools.lru_cache(maxsize=None)
def _slots(key: tuple, aligned: bool) -> int:
    """Blocks of one configuration the whole GPU holds at once (occupancy query)."""
    from ..device import current
    from ..kernels import blocks_per_sm
    p = dict(key)
    k = get_kernel(_wt_spec(p, aligned))
    try:
        per_sm = blocks_per_sm(k, _wt_threads(p), _wt_smem(p))
    except Exception:   # no occupancy answer: what __launch_bounds__ asked for
        per_sm = 2 if _wt_threads(p) <= 256 and int(p["TM"]) * int(p["TN"]) <= 64 else 1
    return max(1, per_sm) * current().sms


def _wt_pick(p, M, N, aligned) -> dict:
    """auto_shape: the block shape with the best predicted time, counting the idle slots
    of a partial last wave and the wasted area of edge tiles."""
    best, best_score = None, -1.0
    for shape in _AUTO_SHAPES:
        q = _wt_shape_params(p, shape)
        BM, BN = q["BM"], q["BN"]
        blocks = ceil_div(M, BM) * ceil_div(N, BN)
        slots = _slots(tuple(sorted((k, q[k]) for k in _WT_KEYS)), aligned)
        waves = blocks / slots
        fill = waves / ceil_div(blocks, slots)         # busy fraction of the slots
        area = (M * N) / (blocks * BM * BN)            # useful fraction of the tiles
        score = fill * area * shape[1]
        if score > best_score:
            best, best_score = q, score
    return best


def _wt_kernels(p):
    configs = ([_wt_shape_params(p, s) for s in _AUTO_SHAPES] if p.get("auto_shape")
               else [p])
    return [_wt_spec(q, al, ed) for q in configs for al, ed in _FORMS]


def _wt_validate(p, M, N, K):
    if p.get("auto_shape"):
        for s in _AUTO_SHAPES:
            _wt_checks("06-warptiling", _wt_shape_params(p, s))
    else:
        _wt_checks("06-warptiling", p)


#: One launch plan per (device, shapes, alignment, parameters): the shape choice, the
#: checks and the kernel lookup cost tens of microseconds of Python, which a timer that
#: brackets the call would count for a kernel of a few milliseconds (see 07's plans).
_WT_PLANS: dict = {}


def _wt_run(A, B, C, p):
    import cupy
    from .. import kernels as _kernels

    M, N, K = _dims(A, B)
    aligned = _aligned(N, B, C)
    key = (cupy.cuda.runtime.getDevice(), A.shape, B.shape, C.shape, aligned,
           tuple(sorted(p.items())))
    plan = _WT_PLANS.get(key)
    if plan is None:
        q = _wt_pick(p, M, N, aligned) if p.get("auto_shape") else p
        threads = _wt_checks("06-warptiling", q)
        kernel = get_kernel(_wt_spec(q, aligned, _edge(q, M, N, K)))
        grid = (ceil_div(M, int(q["BM"])) * ceil_div(N, int(q["BN"])),)
        _kernels.check_launch(kernel, grid, (threads,), _wt_smem(q))
        plan = _WT_PLANS[key] = (kernel, grid, (threads,), _i32(M, N, K), _wt_smem(q))
    kernel, grid, block, ints, smem = plan
    if _kernels._CAPTURE is not None:                  # recording launches: the slow path
        launch(kernel, grid, block, (A, B, C) + ints, shared_mem=smem)
        return
    kernel(grid, block, (A, B, C) + ints, shared_mem=smem)


# ------------------------------------------------------------------------ 07 split-K

_REDUCE_RY = 8    # slices summed in parallel per output element, then added in order


def _sk_partial_spec(p, aligned: bool, edge: bool = True) -> KernelSpec:
    return KernelSpec("matmul/07_splitk.cu", "sgemm_splitk_partial",
                      template=_tile_template(p, aligned, edge))


def _sk_reduce_spec(vec: bool) -> KernelSpec:
    return KernelSpec("matmul/07_splitk.cu", "splitk_reduce", template=(_REDUCE_RY, bool(vec)))


def _sk_tail_spec(p, aligned: bool, edge: bool = True) -> KernelSpec:
    return KernelSpec("matmul/07_splitk.cu", "sgemm_tailsplit",
                      template=_tile_template(p, aligned, edge))


def _sk_tail_reduce_spec(p, aligned: bool) -> KernelSpec:
    return KernelSpec("matmul/07_splitk.cu", "tail_reduce",
                      template=(int(p["BM"]), int(p["BN"]), bool(aligned)))


def _sk_tail_params(p) -> dict:
    """The tile of the last-wave split: 06's fastest (auto_shape), else the given one."""
    return {**p, **_AUTO_SHAPES[0][0]} if p.get("auto_shape") else p


def _sk_kernels(p):
    q = _sk_tail_params(p)
    if q is not p:
        return _sk_kernels({**q, "auto_shape": False}) + _sk_kernels({**p, "auto_shape": False})
    return ([f(p, al, ed) for al, ed in _FORMS for f in (_sk_partial_spec, _sk_tail_spec)]
            + [f(*a) for al in (True, False) for f, a in
               ((_sk_reduce_spec, (al,)), (_sk_tail_reduce_spec, (p, al)))])


#: The tail split: each split block gets at least this many K steps.
_TAIL_MIN_KSTEPS = 4


def _sk_tail(p, M, N, K, slots: int) -> tuple[int, int, int, int]:
    """(full, tail, S, kslice) of the tail split: the first `full` tiles whole, the last
    `tail` tiles (those of a partial last wave) in S slices of kslice each. S = 1 when
    the tiles fill whole waves or the tail is too large to gain from a split."""
    BK = int(p["BK"])
    tiles = ceil_div(M, int(p["BM"])) * ceil_div(N, int(p["BN"]))
    tail = tiles % slots
    S = min(slots // tail, ceil_div(K, BK) // _TAIL_MIN_KSTEPS) if tail else 1
    if S < 2:
        return tiles, 0, 1, K
    kslice = ceil_div(ceil_div(K, S), BK) * BK
    return tiles - tail, tail, ceil_div(K, kslice), kslice


def _sk_slices(p, M, N, K, sms: int) -> tuple[int, int]:
    """(S, kslice): S slices of kslice (a multiple of BK) cover K, none empty.
    slices = 0 picks S so that the grid holds about two blocks per SM."""
    BK = int(p["BK"])
    want = int(p["slices"])
    if want <= 0:
        tiles = ceil_div(M, int(p["BM"])) * ceil_div(N, int(p["BN"]))
        want = max(1, ceil_div(2 * sms, tiles))
    want = min(want, ceil_div(K, BK), 65535)
    kslice = ceil_div(ceil_div(K, want), BK) * BK
    return ceil_div(K, kslice), kslice


def _sk_validate(p, M, N, K):
    _wt_checks("07-split-k", p)
    s = int(p["slices"])
    _req(s >= 0, "07-split-k", f"slices={s}: give a positive count, or 0 for automatic")
    _req(s <= 65535, "07-split-k", f"slices={s} exceeds the grid limit 65535")
    _req(ceil_div(M, int(p["BM"])) <= 65535, "07-split-k",
         f"grid.y = ceil(M/BM) = {ceil_div(M, int(p['BM']))} exceeds 65535")


# A split-K call on a small problem takes tens of microseconds on the GPU, as little as
# the Python around it: the timer's events bracket the whole call, so host work between
# the two launches is measured as if it were kernel time. Everything that depends only on
# (device, shapes, alignment, parameters) is therefore computed once into a plan: the
# validation, the kernels (compiled, launch checked, shared-memory attribute set), the
# grids, the int32 arguments and the workspace. A call is then two kernel launches.
#
# The workspace is one buffer per device, grown on demand and reused by every call: calls
# that share a device must be issued on one stream (as the lab does), or two calls in
# flight at once would write the same partial sums.
_SK_KEYS = _WT_KEYS + ("slices",)
_SK_PLANS: dict = {}
_SK_WORKSPACE: dict = {}


def _sk_workspace(dev: int, nfloats: int):
    import cupy
    buf = _SK_WORKSPACE.get(dev)
    if buf is None or buf.size < nfloats:
        _SK_WORKSPACE[dev] = None                      # free the old buffer first
        for key in [k for k in _SK_PLANS if k[0] == dev]:
            del _SK_PLANS[key]                         # plans hold views of the old one
        buf = _SK_WORKSPACE[dev] = cupy.empty(nfloats, dtype=cupy.float32)
    return buf[:nfloats]


def _sk_plan(A, B, C, p, dev: int, aligned: bool):
    """The launches of one call: (kernel, grid, block, argument names, ints, smem) each;
    argument names pick among A, B, C and the workspace W."""
    from ..device import current

    M, N, K = _dims(A, B)
    _sk_validate(p, M, N, K)
    sms = current().sms
    q = _sk_tail_params(p)
    if int(p["slices"]) == 0 and ceil_div(M, int(q["BM"])) * ceil_div(N, int(q["BN"])) >= sms:
        # Enough tiles for the GPU: split only the tiles of the partial last wave, with
        # rung 06's fastest tile when auto_shape is on.
        _sk_validate(q, M, N, K)
        return _sk_tail_plan(q, M, N, K, dev, aligned, sms)
    # Too few tiles (the skinny problem), or slices given: split the K of every tile.
    return _sk_split_plan(p, M, N, K, dev, aligned, sms)


def _sk_tail_plan(p, M, N, K, dev, aligned, sms):
    from ..kernels import blocks_per_sm, check_launch

    BM, BN = int(p["BM"]), int(p["BN"])
    threads, smem = _wt_threads(p), _wt_smem(p)
    kernel = get_kernel(_sk_tail_spec(p, aligned, _edge(p, M, N, K)))
    slots = max(1, blocks_per_sm(kernel, threads, smem)) * sms
    full, tail, S, kslice = _sk_tail(p, M, N, K, slots)
    grid = (full + tail * S,)
    check_launch(kernel, grid, (threads,), smem)
    W = _sk_workspace(dev, max(1, tail * S * BM * BN))
    steps = [(kernel, grid, (threads,), "ABCW", _i32(M, N, K, full, S, kslice), smem)]
    if tail:
        reduce = get_kernel(_sk_tail_reduce_spec(p, aligned))
        rgrid = (BM * BN // (4 * 256), tail)
        check_launch(reduce, rgrid, (256,), 0)
        steps.append((reduce, rgrid, (256,), "WC", _i32(M, N, full, S), 0))
    return W, steps


def _sk_split_plan(p, M, N, K, dev, aligned, sms):
    from ..kernels import check_launch

    threads, smem = _wt_threads(p), _wt_smem(p)
    S, kslice = _sk_slices(p, M, N, K, sms)
    partial = get_kernel(_sk_partial_spec(p, aligned, _edge(p, M, N, K)))
    grid = (ceil_div(N, int(p["BN"])), ceil_div(M, int(p["BM"])), S)
    check_launch(partial, grid, (threads,), smem)
    if S == 1:                                         # one slice: the partial product is C
        return None, [(partial, grid, (threads,), "ABC", _i32(M, N, K, kslice), smem)]
    W = _sk_workspace(dev, S * M * N)
    V = 4 if aligned else 1
    reduce = get_kernel(_sk_reduce_spec(aligned))
    rgrid = (ceil_div(ceil_div(M * N, V), 32),)
    check_launch(reduce, rgrid, (32, _REDUCE_RY), 0)
    return W, [(partial, grid, (threads,), "ABW", _i32(M, N, K, kslice), smem),
               (reduce, rgrid, (32, _REDUCE_RY), "WC", _i32(M * N, S), 0)]


def _sk_run(A, B, C, p):
    import cupy
    from .. import kernels as _kernels

    N = B.shape[1]
    aligned = _aligned(N, B, C)
    dev = cupy.cuda.runtime.getDevice()
    key = (dev, A.shape, B.shape, C.shape, aligned, A.flags.c_contiguous,
           B.flags.c_contiguous, tuple(int(p[k]) for k in _SK_KEYS),
           bool(p.get("auto_shape")))
    plan = _SK_PLANS.get(key)
    if plan is None:
        plan = _SK_PLANS[key] = _sk_plan(A, B, C, p, dev, aligned)
    W, steps = plan
    arrays = {"A": A, "B": B, "C": C, "W": W}
    args = [(tuple(arrays[c] for c in names) + ints, k, g, b, sm)
            for k, g, b, names, ints, sm in steps]
    if _kernels._CAPTURE is not None:                  # recording launches: the slow path
        for a, k, g, b, sm in args:
            launch(k, g, b, a, shared_mem=sm)
        return
    for a, k, g, b, sm in args:
        k(g, b, a, shared_mem=sm)


# -------------------------------------------------------------------------- variants

# The defaults: the fastest tile measured on the H200 (see _AUTO_SHAPES).
_WT_DEFAULTS = dict(_AUTO_SHAPES[0][0])
# 07 splits with 128x128 tiles (two blocks per SM): a skinny problem gets twice the
# blocks per SM of a 128x256 tile, and a partial last wave is cut into finer pieces.
_SK_DEFAULTS = dict(_AUTO_SHAPES[1][0])

VARIANTS: list[Variant] = [
    Variant(
        name="01-naive",
        label="naive, one thread per element",
        precision="fp32",
        idea="One thread per element of C; threadIdx.x walks rows, so a warp's loads of A "
             "and stores of C touch 32 different rows (uncoalesced).",
        kernels=lambda p: [_naive_spec],
        run=_naive_run,
    ),
    Variant(
        name="02-coalesced",
        label="coalesced global access",
        precision="fp32",
        idea="threadIdx.x walks columns: a warp's loads of B and stores of C are 128 "
             "contiguous bytes, and A is a broadcast.",
        kernels=lambda p: [_coal_spec],
        run=_coal_run,
    ),
    Variant(
        name="03-smem-tiling",
        label="shared-memory tiles 32×32",
        precision="fp32",
        idea="Blocks stage TILE×TILE tiles of A and B in shared memory: every float read "
             "from global memory is reused TILE times.",
        kernels=lambda p: [_smem_spec(p)],
        run=_smem_run,
        default_params={"TILE": 32},
        param_space={"TILE": [8, 16, 32]},
        validate=_smem_validate,
    ),
    Variant(
        name="04-register-tiling",
        label="register microtiles 4×4, 1024 threads",
        precision="fp32",
        idea="Each thread accumulates a TM×TN microtile in registers from float4 shared "
             "loads (LDS.128): half a shared load per FMA instead of two.",
        kernels=lambda p: [_reg_spec(p)],
        run=_reg_run,
        default_params={"BM": 128, "BN": 128, "BK": 8, "TM": 4, "TN": 4},
        param_space={"BM": [64, 128], "BN": [64, 128], "BK": [8, 16], "TM": [4, 8],
                     "TN": [4]},
        validate=_reg_validate,
    ),
    Variant(
        name="05-occupancy",
        label="8×8 microtiles, 256 threads, 2 blocks/SM",
        precision="fp32",
        idea="256 threads with 8×8 microtiles (≤128 registers) so two blocks share an SM; "
             "a quarter of a shared load per FMA.",
        kernels=lambda p: [_occ_spec(p)],
        run=_occ_run,
        default_params={"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
        param_space={"BM": [64, 128], "BN": [64, 128], "BK": [8, 16], "TM": [8],
                     "TN": [8]},
        validate=_occ_validate,
    ),
    Variant(
        name="06-warptiling",
        label="warp tiles + cp.async pipeline",
        precision="fp32",
        idea="Warp tiles over a transposed, padded A tile, fed by a multi-stage cp.async "
             "pipeline; each k's fragments are read while the previous k's FFMAs run, and "
             "the block shape is picked per problem to fill the last wave.",
        kernels=_wt_kernels,
        run=_wt_run,
        # auto_shape: choose (BM, BN, WM, WN) per problem from _AUTO_SHAPES; a sweep sets
        # it False (param_space does) so that the tile parameters below take effect.
        default_params={**_WT_DEFAULTS, "auto_shape": True},
        # WN=32/TN=8: 8x8 thread tiles, two blocks per SM. WN=64/TN=16: 8x16 thread
        # tiles (128 accumulators), one block per SM: the 128x256 / 256x128 large tiles.
        # Mismatched pairs fail validation and are skipped by a sweep.
        param_space={"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": [16, 32],
                     "WM": [64], "WN": [32, 64], "TM": [8], "TN": [8, 16],
                     "stages": [2, 3], "auto_shape": [False]},
        validate=_wt_validate,
    ),
    Variant(
        name="07-split-k",
        label="split-K + deterministic reduction",
        precision="fp32",
        idea="Split K where the tiles leave SMs idle, into a workspace summed in a fixed "
             "order: every tile of a skinny problem (128×128×32768 uses the whole GPU "
             "instead of one SM), or only the tiles of a partial last wave.",
        kernels=_sk_kernels,
        run=_sk_run,
        # auto_shape: a large problem's last wave is split in 06's fastest tile; the
        # tile parameters here serve the skinny case (every tile split) and sweeps.
        default_params={**_SK_DEFAULTS, "slices": 0, "auto_shape": True},
        param_space={"slices": [0, 16, 32, 64, 128, 256], "BK": [16, 32],
                     "stages": [2, 3]},
        validate=_sk_validate,
    ),
]
