"""Tables, figures and quoted numbers of the SGEMM chapter, computed from the rows: the
prose quotes only what the `*_facts` functions return, one for each section (PAGE_FACTS);
the targets are data (TARGETS)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ... import plots, sidebyside
from ...plots import COLORS, label_points
from ...targets import Target
from .. import machine

BASELINES = ("cuBLAS FP32", "cuBLAS TF32")
#: The Hopper rungs (wgmma + TMA), present where they ran (compute capability 9.x).
HOPPER = "10-wgmma-tma"
HOPPER_3X = "12-3xtf32-wgmma"


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


def x_cublas(r) -> float:
    """A rung's ratio to cuBLAS of its precision (TF32 for the tensor-core rungs), measured
    interleaved in its run: comparable between GPUs, each against its own cuBLAS."""
    v = r.get("vs_cublas_fp32") if r["precision"] == "fp32" else r.get("vs_cublas_tf32")
    return float("nan") if v is None or pd.isna(v) else float(v)


#: The column of ratio_table that says why a rung did not run on this GPU.
NOT_RUN_COLUMN = "not run on this GPU"


def ratio_table(df: pd.DataFrame) -> pd.DataFrame:
    """variant × size → TFLOP/s and × cuBLAS of the same precision, as text. Live on a GPU
    that cannot run a rung, its cells are the reference GPU's recorded ones, marked, and a
    last column says why (sidebyside.fill_not_run)."""
    d = with_size(sidebyside.fill_not_run(df))
    order = list(dict.fromkeys(d["size"]))
    borrowed = {b["slug"]: sidebyside.short_name(b["device"]) for b in d.attrs.get("borrowed", [])}

    def fmt(r):
        if pd.isna(r.get("TFLOP/s")):
            return "—"
        ratio = x_cublas(r)
        text = f"{r['TFLOP/s']:.1f}" + ("" if pd.isna(ratio) else f" ({ratio:.2f}×)")
        if borrowed and pd.notna(r.get("not_run_reason")):
            text += f", recorded on {borrowed.get(r['measured_on'], r['measured_on'])}"
        return text
    d = d.assign(cell=[fmt(r) for _, r in d.iterrows()])
    t = d.pivot_table(index="variant", columns="size", values="cell", aggfunc="first")
    t = t[order].fillna("—")
    if borrowed:
        why = sidebyside.not_run(d).groupby("variant")["not_run_reason"].first()
        t[NOT_RUN_COLUMN] = [why.get(v, "—") for v in t.index]
    return t


def ladder_bars(ax, df: pd.DataFrame, M, N, K, labels: dict):
    """TFLOP/s of every rung at one size, cuBLAS FP32 and TF32 as horizontal lines."""
    d = df[(df["M"] == M) & (df["N"] == N) & (df["K"] == K)]
    rungs = d[~d["variant"].isin(BASELINES) & d["TFLOP/s"].notna()]
    y = np.arange(len(rungs))
    colors = [COLORS["fp32"] if p == "fp32" else COLORS["tf32"] for p in rungs["precision"]]
    ax.barh(y, rungs["TFLOP/s"], xerr=None, color=colors)
    # the rung's number and what it does: the labels and the bars fit in 7.5 inches
    ax.set_yticks(y, [f"{v.split('-')[0]}  {labels.get(v, v)}" for v in rungs["variant"]],
                  fontsize=9)
    ax.figure.subplots_adjust(left=0.47, right=0.98)
    ax.invert_yaxis()
    for base, ls in zip(BASELINES, ("-", "--")):
        val = d.loc[d["variant"] == base, "TFLOP/s"]
        if len(val):
            ax.axvline(val.iloc[0], color=COLORS[base], ls=ls, lw=1.2,
                       label=f"{base}: {val.iloc[0]:.1f} TFLOP/s")
    for yi, (_, r) in zip(y, rungs.iterrows()):
        # a white ground, so that a baseline's line never runs through the number
        ax.text(r["TFLOP/s"] * 1.06, yi, f"{r['TFLOP/s']:.1f}", va="center", fontsize=9,
                bbox=dict(facecolor="white", edgecolor="none", pad=0.6), zorder=3)
    ax.set_xscale("log")
    ax.set_xlim(right=float(d["TFLOP/s"].max()) * 1.8)    # room for the last value
    ax.set_xlabel(f"TFLOP/s at {size_label(M, N, K)} (blue FP32 FFMA, red tensor cores)")
    # above the bars, not over them
    ax.legend(fontsize=9, loc="lower left", bbox_to_anchor=(0, 1.0), ncol=1, frameon=False)
    return ax


def ladder_beside(ax, live: pd.DataFrame, ref: pd.DataFrame, M, N, K, labels: dict) -> list:
    """Every rung at one size as a fraction of each GPU's own cuBLAS of the same precision
    (× cuBLAS, timed interleaved in the same run): this GPU's bar (solid) above the
    reference GPU's recorded one (hatched; plots.bars_beside). A rung this GPU could not
    run keeps its place, the reason (`live` from sidebyside.fill_not_run) beside the
    recorded bar. Returns the rungs drawn."""
    from ...plots import bars_beside
    from . import variants

    def at_size(d):
        d = d[(d["M"] == M) & (d["N"] == N) & (d["K"] == K) & ~d["variant"].isin(BASELINES)]
        return {r["variant"]: r for _, r in d.iterrows()}

    here, there = at_size(live), at_size(ref)
    ratio = lambda rows, v: x_cublas(rows[v]) if v in rows else np.nan
    names = [v.name for v in variants()
             if np.isfinite(ratio(here, v.name)) or np.isfinite(ratio(there, v.name))]
    rows = []
    for v in names:
        r, mine = here.get(v), ratio(here, v)
        if r is not None and pd.notna(r.get("not_run_reason")):    # the recorded row
            note, mine = f"not run here: {r['not_run_short']}", np.nan
        elif r is not None and r.get("correct") is False:
            note = "failed its check here"
        else:
            note = "not timed here"
        precision = (r if r is not None else there[v])["precision"]
        rows.append((f"{v.split('-')[0]}  {labels.get(v, v)}", mine, ratio(there, v),
                     COLORS["fp32" if precision == "fp32" else "tf32"], note))
    bars_beside(ax, rows, here=sidebyside.label(live), there=sidebyside.label(ref), log=True,
                line=(1.0, "cuBLAS of the same precision on each GPU (= 1)"),
                xlabel=f"× cuBLAS of the same precision at {size_label(M, N, K)}, each GPU's "
                       "own\n(blue FP32 FFMA, red tensor cores)")
    ax.figure.subplots_adjust(left=0.47, right=0.98)
    return names


def ladder_figure(ladder: pd.DataFrame, labels: dict, M=3072, N=3072, K=3072):
    """The ladder at a glance, as the page shows it, with its stamp. Replayed (or live on
    the reference GPU): every rung's TFLOP/s, cuBLAS as lines (ladder_bars). Live on
    another GPU: every rung against each GPU's own cuBLAS, this GPU beside the recorded one
    (ladder_beside), a rung this GPU cannot run shown from the recording with the reason;
    the stamp names both sources."""
    import matplotlib.pyplot as plt

    from ...plots import stamp

    frames = sidebyside.beside(ladder)
    if len(frames) == 1:
        fig, ax = plt.subplots(figsize=(7.5, 3.4))
        ladder_bars(ax, ladder, M, N, K, labels)
        stamp(fig, ladder)
        return fig
    live, ref = sidebyside.fill_not_run(ladder, frames[1]), frames[1]
    n = len((set(ref["variant"]) | set(live["variant"])) - set(BASELINES))
    fig, ax = plt.subplots(figsize=(7.5, 1.3 + 0.34 * n))
    ladder_beside(ax, live, ref, M, N, K, labels)
    stamp(fig, live, ref)
    return fig


def speed_accuracy(ax, df: pd.DataFrame, M, N, K):
    """Relative error against TFLOP/s at one size: the price of tensor cores. The FP32
    rungs share one error and are labelled once; no two labels overlap."""
    d = df[(df["M"] == M) & (df["N"] == N) & (df["K"] == K) & df["TFLOP/s"].notna()]
    fp32_rungs = d[(d["precision"] == "fp32") & ~d["variant"].isin(BASELINES)]
    points = []
    for _, r in d.iterrows():
        base = r["variant"] in BASELINES
        color = COLORS.get(r["variant"]) if base else COLORS["fp32" if r["precision"] == "fp32" else "tf32"]
        ax.plot(r["TFLOP/s"], r["rel_err"], "s" if base else "o", ms=6, color=color)
        if r["variant"] not in fp32_rungs["variant"].values:
            points.append((r["TFLOP/s"], r["rel_err"],
                           r["variant"] if base else r["variant"].split("-")[0]))
    if len(fp32_rungs):
        first = fp32_rungs.loc[fp32_rungs["TFLOP/s"].idxmin()]
        points.append((first["TFLOP/s"], first["rel_err"],
                       f"FP32 rungs {fp32_rungs['variant'].iloc[0][:2]}–"
                       f"{fp32_rungs['variant'].iloc[-1][:2]}"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("TFLOP/s")
    ax.set_ylabel("relative error ‖C − C₆₄‖ / ‖C₆₄‖")
    ax.grid(True, which="both", alpha=0.3)
    lo, hi = float(d["rel_err"].min()), float(d["rel_err"].max())
    ax.set_ylim(lo / 2.5, hi * 6)          # room for the labels above the highest points
    label_points(ax, points, fontsize=9)
    ax.text(0.99, 0.02, "red: tensor-core rungs, by number", transform=ax.transAxes,
            ha="right", va="bottom", fontsize=9, color=COLORS["tf32"])
    return ax


def splitk_curve(ax, splitk: pd.DataFrame, M=128, N=128, K=32768):
    """Time against the number of K slices for each split-K rung (07 FP32 FFMA, 11 TF32
    tensor cores): the best over BK and stages per slice count, the range of those
    configurations as a band, the automatic choice, and cuBLAS FP32 and TF32."""
    size = (splitk["M"] == M) & (splitk["N"] == N) & (splitk["K"] == K)
    for variant, color, label in (("07-split-k", COLORS["fp32"], "07 (FP32)"),
                                  ("11-tf32-split-k", COLORS["tf32"], "11 (TF32)")):
        d = splitk[(splitk["variant"] == variant) & size]
        if "median_ms" not in d or d["median_ms"].isna().all():
            continue
        us = d.assign(us=d["median_ms"] * 1e3)
        fixed = us[us["slices"] > 0].groupby("slices")["us"].agg(["min", "max"]).sort_index()
        ax.fill_between(fixed.index, fixed["min"], fixed["max"], color=color, alpha=0.2)
        ax.plot(fixed.index, fixed["min"], "o-", color=color,
                label=f"{label}: best BK × stages")
        auto = us[us["slices"] == 0]["us"]
        if len(auto):
            ax.axhline(auto.min(), color=color, ls=":", lw=1.2,
                       label=f"{label[:2]}, slices chosen for you: {auto.min():.0f} µs")
    for base in BASELINES:
        t = at(splitk, base, M, N, K, "median_ms") * 1e3
        if np.isfinite(t):
            ax.axhline(t, color=COLORS[base], ls="--", lw=1.2, label=f"{base}: {t:.0f} µs")
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 3, 5)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("K slices (blocks per output tile)")
    ax.set_ylabel("µs per call")
    ax.legend(fontsize=9, ncol=1, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              frameon=False, title="band: every BK × stages", title_fontsize=9)
    return ax


def chunk_table(chunks: pd.DataFrame) -> pd.DataFrame:
    """Rung 12 by accumulation chunk: the k values summed into one fresh partial (all of K
    for chunk 0), the error against cuBLAS FP32's on the same inputs, and the speed."""
    d = chunks[(chunks["variant"] == HOPPER_3X) & chunks["correct"].fillna(False).astype(bool)]
    if not len(d):
        return pd.DataFrame(columns=["chunk", "k_per_partial", "rel_err", "err_x", "TFLOP/s",
                                     "x", "x_min", "x_max"])
    r = d.iloc[0]
    fp32_err = at(chunks, "cuBLAS FP32", r["M"], r["N"], r["K"], "rel_err")
    out = pd.DataFrame({
        "chunk": d["chunk"].astype(int),
        "k_per_partial": [int(k if c == 0 else 32 * c) for c, k in zip(d["chunk"], d["K"])],
        "rel_err": d["rel_err"], "err_x": d["rel_err"] / fp32_err,
        "TFLOP/s": d.get("TFLOP/s"), "x": d.get("vs_cublas_fp32"),
        "x_min": d.get("vs_cublas_fp32_min"), "x_max": d.get("vs_cublas_fp32_max")})
    return out.sort_values("k_per_partial").reset_index(drop=True)


