"""The chapter's explanatory picture: how the running-sums blur (08_blur_sliding.cu) covers a
(2R+1)² box without (2R+1)² loads — one warp per strip of columns, four columns per lane,
vertical window sums kept in registers and slid down one row at a time, horizontal sums
taken from the neighbouring lanes with shuffles.

The geometry is the kernel's index arithmetic written again in Python, from the chapter's
parameters (ops.SLIDING_COLS, ops.SLIDING_ROWS, experiments.RADIUS): lane L's first column
is ox − 4 + 4L, lanes 1 … 30 write, and an output column's box reaches R columns either
side, which for R ≤ 4 stays within the lane and its two neighbours.
"""
from __future__ import annotations

from . import ops
from .experiments import RADIUS

LANES = 32
#: Lanes 1 … 30 write; lanes 0 and 31 only supply their columns to their neighbours.
WRITERS = LANES - 2
#: Columns each lane holds (its vertical sums: two 16-bit sums in each of two registers).
COLS_PER_LANE = ops.SLIDING_COLS // WRITERS


def first_column(lane: int, ox: int = 0) -> int:
    """The first input column lane `lane` holds, in a strip whose first output is `ox`."""
    return ox - COLS_PER_LANE + COLS_PER_LANE * lane


def writes(lane: int) -> bool:
    return 1 <= lane <= LANES - 2


def lane_of(column: int, ox: int = 0) -> int:
    """The lane that holds input column `column` of the strip."""
    return (column - ox + COLS_PER_LANE) // COLS_PER_LANE


def box_lanes(lane: int, j: int, radius: int = RADIUS) -> set[int]:
    """The lanes whose vertical sums the output in column j of lane `lane` needs."""
    c = first_column(lane) + j
    return {lane_of(k) for k in range(c - radius, c + radius + 1)}


def draw_sliding(fig=None, radius: int = RADIUS, lane: int = 5, j: int = 0):
    """Top: one warp's strip, lane by lane. Bottom: lanes lane−1, lane, lane+1, the window of
    2R + 1 rows for one output row, the row that leaves and the row that enters when the
    window moves down, and the box of one output pixel (column j of `lane`)."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, Rectangle

    if fig is None:
        fig = plt.figure(figsize=(7.5, 4.6))
    k = 2 * radius + 1
    cpl = COLS_PER_LANE
    # ---- the strip ------------------------------------------------------------------------
    top = fig.add_axes([0.02, 0.76, 0.96, 0.11])
    for L in range(LANES):
        top.add_patch(Rectangle((L * cpl, 0), cpl, 1, fc="#cfe0f1" if writes(L) else "0.85",
                                ec="white", lw=1.2))
    for L in (0, 1, lane, LANES - 2, LANES - 1):
        top.text(L * cpl + cpl / 2, 0.5, str(L), ha="center", va="center", fontsize=9)
    top.add_patch(Rectangle(((lane - 1) * cpl, 0), 3 * cpl, 1, fill=False, ec="C3", lw=1.6))
    top.set_xlim(0, LANES * cpl)
    top.set_ylim(0, 1)
    top.axis("off")
    fig.text(0.02, 0.99, f"One warp owns a strip of {ops.SLIDING_ROWS} rows: {LANES} lanes × "
             f"{cpl} columns. Lanes 1–{LANES - 2} write {ops.SLIDING_COLS} output columns;\n"
             f"lanes 0 and {LANES - 1} only lend their columns to their neighbours.",
             fontsize=9.5, va="top")
    # ---- the zoom -------------------------------------------------------------------------
    ax = fig.add_axes([0.02, 0.0, 0.96, 0.72])
    ncol = 3 * cpl
    rows = k + 2                               # the leaving row, the window, the entering row
    y0 = rows                                  # row 0 of the drawing at the top
    c0 = first_column(lane - 1)

    def cell(col, row, **kw):                  # col: input column; row 0 = the leaving row
        ax.add_patch(Rectangle((col - c0, y0 - row - 1), 1, 1, **kw))

    for row in range(rows):
        for col in range(c0, c0 + ncol):
            own = lane_of(col) == lane
            fc = "#cfe0f1" if own else "0.9"
            if row == 0:
                fc = "#f3c4c4"
            elif row == rows - 1:
                fc = "#9cc3e6"
            cell(col, row, fc=fc, ec="white", lw=1.0)
    for row, sign in ((0, "−"), (rows - 1, "+")):
        for col in range(c0, c0 + ncol):
            ax.text(col - c0 + 0.5, y0 - row - 0.5, sign, ha="center", va="center", fontsize=9,
                    color="C3" if sign == "−" else "C0")
    # the lanes above the columns
    for i, L in enumerate((lane - 1, lane, lane + 1)):
        ax.text(i * cpl + cpl / 2, y0 + 0.35, f"lane {L}", ha="center", va="bottom", fontsize=9,
                color="C0" if L == lane else "0.25")
    # the box of one output pixel: 2R + 1 columns around it, the window's rows
    out_col = first_column(lane) + j
    centre = 1 + radius                        # the output row, in drawing rows
    ax.add_patch(Rectangle((out_col - radius - c0, y0 - 1 - k), k, k, fill=False, ec="C3", lw=2))
    cell(out_col, centre, fc="C0", ec="white", lw=1.0)
    # the sums row under the grid
    for col in range(c0, c0 + ncol):
        ax.add_patch(Rectangle((col - c0, -1.6), 1, 1, fc="white", ec="0.5", lw=0.6))
        ax.text(col - c0 + 0.5, -1.1, "Σ", ha="center", va="center", fontsize=9, color="0.2")
    # shuffles: the neighbours' sums come over to the lane in the middle
    for src, dst, bend in ((0.5 * cpl, 1.25 * cpl, 0.35), (2.5 * cpl, 1.75 * cpl, -0.35)):
        ax.add_patch(FancyArrowPatch((src, -1.9), (dst, -1.9), connectionstyle=f"arc3,rad={bend}",
                                     arrowstyle="-|>", mutation_scale=11, lw=1.3, color="0.2"))
    ax.text(1.5 * cpl, -3.5, "shuffles", ha="center", va="center", fontsize=9, color="0.2")
    # what each part is
    x = ncol + 0.8
    notes = [
        (y0 - 0.5, "C3", f"− the row that leaves the window"),
        (y0 - 1 - k / 2, "0.15", f"the window: {k} rows. Each lane keeps the\n"
                                 f"vertical sum of each of its {cpl} columns\n"
                                 "in registers; one row down = add the row\n"
                                 "that enters, subtract the row that leaves:\n"
                                 f"each input byte is loaded once, not {k * k} times."),
        (y0 - rows + 0.5, "C0", "+ the row that enters (one 4-byte load a lane)"),
        (-1.1, "0.15", f"the {k} × {k} box (red) of one output (blue) is {k}\n"
                       f"vertical sums: {radius} come from the lanes beside it"),
    ]
    for y, color, text in notes:
        ax.text(x, y, text, ha="left", va="center", fontsize=9, color=color)
    ax.set_xlim(-0.2, ncol + 15.5)
    ax.set_ylim(-4.0, y0 + 1.3)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig
