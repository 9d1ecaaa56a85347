"""The machine chapter (chapters/00-machine.md): the ceilings every other chapter is
placed against — copy bandwidth, the FP32 FMA rate, the TF32 tensor-core rates
(mma.sync, wgmma, cuBLAS) — measured on the device.

Other chapters use `ceilings()`: the three experiments of one run as a roofline
`Ceilings` (live on a GPU, replayed without one)."""
from __future__ import annotations

CHAPTER = "00-machine"
TITLE = "The machine"

from . import experiments  # noqa: E402  (registers machine.copy, machine.fma, machine.tensor)
from .experiments import (AHEAD_NS, ahead, copy_spec, fma_spec, mma_spec,  # noqa: E402
                          read_once, read_spec, read_write, read_write_spec, spin_spec,
                          wgmma_spec)


def ceilings_from(copy_df, fma_df, tensor_df):
    """Best measured copy bandwidth, FP32 FMA rate and TF32 rates, as a Ceilings."""
    from ...lab import caption
    from ...roofline import Ceilings

    bw = float(copy_df["TB/s"].max()) * 1e12
    peaks = {"FP32 FMA": float(fma_df["TFLOP/s"].max()) * 1e12}
    mma = tensor_df[tensor_df["variant"].str.startswith("mma.sync")]
    if len(mma):
        peaks["TF32 mma.sync"] = float(mma["TFLOP/s"].max()) * 1e12
    wg = tensor_df[tensor_df["variant"].str.startswith("wgmma")]
    if len(wg) and "TFLOP/s" in wg and wg["TFLOP/s"].notna().any():
        peaks["TF32 wgmma"] = float(wg["TFLOP/s"].max()) * 1e12
    tf32 = tensor_df[tensor_df["variant"] == "cuBLAS TF32"]
    if len(tf32):
        peaks["TF32 cuBLAS"] = float(tf32["TFLOP/s"].max()) * 1e12
    return Ceilings(bw, peaks, caption(copy_df))


def ceilings_in(run):
    """The ceilings from the rows `run(name)` gives (perflab.run, or a replay): an input of
    another chapter's facts (its report's PAGE_FACTS)."""
    return ceilings_from(run("machine.copy"), run("machine.fma"), run("machine.tensor"))


def ceilings():
    """The measured ceilings (live, or the recorded run), as a roofline.Ceilings."""
    from ... import lab
    return ceilings_from(lab.run("machine.copy"), lab.run("machine.fma"),
                         lab.run("machine.tensor"))


__all__ = ["CHAPTER", "TITLE", "ceilings", "ceilings_from", "ceilings_in", "copy_spec", "fma_spec",
           "mma_spec", "wgmma_spec"]
