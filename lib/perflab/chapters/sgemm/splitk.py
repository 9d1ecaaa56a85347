"""Rung 07, split-K (kernels/01-sgemm/07_splitk.cu): where the output tiles leave SMs idle,
K is split into slices summed in a fixed order — every tile of a skinny problem, or only
the tiles of a partial last wave of a large one."""
from __future__ import annotations

from ...kernels import Plans, Step, blocks_per_sm, check_launch, get_kernel, run_steps
from . import warptile as wt
from .variant import GemmVariant, aligned, ceil_div, i32, require, spec

KEYS = wt.KEYS + ("slices",)
#: Slices summed in parallel per output element by splitk_reduce, then added in order.
REDUCE_RY = 8
#: The tail split: each split block gets at least this many K steps.
TAIL_MIN_KSTEPS = 4
FILE = "07_splitk.cu"


def _partial_spec(p, al: bool, ed: bool = True):
    return spec(FILE, "sgemm_splitk_partial", template=wt.template(p, al, ed))


def _tail_spec(p, al: bool, ed: bool = True):
    return spec(FILE, "sgemm_tailsplit", template=wt.template(p, al, ed))


def _reduce_spec(vec: bool):
    return spec(FILE, "splitk_reduce", template=(REDUCE_RY, bool(vec)))


def _tail_reduce_spec(p, al: bool):
    return spec(FILE, "tail_reduce", template=(int(p["BM"]), int(p["BN"]), bool(al)))


def tail_params(p) -> dict:
    """The tile of the last-wave split: 06's fastest (auto_shape), else the given one."""
    return {**p, **wt.FASTEST} if p.get("auto_shape") else p


def _kernels(p):
    q = tail_params(p)
    if q is not p:
        return _kernels({**q, "auto_shape": False}) + _kernels({**p, "auto_shape": False})
    return ([f(p, al, ed) for al, ed in wt.FORMS for f in (_partial_spec, _tail_spec)]
            + [f(*a) for al in (True, False) for f, a in
               ((_reduce_spec, (al,)), (_tail_reduce_spec, (p, al)))])


