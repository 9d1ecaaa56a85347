"""The machine chapter's run labels and targets, computed from the rows (live or recorded):
the prose quotes only what these return."""
from __future__ import annotations

import pandas as pd


def run_label(df: pd.DataFrame) -> str:
    """"recorded run b215aeb33ce8" or "live run …": the run a finding comes from, as the
    figure's stamp names it."""
    s = df.attrs.get("source", {})
    kind = "live" if s.get("kind") == "live" else "recorded"
    runs = ", ".join(s.get("run_ids", [])) or "?"
    return f"{kind} run {runs}"


def targets(copy: pd.DataFrame, fma: pd.DataFrame, tensor: pd.DataFrame, sheet: dict) -> pd.DataFrame:
    """What the chapter set out to show, against what the rows say."""
    frames = [copy, fma, tensor]
    checked = sum(int(f["correct"].notna().sum()) for f in frames if "correct" in f)
    failed = sum(int((f["correct"] == False).sum()) for f in frames if "correct" in f)  # noqa: E712
    copy_frac = float(copy["TB/s"].max()) * 1e12 / sheet["dram_Bps"]
    fma_frac = float(fma["TFLOP/s"].max()) * 1e12 / sheet["fp32_flops"]
    one = fma[fma["occupancy"] == "1 warp/scheduler"].set_index("chains")["TFLOP/s"]
    one_chain = float(one.loc[1] / one.max()) if len(one) and 1 in one.index else float("nan")
    rows = [
        ("best copy / interface peak", copy_frac, 0.80, copy_frac >= 0.80),
        ("best FFMA rate / datasheet FP32 rate", fma_frac, 0.90, fma_frac >= 0.90),
        ("1 warp per scheduler: 1 chain / best (about 1 / latency)", one_chain, 0.35,
         one_chain <= 0.35),
        (f"rows checked before timing ({checked}); failed", failed, 0, failed == 0),
    ]
    return pd.DataFrame(rows, columns=["target", "measured", "needed", "met"])
