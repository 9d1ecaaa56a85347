"""The chapter's explanatory picture: a 2D stencil tile and its halo, for the two ways the
chapter's tiled kernels lay them out, at their default parameters and the 2D races' radius.

- The textbook input tile (conv2d_tiled.cu, T × T threads): every thread loads one input
  element, halo included; only the (T − 2R)² inside the halo compute an output.
- The output tile (conv2d_regtile.cu with tile.cuh's load_window, BX × BY threads, PY
  outputs each): the block owns a BX × BY·PY output tile and loads it with its halo,
  (BX + 2R) × (BY·PY + 2R) floats; the bulk one element per thread per row it owns, then the
  halo columns and rows in loops.

Which thread loads which element is tile.cuh's loops written again in Python, so the
counts the picture shows (and the test checks) are the kernel's, not typed.
"""
from __future__ import annotations

import numpy as np

from . import variants
from .experiments import RACE_R

R = RACE_R[2]
BULK, HALO_COLS, HALO_ROWS = 1, 2, 3


def input_tile(r: int = R, T: int | None = None) -> dict:
    """conv2d_tiled: thread (x, y) loads element (x, y) of the T × T window; it computes
    an output when it is at least r from every edge."""
    T = T or variants.get("2d-tiled").default_params["T"]
    computes = np.zeros((T, T), bool)
    computes[r:T - r, r:T - r] = True
    return {"T": T, "r": r, "computes": computes, "outputs": int(computes.sum()),
            "loads": T * T}


def output_tile(r: int = R, **given) -> dict:
    """conv2d_regtile's window (rows × cols, row 0 at the top): for every element, the
    loader phase that loads it (BULK, HALO_COLS, HALO_ROWS) and the thread (x, y) that does,
    following load_window<PY> and load_rest in tile.cuh."""
    p = variants.get("2d-regtile").params(**given)
    bx, by, py = p["BX"], p["BY"], p["PY"]
    cols, rows = bx + 2 * r, by * py + 2 * r
    phase = np.zeros((rows, cols), int)
    thread = np.full((rows, cols, 2), -1)
    count = np.zeros((rows, cols), int)

    def load(row, col, ph, x, y):
        phase[row, col] = ph
        thread[row, col] = (x, y)
        count[row, col] += 1

    bulk_rows = py * by
    for y in range(by):
        for x in range(bx):
            for k in range(py):                                   # the bulk
                load(y + k * by, x, BULK, x, y)
            for row in range(y, bulk_rows, by):                   # halo columns
                for col in range(x + bx, cols, bx):
                    load(row, col, HALO_COLS, x, y)
            for row in range(bulk_rows + y, rows, by):            # halo rows
                for col in range(x, cols, bx):
                    load(row, col, HALO_ROWS, x, y)
    halo_lanes = sorted({int(t[0]) for t in thread[phase == HALO_COLS]})
    return {"params": p, "r": r, "cols": cols, "rows": rows, "phase": phase,
            "thread": thread, "count": count, "outputs": bx * by * py,
            "halo_col_lanes": halo_lanes}


