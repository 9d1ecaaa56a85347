"""The machine chapter's explanatory diagram: latency × parallelism on one scheduler.

The picture is computed, not drawn by hand: the latency L comes from the recorded
one-warp, one-chain FMA row (cycles per dependent FFMA, rounded), the issue rate from the
device's FP32 lanes, and the schedule of every row from a small issue simulation (each
cycle, issue the first chain whose previous result is ready)."""
from __future__ import annotations

from fractions import Fraction

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, Rectangle

from ...device import fp32_lanes

#: Warp schedulers (SM sub-partitions) per SM since Volta: each issues at most one warp
#: instruction per cycle (CUDA C++ Programming Guide, compute capabilities).
SCHEDULERS = 4
WARP = 32
BLUE, RED = "C0", "C3"
#: One shade of the lab's blue per chain (a, b, c, d, ...), light to dark.
CHAIN_ALPHA = (1.0, 0.72, 0.5, 0.34, 0.24, 0.18, 0.14, 0.1)


def warp_ffma_per_cycle(tflops: float, dev: dict, warps_per_scheduler: int = 1,
                        clock_mhz: float | None = None) -> float:
    """Warp-FFMAs one warp issued per cycle on its scheduler, from a measured rate."""
    clock = (clock_mhz or dev["sm_clock_max_mhz"]) * 1e6
    fma_per_cycle_per_sm = tflops * 1e12 / 2 / (dev["sms"] * clock)
    return fma_per_cycle_per_sm / (SCHEDULERS * WARP * warps_per_scheduler)


def issue_rate(dev: dict) -> float:
    """Warp-FFMAs a scheduler can issue per cycle: its share of the SM's FP32 lanes / 32."""
    return fp32_lanes(dev["compute_capability"]) / SCHEDULERS / WARP


def latency_from_rows(fma, dev: dict) -> dict:
    """From the one-warp-per-scheduler rows: cycles per dependent FFMA (one chain), L (it,
    rounded), and each chain count's rate as a fraction of that occupancy's best."""
    one = fma[fma["occupancy"] == "1 warp/scheduler"].set_index("chains")
    clk = one["sm_clock_after_mhz"] if "sm_clock_after_mhz" in one else None
    c1 = float(clk.loc[1]) if clk is not None and clk.notna().loc[1] else None
    per_cycle = warp_ffma_per_cycle(float(one.loc[1, "TFLOP/s"]), dev, 1, c1)
    cycles = 1 / per_cycle
    frac = (one["TFLOP/s"] / one["TFLOP/s"].max()).to_dict()
    return {"cycles_per_dependent": cycles, "L": max(1, round(cycles)),
            "frac_of_best": {int(k): float(v) for k, v in frac.items()},
            "issue_rate": issue_rate(dev)}


def schedule(chains: int, latency: int, cycles: int, rate: float = 1.0) -> list:
    """Which chain issues at each cycle (None: nothing ready), one scheduler that issues at
    most `rate` (≤ 1) warp-FFMAs per cycle, each chain's next FFMA waiting `latency`
    cycles for the previous result: [(cycle, chain, step) ...]."""
    ready = [0] * chains                     # the cycle each chain's next FFMA may issue
    step = [0] * chains
    out, credit = [], 0.0
    for c in range(cycles):
        credit = min(1.0, credit + rate)
        j = next((j for j in range(chains) if ready[j] <= c), None)
        if j is None or credit < 1.0:
            out.append((c, None, None))
            continue
        credit -= 1.0
        step[j] += 1
        out.append((c, j, step[j]))
        ready[j] = c + latency
    return out


def in_flight(latency: int, rate: float) -> float:
    """Little's law: independent FFMAs a scheduler needs in flight = latency × throughput."""
    return latency * rate


