"""Figures and tables the chapters share. Every figure carries its provenance caption.

The book's figure style: PNGs at twice their displayed resolution (sharp on a high-density
screen), and no text smaller than 9 pt at the size a figure is shown in the book's main
column. `style()` sets it in a notebook; `text_check` measures it on every figure drawn
while the book builds (`make book` collects the measures, `make test-browser` checks them).
"""
from __future__ import annotations

import json
import os

import pandas as pd

from .device import fp32_lanes, fp32_peak_flops
from .lab import captions

#: The book's main column at 1400 px wide, in CSS px: a figure wider than this is scaled
#: down to fit, and its text with it.
COLUMN_PX = 784
#: The smallest text a figure may show, in points at its displayed size.
MIN_TEXT_PT = 9
#: Where the book build collects each figure's smallest text (set by `make book`).
FIGURE_LOG_ENV = "PERFLAB_FIGURE_LOG"

#: One colour per series across the book: the vendor baselines always the same greys,
#: FP32 (FFMA) kernels blue, tensor-core kernels red.
COLORS = {"cuBLAS FP32": "0.25", "cuBLAS TF32": "0.55", "fp32": "C0", "tf32": "C3",
          "kernel": "C0"}

#: Where label_points tries a label, in points from its marker (in this order); all but
#: the _NEAR nearest get a thin leader line back to their marker.
_OFFSETS = [(5, 4), (5, -11), (-5, 4), (-5, -11), (6, 14), (6, -21), (-6, 14), (-6, -21),
            (12, -4), (-12, -4), (10, 26), (-10, 26), (10, -33), (-10, -33), (24, 8),
            (-24, 8), (24, -16), (-24, -16), (14, 40), (-14, 40), (14, -47), (-14, -47)]
_NEAR = 4


def stamp(fig, *dfs) -> None:
    """Write the provenance caption of the rows behind a figure under it, in full: one
    line per source (a live machine beside a recorded one names both)."""
    fig.text(0.01, -0.07, captions(*dfs), fontsize=MIN_TEXT_PT, color="0.3", ha="left",
             va="top", wrap=True)   # wraps at the figure's width: never widens it


def displayed_scale(width_in: float, dpi: float) -> float:
    """How much the book scales a figure `width_in` inches wide drawn at `dpi` (the inline
    PNG is shown at width_in × dpi CSS px, shrunk to the main column when wider)."""
    return min(1.0, COLUMN_PX / (width_in * dpi))


def text_check(fig, renderer=None) -> dict:
    """The smallest text of a drawn figure at its displayed size: {"pt", "text",
    "width_px", "labels"} (pt = font size × dpi / 96 × the scale to the column, in CSS
    points; `labels` names the figure by its titles and axis labels)."""
    from matplotlib.text import Text

    renderer = renderer or fig.canvas.get_renderer()
    dpi = getattr(fig, "_perflab_dpi", None) or fig.dpi
    width_in = fig.get_tightbbox(renderer).width
    scale = displayed_scale(width_in, dpi)
    smallest, which, labels = None, "", []
    for t in fig.findobj(Text):
        text = t.get_text().strip()
        if not text or not t.get_visible():
            continue
        pt = t.get_fontsize() * dpi / 96 * scale
        if smallest is None or pt < smallest:
            smallest, which = pt, text
    for ax in fig.axes:
        labels += [x for x in (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) if x]
    return {"pt": round(smallest or 0.0, 2), "text": which[:80], "width_px": round(width_in * dpi),
            "labels": labels[:4]}


def _log_text(event) -> None:
    """draw_event: append the figure's smallest displayed text to the build's log."""
    path = os.environ.get(FIGURE_LOG_ENV)
    if not path:
        return
    fig = event.canvas.figure
    rec = {"page": os.environ.get("PERFLAB_PAGE") or os.path.basename(os.getcwd()),
           "figure": id(fig), **text_check(fig, event.renderer)}
    with open(path, "a") as f:
        f.write(json.dumps(rec) + "\n")


def figure_hook(fig) -> None:
    """rcParams["figure.hooks"]: every pyplot figure remembers the dpi it is shown at (a
    retina PNG is drawn at twice it) and, in a book build, logs its smallest text."""
    fig._perflab_dpi = fig.dpi
    fig.canvas.mpl_connect("draw_event", _log_text)


