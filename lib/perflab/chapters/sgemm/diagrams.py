"""Explanatory diagrams of the SGEMM ladder, drawn from the kernels' own parameters.

`tiling_levels()` draws the three levels of rung 06's tiling (kernels/01-sgemm/
06_warptiling.cu, its main loop in warptile.cuh) at the rung's default parameters,
`get("06-warptiling").params()`:
the block tile of C with the BK-deep slabs of A and B it reads per K step, the warp tiles
inside the block tile, and the microtile of one thread (lane) inside a warp tile, made of
4x4 pieces spread over the warp tile the way the kernel indexes them. Nothing is typed:
change the defaults and the picture follows.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import ConnectionPatch, Rectangle

from . import get

#: The lab's colours: C0 (FP32 blue) for what the block computes, C3 red for the part
#: the next panel zooms into, greys for the rest.
BLUE, RED, GREY, LIGHT = "C0", "C3", "0.55", "0.90"
FS = 9          # the smallest text; titles are one point larger

KEYS = ("BM", "BN", "BK", "WM", "WN", "TM", "TN")


def tiling_params(variant: str = "06-warptiling") -> dict:
    """The tile sizes of `variant` at its defaults (ints), with the derived counts the
    kernel computes: warps per block, the lane grid inside a warp (LM x LN) and threads."""
    d = get(variant).params()
    p = {k: int(d[k]) for k in KEYS}
    p["warps_m"], p["warps_n"] = p["BM"] // p["WM"], p["BN"] // p["WN"]
    p["warps"] = p["warps_m"] * p["warps_n"]
    p["LM"], p["LN"] = p["WM"] // p["TM"], p["WN"] // p["TN"]
    p["threads"] = p["warps"] * 32
    return p


def warp_origin(p: dict, warp: int) -> tuple[int, int]:
    """(row, column) of warp `warp`'s tile inside the block tile, as the kernel places it:
    wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN."""
    return (warp // p["warps_n"]) * p["WM"], (warp % p["warps_n"]) * p["WN"]


def lane_pieces(p: dict, lane: int) -> list[tuple[int, int]]:
    """(row, column) of each 4x4 piece of lane `lane`'s microtile inside its warp tile, as
    the kernel indexes them: rows lm*4 + i*LM*4, columns ln*4 + j*LN*4, with
    lm = lane / LN, ln = lane % LN, i < TM/4, j < TN/4."""
    lm, ln = lane // p["LN"], lane % p["LN"]
    return [(lm * 4 + i * p["LM"] * 4, ln * 4 + j * p["LN"] * 4)
            for i in range(p["TM"] // 4) for j in range(p["TN"] // 4)]


def _rect(ax, x, y, w, h, fc, ec="0.3", lw=0.8, **kw):
    r = Rectangle((x, y), w, h, facecolor=fc, edgecolor=ec, lw=lw, **kw)
    ax.add_patch(r)
    return r


def _frame(ax, x0, x1, y0, y1):
    ax.set_xlim(x0, x1)
    ax.set_ylim(y1, y0)            # rows grow downwards, as in a matrix
    ax.set_aspect("equal")
    ax.axis("off")


def _zoom(fig, a, b, src, dst):
    """Two thin grey lines from the corners of `src` (x, y, w, h in a's data) to the
    corners of `dst` (in b's data): the next panel is a close-up."""
    (x, y, w, h), (X, Y, W, H) = src, dst
    for (pa, pb) in (((x + w, y), (X, Y)), ((x + w, y + h), (X, Y + H))):
        fig.add_artist(ConnectionPatch(pa, pb, coordsA=a.transData, coordsB=b.transData,
                                       color=GREY, lw=0.8, ls="--"))


def tiling_levels(variant: str = "06-warptiling", k_steps: int = 4, lanes=(0, 1)):
    """Block tile, warp tiles, thread microtiles of `variant` at its default parameters.
    `k_steps`: how many BK slabs of K the first panel draws; `lanes`: the lanes whose
    microtiles the third panel shows (the first red, the second blue)."""
    p = tiling_params(variant)
    BM, BN, BK, WM, WN, TM, TN = (p[k] for k in KEYS)
    fig = plt.figure(figsize=(7.5, 3.1))
    fig.patch.set_facecolor("white")

    # 1. C = A B: a grid of block tiles; one block reads a BK-deep slab of A and of B per
    #    K step. Drawn 3 block-rows by 2 block-columns, K as `k_steps` slabs.
    a1 = fig.add_axes((0.0, 0.04, 0.37, 0.80))
    Kd, gap = k_steps * BK, BK * 0.6
    Mw, Nw = 3 * BM, 2 * BN
    br, bc, step = 1, 0, 1                       # the block (row, column) and K step drawn
    _rect(a1, -Kd - gap, 0, Kd, Mw, "white")     # A
    _rect(a1, 0, -Kd - gap, Nw, Kd, "white")     # B
    _rect(a1, 0, 0, Nw, Mw, "white")             # C
    for i in range(3):
        for j in range(2):
            _rect(a1, j * BN, i * BM, BN, BM, "none", ec=GREY, lw=0.6)
    _rect(a1, -Kd - gap, br * BM, Kd, BM, LIGHT, lw=0.6)          # A's row panel
    _rect(a1, bc * BN, -Kd - gap, BN, Kd, LIGHT, lw=0.6)          # B's column panel
    for s in range(k_steps):
        _rect(a1, -Kd - gap + s * BK, br * BM, BK, BM, "none", ec=GREY, lw=0.5)
        _rect(a1, bc * BN, -Kd - gap + s * BK, BN, BK, "none", ec=GREY, lw=0.5)
    _rect(a1, -Kd - gap + step * BK, br * BM, BK, BM, BLUE, alpha=0.55)
    _rect(a1, bc * BN, -Kd - gap + step * BK, BN, BK, BLUE, alpha=0.55)
    block = (bc * BN, br * BM, BN, BM)
    _rect(a1, *block, BLUE, ec="0.15", lw=1.2)
    a1.text(-Kd / 2 - gap, Mw + 12, "A", ha="center", va="top", fontsize=FS + 1)
    a1.text(Nw + 12, -Kd / 2 - gap, "B", ha="left", va="center", fontsize=FS + 1)
    a1.text(Nw / 2, Mw + 12, "C", ha="center", va="top", fontsize=FS + 1)
    a1.text(bc * BN + BN / 2, br * BM + BM / 2, f"block tile\n{BM}×{BN}", ha="center",
            va="center", fontsize=FS, color="white")
    a1.text(-Kd - gap + (step + 0.5) * BK, -6, f"BK={BK}", ha="center", va="bottom",
            fontsize=FS)
    a1.text(bc * BN + BN + 10, -Kd - gap + (step + 0.5) * BK, f"BK={BK}", ha="left",
            va="center", fontsize=FS)
    a1.text(-Kd - gap - 10, br * BM + BM / 2, f"BM={BM}", ha="right", va="center",
            fontsize=FS, rotation=90)
    _frame(a1, -Kd - gap - 60, Nw + 95, -Kd - gap - 10, Mw + 60)
    a1.set_title("1. a block: one tile of C,\none BK slab of A and of B per step",
                 fontsize=FS + 1)

    # 2. The block tile, cut into warp tiles (warp numbers as the kernel assigns them).
    a2 = fig.add_axes((0.40, 0.30, 0.33, 0.44))
    zoom_warp = p["warps_n"] - 1          # the top-right warp: the zoom lines cross nothing
    for w in range(p["warps"]):
        r, c = warp_origin(p, w)
        hot = w == zoom_warp
        _rect(a2, c, r, WN, WM, RED if hot else BLUE, ec="white", lw=1.5,
              alpha=0.8 if hot else 0.55)
        a2.text(c + WN / 2, r + WM / 2, f"warp {w}", ha="center", va="center", fontsize=FS,
                color="white")
    _rect(a2, 0, 0, BN, BM, "none", ec="0.15", lw=1.2)
    a2.text(BN / 2, BM + 8, f"{p['warps']} warps = {p['threads']} threads, "
            f"each warp {WM}×{WN}", ha="center", va="top", fontsize=FS)
    _frame(a2, -4, BN + 4, -4, BM + 40)
    a2.set_title(f"2. the block tile {BM}×{BN}:\n{p['warps_m']}×{p['warps_n']} warp tiles",
                 fontsize=FS + 1)
    _zoom(fig, a1, a2, block, (0, 0, BN, BM))

    # 3. One warp tile: 4x4 pieces; a lane's TM x TN microtile is TM/4 x TN/4 of them,
    #    LM*4 rows and LN*4 columns apart, so the 32 lanes interleave.
    a3 = fig.add_axes((0.76, 0.14, 0.235, 0.62))
    _rect(a3, 0, 0, WN, WM, "white", ec="0.15", lw=1.2)
    for r in range(0, WM, 4):
        for c in range(0, WN, 4):
            _rect(a3, c, r, 4, 4, "none", ec=LIGHT, lw=0.4)
    for lane, color in zip(lanes, (RED, BLUE)):
        for r, c in lane_pieces(p, lane):
            _rect(a3, c, r, 4, 4, color, ec="white", lw=0.4)
    note = (f"red: lane {lanes[0]}'s {TM}×{TN} microtile,\n{TM // 4}×{TN // 4} pieces of 4×4,\n"
            f"{TM * TN} accumulators")
    if len(lanes) > 1:
        note += f"\nblue: lane {lanes[1]}'s microtile"
    a3.text(WN / 2, WM + 3, note, ha="center", va="top", fontsize=FS)
    _frame(a3, -1, WN + 1, -1, WM + 30)
    a3.set_title(f"3. warp {zoom_warp}'s tile {WM}×{WN}:\n32 lanes' microtiles",
                 fontsize=FS + 1)
    r, c = warp_origin(p, zoom_warp)
    _zoom(fig, a2, a3, (c, r, WN, WM), (0, 0, WN, WM))
    return fig
