"""The chapter's predictions, as code: how many shared-memory passes (wavefronts) and how
many 32-byte global sectors each warp-wide access of each rung needs.

The model (chapter 2 measured it for strided 4-byte reads): shared memory has 32 banks
of 4-byte words; a warp-wide access is served `128 / bytes` lanes at a time (all 32 lanes
for 4-byte accesses, half-warps for 8 bytes, quarter-warps for 16), and one phase needs as
many passes as the most distinct words any one bank must deliver (lanes reading the same
word share it). A global access touches the distinct 32-byte sectors its lanes' bytes fall
in. The addresses are the kernels' own index arithmetic, written again in Python: every
warp of one block, every instruction of one full tile.
"""
from __future__ import annotations

from collections import defaultdict

from . import ops

BANKS = 32
SECTOR = 32


def wavefronts(addresses, nbytes: int = 4) -> int:
    """Passes one warp-wide shared access needs: `addresses` are the lanes' byte addresses
    (None for an inactive lane), each access `nbytes` wide."""
    per_phase = 128 // nbytes
    lanes = list(addresses)
    total = 0
    for p in range(0, len(lanes), per_phase):
        words = defaultdict(set)
        for a in lanes[p:p + per_phase]:
            if a is None:
                continue
            for w in range(a // 4, (a + nbytes) // 4):
                words[w % BANKS].add(w)
        total += max((len(s) for s in words.values()), default=0)
    return total


def sectors(addresses, nbytes: int = 4) -> int:
    """Distinct 32-byte sectors one warp-wide global access touches."""
    return len({b // SECTOR for a in addresses if a is not None
                for b in range(a, a + nbytes, min(nbytes, SECTOR))})


def stride_wavefronts(stride: int, pad: bool = False) -> int:
    """Lane l reads word l·stride (one pad word per 32 if `pad`): chapter 2's experiment."""
    words = [l * stride for l in range(32)]
    if pad:
        words = [w + w // 32 for w in words]
    return wavefronts([4 * w for w in words])


def layout(variant: str, tile: int):
    if variant == "tiled":
        return lambda r, c: r * tile + c
    if variant == "swizzled":
        return lambda r, c: r * tile + (c ^ (r & (tile - 1)))
    return lambda r, c: r * (tile + 1) + c          # padded, and the coarsened rung


def _warps(bx: int, by: int):
    """The (x, y) of each lane of each warp of a bx × by block."""
    threads = [(t % bx, t // bx) for t in range(bx * by)]
    return [threads[w:w + 32] for w in range(0, len(threads), 32)]


def tile_accesses(variant: str, dtype: str = "float32", tile: int | None = None,
                  block_rows: int | None = None) -> dict:
    """Every warp-wide access one block makes for one full tile, by kind: "ld" and "st"
    (global) and "lds" and "sts" (shared), each a list of (per-lane byte addresses, access
    bytes). Global addresses are offsets within the matrix, for a tile of an 8192 × 8192
    matrix (a row is 8192 elements)."""
    size = ops.itemsize(dtype)
    n = 8192                                                   # row length, elements
    out = {"ld": [], "st": [], "lds": [], "sts": []}
    if variant in ("naive-rows", "naive-cols"):
        for warp in _warps(32, 8):
            if variant == "naive-rows":           # r = y, c = x
                out["ld"].append(([(y * n + x) * size for x, y in warp], size))
                out["st"].append(([(x * n + y) * size for x, y in warp], size))
            else:                                 # r = x, c = y
                out["ld"].append(([(x * n + y) * size for x, y in warp], size))
                out["st"].append(([(y * n + x) * size for x, y in warp], size))
        return out
    if variant == "wide":
        t, r = (tile, block_rows) if tile else ops.default_tile("wide", dtype)
        v = 16 // size
        ch = t // v

        def slot(row, q):
            return row * ch + (q ^ ((row // v) & 7))
        for warp in _warps(ch, r):
            for k in range(ch // r):
                for i in range(v):
                    out["ld"].append(([((v * (y + k * r) + i) * n + v * x) * size
                                       for x, y in warp], 16))
                for j in range(v):
                    out["sts"].append(([16 * slot(v * x + j, y + k * r) for x, y in warp], 16))
            for k in range(t // r):
                out["lds"].append(([16 * slot(y + k * r, x) for x, y in warp], 16))
                out["st"].append(([((y + k * r) * n + v * x) * size for x, y in warp], 16))
        return out
    if variant in ops.TUNABLE:
        t, r = (tile, block_rows) if tile else ops.default_tile(variant, dtype)
    else:
        t, r = 32, 32
    at = layout(variant, t)
    for warp in _warps(t, r):
        for k in range(0, t, r):
            out["ld"].append(([((y + k) * n + x) * size for x, y in warp], size))
            out["sts"].append(([at(y + k, x) * size for x, y in warp], size))
            out["lds"].append(([at(x, y + k) * size for x, y in warp], size))
            out["st"].append(([((y + k) * n + x) * size for x, y in warp], size))
    return out


def predicted(variant: str, dtype: str = "float32", tile: int | None = None,
              block_rows: int | None = None) -> dict:
    """Per instruction, averaged over one tile's: sectors per global load and store
    request, wavefronts per shared load and store (None where the rung has none), and the
    ideal (the fewest any access of that width can take)."""
    acc = tile_accesses(variant, dtype, tile, block_rows)
    res = {}
    for kind, fn in (("ld", sectors), ("st", sectors), ("lds", wavefronts), ("sts", wavefronts)):
        xs = [fn(a, b) for a, b in acc[kind]]
        res[kind] = sum(xs) / len(xs) if xs else None
        if xs:
            addrs, b = acc[kind][0]
            lanes = sum(a is not None for a in addrs)
            res[kind + "_ideal"] = (lanes * b / SECTOR if kind in ("ld", "st")
                                    else max(1.0, lanes * b / 128))
    return res