def style() -> None:
    """The book's figure style, in a notebook: retina PNGs, readable text, the check."""
    import matplotlib as mpl

    hook = "perflab.plots:figure_hook"
    # figure.hooks came with Matplotlib 3.7 (requirements.txt asks for 3.8): an older one
    # draws the same figures, unchecked.
    if "figure.hooks" in mpl.rcParams and hook not in mpl.rcParams["figure.hooks"]:
        mpl.rcParams["figure.hooks"] = [*mpl.rcParams["figure.hooks"], hook]
    mpl.rcParams.update({"font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10,
                         "xtick.labelsize": 9.5, "ytick.labelsize": 9.5,
                         "legend.fontsize": 9.5, "figure.titlesize": 11})
    try:
        from IPython import get_ipython
        if get_ipython() is not None:
            from matplotlib_inline.backend_inline import set_matplotlib_formats
            set_matplotlib_formats("retina")
    except ImportError:
        pass


def device_of(df) -> dict:
    """The device dict of the run behind `df` (live or recorded)."""
    return df.attrs.get("provenance", {}).get("device", {})


def device_table(dev: dict) -> pd.DataFrame:
    """The device, as a two-column table a reader can scan."""
    gib = 1 << 30
    rows = [
        ("name", dev.get("name")),
        ("compute capability", f"{dev.get('compute_capability')} ({dev.get('arch')})"),
        ("multiprocessors (SMs)", dev.get("sms")),
        ("FP32 lanes per SM", fp32_lanes(dev.get("compute_capability"))),
        ("max SM clock (MHz)", dev.get("sm_clock_max_mhz")),
        ("memory", f"{dev.get('total_mem_bytes', 0) / gib:.1f} GiB, "
                   f"{dev.get('mem_bus_bits')}-bit bus at {dev.get('mem_clock_max_mhz')} MHz"),
        ("L2 cache", f"{dev.get('l2_bytes', 0) / (1 << 20):.0f} MiB"),
        ("shared memory per block (default / opt-in)",
         f"{dev.get('smem_per_block', 0) // 1024} / {dev.get('smem_per_block_optin', 0) // 1024} KiB"),
        ("shared memory per SM", f"{dev.get('smem_per_sm', 0) // 1024} KiB"),
        ("registers per SM / per block", f"{dev.get('regs_per_sm')} / {dev.get('regs_per_block')}"),
        ("threads per block / per SM",
         f"{dev.get('max_threads_per_block')} / {dev.get('max_threads_per_sm')}"),
        ("driver / CUDA runtime / CuPy / NVRTC",
         f"{dev.get('driver_version')} / {dev.get('runtime_version')} / {dev.get('cupy_version')}"
         f" / {dev.get('nvrtc_version', '?')}"),
    ]
    return pd.DataFrame(rows, columns=["property", "value"])


def datasheet(dev: dict) -> dict:
    """Peak rates implied by the device's own attributes (not measured):
    FP32 = SMs × lanes × 2 FLOP × max clock; DRAM = 2 transfers × bus width × memory clock."""
    fp32 = fp32_peak_flops(dev)
    dram = 2 * dev["mem_bus_bits"] / 8 * dev["mem_clock_max_mhz"] * 1e6
    return {"fp32_flops": fp32, "dram_Bps": dram}