def draw_halo(fig=None, r: int = R):
    """Two panels: the textbook input tile and the register tile's window, each element
    coloured by what loads it; the output tile outlined; one output's window drawn."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch, Rectangle

    if fig is None:
        fig = plt.figure(figsize=(7.5, 4.4))
    it = input_tile(r)
    ot = output_tile(r)
    p = ot["params"]
    k = 2 * r + 1
    blue, light, red, grey = "#7fb0da", "#cfe0f1", "#e48c8c", "0.78"

    # (a) the input tile
    ax = fig.add_axes([0.01, 0.30, 0.30, 0.52])
    T = it["T"]
    ax.imshow(np.where(it["computes"], 1, 0), cmap=ListedColormap([grey, light]),
              vmin=0, vmax=1, interpolation="nearest")
    ax.add_patch(Rectangle((r - 0.5, r - 0.5), T - 2 * r, T - 2 * r, fill=False, ec="C0", lw=1.6))
    ox, oy = T // 2, r                              # an output on the top edge
    ax.add_patch(Rectangle((ox - r - 0.5, oy - r - 0.5), k, k, fill=False, ec="C3", lw=1.6))
    ax.add_patch(Rectangle((ox - 0.5, oy - 0.5), 1, 1, fc="C0", ec="none"))
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(f"(a) input tile, {T} × {T} threads\n(conv2d_tiled, T = {T})", fontsize=9.5,
                 loc="left")
    ax.text(0, T + 1.5, f"every thread loads one element;\n{it['outputs']} of {it['loads']} "
            f"({it['outputs'] / it['loads']:.0%}) then\ncompute one output each;\n"
            f"the {T * T - it['outputs']} in the grey ring only load",
            fontsize=9, va="top", ha="left")

    # (b) the register tile's window
    bx = fig.add_axes([0.33, 0.03, 0.26, 0.82])
    colors = ListedColormap(["white", light, red, grey])
    bx.imshow(ot["phase"], cmap=colors, vmin=0, vmax=3, interpolation="nearest")
    tw, th = p["BX"], p["BY"] * p["PY"]
    bx.add_patch(Rectangle((r - 0.5, r - 0.5), tw, th, fill=False, ec="C0", lw=1.6))
    bx.add_patch(Rectangle((-0.5, -0.5), ot["cols"], ot["rows"], fill=False, ec="0.3", lw=0.8))
    # thread (0, 0)'s bulk loads: rows 0, BY, 2BY, ...
    rows0 = [row for row in range(ot["rows"]) if ot["phase"][row, 0] == BULK
             and tuple(ot["thread"][row, 0]) == (0, 0)]
    for row in rows0:
        bx.add_patch(Rectangle((-0.5, row - 0.5), 1, 1, fc="C0", ec="none"))
    bx.set_xticks([0, tw - 1, ot["cols"] - 1], ["0", str(tw - 1), str(ot["cols"] - 1)],
                  fontsize=9)
    bx.set_yticks([0, th - 1, ot["rows"] - 1], ["0", str(th - 1), str(ot["rows"] - 1)],
                  fontsize=9)
    bx.tick_params(length=2, pad=1)
    bx.set_title(f"(b) output tile + halo, {p['BX']} × {p['BY']} threads\n"
                 f"(conv2d_regtile, PY = {p['PY']})", fontsize=9.5, loc="left")

    # the notes
    n_bulk = int((ot["phase"] == BULK).sum())
    n_cols = int((ot["phase"] == HALO_COLS).sum())
    n_rows = int((ot["phase"] == HALO_ROWS).sum())
    lanes = ot["halo_col_lanes"]
    notes = fig.add_axes([0.60, 0.03, 0.40, 0.82])
    notes.axis("off")
    items = [
        (Patch(fc="none", ec="C0", lw=1.6), f"output tile {tw} × {th}: thread (x, y)\n"
                                            f"computes column x, rows {p['PY']}y … "
                                            f"{p['PY']}y + {p['PY'] - 1}"),
        (Patch(fc=light, ec="0.6"), f"bulk, {n_bulk} floats: thread (x, y)\nloads column x "
                                    f"of rows y, y + {p['BY']}, …\n(dark blue: thread (0, 0)'s "
                                    f"{p['PY']} loads,\nin flight together)"),
        (Patch(fc=red, ec="0.6"), f"halo columns, {n_cols} floats: a loop\nover every row, "
                                  f"lanes {lanes[0]}–{lanes[-1]} only\n({len(lanes)} of 32 active)"),
        (Patch(fc=grey, ec="0.6"), f"halo rows, {n_rows} floats: a loop,\n"
                                   f"{ot['rows'] - th} rows × {ot['cols']}"),
    ]
    y = 0.98
    for patch, text in items:
        notes.add_patch(Rectangle((0.0, y - 0.045), 0.08, 0.04, fc=patch.get_facecolor(),
                                  ec=patch.get_edgecolor(), lw=patch.get_linewidth(),
                                  transform=notes.transAxes))
        notes.text(0.12, y, text, fontsize=9, va="top", ha="left", transform=notes.transAxes)
        y -= 0.055 * (text.count("\n") + 1) + 0.06
    notes.text(0.0, y, f"radius {r}: each output reads a\n{k} × {k} window (red, in (a))",
               fontsize=9, va="top", transform=notes.transAxes)
    fig.text(0.01, 0.99, f"A 2D stencil tile and its halo, radius {r} (the 2D races' {k} × {k} "
             "filter)", fontsize=10, va="top")
    return fig
