"""The scan pages' diagrams: the look-back's tile states and run-length encoding worked."""
from __future__ import annotations

import numpy as np

from .rle import numpy_steps

#: The fixed 16-element example the run-length page works through.
RLE_EXAMPLE = np.array([7, 7, 3, 3, 3, 9, 1, 1, 1, 1, 4, 4, 8, 8, 8, 8], dtype=np.int32)
#: eight tiles' sums, and what each had published ("P", "A", "X") at two polls of tile 7
TILE_SUMS = np.array([4, 3, 5, 2, 6, 1, 3, 5], dtype=np.int64)
POLLS = (("P", "P", "P", "P", "A", "X", "A", None),
         ("P", "P", "P", "P", "A", "A", "A", None))
FONT = 10
WIDTH_IN = 7.4

STATE_FILL = {"P": "C0", "A": "#b9d3ea", "X": "0.88", None: "white"}
STATE_TEXT = {"P": "white", "A": "black", "X": "0.3", None: "C3"}
STATE_WORD = {"P": "inclusive prefix", "A": "aggregate", "X": "not ready"}


def published(states, sums) -> list:
    """Each tile's status word in `states`: its inclusive prefix (P), its sum (A) or None."""
    return [int(p) if s == "P" else int(a) if s == "A" else None
            for s, a, p in zip(states, sums, np.cumsum(sums))]


def lookback_walk(states, sums, tile: int) -> dict:
    """The look-back of `tile`, nearest first, adding aggregates up to the first prefix or
    stopping at an X: {"read": tiles read, "prefix": or None, "waits_on": X tile or None}."""
    words, read, total = published(states, sums), [], 0
    for t in range(tile - 1, -1, -1):
        read.append(t)
        if states[t] == "X":
            return {"read": read, "prefix": None, "waits_on": t}
        total += words[t]
        if states[t] == "P":
            break
    return {"read": read, "prefix": total, "waits_on": None}


def _cell(ax, x, y, w, h, fill, edge="0.3", lw=1.0, label=None, **kw):
    """A w × h box at (x, y), `label` (if any) centred in it in `kw`'s style."""
    from matplotlib.patches import Rectangle
    ax.add_patch(Rectangle((x, y), w, h, facecolor=fill, edgecolor=edge, lw=lw))
    _text(ax, x + w / 2, y + h / 2, "" if label is None else label, **kw)


def _text(ax, x, y, s, **kw):
    """`s` at (x, y), centred in the diagrams' font unless `kw` says otherwise."""
    ax.text(x, y, s, **{"ha": "center", "va": "center", "fontsize": FONT, **kw})


def _canvas(fig, height, xlim, ylim):
    """One axes over the whole figure (made `height` in tall if None), no frame."""
    import matplotlib.pyplot as plt
    fig = fig or plt.figure(figsize=(WIDTH_IN, height))
    ax = fig.add_axes([0.0, 0.0, 1.0, 1.0])
    ax.set(xlim=xlim, ylim=ylim)
    ax.axis("off")
    return fig, ax