def chunk_facts(chunks: pd.DataFrame, default_chunk: int | None = None) -> dict:
    """The numbers the rung-12 prose quotes from the chunk experiment (sgemm.chunks): the
    rung's default chunk (`default_chunk`, its parameters' where None) in k values, the
    chained error, what the fresh partials cost, and the longest partial whose error is
    within the 3xTF32 error target (X3_ERR)."""
    if default_chunk is None:
        from . import get
        default_chunk = get(HOPPER_3X).params()["chunk"]
    t = chunk_table(chunks).set_index("chunk")
    get_ = lambda c, col: float(t.loc[c, col]) if c in t.index else float("nan")  # noqa: E731
    g = {"ch_default_k": get_(default_chunk, "k_per_partial"), "ch0_err_x": get_(0, "err_x"),
         "ch_fresh_cost": (1 - get_(default_chunk, "TFLOP/s") / get_(0, "TFLOP/s")) * 100}
    within = t[(t.index > 0) & (t["err_x"] <= X3_ERR.at_most)]
    g["ch_longest_ok_k"] = float(within["k_per_partial"].max()) if len(within) else float("nan")
    return g


def chunk_curves(axes, chunks: pd.DataFrame):
    """Rung 12 against the k values per fresh partial: error as a multiple of cuBLAS FP32's
    (left) and speed as a multiple of cuBLAS FP32's (right, the bar spans the rounds); the
    targets dashed."""
    t = chunk_table(chunks)
    if not len(t):
        return axes
    x = t["k_per_partial"]
    ax = axes[0]
    ax.plot(x, t["err_x"], "o-", color=COLORS["tf32"], label="12, 3xTF32 on wgmma")
    ax.axhline(1.0, color=COLORS["cuBLAS FP32"], lw=1.2, label="cuBLAS FP32 (= 1)")
    ax.axhline(X3_ERR.at_most, color="0.4", ls="--", lw=1,
               label=f"target: at most {X3_ERR.at_most:g}×")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("k values summed in one fresh partial")
    ax.set_ylabel("error / cuBLAS FP32's")
    ax.legend(fontsize=9, loc="upper left", frameon=False)
    ax = axes[1]
    err = np.vstack([t["x"] - t["x_min"], t["x_max"] - t["x"]])
    ax.errorbar(x, t["x"], yerr=err, fmt="o-", color=COLORS["tf32"], capsize=3,
                label="12 (bar: lowest to highest round)")
    ax.axhline(X3_SPEED.at_least, color="0.4", ls="--", lw=1,
               label=f"target: at least {X3_SPEED.at_least:g}×")
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, max(3.0, float(t["x_max"].max()) * 1.1))
    ax.set_xlabel("k values summed in one fresh partial")
    ax.set_ylabel("speed / cuBLAS FP32's")
    ax.legend(fontsize=9, loc="lower right", frameon=False)
    return axes