def tail_split(p, M, N, K, slots: int) -> tuple[int, int, int, int]:
    """(full, tail, S, kslice) of the tail split: the first `full` tiles whole, the last
    `tail` tiles (those of a partial last wave) in S slices of kslice each. S = 1 when
    the tiles fill whole waves or the tail is too large to gain from a split."""
    BK = int(p["BK"])
    tiles = ceil_div(M, int(p["BM"])) * ceil_div(N, int(p["BN"]))
    tail = tiles % slots
    S = min(slots // tail, ceil_div(K, BK) // TAIL_MIN_KSTEPS) if tail else 1
    if S < 2:
        return tiles, 0, 1, K
    kslice = ceil_div(ceil_div(K, S), BK) * BK
    return tiles - tail, tail, ceil_div(K, kslice), kslice


def slices(p, M, N, K, sms: int) -> tuple[int, int]:
    """(S, kslice): S slices of kslice (a multiple of BK) cover K, none empty.
    p["slices"] = 0 picks S so that the grid holds about two blocks per SM (this rung's
    128x128 tile runs two per SM; rungs 08/09, one per SM, have their own rule)."""
    BK = int(p["BK"])
    want = int(p["slices"])
    if want <= 0:
        tiles = ceil_div(M, int(p["BM"])) * ceil_div(N, int(p["BN"]))
        want = max(1, ceil_div(2 * sms, tiles))
    want = min(want, ceil_div(K, BK), 65535)
    kslice = ceil_div(ceil_div(K, want), BK) * BK
    return ceil_div(K, kslice), kslice


def _validate(p, M, N, K, device):
    wt.checks("07-split-k", p, device)
    if p.get("auto_shape"):
        wt.checks("07-split-k", tail_params(p), device)
    s = int(p["slices"])
    require(s >= 0, "07-split-k", f"slices={s}: give a positive count, or 0 for automatic")
    require(s <= 65535, "07-split-k", f"slices={s} exceeds the grid limit 65535")
    require(ceil_div(M, int(p["BM"])) <= 65535, "07-split-k",
            f"grid.y = ceil(M/BM) = {ceil_div(M, int(p['BM']))} exceeds 65535")


# The workspace is one buffer per device, grown on demand and reused by every call: calls
# that share a device must be issued on one stream (as the lab does), or two calls in
# flight at once would write the same partial sums.
PLANS = Plans()
_WORKSPACE: dict = {}


def workspace(dev: int, nfloats: int):
    import cupy
    buf = _WORKSPACE.get(dev)
    if buf is None or buf.size < nfloats:
        _WORKSPACE[dev] = None                         # free the old buffer first
        PLANS.drop(keep=lambda key: key[0] != dev)     # plans hold views of the old one
        buf = _WORKSPACE[dev] = cupy.empty(nfloats, dtype=cupy.float32)
    return buf[:nfloats]


def _plan(A, B, C, p, dev: int):
    """(workspace, steps) of one call; the steps' array names pick among A, B, C and the
    workspace W."""
    from ...device import current

    (M, K), N = A.shape, B.shape[1]
    al = aligned(B, C, cols=(N,))
    sms = current().sms
    q = tail_params(p)
    if int(p["slices"]) == 0 and ceil_div(M, int(q["BM"])) * ceil_div(N, int(q["BN"])) >= sms:
        # Enough tiles for the GPU: split only the tiles of the partial last wave, with
        # rung 06's fastest tile when auto_shape is on.
        return _tail_plan(q, M, N, K, dev, al, sms)
    # Too few tiles (the skinny problem), or slices given: split the K of every tile.
    return _split_plan(p, M, N, K, dev, al, sms)


def _tail_plan(p, M, N, K, dev, al, sms):
    BM, BN = int(p["BM"]), int(p["BN"])
    nt, smem = wt.threads(p), wt.smem_bytes(p)
    kernel = get_kernel(_tail_spec(p, al, wt.edge(p, M, N, K)))
    slots = max(1, blocks_per_sm(kernel, nt, smem)) * sms
    full, tail, S, kslice = tail_split(p, M, N, K, slots)
    grid = (full + tail * S,)
    check_launch(kernel, grid, (nt,), smem)
    W = workspace(dev, max(1, tail * S * BM * BN))
    steps = [Step(kernel, grid, (nt,), "ABCW", i32(M, N, K, full, S, kslice), smem)]
    if tail:
        reduce = get_kernel(_tail_reduce_spec(p, al))
        rgrid = (BM * BN // (4 * 256), tail)
        check_launch(reduce, rgrid, (256,), 0)
        steps.append(Step(reduce, rgrid, (256,), "WC", i32(M, N, full, S)))
    return W, steps


def _split_plan(p, M, N, K, dev, al, sms):
    nt, smem = wt.threads(p), wt.smem_bytes(p)
    S, kslice = slices(p, M, N, K, sms)
    partial = get_kernel(_partial_spec(p, al, wt.edge(p, M, N, K)))
    grid = (ceil_div(N, int(p["BN"])), ceil_div(M, int(p["BM"])), S)
    check_launch(partial, grid, (nt,), smem)
    if S == 1:                                         # one slice: the partial product is C
        return None, [Step(partial, grid, (nt,), "ABC", i32(M, N, K, kslice), smem)]
    W = workspace(dev, S * M * N)
    V = 4 if al else 1
    reduce = get_kernel(_reduce_spec(al))
    rgrid = (ceil_div(ceil_div(M * N, V), 32),)
    check_launch(reduce, rgrid, (32, REDUCE_RY), 0)
    return W, [Step(partial, grid, (nt,), "ABW", i32(M, N, K, kslice), smem),
               Step(reduce, rgrid, (32, REDUCE_RY), "WC", i32(M * N, S))]


def _enqueue(A, B, C, p):
    import cupy
    dev = cupy.cuda.runtime.getDevice()
    key = (dev, A.shape, B.shape, B.data.ptr % 16, C.data.ptr % 16,
           tuple(int(p[k]) for k in KEYS), bool(p.get("auto_shape")))
    W, steps = PLANS.get(key, lambda: _plan(A, B, C, p, dev))
    run_steps(steps, {"A": A, "B": B, "C": C, "W": W})


VARIANT = GemmVariant(
    name="07-split-k",
    label="split-K + deterministic reduction",
    precision="fp32",
    idea="Split K where the tiles leave SMs idle, into a workspace summed in a fixed "
         "order: every tile of a skinny problem (128×128×32768 uses the whole GPU "
         "instead of one SM), or only the tiles of a partial last wave.",
    kernels=_kernels,
    enqueue=_enqueue,
    # auto_shape: a large problem's last wave is split in 06's fastest tile; the tile
    # parameters here serve the skinny case (every tile split) and sweeps. 07 splits
    # with 128x128 tiles (two blocks per SM): a skinny problem gets twice the blocks per
    # SM of a 128x256 tile, and a partial last wave is cut into finer pieces.
    default_params={**wt.SHAPES[1][0], "slices": 0, "auto_shape": True},
    param_space={"slices": [0, 16, 32, 64, 128, 256], "BK": [16, 32], "stages": [2, 3]},
    validate=_validate,
)
