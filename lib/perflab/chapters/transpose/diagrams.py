"""The chapter's explanatory picture: the bank of every word of a 32 × 32 float tile in
shared memory, for the three layouts the rungs use (plain, padded, XOR-swizzled), with the
tile column one warp reads in phase 2 outlined.

Nothing here is typed: element (r, c) sits at word `banks.layout(variant, 32)(r, c)` (the
kernels' `Layout::at`, written again in Python), its bank is that word mod 32, and the
passes the warp's column read needs come from `banks.wavefronts` on the lanes' addresses —
the same model the chapter predicts the profiler's counters with.
"""
from __future__ import annotations

import numpy as np

from . import banks

#: The three layouts, in the chapter's order, with what the page calls each.
LAYOUTS = (("tiled", "plain: (r, c) at 32r + c"),
           ("padded", "padded: (r, c) at 33r + c"),
           ("swizzled", "swizzled: (r, c) at 32r + (c XOR r)"))
TILE = 32
#: The tile column the drawn warp reads (any column shows the same).
COLUMN = 5


def bank_map(variant: str, tile: int = TILE) -> np.ndarray:
    """bank[r, c]: the bank holding tile element (r, c) (4-byte words, 32 banks)."""
    at = banks.layout(variant, tile)
    return np.array([[at(r, c) % banks.BANKS for c in range(tile)] for r in range(tile)])


def column_read(variant: str, column: int = COLUMN, tile: int = TILE) -> dict:
    """Phase 2 of tile.cuh for one warp: lane x reads tile element (x, column). Returns the
    banks the 32 lanes hit, how many words each bank must deliver, and the passes
    (wavefronts) the access needs."""
    at = banks.layout(variant, tile)
    addrs = [4 * at(x, column) for x in range(32)]
    hit = [a // 4 % banks.BANKS for a in addrs]
    per_bank = np.bincount(hit, minlength=banks.BANKS)
    return {"banks": hit, "per_bank": per_bank, "passes": banks.wavefronts(addrs)}


def draw_banks(fig=None, column: int = COLUMN):
    """Three panels, one per layout: every cell of the tile coloured by its bank, the
    column a warp reads outlined in red, and under each the words each bank must deliver
    for that read. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Rectangle

    if fig is None:
        fig = plt.figure(figsize=(7.5, 3.9))
    base = plt.get_cmap("hsv")(np.linspace(0, 1, banks.BANKS, endpoint=False))
    base[:, :3] = 0.45 * base[:, :3] + 0.55          # muted, so the red outline stands out
    cmap = ListedColormap(base)
    gs = fig.add_gridspec(2, 3, height_ratios=[5.2, 1.0], hspace=0.55, wspace=0.12,
                          left=0.05, right=0.975, top=0.86, bottom=0.14)
    for i, (variant, title) in enumerate(LAYOUTS):
        b = bank_map(variant)
        read = column_read(variant, column)
        ax = fig.add_subplot(gs[0, i])
        ax.imshow(b, cmap=cmap, vmin=0, vmax=banks.BANKS - 1, interpolation="nearest")
        ax.add_patch(Rectangle((column - 0.5, -0.5), 1, TILE, fill=False, ec="C3", lw=2.2))
        ax.set_xticks([0, column, 31], ["0", f"c={column}", "31"], fontsize=9)
        ax.set_yticks([0, 31], ["0", "31"], fontsize=9)
        ax.tick_params(length=2, pad=1)
        ax.set_title(title, fontsize=9.5, pad=4)
        if i == 0:
            ax.set_ylabel("tile row r", fontsize=9, labelpad=0)
        ax.set_xlabel("tile column", fontsize=9, labelpad=0)
        # The read: which banks the 32 lanes hit, and the passes that takes.
        hx = fig.add_subplot(gs[1, i])
        for k in range(banks.BANKS):
            hit = read["per_bank"][k] > 0
            hx.add_patch(Rectangle((k - 0.5, 0), 1, 1, fc=cmap(k) if hit else "white",
                                   ec="0.45", lw=0.4))
        hx.set_xlim(-0.5, banks.BANKS - 0.5)
        hx.set_ylim(0, 1)
        hx.set_yticks([])
        hx.set_xticks([0, 31], ["bank 0", "31"], fontsize=9)
        hx.tick_params(length=2, pad=1)
        for side in ("top", "right", "left"):
            hx.spines[side].set_visible(False)
        n = read["passes"]
        busy = int((read["per_bank"] > 0).sum())
        most = int(read["per_bank"].max())
        what = (f"bank {int(np.argmax(read['per_bank']))}: {most} words, {n} passes" if busy == 1
                else f"{busy} banks, {most} word each: {n} pass" + ("es" if n > 1 else ""))
        hx.set_title(what, fontsize=9.5, color="C3" if n > 1 else "0.15", pad=3)
    fig.text(0.01, 0.975, f"A 32 × 32 float tile in shared memory, each word coloured by its "
             f"bank; a warp reads column {column} (red)", fontsize=10, va="top")
    fig.text(0.01, 0.015, "the banks the warp's 32 lanes hit (lane x reads row x): the most words one bank must deliver = the passes",
             fontsize=9, color="0.3", va="bottom")
    return fig