def bars_beside(ax, rows, *, here: str, there: str, xlabel: str, line=None, log: bool = False,
                fmt: str = "{:.2f}×") -> None:
    """Two horizontal bars per row, this GPU's (solid) above the reference GPU's recorded
    one (hatched, in the same colour), each with its value; a legend above the axes names
    both. `rows`: (label, mine, theirs, colour, note) per row, top first; a value NaN
    where it was not measured, and `note` (why not: "not run here: needs sm_90") written
    where this GPU's bar would be. `line`: (x, label) drawn across every row (a ceiling
    both are measured against, = 1). Values fractions of each GPU's own ceiling: two
    GPUs' absolute numbers seldom compare."""
    import math

    from matplotlib.patches import Patch

    values = [v for r in rows for v in r[1:3] if v is not None and math.isfinite(v)]
    if line is not None:
        values.append(line[0])
    lo = min(values) / 2.2 if log else 0.0
    hi = max(values) * (2.4 if log else 1.22)
    h, off = 0.38, 0.21
    white = dict(facecolor="white", edgecolor="none", pad=0.4)
    for i, (_, mine, theirs, color, note) in enumerate(rows):
        if mine is not None and math.isfinite(mine):
            ax.barh(i - off, mine, height=h, color=color)
            ax.text(mine * 1.06 if log else mine + hi * 0.01, i - off, fmt.format(mine),
                    va="center", fontsize=MIN_TEXT_PT, bbox=white, zorder=3)
        elif note:
            ax.text(lo * 1.08 if log else hi * 0.01, i - off, note, va="center", ha="left",
                    fontsize=MIN_TEXT_PT, color="0.3", style="italic", bbox=white, zorder=3)
        if theirs is not None and math.isfinite(theirs):
            ax.barh(i + off, theirs, height=h, color="white", edgecolor=color, hatch="////",
                    lw=0.8)
            ax.text(theirs * 1.06 if log else theirs + hi * 0.01, i + off, fmt.format(theirs),
                    va="center", fontsize=MIN_TEXT_PT, color="0.25", bbox=white, zorder=3)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=MIN_TEXT_PT)
    ax.set_ylim(len(rows) - 0.45, -0.55)
    handles = [Patch(facecolor="0.45", label=here),
               Patch(facecolor="white", edgecolor="0.35", hatch="////", label=there)]
    if line is not None:
        handles.append(ax.axvline(line[0], color="0.25", lw=1.2, label=line[1]))
    if log:
        ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel(xlabel)
    ax.legend(handles=handles, fontsize=MIN_TEXT_PT, loc="lower left", bbox_to_anchor=(0, 1.0),
              ncol=1, frameon=False)


def _nearest(box, marks) -> int:
    """Which of `marks` (display coordinates) is nearest to the box: a label must sit
    nearer its own marker than any other, or a reader pairs it wrongly."""
    cx, cy = (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2
    return min(range(len(marks)), key=lambda i: (marks[i][0] - cx) ** 2 + (marks[i][1] - cy) ** 2)


def label_points(ax, points, fontsize: float = MIN_TEXT_PT, avoid=(), colors=None,
                 obstacles=()) -> None:
    """Label (x, y, text) points so that no label overlaps another label, a marker or a
    point of `avoid` ((x, y) in data coordinates: a line sampled densely, say): each label
    takes the first offset around its point that is clear, with a leader line when it had
    to go far, and nearer its own marker than any other; if none is, the place that gets
    the least wrong (covering another label or a marker is worse than sitting nearer
    another marker, which is worse than lying on a line). `colors`:
    one per point, for its label (its marker's, so that a reader can pair them).
    `obstacles`: boxes in display coordinates (a legend's window extent) no label may
    overlap."""
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    taken = [ax.transData.transform((x, y)) for x, y, _ in points]
    lines = [ax.transData.transform(p) for p in avoid]
    boxes = list(obstacles)

    def place(x, y, text, i, color):
        (dx, dy), far = _OFFSETS[i], i >= _NEAR
        ann = ax.annotate(text, (x, y), textcoords="offset points", xytext=(dx, dy),
                          fontsize=fontsize, ha="left" if dx > 0 else "right", color=color,
                          va="bottom" if dy > 0 else "top",
                          arrowprops=dict(arrowstyle="-", lw=0.8, color=color, shrinkA=0,
                                          shrinkB=3) if far else None)
        return ann, ann.get_window_extent(renderer).expanded(1.05, 1.1)

    for k, (x, y, text) in enumerate(points):
        color = colors[k] if colors else "black"
        best = None                       # (what the place gets wrong, offset)
        for i in range(len(_OFFSETS)):
            ann, box = place(x, y, text, i, color)
            # Worst first: covering another label, the legend or a marker; then being
            # nearer another marker than its own; then lying on a line.
            wrong = (sum(box.overlaps(b) for b in boxes) + sum(box.contains(*p) for p in taken),
                     _nearest(box, taken) != k, any(box.contains(*p) for p in lines))
            if not any(wrong):
                break
            if best is None or wrong < best[0]:
                best = (wrong, i)
            ann.remove()
        else:
            ann, box = place(x, y, text, best[1], color)
        boxes.append(box)


style()