def lookback_figure(fig=None):
    """The look-back's two polls on eight tiles; returns the figure."""
    from matplotlib.patches import FancyArrowPatch

    tiles = len(TILE_SUMS)
    looking = tiles - 1
    fig, ax = _canvas(fig, 3.6, (-1.9, tiles + 0.1), (-1.05, 5.0))
    for i in range(tiles):
        _text(ax, i + 0.45, 4.72, f"tile {i}")
    for row, states in enumerate(POLLS):
        y = 2.55 - row * 2.35
        words = published(states, TILE_SUMS)
        walk = lookback_walk(states, TILE_SUMS, looking)
        _text(ax, -1.85, y + 0.85, "first poll" if row == 0 else "next poll", ha="left",
              weight="bold")
        for i, s in enumerate(states):
            edge, lw = ("C3", 2.2) if i == looking else ("0.3", 1.0)
            _cell(ax, i, y, 0.9, 1.3, STATE_FILL[s], edge, lw, None if s else "looks\nback",
                  color="C3")
            if s is not None:
                _text(ax, i + 0.45, y + 0.88, s, fontsize=14, weight="bold", color=STATE_TEXT[s])
                _text(ax, i + 0.45, y + 0.33, "–" if words[i] is None else str(words[i]),
                      color=STATE_TEXT[s])
        for prev, t in zip([looking] + walk["read"], walk["read"]):
            ax.add_patch(FancyArrowPatch((prev + 0.4, y + 1.32), (t + 0.5, y + 1.32),
                                         connectionstyle="arc3,rad=0.55", arrowstyle="-|>",
                                         mutation_scale=11, color="C3", lw=1.3))
        parts = " + ".join(str(words[t]) for t in walk["read"])
        msg = (f"tile {walk['waits_on']} has published nothing yet: the walk stops there and "
               "polls again" if walk["prefix"] is None else f"prefix of tile {looking} = "
               f"{parts} = {walk['prefix']} (A words added, stop at the first P)")
        _text(ax, -1.85, y - 0.32, msg, ha="left")
    lx = -1.85
    for s in ("X", "A", "P"):
        _cell(ax, lx, -0.95, 0.32, 0.32, STATE_FILL[s], label=s, fontsize=9,
              color=STATE_TEXT[s], weight="bold")
        _text(ax, lx + 0.42, -0.79, STATE_WORD[s], ha="left")
        lx += 2.75
    return fig


#: the rows of the worked example, top to bottom: (key of numpy_steps or "x", label)
RLE_ROWS = (("index", "index i"), ("x", "input x"), ("flags", "head flag"),
            ("positions", "exclusive scan"))


def rle_rows(x=RLE_EXAMPLE) -> dict:
    """What the diagram shows: `rle.numpy_steps`, with the index and the input."""
    return {"index": np.arange(x.size), "x": np.asarray(x), **numpy_steps(x)}


def rle_figure(fig=None, x=RLE_EXAMPLE):
    """Run-length encoding of `x` (16 elements) step by step; returns the figure."""
    from matplotlib.patches import FancyArrowPatch

    d = rle_rows(x)
    n, runs = x.size, d["values"].size
    cw, left = 0.62, 2.3
    fig, ax = _canvas(fig, 3.7, (0, left + n * cw + 0.1), (-3.35, 4.25))
    heads = set(int(h) for h in d["heads"])
    for r, (key, label) in enumerate(RLE_ROWS):
        y = 3.3 - r * 1.0
        _text(ax, left - 0.15, y + 0.4, label, ha="right")
        for i in range(n):
            head = i in heads
            color = "C3" if head and key in ("flags", "positions") else (
                "0.45" if key == "index" else "black")
            _cell(ax, left + i * cw, y, cw, 0.8, "#f6d2d2" if head and key != "index" else "white",
                  "none" if key == "index" else "0.4", label=str(int(d[key][i])), color=color,
                  weight="bold" if head and key != "index" else "normal")
    # output: one cell a run, at the slot its head's scan gives
    yo = -2.2
    for row, key in enumerate(("values", "lengths")):
        y = yo - row * 1.0
        _text(ax, left - 0.15, y + 0.4, key, ha="right")
        for k in range(runs):
            _cell(ax, left + k * cw, y, cw, 0.8, "#b9d3ea" if key == "values" else "white",
                  label=str(int(d[key][k])))
    _text(ax, left - 0.15, yo + 1.45, "slot", ha="right")
    for k in range(runs):
        _text(ax, left + k * cw + cw / 2, yo + 1.45, str(k), color="0.45")
    for h, k in zip(d["heads"], d["positions"][d["heads"]]):
        ax.add_patch(FancyArrowPatch((left + h * cw + cw / 2, 0.3 - 0.02),
                                     (left + k * cw + cw / 2, yo + 1.75), arrowstyle="-|>",
                                     mutation_scale=10, color="C3", lw=1.1))
    _text(ax, left + runs * cw + 0.3, yo - 0.1, f"{runs} runs: a head writes x[i] at its "
          f"slot;\nlength = next head's i − this head's i\n(the last run ends at n = {n})",
          ha="left")
    return fig
