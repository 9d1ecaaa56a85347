"""The roofline: attainable rate = min(compute peak, arithmetic intensity × bandwidth).

Ceilings come from measured rows, never from a datasheet: the chapter that measures them
picks them out of its experiments of one run.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Ceilings:
    bandwidth_Bps: float          # bytes per second (read + written)
    peaks_flops: dict             # name -> FLOP/s, e.g. {"FP32 FMA": 6.2e13, ...}
    source: str = ""              # caption of the rows they came from

    def ridge(self, peak: str) -> float:
        """Arithmetic intensity (FLOP/B) where the memory roof meets `peak`."""
        return self.peaks_flops[peak] / self.bandwidth_Bps


def attainable(intensity, peak_flops: float, bandwidth_Bps: float):
    """min(peak, intensity × bandwidth), elementwise, in FLOP/s."""
    ai = np.asarray(intensity, dtype=float)
    if np.any(ai <= 0):
        raise ValueError("arithmetic intensity must be positive")
    return np.minimum(peak_flops, ai * bandwidth_Bps)


def gemm_intensity(M: int, N: int, K: int, bytes_per_elem: int = 4) -> float:
    """FLOP per byte of a GEMM that reads A and B once and writes C once (the floor)."""
    return 2.0 * M * N * K / (bytes_per_elem * (M * K + K * N + M * N))


def plot(ax, ceil: Ceilings, points=(), ai_range=(0.05, 2000.0), kinds=()):
    """Draw the roofs on `ax` (log-log, TFLOP/s vs FLOP/B) and label `points`
    (iterable of (label, intensity, TFLOP/s) or (label, intensity, TFLOP/s, colour)); no
    label sits on a roof where there is room. `kinds`: (name, colour) legend entries that
    say what the points' colours mean."""
    ai = np.geomspace(*ai_range, 256)
    styles = ["-", "--", ":", "-."]
    roofs = []                              # the roofs, sampled: labels keep off them
    for (name, peak), ls in zip(sorted(ceil.peaks_flops.items(), key=lambda x: x[1]), styles):
        roof = attainable(ai, peak, ceil.bandwidth_Bps) / 1e12
        ax.plot(ai, roof, ls, color="0.3", lw=1.2, label=f"{name}: {peak / 1e12:.1f} TFLOP/s")
        dense = np.geomspace(*ai_range, 2048)
        roofs += zip(dense, attainable(dense, peak, ceil.bandwidth_Bps) / 1e12)
    ax.plot([], [], " ", label=f"copy: {ceil.bandwidth_Bps / 1e12:.2f} TB/s")
    for name, color in kinds:                # what the points' colours mean
        ax.plot([], [], "o", ms=6, color=color, label=name)
    colors = []
    for label, x, y, *c in points:
        colors.append(ax.plot([x], [y], "o", ms=6, color=c[0] if c else None)[0].get_color())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(top=2.5 * max(ceil.peaks_flops.values()) / 1e12)   # room for labels above
    ax.set_xlabel("arithmetic intensity (FLOP / byte of device memory)")
    ax.set_ylabel("TFLOP/s")
    ax.grid(True, which="both", alpha=0.3)
    # Matplotlib's "best" place: where the legend covers the fewest roofs and points; the
    # labels are then placed clear of it.
    legend = ax.legend(fontsize=9, loc="best", framealpha=0.9)
    from .plots import label_points
    ax.figure.canvas.draw()
    label_points(ax, [(p[1], p[2], p[0]) for p in points], avoid=roofs, colors=colors,
                 obstacles=[legend.get_window_extent()])
    return ax
