"""Figures and tables the chapters share. Every figure carries its provenance caption."""
from __future__ import annotations

import pandas as pd

from .device import fp32_lanes, fp32_peak_flops
from .lab import caption

#: One colour per series across the book (cuBLAS always the same grey, and so on).
COLORS = {"cuBLAS FP32": "0.35", "cuBLAS TF32": "0.6", "kernel": "C0"}


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
    return pd.DataFrame(rows, columns=["property", "value"]).set_index("property")


def datasheet(dev: dict) -> dict:
    """Peak rates implied by the device's own attributes (not measured):
    FP32 = SMs × lanes × 2 FLOP × max clock; DRAM = 2 transfers × bus width × memory clock."""
    fp32 = fp32_peak_flops(dev)
    dram = 2 * dev["mem_bus_bits"] / 8 * dev["mem_clock_max_mhz"] * 1e6
    return {"fp32_flops": fp32, "dram_Bps": dram}
