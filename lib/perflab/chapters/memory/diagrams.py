"""The memory chapter's explanatory diagram: a warp's 32 loads mapped to 32-byte sectors.

Nothing in it is typed: lane l of a warp loads the 4-byte word at byte 4 · stride · l,
the sector it falls in is that byte // 32, the 128-byte line it falls in that byte // 128;
the counts beside each row come from the same formula (and, where the profiler ran, the
sectors per request it counted are printed next to them)."""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

WARP = 32
WORD = 4          # bytes a lane loads (a float)
SECTOR = 32       # bytes: the unit L1/L2 fetch and the profiler counts
LINE = 128        # bytes: a cache line, four sectors
BLUE, RED = "C0", "C3"


def addresses(stride: int, lanes: int = WARP, word: int = WORD) -> list[int]:
    """Byte offsets a warp loads from `a[stride * lane]`, lane 0 .. lanes - 1."""
    return [word * stride * lane for lane in range(lanes)]


def sectors(stride: int, lanes: int = WARP, word: int = WORD, sector: int = SECTOR) -> list[int]:
    """The distinct 32-byte sectors those loads touch (sorted sector indices)."""
    return sorted({a // sector for a in addresses(stride, lanes, word)})


def lines(stride: int, lanes: int = WARP, word: int = WORD, line: int = LINE) -> list[int]:
    """The distinct 128-byte lines those loads touch."""
    return sorted({a // line for a in addresses(stride, lanes, word)})


def fetched_per_useful(stride: int) -> float:
    """Bytes a warp's load fetches (whole sectors) per byte it uses."""
    return len(sectors(stride)) * SECTOR / (WARP * WORD)


def copy_fetch_per_useful(stride: int) -> float:
    """The stride sweep's sector model: `out[i] = in[i * stride]` fetches whole sectors for
    its reads and writes 4 bytes per float, over 8 useful bytes (4 read, 4 written)."""
    return (fetched_per_useful(stride) * WORD + WORD) / (2 * WORD)


def draw_coalescing(strides=(1, 2, 4, 8), measured: dict | None = None):
    """One row per stride over the same 1 KiB of memory (32 sectors, 8 lines): the sectors
    a warp's loads touch, filled, with the words they use dark; beside each row the sectors
    per request (computed, and measured by the profiler where `measured` has it) and the
    bytes fetched per byte used."""
    span = max(max(addresses(s)) for s in strides) + WORD
    nsec = -(-span // SECTOR)
    fig, ax = plt.subplots(figsize=(7.5, 0.6 * len(strides) + 1.1))
    x0, sw = 0.95, 4.6 / nsec                 # where byte 0 sits; a sector's width (in)
    h = 0.5
    right = x0 + nsec * sw + 0.4
    ax.set_xlim(0, right + 1.55)
    ax.set_ylim(-len(strides) - 0.1, 1.05)
    ax.axis("off")
    byte = sw / SECTOR                         # inches per byte
    for b in range(0, nsec * SECTOR + 1, LINE):   # byte offsets at the line boundaries
        ax.text(x0 + b * byte, 0.28, f"{b}", ha="center", va="bottom", fontsize=9,
                color="0.35")
    ax.text(x0 - 0.1, 0.28, "byte", ha="right", va="bottom", fontsize=9, color="0.35")
    ax.text(right + 0.3, 0.28, "sectors\n(profiler)" if measured else "sectors",
            ha="center", va="bottom", fontsize=9, color="0.35", linespacing=1.0)
    ax.text(right + 1.2, 0.28, "fetched\n/ used", ha="center", va="bottom", fontsize=9,
            color="0.35", linespacing=1.0)
    drawn = {}
    for r, s in enumerate(strides):
        y = -r - 0.35
        ax.text(x0 - 0.1, y, f"stride {s}", ha="right", va="center", fontsize=10)
        touched = set(sectors(s))
        for k in range(nsec):
            ax.add_patch(Rectangle((x0 + k * sw, y - h / 2), sw, h,
                                   facecolor="#cfe0f1" if k in touched else "white",
                                   edgecolor="0.6", lw=0.5))
        for a in addresses(s):                 # the words the lanes use
            ax.add_patch(Rectangle((x0 + a * byte, y - h / 2), WORD * byte, h,
                                   facecolor=BLUE, edgecolor="none"))
        for b in range(0, nsec * SECTOR + 1, LINE):
            ax.plot([x0 + b * byte] * 2, [y - h / 2 - 0.06, y + h / 2 + 0.06], color="0.15",
                    lw=1.1)
        n = len(touched)
        txt = f"{n}"
        if measured and s in measured and measured[s] == measured[s]:
            txt += f" ({measured[s]:.0f})"
        ax.text(right + 0.3, y, txt, ha="center", va="center", fontsize=10)
        ax.text(right + 1.2, y, f"{fetched_per_useful(s):g}×", ha="center", va="center",
                fontsize=10, color=RED if n > len(sectors(1)) else "0.1")
        drawn[s] = n
    last = addresses(strides[-1])[-1]
    ax.annotate("lane 31", (x0 + (last + WORD / 2) * byte, -len(strides) + 0.65 - h / 2),
                (x0 + (last + WORD / 2) * byte - 0.45, -len(strides) + 0.05),
                fontsize=9, ha="center", va="center", color="0.2",
                arrowprops={"arrowstyle": "-", "color": "0.4", "lw": 0.8})
    ax.annotate("lane 0", (x0 + WORD / 2 * byte, -len(strides) + 0.65 - h / 2),
                (x0 + 0.35, -len(strides) + 0.05), fontsize=9, ha="center", va="center",
                color="0.2", arrowprops={"arrowstyle": "-", "color": "0.4", "lw": 0.8})
    fig.subplots_adjust(left=0.01, right=0.99, top=0.98, bottom=0.02)
    ax.sectors_drawn = drawn                   # what was drawn, for the tests
    return fig
