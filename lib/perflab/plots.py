"""Figures and tables the chapters share. Every figure carries its provenance caption."""
from __future__ import annotations

import pandas as pd

from .device import fp32_lanes, fp32_peak_flops
from .lab import caption

#: One colour per series across the book: the vendor baselines always the same greys,
#: FP32 (FFMA) kernels blue, tensor-core kernels red.
COLORS = {"cuBLAS FP32": "0.25", "cuBLAS TF32": "0.55", "fp32": "C0", "tf32": "C3",
          "kernel": "C0"}

#: Where label_points tries a label, in points from its marker (in this order).
_OFFSETS = [(5, 4), (5, -11), (-5, 4), (-5, -11), (6, 14), (6, -21), (-6, 14), (-6, -21),
            (12, -4), (-12, -4)]


def stamp(fig, df) -> None:
    """Write the provenance caption under a figure."""
    fig.text(0.01, -0.07, caption(df), fontsize=7, color="0.35", ha="left", va="top")


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


def label_points(ax, points, fontsize: int = 8) -> None:
    """Label (x, y, text) points so that no label overlaps another label or a marker:
    each label takes the first offset around its point that is clear."""
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    taken = [ax.transData.transform((x, y)) for x, y, _ in points]
    boxes = []
    for x, y, text in points:
        for dx, dy in _OFFSETS:
            ann = ax.annotate(text, (x, y), textcoords="offset points", xytext=(dx, dy),
                              fontsize=fontsize, ha="left" if dx > 0 else "right",
                              va="bottom" if dy > 0 else "top")
            box = ann.get_window_extent(renderer).expanded(1.05, 1.1)
            clear = (not any(box.overlaps(b) for b in boxes)
                     and not any(box.contains(*p) for p in taken))
            if clear or (dx, dy) == _OFFSETS[-1]:
                boxes.append(box)
                break
            ann.remove()
