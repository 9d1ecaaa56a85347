"""The chapter's explanatory diagram: the same 32 neighbouring pixels run as two AVX-512
vectors of 16 lanes (a mask register switches escaped lanes off; the vector keeps
iterating until its 16 lanes are all off) and as one 32-lane CUDA warp (escaped lanes
idle until the warp's last lane escapes). The counts come from the chapter's reference
(cpu.reference: scalar C, or NumPy where no C builds; both give the same count at every
pixel), the loop trips from model.steps, so the picture shows what the code computes."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import cpu, model
from .views import view

#: The row the diagram draws: the seahorse valley at the CPU experiment's image size and
#: limit; pixels 544 .. 575 of row 456, one warp of a 32-wide block, two AVX-512 vectors.
ROW = {"view": "seahorse", "w": 641, "h": 479, "max_iter": 256, "row": 456, "col": 544}
SIMD_LANES = 16
WARP = 32

USEFUL, WASTED, GROUP = "C0", "#f4b6b6", "C3"     # lab colours: blue, light red, red


@dataclass(frozen=True)
class Lanes:
    """The row's counts and loop trips, and what each grouping makes of them."""
    counts: np.ndarray            # the reference count of each pixel (int)
    trips: np.ndarray             # loop trips per pixel: its count + the test that stopped it
    max_iter: int
    group_trips: dict             # "simd" -> trips of each 16-lane vector; "simt" -> the warp's

    def lane_trips(self, how: str) -> int:
        """Lane-trips the hardware spends: each group's trips × its lanes."""
        width = SIMD_LANES if how == "simd" else WARP
        return int(sum(t * width for t in self.group_trips[how]))

    def useful(self) -> int:
        return int(self.trips.sum())

    def useful_pct(self, how: str) -> float:
        return 100 * self.useful() / self.lane_trips(how)


def row_lanes(spec: dict = ROW) -> Lanes:
    """The counts of the row's 32 pixels, from the chapter's reference, and each group's
    trips: a group runs until its slowest lane is done (its largest trip count)."""
    g = view(spec["view"]).grid(spec["w"], spec["h"])
    ref = cpu.cached_reference(g, spec["max_iter"])
    counts = np.asarray(ref[spec["row"], spec["col"]:spec["col"] + WARP], dtype=np.int64)
    trips = model.steps(counts, spec["max_iter"])
    simd = [int(trips[k:k + SIMD_LANES].max()) for k in range(0, WARP, SIMD_LANES)]
    return Lanes(counts, trips, spec["max_iter"], {"simd": simd, "simt": [int(trips.max())]})


def lanes_summary(lanes: Lanes) -> dict:
    """What the page says about the diagram (its facts: report.lanes_facts)."""
    s = {"dg_n": len(lanes.trips), "dg_warp_trips": lanes.group_trips["simt"][0],
         "dg_simd_pct": lanes.useful_pct("simd"), "dg_simt_pct": lanes.useful_pct("simt"),
         "dg_min_count": int(lanes.counts.min()), "dg_max_count": int(lanes.counts.max())}
    for k, t in enumerate(lanes.group_trips["simd"]):
        s[f"dg_vec{k}_trips"] = t
    return s


def _panel(ax, trips: np.ndarray, groups: list[tuple[int, int, int]], x: np.ndarray) -> None:
    """Bars per lane: useful trips (blue) and, up to the group's trips, the lane's
    wasted trips (light red); the group's trip count as a red line over its lanes."""
    gt = np.empty_like(trips)
    for a, b, t in groups:
        gt[a:b] = t
    ax.bar(x, trips, width=0.8, color=USEFUL)
    ax.bar(x, gt - trips, bottom=trips, width=0.8, color=WASTED)
    for a, b, t in groups:
        ax.plot([x[a] - 0.45, x[b - 1] + 0.45], [t, t], color=GROUP, lw=1.6)
    ax.set_xlim(x[0] - 0.7, x[-1] + 0.7)
    ax.spines[["top", "right"]].set_visible(False)
    ax.tick_params(labelsize=9)