def sweep_heatmap(fig, ax, df: pd.DataFrame, variant: str, row_keys, col_keys):
    """TFLOP/s of every swept configuration of `variant`, its number in each cell (black on
    light cells, white on dark); rows and columns in numeric order; blank = invalid or not
    run. Rows are labelled by their values joined with × (the keys name the axis)."""
    d = df[df["variant"] == variant].copy()
    d["row"] = [tuple(r[k] for k in row_keys) for _, r in d.iterrows()]
    d["col"] = [tuple(r[k] for k in col_keys) for _, r in d.iterrows()]
    t = d.pivot_table(index="row", columns="col", values="TFLOP/s", aggfunc="max")
    t = t.sort_index().sort_index(axis=1)
    im = ax.imshow(t.values, cmap="viridis", aspect="auto")
    ax.set_xticks(range(t.shape[1]),
                  ["\n".join(f"{k}={_fmt(v)}" for k, v in zip(col_keys, c)) for c in t.columns],
                  fontsize=9)
    ax.set_yticks(range(t.shape[0]), ["×".join(str(_fmt(v)) for v in r) for r in t.index], fontsize=9)
    ax.set_ylabel("×".join(row_keys), fontsize=9)
    norm = im.norm
    for i in range(t.shape[0]):
        for j in range(t.shape[1]):
            v = t.values[i, j]
            if np.isfinite(v):
                ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=9,
                        color="black" if norm(v) > 0.5 else "white")
    t.index = ["×".join(str(_fmt(v)) for v in r) for r in t.index]
    return t


def _fmt(x):
    return int(x) if isinstance(x, float) and x.is_integer() else x


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


# ------------------------------------------------------------------ numbers for the prose

