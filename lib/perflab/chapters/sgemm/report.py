"""Tables and figures of the SGEMM chapter, computed from the experiment rows."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..plots import stamp

BASELINES = ("cuBLAS FP32", "cuBLAS TF32")


def size_label(M, N, K) -> str:
    return f"{M}³" if M == N == K else f"{M}×{N}×{K}"


def with_size(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["size"] = [size_label(m, n, k) for m, n, k in zip(df["M"], df["N"], df["K"])]
    return df


def correctness_table(df: pd.DataFrame) -> pd.DataFrame:
    """variant × size → relative error (the failing ones marked)."""
    d = with_size(df)
    d = d[d.get("invalid").isna()] if "invalid" in d else d
    cell = [f"{e:.1e}" if ok else ("FAIL" if ok is False else "—")
            for e, ok in zip(d["rel_err"], d["correct"])]
    d = d.assign(cell=cell)
    order = list(dict.fromkeys(d["size"]))
    t = d.pivot_table(index="variant", columns="size", values="cell", aggfunc="first")
    return t[order].fillna("—")


def ratio_table(df: pd.DataFrame) -> pd.DataFrame:
    """variant × size → TFLOP/s and × cuBLAS of the same precision, as text."""
    d = with_size(df)
    order = list(dict.fromkeys(d["size"]))
    def fmt(r):
        if pd.isna(r.get("TFLOP/s")):
            return "—"
        ratio = r.get("vs_cublas_fp32") if r["precision"] == "fp32" else r.get("vs_cublas_tf32")
        return f"{r['TFLOP/s']:.1f}" + ("" if pd.isna(ratio) else f" ({ratio:.2f}×)")
    d = d.assign(cell=[fmt(r) for _, r in d.iterrows()])
    t = d.pivot_table(index="variant", columns="size", values="cell", aggfunc="first")
    return t[order].fillna("—")


def ladder_bars(ax, df: pd.DataFrame, M, N, K, labels: dict):
    """TFLOP/s of every rung at one size, cuBLAS FP32 and TF32 as horizontal lines."""
    d = df[(df["M"] == M) & (df["N"] == N) & (df["K"] == K)]
    rungs = d[~d["variant"].isin(BASELINES) & d["TFLOP/s"].notna()]
    y = np.arange(len(rungs))
    colors = ["C0" if p == "fp32" else "C3" for p in rungs["precision"]]
    ax.barh(y, rungs["TFLOP/s"], xerr=None, color=colors)
    ax.set_yticks(y, [f"{v}  {labels.get(v, '')}" for v in rungs["variant"]], fontsize=8)
    ax.invert_yaxis()
    for base, ls in zip(BASELINES, ("-", "--")):
        val = d.loc[d["variant"] == base, "TFLOP/s"]
        if len(val):
            ax.axvline(val.iloc[0], color="0.2", ls=ls, lw=1.2,
                       label=f"{base}: {val.iloc[0]:.1f} TFLOP/s")
    for yi, (_, r) in zip(y, rungs.iterrows()):
        ax.text(r["TFLOP/s"], yi, f" {r['TFLOP/s']:.1f}", va="center", fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel(f"TFLOP/s at {size_label(M, N, K)} (blue FP32 FFMA, red tensor cores)")
    ax.legend(fontsize=8, loc="upper right")
    return ax


def speed_accuracy(ax, df: pd.DataFrame, M, N, K):
    """Relative error against TFLOP/s at one size: the price of tensor cores."""
    d = df[(df["M"] == M) & (df["N"] == N) & (df["K"] == K) & df["TFLOP/s"].notna()]
    fp32_rungs = d[(d["precision"] == "fp32") & ~d["variant"].isin(BASELINES)]
    for _, r in d.iterrows():
        style = "s" if r["variant"] in BASELINES else "o"
        ax.plot(r["TFLOP/s"], r["rel_err"], style, ms=6,
                color="0.3" if r["variant"] in BASELINES else
                ("C0" if r["precision"] == "fp32" else "C3"))
        if r["variant"] in fp32_rungs["variant"].values:
            continue        # FP32 rungs share one error: labelled once, below
        ax.annotate(r["variant"], (r["TFLOP/s"], r["rel_err"]), fontsize=7,
                    textcoords="offset points", xytext=(4, 3))
    if len(fp32_rungs):
        first = fp32_rungs.loc[fp32_rungs["TFLOP/s"].idxmin()]
        ax.annotate(f"FP32 rungs {fp32_rungs['variant'].iloc[0][:2]}–"
                    f"{fp32_rungs['variant'].iloc[-1][:2]}", (first["TFLOP/s"], first["rel_err"]),
                    fontsize=7, textcoords="offset points", xytext=(4, 4))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("TFLOP/s")
    ax.set_ylabel("relative error ‖C − C₆₄‖ / ‖C₆₄‖")
    ax.grid(True, which="both", alpha=0.3)
    return ax


def sweep_heatmap(fig, ax, df: pd.DataFrame, variant: str, row_keys, col_keys):
    """TFLOP/s of every swept configuration of `variant`; blank = invalid or not run."""
    d = df[df["variant"] == variant].copy()
    d["row"] = [" ".join(f"{k}={_fmt(r[k])}" for k in row_keys) for _, r in d.iterrows()]
    d["col"] = [" ".join(f"{k}={_fmt(r[k])}" for k in col_keys) for _, r in d.iterrows()]
    t = d.pivot_table(index="row", columns="col", values="TFLOP/s", aggfunc="max")
    im = ax.imshow(t.values, cmap="viridis", aspect="auto")
    ax.set_xticks(range(t.shape[1]), t.columns, rotation=45, ha="right", fontsize=7)
    ax.set_yticks(range(t.shape[0]), t.index, fontsize=7)
    for i in range(t.shape[0]):
        for j in range(t.shape[1]):
            v = t.values[i, j]
            if np.isfinite(v):
                ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=7, color="w")
    fig.colorbar(im, ax=ax, label="TFLOP/s")
    return t


def _fmt(x):
    return int(x) if isinstance(x, float) and x.is_integer() else x


__all__ = ["correctness_table", "ratio_table", "ladder_bars", "speed_accuracy",
           "sweep_heatmap", "size_label", "with_size", "stamp"]


def last_wave(launch_06: list, launch_07: list, sms: int) -> dict:
    """From the recorded launches of 06 and of 07's last-wave split on one problem: the
    tiles, how many waves of `sms` x blocks-per-SM they make, and the split (tail tiles,
    slices). 07's grid is full + tail * S blocks and its reduction grid is (., tail)."""
    first = launch_06[0]
    tiles, per_sm = first["grid"][0], first["blocks_per_sm"]
    out = {"tiles": tiles, "waves": tiles / (per_sm * sms), "tail": 0, "slices": 1}
    if len(launch_07) == 2:                       # the split kernel, then the reduction
        tail = launch_07[1]["grid"][1]
        out.update(tail=tail, slices=(launch_07[0]["grid"][0] - tiles) // tail + 1)
    return out
