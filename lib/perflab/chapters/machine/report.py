"""The machine chapter's facts, section by section, and its targets, computed from the rows
(live or recorded): the prose quotes only what these return (PAGE_FACTS), the targets
table reads them (TARGETS)."""
from __future__ import annotations

import pandas as pd

from ... import plots, roofline
from ...device import fp32_peak_flops
from ...targets import Target
from . import diagrams


def run_label(df: pd.DataFrame) -> str:
    """"recorded run b215aeb33ce8" or "live run …": the run a finding comes from, as the
    figure's stamp names it."""
    s = df.attrs.get("source", {})
    kind = "live" if s.get("kind") == "live" else "recorded"
    runs = ", ".join(s.get("run_ids", [])) or "?"
    return f"{kind} run {runs}"


# ---- every number the prose quotes, section by section -------------------------------------

def device_facts(copy: pd.DataFrame) -> dict:
    """Whether the page measured live or replayed, and on which device."""
    live = copy.attrs.get("source", {}).get("kind") == "live"
    return {"mode": "live" if live else "replay", "device": plots.device_of(copy)["name"]}


def copy_facts(copy: pd.DataFrame) -> dict:
    """The copy bandwidth: the interface's peak from the device's attributes, the best copy
    of the run (its way and size) and the lab's own kernel's best."""
    sheet = plots.datasheet(plots.device_of(copy))
    best = copy.loc[copy["TB/s"].idxmax()]
    return {"dram_peak": sheet["dram_Bps"] / 1e12, "copy_best": float(best["TB/s"]),
            "copy_best_way": best["variant"], "copy_best_gib": float(best["bytes"]) / 2**30,
            "copy_frac": float(best["TB/s"]) * 1e12 / sheet["dram_Bps"] * 100,
            "copy_kernel_best": float(copy[copy["variant"] == "kernel-vec4"]["TB/s"].max())}


def fma_facts(fma: pd.DataFrame) -> dict:
    """FP32 FMA: the latency the one-warp rows imply and the FMAs in flight it asks for, the
    best configuration against the datasheet rate (at the maximum clock and at the clock
    read after the run), and a single chain against its occupancy's best."""
    dev = plots.device_of(fma)
    sheet = plots.datasheet(dev)
    pipe = diagrams.latency_from_rows(fma, dev)
    best = fma.loc[fma["TFLOP/s"].idxmax()]
    one_warp = fma[fma["occupancy"] == "1 warp/scheduler"].set_index("chains")["TFLOP/s"]
    full = fma[fma["occupancy"] == "full"].set_index("chains")["TFLOP/s"]
    clk = best["sm_clock_after_mhz"]
    at_clock = fp32_peak_flops(dev, clk) / 1e12
    return {
        "lat_cycles": pipe["cycles_per_dependent"], "lat_L": pipe["L"], "lat_drawn": 4 * pipe["L"],
        "lat_inflight_gpu": int(diagrams.in_flight(pipe["L"], pipe["issue_rate"])
                                * diagrams.SCHEDULERS * dev["sms"] * diagrams.WARP),
        "fma_best": best["TFLOP/s"], "fma_best_chains": int(best["chains"]),
        "fma_best_occ": best["occupancy"], "fp32_sheet": sheet["fp32_flops"] / 1e12,
        "fma_frac": best["TFLOP/s"] * 1e12 / sheet["fp32_flops"] * 100,
        "fma_1chain_frac": one_warp.loc[1] / one_warp.max() * 100,
        "sm_clock": dev["sm_clock_max_mhz"], "fma_clock_after": clk, "fp32_at_clock": at_clock,
        "fma_frac_at_clock": best["TFLOP/s"] / at_clock * 100,
        "fma_full1_frac": full.loc[1] / full.max() * 100}


def tensor_facts(tensor: pd.DataFrame) -> dict:
    """The three TF32 ceilings: mma.sync with its operands in registers, wgmma with nothing
    to load, cuBLAS on a large product (and cuBLAS in FP32 mode)."""
    mma = tensor[tensor["variant"].str.startswith("mma.sync")]
    blas = tensor[tensor["variant"].str.startswith("cuBLAS")]
    tf32 = blas.loc[blas["variant"] == "cuBLAS TF32", "TFLOP/s"].max()
    wg = tensor[tensor["variant"].str.startswith("wgmma")]
    wg_best = wg["TFLOP/s"].max() if "TFLOP/s" in wg else float("nan")
    return {"mma_best": mma["TFLOP/s"].max(), "cublas_tf32": tf32,
            "cublas_fp32": blas.loc[blas["variant"] == "cuBLAS FP32", "TFLOP/s"].max(),
            "gemm_n": int(blas["size"].max()), "mma_vs_cublas": mma["TFLOP/s"].max() / tf32 * 100,
            "wgmma_best": wg_best, "cublas_vs_wgmma": tf32 / wg_best * 100}


def roofline_facts(copy: pd.DataFrame, fma: pd.DataFrame, tensor: pd.DataFrame) -> dict:
    """The FP32 ridge of the measured roofs, and a 4096³ SGEMM's intensity."""
    from . import ceilings_from
    return {"ridge_fp32": ceilings_from(copy, fma, tensor).ridge("FP32 FMA"),
            "sgemm_ai": roofline.gemm_intensity(4096, 4096, 4096)}


def run_facts(copy: pd.DataFrame, fma: pd.DataFrame, tensor: pd.DataFrame) -> dict:
    """The run each finding comes from, and the checks of all three runs."""
    frames = [copy, fma, tensor]
    return {"run_copy": run_label(copy), "run_fma": run_label(fma), "run_tensor": run_label(tensor),
            "n_checked": sum(int(f["correct"].notna().sum()) for f in frames if "correct" in f),
            "n_failed": sum(int((f["correct"] == False).sum())  # noqa: E712
                            for f in frames if "correct" in f)}


_RUNS = ("machine.copy", "machine.fma", "machine.tensor")
#: the page's facts: (function, the experiments whose rows it takes, in order)
PAGE_FACTS = {"00-machine": ((device_facts, ("machine.copy",)), (copy_facts, ("machine.copy",)),
                             (fma_facts, ("machine.fma",)), (tensor_facts, ("machine.tensor",)),
                             (roofline_facts, _RUNS), (run_facts, _RUNS))}

#: what the chapter set out to show, against what the rows say
TARGETS = {"00-machine": (
    Target("best copy / interface peak", "copy_frac", at_least=0.80, scale=0.01, digits=3),
    Target("best FFMA rate / datasheet FP32 rate", "fma_frac", at_least=0.90, scale=0.01,
           digits=3),
    Target("1 warp per scheduler: 1 chain / best (about 1 / latency)", "fma_1chain_frac",
           at_most=0.35, scale=0.01, digits=3),
    Target("rows checked before timing ({n_checked}); failed", "n_failed", at_most=0, digits=0),
)}