def at(df: pd.DataFrame, variant: str, M, N, K, col: str = "TFLOP/s") -> float:
    """One value of one row (NaN when that row or value was not measured)."""
    sel = df[(df["variant"] == variant) & (df["M"] == M) & (df["N"] == N) & (df["K"] == K)]
    return float(sel[col].iloc[0]) if len(sel) and col in sel else float("nan")


def best_fp32(ladder: pd.DataFrame, M, N, K):
    """(variant, TFLOP/s, × cuBLAS FP32) of the fastest FFMA rung at one size."""
    d = ladder[(ladder["precision"] == "fp32") & ~ladder["variant"].isin(BASELINES)
               & (ladder["M"] == M) & (ladder["N"] == N) & (ladder["K"] == K)]
    r = d.loc[d["TFLOP/s"].idxmax()]
    return r["variant"], float(r["TFLOP/s"]), float(r["vs_cublas_fp32"])


def profiled(prof: pd.DataFrame):
    """pv(variant, column, M=4096): one counter of the profiled run (NaN if absent)."""
    p = prof.set_index(["variant", "M"])

    def pv(v, col, M=4096):
        try:
            return float(p.loc[(v, M), col])
        except KeyError:
            return float("nan")
    return pv


def chain_lengths(ladder: pd.DataFrame, variant: str = "09-3xtf32") -> pd.DataFrame:
    """Rung 09's error against the length of its accumulation chains: split-K launches one
    block per K slice along grid z, so a chain is K / slices long."""
    e3 = ladder[(ladder["variant"] == variant) & ladder["rel_err"].notna()
                & ladder["launch"].notna()][["M", "N", "K", "rel_err"]].copy()
    slices = [max([g["grid"][2] if len(g["grid"]) > 2 else 1 for g in l] or [1])
              for l in ladder.loc[e3.index, "launch"]]
    e3["chain"] = [int(k // s) for k, s in zip(e3["K"], slices)]
    e3["per_k"] = e3["rel_err"] / e3["chain"]
    return e3.sort_values("chain")


#: Published figures the chapter compares with (typed from the sources, not measured here):
#: the RTX 4000 Ada portfolio (ada-portfolio in references.bib) at 3072^3: 32x32
#: shared-memory tiles 27.12 ms, register tiles 7.19 ms; split-K 28.87x on its 48 SMs;
#: relative error FP32 1.03e-6, TF32 7.78e-4. Qadri's case study (qadri-sgemm): the
#: naive kernel at 1024^3 on a T4, 332.88 GFLOP/s, against 0.25 FLOP/B x 320 GB/s.
PUBLISHED = {"ada_tiled_ms": 27.12, "ada_reg_ms": 7.19, "ada_splitk_x": 28.87,
             "ada_err_fp32": 1.03e-6, "ada_err_tf32": 7.78e-4,
             "qadri_naive_above": 332.88 / (0.25 * 320)}


def _peaks(ceil) -> tuple[float, float, float]:
    """(FP32 FMA, TF32 mma.sync, TF32 wgmma) ceilings in TFLOP/s (wgmma: NaN where it was
    not measured)."""
    p = ceil.peaks_flops
    return (p["FP32 FMA"] / 1e12, p["TF32 mma.sync"] / 1e12,
            p.get("TF32 wgmma", float("nan")) / 1e12)


def ladder_facts(ladder: pd.DataFrame, ceil) -> dict:
    """The ladder at a glance (sgemm.ladder): the checks, and the best FP32 rung at the three
    squares against cuBLAS FP32 (the rounds' spread) and the machine chapter's FMA ceiling;
    the measured ceilings."""
    fma_peak, mma_peak, wgmma_peak = _peaks(ceil)
    g = {"fma_peak": fma_peak, "mma_peak": mma_peak, "wgmma_peak": wgmma_peak}
    g["n_checked"] = int(ladder["correct"].notna().sum())
    g["n_failed"] = int((ladder["correct"] == False).sum())  # noqa: E712
    for n in (3072, 4096, 8192):
        v, t, x = best_fp32(ladder, n, n, n)
        _, lo, hi = spread(ladder, v, n, n, n, "fp32")
        g.update({f"best_fp32_{n}_tf": t, f"best_fp32_{n}_x": x, f"best_fp32_{n}_x_lo": lo,
                  f"best_fp32_{n}_x_hi": hi})
    g["best_fp32_8192"] = best_fp32(ladder, 8192, 8192, 8192)[0]
    g["best_fp32_8192_peak"] = g["best_fp32_8192_tf"] / fma_peak * 100
    g["cublas_fp32_3072"] = at(ladder, "cuBLAS FP32", 3072, 3072, 3072)
    g["cublas_fp32_8192"] = at(ladder, "cuBLAS FP32", 8192, 8192, 8192)
    g["cublas_fp32_8192_peak"] = g["cublas_fp32_8192"] / fma_peak * 100
    return g


def rung_facts(ladder: pd.DataFrame, prof: pd.DataFrame) -> dict:
    """Rungs 01 to 06 at 3072³ (sgemm.ladder) and the profiler's counters at 4096³
    (sgemm.profile), with the published figures the prose compares them with, and the
    device's SMs and L2."""
    dev = plots.device_of(ladder)
    g = {"gflop_4096": 2 * 4096**3 / 1e9, "mb_4096": 4 * 3 * 4096**2 / 1e6,
         "sms": int(dev["sms"]), "l2_mib": int(dev["l2_bytes"]) / 2**20, **PUBLISHED}
    g["ada_reg_x"] = PUBLISHED["ada_tiled_ms"] / PUBLISHED["ada_reg_ms"]
    s = (3072, 3072, 3072)
    for rung in ("01-naive", "02-coalesced", "03-smem-tiling", "04-register-tiling",
                 "05-occupancy", "06-warptiling"):
        g[f"t{rung[:2]}"] = at(ladder, rung, *s)
    for rung in ("03-smem-tiling", "04-register-tiling"):
        g[f"t{rung[:2]}_ms"] = at(ladder, rung, *s, "median_ms")
    g["coalesce_gain"] = g["t02"] / g["t01"]
    g["smem_gain"] = g["t03"] / g["t02"]
    g["reg_vs_smem"] = g["t04"] / g["t03"]
    g["occ_gain"] = g["t05"] / g["t04"]
    g["warp_gain"] = g["t06"] / g["t05"]
    pv = profiled(prof)
    g.update(
        naive_structural_gb=2 * 4096**3 * 4 / 1e9,
        naive_dram_gb=pv("02-coalesced", "dram_read_MB") / 1e3,
        naive_l2_gb=pv("02-coalesced", "l2_MB") / 1e3,
        s01_sectors=pv("01-naive", "gld_sectors_per_request"),
        s02_sectors=pv("02-coalesced", "gld_sectors_per_request"),
        s03_mio=pv("03-smem-tiling", "stall_mio_throttle"),
        s04_mio=pv("04-register-tiling", "stall_mio_throttle"),
        s03_conf=pv("03-smem-tiling", "smem_ld_bank_conflicts")
        / max(pv("03-smem-tiling", "smem_ld_wavefronts"), 1) * 100,
        s04_occ=pv("04-register-tiling", "achieved_occupancy_pct"),
        s04_short=pv("04-register-tiling", "stall_short_scoreboard"),
        s04_fma=pv("04-register-tiling", "fma_pipe_pct"),
        s05_fma=pv("05-occupancy", "fma_pipe_pct"),
        s05_occ=pv("05-occupancy", "achieved_occupancy_pct"),
        s06_fma=pv("06-warptiling", "fma_pipe_pct"),
        s06_issue=pv("06-warptiling", "issue_active_pct"),
        cublas_occ=pv("cuBLAS FP32", "achieved_occupancy_pct"),
        cublas_fma=pv("cuBLAS FP32", "fma_pipe_pct"))
    return g


#: a fact of a rung this GPU did not run (its check refused it): not a number
NAN = float("nan")
#: The skinny problem the split-K rungs are timed on.
SKINNY = (128, 128, 32768)


def splitk_facts(ladder: pd.DataFrame, splitk: pd.DataFrame, prof: pd.DataFrame) -> dict:
    """Rung 07: split-K on the skinny problem against rung 06 and cuBLAS FP32 (the
    ladder's rounds, with their spread), the best of the slice sweep (sgemm.splitk), the
    profiler's durations and SM throughput, and the last wave of 3072³ it splits."""
    sk, sms = SKINNY, int(plots.device_of(ladder)["sms"])
    t06, t07 = at(ladder, "06-warptiling", *sk, "median_ms"), at(ladder, "07-split-k", *sk, "median_ms")
    tcb = at(ladder, "cuBLAS FP32", *sk, "median_ms")
    g = dict(sk_t06=t06 * 1e3, sk_t07=t07 * 1e3, sk_cublas=tcb * 1e3, sk_gain=t06 / t07,
             sk_vs_cublas=at(ladder, "07-split-k", *sk, "vs_cublas_fp32"))
    _, g["sk_vs_cublas_lo"], g["sk_vs_cublas_hi"] = spread(ladder, "07-split-k", *sk, "fp32")
    d = splitk[(splitk["variant"] == "07-split-k") & splitk["median_ms"].notna()]
    best = d.loc[d["median_ms"].idxmin()] if len(d) else None    # (none: 07 refused here)
    g["sk_best_us"] = float(best["median_ms"]) * 1e3 if best is not None else NAN
    g["sk_best_slices"] = ("—" if best is None else
                           "automatic" if int(best["slices"]) == 0 else str(int(best["slices"])))
    g["sk_sweep_cublas"] = at(splitk, "cuBLAS FP32", *sk, "median_ms") * 1e3

    def row(v):
        sel = ladder[(ladder["variant"] == v) & (ladder["M"] == 3072) & (ladder["N"] == 3072)
                     & (ladder["K"] == 3072) & ladder["TFLOP/s"].notna()]
        return sel.iloc[0] if len(sel) else None
    r06, r07 = row("06-warptiling"), row("07-split-k")
    if r06 is not None and r07 is not None:
        lw = last_wave(r06["launch"], r07["launch"], sms)
        g.update(lw_tiles=lw["tiles"], lw_waves=lw["waves"], lw_tail=lw["tail"],
                 lw_slices=lw["slices"], lw_busy=(lw["waves"] - np.floor(lw["waves"])) * 100)
    else:       # a rung this GPU refused: its last wave is not measured here
        g.update(lw_tiles=NAN, lw_waves=NAN, lw_tail=NAN, lw_slices=NAN, lw_busy=NAN)
    g.update(lw_t06=at(ladder, "06-warptiling", 3072, 3072, 3072),
             lw_t07=at(ladder, "07-split-k", 3072, 3072, 3072),
             lw_x=at(ladder, "07-split-k", 3072, 3072, 3072, "vs_cublas_fp32"))
    g["lw_gain"] = g["lw_t07"] / g["lw_t06"]
    pv = profiled(prof)
    g.update(sk07_us=pv("07-split-k", "duration_us", 128),
             skcb_us=pv("cuBLAS FP32", "duration_us", 128),
             sk06_sm=pv("06-warptiling", "sm_throughput_pct", 128),
             sk07_sm=pv("07-split-k", "sm_throughput_pct", 128))
    return g


def tensor_facts(ladder: pd.DataFrame, prof: pd.DataFrame, ceil) -> dict:
    """Rungs 08 and 09 at 8192³ and on the skinny problem: speed against cuBLAS TF32 (the
    rounds' spread) and the mma.sync ceiling, the errors of FP32, TF32 and 3xTF32,
    3xTF32's error per unit of its accumulation chain, and the profiler's tensor-pipe
    share and stalls."""
    n, sk, mma_peak = 8192, SKINNY, _peaks(ceil)[1]
    g = dict(tf32_tf=at(ladder, "08-tf32-mma", n, n, n),
             tf32_x=at(ladder, "08-tf32-mma", n, n, n, "vs_cublas_tf32"),
             cublas_tf32=at(ladder, "cuBLAS TF32", n, n, n),
             tf32_skinny=at(ladder, "08-tf32-mma", *sk),
             tf32_skinny_x=at(ladder, "08-tf32-mma", *sk, "vs_cublas_tf32"),
             err_fp32=at(ladder, "06-warptiling", n, n, n, "rel_err"),
             err_tf32=at(ladder, "08-tf32-mma", n, n, n, "rel_err"),
             err_3x=at(ladder, "09-3xtf32", n, n, n, "rel_err"),
             tf32_3x_tf=at(ladder, "09-3xtf32", n, n, n))
    _, g["tf32_x_lo"], g["tf32_x_hi"] = spread(ladder, "08-tf32-mma", n, n, n, "tf32")
    g["tf32_of_mma"] = g["tf32_tf"] / mma_peak * 100
    g["err_ratio"] = g["err_tf32"] / g["err_fp32"]
    g["tf32_3x_vs_fp32"] = g["tf32_3x_tf"] / at(ladder, "cuBLAS FP32", n, n, n)
    e3 = chain_lengths(ladder)
    g["e3_per_k"] = float(e3.loc[e3["K"] != 32768, "per_k"].median())
    pv = profiled(prof)
    g.update(s08_tensor=pv("08-tf32-mma", "tensor_pipe_pct"),
             s08_mio=pv("08-tf32-mma", "stall_mio_throttle"),
             s08_math=pv("08-tf32-mma", "stall_math_pipe_throttle"),
             s08_long=pv("08-tf32-mma", "stall_long_scoreboard"),
             s09_tensor=pv("09-3xtf32", "tensor_pipe_pct"),
             cbtf_tensor=pv("cuBLAS TF32", "tensor_pipe_pct"))
    return g


def wgmma_facts(ladder: pd.DataFrame, prof: pd.DataFrame, ceil) -> dict:
    """Rung 10 (wgmma + TMA) at the target sizes against cuBLAS TF32 (the rounds' spread),
    rung 08 and the two tensor-core ceilings; its error against cuBLAS TF32's; the
    profiler's tensor-pipe share and durations."""
    _, mma_peak, wgmma_peak = _peaks(ceil)
    n, g = 8192, {}
    for name, size in (("8192", (8192,) * 3), ("4096", (4096,) * 3), ("3072", (3072,) * 3),
                       ("rect", (4096, 8192, 2048)), ("odd", (3000, 2999, 3001))):
        med, lo, hi = spread(ladder, HOPPER, *size, "tf32")
        g[f"r10_{name}_x"] = med
        if name != "odd":
            g[f"r10_{name}_lo"], g[f"r10_{name}_hi"] = lo, hi
    g["r10_8192_tf"] = at(ladder, HOPPER, n, n, n)
    g["r10_vs_08"] = g["r10_8192_tf"] / at(ladder, "08-tf32-mma", n, n, n)
    g["r10_err_ratio"] = (at(ladder, HOPPER, n, n, n, "rel_err")
                          / at(ladder, "cuBLAS TF32", n, n, n, "rel_err"))
    g["r10_of_mma"] = g["r10_8192_tf"] / mma_peak * 100
    g["r10_of_wgmma"] = g["r10_8192_tf"] / wgmma_peak * 100
    g["cbtf_of_wgmma"] = at(ladder, "cuBLAS TF32", n, n, n) / wgmma_peak * 100
    pv = profiled(prof)
    g.update(s10_tensor=pv(HOPPER, "tensor_pipe_pct"), s10_us=pv(HOPPER, "duration_us"),
             cbtf_us=pv("cuBLAS TF32", "duration_us"),
             r10_skinny_x=at(ladder, HOPPER, *SKINNY, "vs_cublas_tf32"))
    return g


def tf32_splitk_facts(ladder: pd.DataFrame, splitk: pd.DataFrame, prof: pd.DataFrame) -> dict:
    """Rung 11 on the skinny problem: the timed call against cuBLAS TF32 (the rounds'
    spread), the profiler's kernel durations and DRAM bytes, and the floor of two empty
    launches (sgemm.splitk)."""
    sk = SKINNY
    pv = profiled(prof)
    sk11 = spread(ladder, "11-tf32-split-k", *sk, "tf32")
    g = dict(sk11_us=at(ladder, "11-tf32-split-k", *sk, "median_ms") * 1e3,
             sk11_x=sk11[0], sk11_lo=sk11[1], sk11_hi=sk11[2],
             sk_cublas_tf32_us=at(ladder, "11-tf32-split-k", *sk, "cublas_tf32_ms") * 1e3,
             sk11_gpu_us=pv("11-tf32-split-k", "duration_us", 128),
             sk11_cb_gpu_us=pv("cuBLAS TF32", "duration_us", 128),
             sk11_dram_mb=pv("11-tf32-split-k", "dram_read_MB", 128)
             + pv("11-tf32-split-k", "dram_write_MB", 128))
    g["sk11_gap_us"] = g["sk11_us"] - g["sk11_gpu_us"]
    floor = splitk.loc[splitk["variant"] == "2 empty launches", "median_ms"]
    g["launch2_us"] = float(floor.iloc[0]) * 1e3 if len(floor) else float("nan")
    return g


def hopper3x_facts(ladder: pd.DataFrame, prof: pd.DataFrame) -> dict:
    """Rung 12 (3xTF32 on wgmma) at 8192³ against cuBLAS FP32 (speed, the rounds' spread,
    error), rung 09 and rung 10; the tensor work it executes and the profiler's
    tensor-pipe share. And the 3xTF32 targets' numbers (x3_*): rung 12's where it ran (a
    Hopper GPU), else rung 09's."""
    n, g = 8192, {}
    med, lo, hi = spread(ladder, HOPPER_3X, n, n, n, "fp32")
    g.update({"r12_8192_x": med, "r12_8192_lo": lo, "r12_8192_hi": hi,
              "r12_8192_tf": at(ladder, HOPPER_3X, n, n, n),
              "r12_8192_err_x": at(ladder, HOPPER_3X, n, n, n, "rel_err")
              / at(ladder, "cuBLAS FP32", n, n, n, "rel_err")})
    g["r12_err"] = at(ladder, HOPPER_3X, n, n, n, "rel_err")
    g["r12_vs_09"] = g["r12_8192_tf"] / at(ladder, "09-3xtf32", n, n, n)
    g["s12_tensor"] = profiled(prof)(HOPPER_3X, "tensor_pipe_pct")
    # the tensor work rung 12 executes: three TF32 products per useful one
    g["r12_tensor_tf"] = 3 * g["r12_8192_tf"]
    g["r12_tensor_vs_10"] = g["r12_tensor_tf"] / at(ladder, HOPPER, n, n, n)
    x3 = HOPPER_3X if np.isfinite(g["r12_8192_tf"]) else "09-3xtf32"
    g["x3_label"] = {HOPPER_3X: "12 3xTF32 on wgmma", "09-3xtf32": "09 3xTF32"}[x3]
    g["x3_err_x"] = at(ladder, x3, n, n, n, "rel_err") / at(ladder, "cuBLAS FP32", n, n, n, "rel_err")
    g["x3_x"], g["x3_x_lo"], g["x3_x_hi"] = spread(ladder, x3, n, n, n, "fp32")
    return g


def dram_facts(prof: pd.DataFrame) -> dict:
    """Rungs 02 and 03's DRAM bytes at 4096³ (the profiler), against the structural
    traffic of a 32×32 tile."""
    pv = profiled(prof)
    dram = lambda v: (pv(v, "dram_read_MB") + pv(v, "dram_write_MB")) / 1e3   # noqa: E731
    return dict(dram_03_gb=dram("03-smem-tiling"), dram_02_gb=dram("02-coalesced"),
                struct_32_gb=4 * 4096**3 * (2 / 32) / 1e9)


def roofline_facts(prof: pd.DataFrame, ceil) -> dict:
    """The FP32 ridge of the measured ceilings, and rung 06's DRAM intensity at 4096³."""
    ai = {v: x for v, x, _ in roofline_points(prof, ["06-warptiling"])}
    return {"ridge": ceil.ridge("FP32 FMA"), "ai_06": ai["06-warptiling"]}


def roofline_points(prof: pd.DataFrame, names, M=4096, N=4096, K=4096) -> list:
    """(label, FLOP per DRAM byte, TFLOP/s) of each profiled rung: the intensity the DRAM
    saw (bytes read + written) and the speed over the profiled kernels' durations."""
    pv = profiled(prof)
    flops = 2.0 * M * N * K
    pts = []
    for v in names:
        mb = pv(v, "dram_read_MB", M) + pv(v, "dram_write_MB", M)
        us = pv(v, "duration_us", M)
        if np.isfinite(mb) and mb > 0 and np.isfinite(us) and us > 0:
            pts.append((v, flops / (mb * 1e6), flops / (us * 1e-6) / 1e12))
    return pts


#: the roofline's legend for roofline_marks' colours
ROOFLINE_KINDS = (("FP32 rungs (by number)", COLORS["fp32"]), ("TF32 rungs", COLORS["tf32"]),
                  ("cuBLAS", COLORS["cuBLAS FP32"]))


def roofline_marks(pts) -> list:
    """roofline_points as the figure marks them: a rung by its number, coloured by its
    precision (the book's FP32 and TF32 colours), cuBLAS by name in its grey."""
    from . import variants
    precision = {v.name: v.precision for v in variants()}
    out = []
    for name, x, y in pts:
        if name in COLORS:                                     # cuBLAS FP32 / TF32
            out.append((name, x, y, COLORS[name]))
        else:
            out.append((name.split("-")[0], x, y,
                        COLORS["fp32" if precision.get(name) == "fp32" else "tf32"]))
    return out


def spread(df: pd.DataFrame, variant: str, M, N, K, mode: str) -> tuple[float, float, float]:
    """(median, lowest, highest) over the interleaved rounds of one rung's ratio to cuBLAS
    `mode` at one size (NaN where not measured)."""
    col = f"vs_cublas_{mode}"
    return tuple(at(df, variant, M, N, K, c) for c in (col, col + "_min", col + "_max"))


def sass_facts() -> dict:
    """The instruction counts of rungs 04's and 08's inner loops (SassExcerpts)."""
    return SassExcerpts().counts


_SK = size_label(*SKINNY)
#: the 3xTF32 targets: at most this multiple of cuBLAS FP32's error, at least this
#: multiple of its speed, at 8192³ (the chunk figure draws both)
X3_ERR = Target("{x3_label} error / cuBLAS FP32's at 8192³", "x3_err_x", at_most=2.0, digits=3)
X3_SPEED = Target("{x3_label} / cuBLAS FP32 at 8192³", "x3_x", at_least=2.0, digits=3,
                  low="x3_x_lo", high="x3_x_hi")
#: the chapter's targets on this GPU: a ratio to cuBLAS is the median over the interleaved
#: rounds, shown with the lowest and highest round
TARGETS = {"01-sgemm": (
    *(Target(f"best FP32 rung / cuBLAS FP32 at {n}³", f"best_fp32_{n}_x", at_least=need,
             digits=3, low=f"best_fp32_{n}_x_lo", high=f"best_fp32_{n}_x_hi")
      for n, need in ((3072, 1.0), (4096, 0.9), (8192, 0.9))),
    Target(f"07 split-K / cuBLAS FP32 at {_SK}", "sk_vs_cublas", at_least=1.0, digits=3,
           low="sk_vs_cublas_lo", high="sk_vs_cublas_hi"),
    Target("08 TF32 mma.sync / cuBLAS TF32 at 8192³", "tf32_x", at_least=0.6, digits=3,
           low="tf32_x_lo", high="tf32_x_hi"),
    *(Target(f"10 wgmma + TMA / cuBLAS TF32 at {size_label(*size)}", f"r10_{name}_x",
             at_least=need, digits=3, low=f"r10_{name}_lo", high=f"r10_{name}_hi")
      for name, size, need in (("8192", (8192,) * 3, 0.9), ("4096", (4096,) * 3, 0.9),
                               ("3072", (3072,) * 3, 0.8), ("rect", (4096, 8192, 2048), 0.8))),
    Target(f"11 TF32 split-K / cuBLAS TF32 at {_SK}", "sk11_x", at_least=1.0, digits=3,
           low="sk11_lo", high="sk11_hi"),
    X3_ERR, X3_SPEED,
    Target("every check passed: rows failed, of {n_checked} checked", "n_failed", equal=0,
           digits=0),
)}

_CEIL = machine.ceilings_in
#: the page's facts: (function, its inputs: experiments' names, or the machine chapter's
#: ceilings), in order
PAGE_FACTS = {"01-sgemm": (
    (ladder_facts, ("sgemm.ladder", _CEIL)), (rung_facts, ("sgemm.ladder", "sgemm.profile")),
    (splitk_facts, ("sgemm.ladder", "sgemm.splitk", "sgemm.profile")),
    (tensor_facts, ("sgemm.ladder", "sgemm.profile", _CEIL)),
    (wgmma_facts, ("sgemm.ladder", "sgemm.profile", _CEIL)),
    (tf32_splitk_facts, ("sgemm.ladder", "sgemm.splitk", "sgemm.profile")),
    (chunk_facts, ("sgemm.chunks",)), (hopper3x_facts, ("sgemm.ladder", "sgemm.profile")),
    (roofline_facts, ("sgemm.profile", _CEIL)), (dram_facts, ("sgemm.profile",)),
    (sass_facts, ()))}


# ------------------------------------------------------------------ tables for the chapter

def rungs() -> pd.DataFrame:
    """The ladder: rung, label, arithmetic, idea."""
    from . import variants
    return pd.DataFrame([(v.name, v.label, v.precision, v.idea) for v in variants()],
                        columns=["rung", "what", "precision", "idea"])


def full_table(ladder: pd.DataFrame, fma_peak: float, mma_peak: float) -> pd.DataFrame:
    """Every timed row with the fraction of its ceiling and its ratio to cuBLAS."""
    full = with_size(ladder)
    full = full[full["TFLOP/s"].notna()].copy()
    ceiling = np.where(full["precision"] == "fp32", fma_peak, mma_peak)
    full["of_ceiling"] = 100 * full["TFLOP/s"] / ceiling
    fp32 = full["precision"] == "fp32"
    for suffix in ("", "_min", "_max"):
        a, b = f"vs_cublas_fp32{suffix}", f"vs_cublas_tf32{suffix}"
        if a in full and b in full:
            full[f"x_cublas{suffix}"] = np.where(fp32, full[a], full[b])
    return full


def compile_table() -> pd.DataFrame:
    """The compile report (sm_90) of every kernel the rungs launch at their defaults."""
    from ... import compile_report
    from . import variants

    specs = {}
    for v in variants():
        for s in v.kernels(v.params()):
            specs.setdefault(s.name_expression, (v.name, s))
    rep = compile_report.report([s for _, s in specs.values()], archs=("sm_90",))
    rep.insert(0, "rung", [specs[k][0] for k in rep["kernel"]])
    return rep


def launch_table(ladder: pd.DataFrame, M, N, K) -> pd.DataFrame:
    """The launches recorded at one size: grid, block, registers, shared memory, and the
    driver's blocks-per-SM answer."""
    rows = []
    for _, r in ladder[(ladder["M"] == M) & (ladder["N"] == N) & (ladder["K"] == K)].iterrows():
        for l in r["launch"] or []:
            rows.append({"rung": r["variant"], "kernel": l["kernel"],
                         "grid": "×".join(map(str, l["grid"])),
                         "block": "×".join(map(str, l["block"])), "registers": l["registers"],
                         "shared": l["static_smem"] + l["dynamic_smem"],
                         "blocks_per_sm": l["blocks_per_sm"]})
    return pd.DataFrame(rows)


class SassExcerpts:
    """The inner loops of rungs 04 (LDS.128 then FFMA) and 08 (LDSM then HMMA), from the
    cubin NVRTC builds with no GPU, and the instruction counts the prose quotes."""

    def __init__(self):
        from ... import compile_report as cr
        from . import get

        v04, v08 = get("04-register-tiling"), get("08-tf32-mma")
        s04 = cr.sass(v04.kernels(v04.params())[0], "sm_90")
        s08 = cr.sass(v08.kernels(v08.params())[0], "sm_90")
        self.excerpts = [
            ("04-register-tiling: LDS.128 followed by a run of FFMA (sm_90 SASS)",
             cr.sass_excerpt(s04, r"LDS\.128", r"FFMA", context=10)),
            ("08-tf32-mma: LDSM (ldmatrix) feeding HMMA (sm_90 SASS)",
             cr.sass_excerpt(s08, r"LDSM|LDS", r"HMMA", context=10))]
        c4, c8 = cr.count_instructions(s04, base=True), cr.count_instructions(s08, base=True)
        self.counts = {
            "sass04_ffma": c4.get("FFMA", 0),
            "sass04_lds": cr.count_families(s04, {"lds": "LDS"})["lds"],
            "sass08_hmma": c8.get("HMMA", 0), "sass08_total": sum(c8.values())}

    def folds(self) -> list:
        """Each excerpt closed in a dropdown."""
        from ...tables import fold_text
        return [fold_text(summary, text) for summary, text in self.excerpts]

