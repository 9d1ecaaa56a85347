"""The explanatory diagram of the simple-matmul chapter: what tiling changes.

`tiling()` draws the naive kernel (kernels/08-matmul/naive.cu) beside the tiled one
(kernels/01-sgemm/03_smem_tiling.cu, the SGEMM ladder's rung 03) on the same C = A B.
Naive: a warp is 32 threads along one row of C, and every thread reads a whole row of A
and a whole column of B from global memory. Tiled: a block of TILE x TILE threads owns a
TILE x TILE tile of C and walks K in steps of TILE, copying one tile of A and one of B
into shared memory per step, where each copied float is read TILE times. TILE is the tiled
kernel's default parameter, `variants.get("tiled").params()`.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, Rectangle

from . import variants

BLUE, RED, GREY, LIGHT = "C0", "C3", "0.55", "0.90"
FS = 9
WARP = 32


def tile_size() -> int:
    return int(variants.get("tiled").params()["TILE"])


def reuse(T: int) -> dict:
    """Global loads per FMA of each kernel, as the code asks for them (caches ignored):
    naive, one float of A and one of B per FMA; tiled, 2 T^2 floats per step feed
    T^3 FMAs of a block, so 2 / T."""
    return {"naive": 2.0, "tiled": 2.0 / T, "uses_per_load": T}


def _rect(ax, x, y, w, h, fc, ec="0.3", lw=0.8, **kw):
    r = Rectangle((x, y), w, h, facecolor=fc, edgecolor=ec, lw=lw, **kw)
    ax.add_patch(r)
    return r


def _matrices(ax, T, n, gap):
    """A (left), B (top), C: n x n tiles of T each; returns the size in elements."""
    S = n * T
    for x, y in ((-S - gap, 0), (0, -S - gap), (0, 0)):
        _rect(ax, x, y, S, S, "white")
        for i in range(n):
            for j in range(n):
                _rect(ax, x + j * T, y + i * T, T, T, "none", ec=LIGHT, lw=0.6)
    ax.text(-S / 2 - gap, S + 6, "A", ha="center", va="top", fontsize=FS + 1)
    ax.text(S + 6, -S / 2 - gap, "B", ha="left", va="center", fontsize=FS + 1)
    ax.text(S / 2, S + 6, "C", ha="center", va="top", fontsize=FS + 1)
    return S


def _frame(ax, S, gap, below):
    ax.set_xlim(-S - gap - 4, S + 22)
    ax.set_ylim(S + below, -S - gap - 4)
    ax.set_aspect("equal")
    ax.axis("off")


def _arrow(ax, a, b, color):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=9, color=color,
                                 lw=1.2, shrinkA=0, shrinkB=0))


def tiling(n: int = 4):
    """Naive (left) and tiled (right) on C = A B drawn as n x n tiles of TILE."""
    T = tile_size()
    r = reuse(T)
    gap = T * 0.4
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(7.5, 3.9))
    fig.patch.set_facecolor("white")
    below = 2.6 * T

    # Naive: one warp = 32 threads of one row of C; each reads row `i` of A, the warp
    # reads the 32 columns of B above it, from global memory, every time.
    S = _matrices(a1, T, n, gap)
    i, j0 = int(2.5 * T), (n - 1) * T
    _rect(a1, j0, -S - gap, WARP, S, RED, alpha=0.25, lw=0)           # B's 32 columns
    a1.plot([-S - gap, -gap], [i, i], color=RED, lw=2.5)              # row i of A
    a1.plot([j0, j0 + WARP], [i, i], color=RED, lw=4, solid_capstyle="butt")  # the warp
    a1.text(j0 + WARP / 2, i + 5, "one warp:\n32 threads", ha="center", va="top",
            fontsize=FS, color=RED)
    a1.text(-S / 2 - gap, i - 3, "row of A", ha="center", va="bottom", fontsize=FS,
            color=RED)
    a1.text(j0 - 4, -S / 2 - gap, "32 columns\nof B", ha="right", va="center",
            fontsize=FS, color=RED)
    a1.text(11 - gap / 2, S + 0.55 * T,
            f"each thread reads a row of A and a column\nof B from global memory: "
            f"{r['naive']:.0f} loads per FMA;\nonly the caches can serve the reuse",
            ha="center", va="top", fontsize=FS)
    _frame(a1, S, gap, below)
    a1.set_title("naive: one thread per element of C", fontsize=FS + 1)

    # Tiled: the block's T x T tile of C; step t copies tile t of A's row panel and of B's
    # column panel into shared memory (As, Bs), where every float is read T times.
    S = _matrices(a2, T, n, gap)
    bm, bn, t = 2, 2, 1
    _rect(a2, bn * T, bm * T, T, T, BLUE, ec="0.15", lw=1.2)
    a2.text(bn * T + T / 2, bm * T + T / 2, "block", ha="center", va="center", fontsize=FS,
            color="white")
    for s in range(n):
        hot = s == t
        _rect(a2, -S - gap + s * T, bm * T, T, T, BLUE if hot else LIGHT, lw=0.6,
              alpha=0.75 if hot else 1)
        _rect(a2, bn * T, -S - gap + s * T, T, T, BLUE if hot else LIGHT, lw=0.6,
              alpha=0.75 if hot else 1)
    # shared memory, in the empty corner: As above A's tile, Bs left of B's tile
    ax_, ay_ = -S - gap + t * T, -gap - T - 0.3 * T
    bx_, by_ = -gap - T - 0.3 * T, -S - gap + t * T
    _rect(a2, ax_, ay_, T, T, "white", ec=BLUE, lw=1.5)
    _rect(a2, bx_, by_, T, T, "white", ec=BLUE, lw=1.5)
    a2.text(ax_ + T / 2, ay_ + T / 2, "As", ha="center", va="center", fontsize=FS, color=BLUE)
    a2.text(bx_ + T / 2, by_ + T / 2, "Bs", ha="center", va="center", fontsize=FS, color=BLUE)
    a2.text(-S - gap, -S - gap - 2, "shared\nmemory", ha="left", va="top", fontsize=FS,
            color=BLUE)
    _arrow(a2, (ax_ + T / 2, bm * T), (ax_ + T / 2, ay_ + T), BLUE)
    _arrow(a2, (bn * T, by_ + T / 2), (bx_ + T, by_ + T / 2), BLUE)
    a2.text(-S / 2 - gap, bm * T + T + 3, f"step {t}: tile {t}", ha="center", va="top",
            fontsize=FS)
    a2.text(11 - gap / 2, S + 0.55 * T,
            f"each step copies a {T}×{T} tile of A and of B\n"
            f"into shared memory; each float copied\nserves {r['uses_per_load']} FMAs: "
            f"2/{T} global loads per FMA",
            ha="center", va="top", fontsize=FS)
    _frame(a2, S, gap, below)
    a2.set_title(f"tiled: a block of {T}×{T} threads per tile of C", fontsize=FS + 1)
    fig.subplots_adjust(left=0.0, right=1.0, top=0.93, bottom=0.0, wspace=0.05)
    return fig