def draw_pipeline(fma, dev: dict, *, ax=None):
    """Three rows on one scheduler — 1 chain, 2 chains, L chains — over 4·L cycles: the
    FFMAs issued (a cell per cycle, lettered by chain), the latency L marked on the first
    row, and beside each row its issue rate and the measured rate of that chain count."""
    m = latency_from_rows(fma, dev)
    L, rate = m["L"], m["issue_rate"]
    rows = [k for k in sorted({1, 2, L}) if k in m["frac_of_best"]]
    ncyc = 4 * L
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 0.72 * len(rows) + 1.25))
    fig = ax.figure
    x0, w = 1.05, 0.33                         # where cycle 0 starts; a cell's width
    h = 0.62
    right = x0 + ncyc * w + 0.25              # the two columns beside the rows
    ax.set_xlim(0, right + 2.45)
    ax.set_ylim(-len(rows) - 0.55, 1.05)
    ax.axis("off")
    for c in range(ncyc):                      # the cycle axis
        if c % L == 0:
            ax.text(x0 + (c + 0.5) * w, 0.55, str(c), ha="center", va="bottom", fontsize=9,
                    color="0.3")
    ax.text(x0 - 0.1, 0.55, "cycle", ha="right", va="bottom", fontsize=9, color="0.3")
    ax.text(right + 0.55, 0.55, "issued\nper cycle", ha="center", va="bottom", fontsize=9,
            color="0.3", linespacing=1.0)
    ax.text(right + 1.75, 0.55, "measured\n(% of best)", ha="center", va="bottom",
            fontsize=9, color="0.3", linespacing=1.0)
    cells = []
    for r, k in enumerate(rows):
        y = -r - 0.5
        name = "1 chain" if k == 1 else f"{k} chains"
        ax.text(x0 - 0.1, y, name, ha="right", va="center", fontsize=10)
        sched = schedule(k, L, ncyc, rate)
        for c, j, s in sched:
            x = x0 + c * w
            if j is None:
                p = Rectangle((x, y - h / 2), w, h, facecolor="white", edgecolor="0.8", lw=0.6)
            else:
                p = Rectangle((x, y - h / 2), w, h, facecolor=BLUE,
                              alpha=CHAIN_ALPHA[j % len(CHAIN_ALPHA)], edgecolor="white", lw=0.8)
                ax.text(x + w / 2, y, f"{'abcdefgh'[j % 8]}{s}", ha="center", va="center",
                        fontsize=9, color="white" if j < 2 else "0.1")
            ax.add_patch(p)
            cells.append((k, c, j))
        issued = Fraction(sum(j is not None for _, j, _ in sched), ncyc)
        ax.text(right + 0.55, y, str(issued), ha="center", va="center", fontsize=10)
        ax.text(right + 1.75, y, f"{100 * m['frac_of_best'][k]:.0f} %", ha="center",
                va="center", fontsize=10, color=BLUE)
    # the latency on the first row: a1 issues at 0, a2 waits for its result until L
    y = -0.5 + h / 2 + 0.02
    arrow = FancyArrowPatch((x0 + 0.5 * w, y), (x0 + (L + 0.5) * w, y),
                            connectionstyle="arc3,rad=-0.45", arrowstyle="-|>",
                            mutation_scale=10, color=RED, lw=1.3)
    ax.add_patch(arrow)
    ax.text(x0 + (L + 0.8) * w, y + 0.12, f"L = {L} cycles: a2 needs a1's result",
            ha="left", va="bottom", fontsize=9, color=RED)
    n = in_flight(L, rate)
    ax.text(x0, -len(rows) - 0.2,
            f"Little's law: in flight = latency × throughput = {L} cycles × {rate:g} per cycle "
            f"= {n:g} independent FFMAs per scheduler",
            ha="left", va="center", fontsize=9.5, color="0.2")
    fig.subplots_adjust(left=0.01, right=0.99, top=0.98, bottom=0.02)
    ax.cells = cells                           # what was drawn, for the tests
    ax.rows = rows
    return fig