def draw_lanes(lanes: Lanes | None = None):
    """The figure: the row's pixels as they appear in the image, then the AVX-512 panel
    (two vectors, one mask each) and the CUDA panel (one warp), with each grouping's
    useful share of the lane-trips it pays for. Returns the figure."""
    import matplotlib
    import matplotlib.pyplot as plt

    lanes = lanes or row_lanes()
    n, mi = len(lanes.trips), lanes.max_iter
    fig = plt.figure(figsize=(7.5, 5.3))
    gs = fig.add_gridspec(3, 1, height_ratios=[0.32, 1, 1], hspace=0.7,
                          left=0.09, right=0.99, top=0.81, bottom=0.07)
    strip, ax_simd, ax_simt = (fig.add_subplot(gs[k]) for k in range(3))

    # the pixels, coloured as in the chapter's image (black: still iterating at the limit)
    c = np.log1p(lanes.counts.astype(float))
    c = np.where(lanes.counts >= mi, np.nan, c)
    cmap = matplotlib.colormaps["bone"].with_extremes(bad="black")
    strip.imshow(c[None, :], cmap=cmap, vmin=0, vmax=np.log1p(mi), aspect="auto",
                 extent=(-0.5, n - 0.5, 0, 1))
    strip.set_yticks([])
    strip.set_xticks([0, 31])
    strip.set_xticklabels([f"pixel {ROW['col']}", f"{ROW['col'] + n - 1}"])
    strip.tick_params(labelsize=9, length=2)
    strip.axvline(15.5, color="C3", lw=1.2)
    strip.set_title(f"The pixels: row {ROW['row']} of the seahorse valley, {ROW['w']}×{ROW['h']}, "
                    f"limit {mi} (black: at the limit)", fontsize=9, loc="left")

    x = np.arange(n, dtype=float)
    xs = x + np.where(x >= SIMD_LANES, 1.0, 0.0)     # a gap between the two vectors
    groups = [(k, k + SIMD_LANES, t) for k, t in zip(range(0, n, SIMD_LANES),
                                                     lanes.group_trips["simd"])]
    _panel(ax_simd, lanes.trips, groups, xs)
    ax_simd.set_xticks([xs[0], xs[15], xs[16], xs[31]])
    ax_simd.set_xticklabels(["lane 0", "15", "lane 0", "15"])
    for k, (a, b, t) in enumerate(groups):
        mid = (xs[a] + xs[b - 1]) / 2
        ax_simd.text(mid, t + 0.04 * mi, f"vector {k}: {t} trips", ha="center", va="bottom",
                     fontsize=9, color=GROUP)
    ax_simd.set_title(f"AVX-512: two vectors of 16 lanes, a __mmask16 each — "
                      f"{lanes.useful_pct('simd'):.0f} % of {lanes.lane_trips('simd')} "
                      f"lane-trips useful", fontsize=10, loc="left")

    _panel(ax_simt, lanes.trips, [(0, n, lanes.group_trips["simt"][0])], x)
    ax_simt.set_xticks([0, 8, 16, 24, 31])
    ax_simt.set_xticklabels(["lane 0", "8", "16", "24", "31"])
    t = lanes.group_trips["simt"][0]
    ax_simt.text((x[0] + x[-1]) / 2, t + 0.04 * mi, f"the warp: {t} trips", ha="center",
                 va="bottom", fontsize=9, color=GROUP)
    ax_simt.set_title(f"CUDA: one warp of 32 lanes — {lanes.useful_pct('simt'):.0f} % of "
                      f"{lanes.lane_trips('simt')} lane-trips useful", fontsize=10, loc="left")
    for ax in (ax_simd, ax_simt):
        ax.set_ylim(0, mi * 1.22)
        ax.set_ylabel("loop trips", fontsize=9)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    fig.legend([Patch(color=USEFUL), Patch(color=WASTED), Line2D([], [], color=GROUP, lw=1.6)],
               ["useful: the lane's pixel still iterates",
                "wasted: the lane is masked off (AVX-512) or idle (warp), its group goes on",
                "the group's trips: until its last lane is done"],
               fontsize=9, loc="upper left", bbox_to_anchor=(0.005, 0.998), ncol=1,
               frameon=False, handlelength=1.4)
    return fig
