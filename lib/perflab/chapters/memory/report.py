"""The memory chapter's numbers and figures, computed from the rows (live or recorded): the prose
quotes only what the `*_facts` functions return, one for each section (PAGE_FACTS); the
targets are data (TARGETS)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ... import lookup, plots, sidebyside
from ...targets import Target

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

#: Published load latencies of the same chip (GH200: the H100 die at 1980 MHz, like this
#: H200), one warp chasing a random chain: RRZE gpu-benches, gpu-latency/gh200.txt
#: (github.com/RRZE-HPC/gpu-benches), median cycles per plateau. A range where the
#: plateau is not flat. These are the study's numbers, typed from its results file.
PUBLISHED = {
    "source": "RRZE gpu-benches (gpu-latency), NVIDIA GH200 at 1980 MHz",
    "url": "https://github.com/RRZE-HPC/gpu-benches",
    "levels": {"L1": (32.0, 33.7), "near L2": (280.4, 280.4), "far L2": (458.0, 532.0),
               "HBM": (680.0, 689.0)},
}


def windows(l2_bytes: int) -> dict:
    """Working-set ranges (bytes, inclusive) read as each plateau: well inside L1, well
    inside one half of the L2, between the halves' capacity and the whole L2, and well past
    the L2; the last window is where a TLB step would show."""
    return {"L1": (4 * KiB, 64 * KiB), "near L2": (1 * MiB, 8 * MiB),
            "far L2": (int(0.45 * l2_bytes), int(0.67 * l2_bytes)),
            "HBM": (256 * MiB, 1 * GiB), "HBM, 2–8 GiB": (2 * GiB, 8 * GiB)}


def staircase(lat: pd.DataFrame) -> pd.DataFrame:
    """One row per working set: median, min and max cycles and ns over the repeats."""
    d = lat[(lat["variant"] == "random") & lat["correct"].astype(bool)]
    g = d.groupby("bytes")
    out = pd.DataFrame({"cycles": g["cycles"].median(), "cycles_min": g["cycles"].min(),
                        "cycles_max": g["cycles"].max(), "ns": g["ns"].median(),
                        "clock_ghz": g["clock_ghz"].median(), "repeats": g.size()})
    return out.reset_index()


def plateaus(lat: pd.DataFrame, l2_bytes: int) -> pd.DataFrame:
    """Each plateau's latency (median over its window, per repeat, then over repeats), the
    spread between repeats, and the published value beside it."""
    d = lat[(lat["variant"] == "random") & lat["correct"].astype(bool)]
    recs = []
    for level, (lo, hi) in windows(l2_bytes).items():
        w = d[(d["bytes"] >= lo) & (d["bytes"] <= hi)]
        if w.empty:
            continue
        per = w.groupby("repeat")["cycles"].median()
        ns = w.groupby("repeat")["ns"].median()
        c = float(per.median())
        ref = PUBLISHED["levels"].get(level)
        off = None
        if ref:
            off = 0.0 if ref[0] <= c <= ref[1] else min(abs(c - ref[0]), abs(c - ref[1])) / (
                ref[0] if c < ref[0] else ref[1])
        recs.append({"level": level, "window": f"{size_label(lo)} – {size_label(hi)}",
                     "from": lo, "to": hi, "sizes": int(w["bytes"].nunique()),
                     "cycles": c, "ns": float(ns.median()),
                     "spread_pct": 100 * float(per.max() - per.min()) / c,
                     "published": (span(ref[0], ref[1], 1) if ref else "—"),
                     "published_lo": ref[0] if ref else None,
                     "published_hi": ref[1] if ref else None,
                     "off_pct": None if off is None else 100 * off})
    return pd.DataFrame(recs)


def shared_latency(lat: pd.DataFrame) -> float:
    d = lat[(lat["variant"] == "shared") & lat["correct"].astype(bool)]
    return float(d["cycles"].median())


def edges(st: pd.DataFrame, l1: float, near: float, hbm: float) -> dict:
    """Where the staircase leaves each plateau: the largest working set still within 10 %
    of the L1 and near-L2 values, and the smallest within 3 % of the HBM value."""
    def last_within(v):
        ok = st[(st["cycles"] - v).abs() <= 0.1 * v]["bytes"]
        return int(ok.max()) if len(ok) else None
    hb = st[st["cycles"] >= 0.97 * hbm]["bytes"]
    return {"l1_edge": last_within(l1), "near_edge": last_within(near),
            "hbm_from": int(hb.min()) if len(hb) else None}


def hierarchy(lat: pd.DataFrame, dev: dict) -> list[dict]:
    """The levels the staircase shows, each with the working sets it serves: L1 up to its
    measured edge, the near half of the L2 up to half the device's L2, the far half up to
    the whole L2, HBM (the device's memory) beyond; each with its plateau's latency."""
    l2 = int(dev["l2_bytes"])
    st = staircase(lat)
    pl = plateaus(lat, l2).set_index("level")
    e = edges(st, pl.loc["L1", "cycles"], pl.loc["near L2", "cycles"], pl.loc["HBM", "cycles"])
    sizes = sorted(st["bytes"])
    after = [b for b in sizes if b > e["l1_edge"]]
    l1_end = (e["l1_edge"] * after[0]) ** 0.5 if after else e["l1_edge"]
    lo, hi = sizes[0] / 1.4, sizes[-1] * 1.4
    out = [("L1", "L1", f"≤ {size_label(e['l1_edge'])}", lo, l1_end),
           ("near L2", "L2, near half", f"½ L2 = {size_label(l2 / 2)}", l1_end, l2 / 2),
           ("far L2", "L2, far half", f"L2 = {size_label(l2)}", l2 / 2, l2),
           ("HBM", "HBM", size_label(dev.get("total_mem_bytes", 0)), l2, hi)]
    return [{"level": k, "name": n, "capacity": c, "from": a_, "to": b_,
             "cycles": float(pl.loc[k, "cycles"]), "ns": float(pl.loc[k, "ns"]),
             "published": PUBLISHED["levels"].get(k)} for k, n, c, a_, b_ in out]


#: Light fills that tell the levels apart behind the staircase (the lab's blue, greys).
_LEVEL_FILL = {"L1": "#deebf7", "near L2": "#f2f2f2", "far L2": "#e0e0e0", "HBM": "#f7f7f7"}


def plot_staircase(ax, lat: pd.DataFrame, l2_bytes: int, dev: dict,
                   reference: pd.DataFrame | None = None) -> list[dict]:
    """Cycles per load against working set, annotated with the hierarchy: each level's
    working sets shaded and named with its capacity (from the device), its measured
    plateau written on it, the published plateau as a grey bar over the same sets; every
    repeat as a dot, the median as a line. With `reference` (another GPU's recorded rows,
    sidebyside.beside), its median as a dashed grey line beside this GPU's, each named by
    its device. Returns the levels drawn."""
    st = staircase(lat)
    d = lat[(lat["variant"] == "random") & lat["correct"].astype(bool)]
    levels = hierarchy(lat, {**dev, "l2_bytes": l2_bytes})
    ref = staircase(reference) if reference is not None else None
    highest = max([float(st["cycles"].max())] + ([float(ref["cycles"].max())] if ref is not None
                                                 else []))
    top = 900 if highest < 800 else math.ceil(highest * 1.3 / 100) * 100  # room above it
    who = "" if ref is None else f"{sidebyside.short_name(lat)}, measured live: "
    for i, lv in enumerate(levels):
        ax.axvspan(lv["from"], lv["to"], color=_LEVEL_FILL[lv["level"]], zorder=0, lw=0)
        if lv["published"]:
            lo, hi = lv["published"]
            ax.fill_between([lv["from"], lv["to"]], lo - 6, hi + 6, color="0.62", alpha=0.55,
                            lw=0, zorder=1, label="published (GH200)"
                            if i == 0 else None)
    ax.plot(d["bytes"], d["cycles"], ".", color=plots.COLORS["fp32"], alpha=0.35, ms=4,
            label=who + "each repeat", zorder=3)
    ax.plot(st["bytes"], st["cycles"], "-", color=plots.COLORS["fp32"], lw=1.6,
            label=who + "median", zorder=3)
    if ref is not None:
        ax.plot(ref["bytes"], ref["cycles"], "--", color="0.3", lw=1.4, zorder=2,
                label=f"{sidebyside.short_name(reference)}, recorded: median")
    for lv in levels:
        mid = (lv["from"] * lv["to"]) ** 0.5
        val = f"{lv['cycles']:.0f} cycles\n{lv['ns']:.0f} ns"
        if lv["level"] == "far L2":          # a narrow column: its name along its edge
            ax.text(lv["from"] / 1.12, lv["cycles"], "far half: " + val.replace("\n", ", "),
                    ha="right", va="center", fontsize=9, color="0.1", zorder=4,
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 1, "alpha": 0.8})
            continue
        if lv["level"] == "near L2":
            val = "near half: " + val
        ax.text(mid, lv["cycles"] + 28, val, ha="center", va="bottom", fontsize=9,
                color="0.1", zorder=4, linespacing=1.0)
        name = "L2" if lv["level"] == "near L2" else lv["name"]
        cap = f"{size_label(l2_bytes)}, two halves" if lv["level"] == "near L2" else lv["capacity"]
        ax.text(mid, top - 14, f"{name}\n{cap}", ha="center", va="top", fontsize=9,
                color="0.15", linespacing=1.1, fontweight="bold" if len(name) < 4 else None)
    ax.set_xscale("log", base=2)
    ax.set_xlim(levels[0]["from"], levels[-1]["to"])
    ticks = [4 * KiB, 64 * KiB, 1 * MiB, 16 * MiB, 256 * MiB, 4 * GiB]
    ax.set_xticks(ticks, [size_label(t) for t in ticks])
    ax.set_ylim(0, top)
    ax.set_xlabel("working set")
    ax.set_ylabel("cycles per dependent load")
    sec = ax.secondary_yaxis("right", functions=(lambda c: c / _ghz(st),
                                                 lambda n: n * _ghz(st)))
    sec.set_ylabel("ns")
    if ref is None:
        ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(0.0, 0.8), framealpha=0.95)
    else:                   # two devices: a longer legend, above the axes, off the data
        ax.legend(fontsize=9, loc="lower left", bbox_to_anchor=(0.0, 1.01), ncol=2,
                  frameon=False)
    return levels


def staircase_figure(lat: pd.DataFrame, dev: dict):
    """The latency staircase as the page shows it, with its stamp: this GPU's rows (the
    recorded ones without a GPU), and live on another GPU the reference GPU's recorded
    median beside them (cycles per load on each: the two are comparable as they stand),
    stamped with both sources."""
    import matplotlib.pyplot as plt

    frames = sidebyside.beside(lat)
    fig, ax = plt.subplots(figsize=(7.5, 4.0))
    plot_staircase(ax, lat, int(dev["l2_bytes"]), dev,
                   reference=frames[1] if len(frames) > 1 else None)
    plots.stamp(fig, *frames)
    return fig


#: Variant names of recorded rows as the page shows them (the rows keep theirs).
_SHOWN = {"chapter 0 copy_vec4": "copy_vec4 (the machine chapter's copy)"}


def shown(variant: str) -> str:
    """A variant's name on the page: the rows' name, but never a chapter number."""
    return _SHOWN.get(variant, variant)


def run_label(df: pd.DataFrame) -> str:
    """"recorded run ac1b83e360ad" or "live run …": the run a finding comes from, as the
    figure's stamp names it."""
    s = df.attrs.get("source", {})
    kind = "live" if s.get("kind") == "live" else "recorded"
    return f"{kind} run {', '.join(s.get('run_ids', [])) or '?'}"


def _ghz(st) -> float:
    g = float(st["clock_ghz"].median())
    return g if math.isfinite(g) and g > 0 else 1.98


def size_label(b: float) -> str:
    """16384 -> "16 KiB", 50331648 -> "48 MiB": a byte count as a reader reads it."""
    for unit, s in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if b >= unit:
            v = b / unit
            return f"{v:.0f} {s}" if v == int(v) else f"{v:.1f} {s}"
    return f"{b:.0f} B"


# ---- operators and the portfolio's probe -----------------------------------------------------

def sass_loads() -> dict:
    """The SASS load each operator's chase compiles to (offline NVRTC, sm_90)."""
    from ... import compile_report as cr
    from .latency import OPS, chase_spec
    out = {}
    for op in OPS:
        found = {ins.opcode for ins in cr.instructions(cr.sass(chase_spec(op), "sm_90"))
                 if ins.opcode.startswith("LDG.E")}
        out[op] = ", ".join(sorted(found))
    return out


def operator_table(ops: pd.DataFrame, prof: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per operator × working set: chase cycles, the clock-load-clock probe (without and
    with waiting), the SASS instruction and, from the profiler, the chase's L1 hit rate."""
    ch = ops[(ops["variant"] == "chase") & ops["correct"].astype(bool)]
    pr = ops[(ops["variant"] == "seed-probe") & ops["correct"].astype(bool)]
    sass = sass_loads()
    recs = []
    for (op, ws), g in ch.groupby(["op", "bytes"], sort=False):
        p = pr[(pr["op"] == op) & (pr["bytes"] == ws)]
        rec = {"op": op, "sass": sass.get(op, "?"), "bytes": ws,
               "chase": float(g["cycles"].median()),
               "probe": lookup.value(p[~p["wait"].astype(bool)], "cycles", None),
               "probe_wait": lookup.value(p[p["wait"].astype(bool)], "cycles", None)}
        if prof is not None and len(prof):
            q = prof[(prof["what"] == "chase") & (prof["op"] == op) & (prof["bytes"] == ws)]
            rec["l1_hit_pct"] = lookup.value(q, "l1_hit_pct", None)
        recs.append(rec)
    return pd.DataFrame(recs)


def span(lo: float, hi: float, digits: int = 0) -> str:
    """"24" when the two agree to the digits shown, else "24–25"."""
    a, b = f"{lo:.{digits}f}", f"{hi:.{digits}f}"
    return a if a == b else f"{a}–{b}"


def operator_grid(ot: pd.DataFrame) -> pd.DataFrame:
    """The operator table as the page shows it: one row per operator, the chase's cycles
    at each working set side by side, the probe's range over all of them."""
    out = []
    sizes = sorted(ot["bytes"].unique())
    for op, g in ot.groupby("op", sort=False):
        rec = {"op": "plain (none)" if op == "plain" else f".{op}", "sass": g["sass"].iloc[0]}
        for ws in sizes:
            rec[f"chase {size_label(ws)}"] = float(g[g["bytes"] == ws]["chase"].iloc[0])
        rec["probe"] = span(g["probe"].min(), g["probe"].max())
        rec["probe_wait"] = span(g["probe_wait"].min(), g["probe_wait"].max())
        out.append(rec)
    return pd.DataFrame(out)


# ---- shared-memory banks ------------------------------------------------------------------

def bank_table(banks: pd.DataFrame, prof: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per stride and layout: TB/s, the predicted degree, the bandwidth the degree predicts
    (stride-1 bandwidth / degree), measured over predicted, and the profiler's wavefronts
    per shared-load instruction (the degree the hardware saw)."""
    d = banks[banks["correct"].astype(bool)].copy()
    base = float(d[(d["variant"] == "plain") & (d["stride"] == 1)]["TB/s"].iloc[0])
    d["predicted_TB/s"] = base / d["predicted_degree"]
    d["vs_predicted"] = d["TB/s"] / d["predicted_TB/s"]
    if prof is not None and len(prof):
        q = prof[prof["what"] == "banks"].copy()
        q["variant"] = np.where(q["pad"].astype(bool), "padded", "plain")
        q["wavefronts_per_ld"] = q["smem_ld_wavefronts"] / q["smem_ld_instructions"]
        d = d.merge(q[["variant", "stride", "wavefronts_per_ld"]], on=["variant", "stride"],
                    how="left")
    return d


def plot_banks(ax, bt: pd.DataFrame) -> None:
    for v, color, marker in (("plain", plots.COLORS["fp32"], "o"), ("padded", "C2", "s")):
        d = bt[bt["variant"] == v].sort_values("stride")
        ax.plot(d["stride"], d["TB/s"], marker, color=color, ms=4, label=f"{v}: measured")
        ax.plot(d["stride"], d["predicted_TB/s"], "-", color=color, lw=1, alpha=0.6,
                label=f"{v}: stride-1 rate / degree")
    ax.set_yscale("log", base=2)
    ax.set_xlabel("stride (4-byte words between lanes)")
    ax.set_ylabel("shared-memory TB/s")
    ax.set_xticks([1, 2, 4, 8, 12, 16, 20, 24, 28, 32])
    ax.legend(fontsize=9, ncol=2, loc="lower center", bbox_to_anchor=(0.5, 1.01), frameon=False)


# ---- coalescing, streaming, Little's law -----------------------------------------------

def strided_table(coal: pd.DataFrame, prof: pd.DataFrame | None) -> pd.DataFrame:
    """Stride sweep: useful TB/s, the sector model's prediction (the run's cudaMemcpy rate
    × useful / fetched with 32-byte sectors) and the profiler's DRAM bytes read per useful
    byte."""
    d = coal[(coal["part"] == "stride") & coal["correct"].astype(bool)].copy()
    d["sector_model_TB/s"] = stream_ceiling_tbs(coal) / d["predicted_fetch_per_useful"]
    if prof is not None and len(prof):
        q = prof[prof["what"] == "strided"][["stride", "dram_read_MB", "gld_sectors_per_request"]]
        d = d.merge(q, on="stride", how="left")
        d["dram_per_useful"] = d["dram_read_MB"] * 1e6 / d["bytes"]
    return d


def inflight_frame(inf: pd.DataFrame) -> pd.DataFrame:
    return inf[(inf["warps_per_sm"] > 0) & inf["correct"].astype(bool)].copy()


def needed_inflight(inf: pd.DataFrame, frac: float = 0.9) -> dict:
    """Per layout, the fewest bytes in flight per SM at which a configuration reached
    `frac` of the copy ceiling (in the same rounds)."""
    d = inflight_frame(inf)
    out = {}
    for layout, g in d.groupby("layout"):
        ok = g[g["of_copy"] >= frac]
        out[layout] = int(ok["inflight_per_sm"].min()) if len(ok) else None
    return out


def plot_inflight(ax, inf: pd.DataFrame, latency_ns: float, sms: int, ceiling_tbs: float) -> None:
    """Copy bandwidth against reads in flight per SM, each layout and K, with Little's law
    at the unloaded HBM latency: copy TB/s = 2 × reads in flight / latency (reads and
    writes counted), capped at the ceiling."""
    d = inflight_frame(inf)
    x = np.geomspace(max(256, d["inflight_per_sm"].min() / 2), d["inflight_per_sm"].max() * 2)
    ax.plot(x, np.minimum(ceiling_tbs, 2 * x * sms / (latency_ns * 1e-9) / 1e12), "-",
            color="0.55", lw=1.2, label=f"Little's law at {latency_ns:.0f} ns")
    ax.axhline(ceiling_tbs, color="0.25", ls="--", lw=1, label="cudaMemcpy, same rounds")
    markers = {1: "o", 2: "s", 4: "^", 8: "D"}
    for layout, color in (("blocked", plots.COLORS["fp32"]), ("grid-strided", "C1")):
        g = d[d["layout"] == layout]
        for k, gk in g.groupby("K"):
            ax.plot(gk["inflight_per_sm"], gk["TB/s"], markers.get(k, "o"), color=color,
                    ms=4, alpha=0.85, label=f"{layout}, K={k}")
    ax.set_xscale("log", base=2)
    ticks = [512, 2 * KiB, 8 * KiB, 32 * KiB, 128 * KiB]
    ax.set_xticks(ticks, [size_label(t).replace(" ", "\u2009") for t in ticks])
    ax.set_xlabel("reads in flight per SM (warps × K × 16 bytes)")
    ax.set_ylabel("copy TB/s (read + write)")
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.figure.subplots_adjust(right=0.7)


def plot_inflight_beside(ax, inf: pd.DataFrame, reference: pd.DataFrame) -> None:
    """Copy bandwidth against reads in flight per SM on two GPUs, each as a fraction of its
    own cudaMemcpy timed in the same rounds (absolute TB/s of two memories do not compare):
    this GPU's best over K at each point, solid, the reference GPU's recorded one dashed."""
    for df, style, fill in ((inf, "-", None), (reference, "--", "none")):
        d = inflight_frame(df)
        who = f"{sidebyside.short_name(df)}, {'live' if sidebyside.is_live(df) else 'recorded'}"
        for layout, color in (("blocked", plots.COLORS["fp32"]), ("grid-strided", "C1")):
            g = d[d["layout"] == layout].groupby("inflight_per_sm")["of_copy"].max()
            if len(g):
                ax.plot(g.index, g.values, style, marker="o", ms=4, color=color, lw=1.2,
                        mfc=fill or color, label=f"{who}: {layout}")
    ax.axhline(1.0, color="0.25", lw=1, label="cudaMemcpy on each GPU, same rounds (= 1)")
    ax.set_xscale("log", base=2)
    ticks = [512, 2 * KiB, 8 * KiB, 32 * KiB, 128 * KiB]
    ax.set_xticks(ticks, [size_label(t).replace(" ", "\u2009") for t in ticks])
    ax.set_ylim(0, 1.1)
    ax.set_xlabel("reads in flight per SM (warps × K × 16 bytes)")
    ax.set_ylabel("× cudaMemcpy (best K)")
    ax.legend(fontsize=9, loc="lower left", bbox_to_anchor=(0.0, 1.01), ncol=2, frameon=False)


def inflight_figure(inf: pd.DataFrame, lat: pd.DataFrame):
    """The Little's-law figure as the page shows it, with its stamp: copy TB/s against
    bytes in flight, Little's law at this GPU's latency (plot_inflight); live on another
    GPU, each GPU as a fraction of its own cudaMemcpy, this one beside the recorded one
    (plot_inflight_beside), stamped with both sources."""
    import matplotlib.pyplot as plt

    frames = sidebyside.beside(inf)
    if len(frames) == 1:
        fig, ax = plt.subplots(figsize=(7.5, 3.6))
        ceiling = float(inf[inf["variant"] == "cudaMemcpy"]["TB/s"].iloc[0])
        plot_inflight(ax, inf, hbm_latency_ns(lat), int(plots.device_of(lat)["sms"]), ceiling)
    else:
        fig, ax = plt.subplots(figsize=(7.5, 3.6))
        plot_inflight_beside(ax, inf, frames[1])
    plots.stamp(fig, *frames)
    return fig


# ---- every number the prose quotes, section by section -------------------------------------

def latency_facts(lat: pd.DataFrame) -> dict:
    """The latency section's glued numbers: the plateaus against the published study, the
    edges between them, the clock the walk saw, the shared-memory walk and its store."""
    dev = plots.device_of(lat)
    l2 = int(dev["l2_bytes"])
    pl = plateaus(lat, l2).set_index("level")
    st = staircase(lat)
    out = {"l2_mib": l2 / MiB, "l2_half_mib": l2 / 2 / MiB,
           "published_source": PUBLISHED["source"], "smem_sm_kib": dev["smem_per_sm"] / 1024}
    cyc = {k: pl.loc[level, "cycles"] for level, k in (
        ("L1", "l1"), ("near L2", "near"), ("far L2", "far"), ("HBM", "hbm"), ("HBM, 2–8 GiB", "big"))}
    out.update({f"{k}_cyc": cyc[k] for k in ("l1", "near", "far", "hbm")})
    out.update({f"{k}_ns": pl.loc[level, "ns"] for level, k in (
        ("L1", "l1"), ("near L2", "near"), ("HBM", "hbm"))})
    out["l1_pub_lo"], out["l1_pub_hi"] = pl.loc["L1", "published_lo"], pl.loc["L1", "published_hi"]
    out["near_pub_lo"] = pl.loc["near L2", "published_lo"]
    for level, k in (("far L2", "far"), ("HBM", "hbm")):
        out[f"{k}_pub_lo"], out[f"{k}_pub_hi"] = pl.loc[level, "published_lo"], pl.loc[level, "published_hi"]
    out["max_spread"] = float(pl["spread_pct"].max())
    out["max_off"] = float(pl["off_pct"].dropna().max())
    out["big_rise_pct"] = 100 * (cyc["big"] / cyc["hbm"] - 1)
    e = edges(st, cyc["l1"], cyc["near"], cyc["hbm"])
    out["l1_edge_kib"] = e["l1_edge"] / KiB
    out["near_edge_mib"] = e["near_edge"] / MiB
    out["hbm_from_mib"] = e["hbm_from"] / MiB
    out["clock_ghz"] = float(st["clock_ghz"].median())
    out["smem_cyc"] = shared_latency(lat)
    out["max_ws_gib"] = float(st["bytes"].max()) / GiB
    return out


def hbm_latency_ns(lat: pd.DataFrame) -> float:
    """The idle HBM latency of the walk (the HBM plateau, ns)."""
    return float(plateaus(lat, int(plots.device_of(lat)["l2_bytes"])).set_index("level").loc["HBM", "ns"])


def operator_facts(ops: pd.DataFrame, prof: pd.DataFrame | None) -> dict:
    """The cache operators and the clock-load-clock probe: cycles per load at each working
    set, the probe's spans, and the profiler's L1 hit rates."""
    ot = operator_table(ops, prof)
    small, mid, big = sorted(ot["bytes"].unique())[:3]
    at = lambda op, ws, col: float(ot[(ot["op"].str.startswith(op)) & (ot["bytes"] == ws)][col].iloc[0])
    chase = lambda ws: ot[ot["bytes"] == ws]["chase"]   # noqa: E731
    out = {"op_small_kib": small / KiB, "op_mid_mib": mid / MiB, "op_big_gib": big / GiB,
           "op_plain_small": at("plain", small, "chase"), "op_cg_small": at("cg", small, "chase"),
           "probe_span": span(float(ot["probe"].min()), float(ot["probe"].max())),
           "probe_wait_span": span(float(ot["probe_wait"].min()), float(ot["probe_wait"].max())),
           "op_mid_span": span(float(chase(mid).min()), float(chase(mid).max())),
           "op_big_span": span(float(chase(big).min()), float(chase(big).max()))}
    if "l1_hit_pct" in ot:
        out["l1hit_plain"] = at("plain", small, "l1_hit_pct")
        out["l1hit_cg"] = at("cg", small, "l1_hit_pct")
    return out


def bank_facts(banks: pd.DataFrame, prof: pd.DataFrame | None, lat: pd.DataFrame) -> dict:
    """Shared-memory banks: the peak (SMs × 128 B × the clock the latency walk ran at),
    the rate at each stride of both layouts against stride-1 / degree, and the profiler's
    wavefronts per load."""
    sms = int(plots.device_of(lat)["sms"])
    out = {"sms": sms}
    bt = bank_table(banks, prof)
    plain, pad = bt[bt["variant"] == "plain"], bt[bt["variant"] == "padded"]
    clock = float(lat["sm_clock_mhz"].dropna().iloc[0]) * 1e6 if "sm_clock_mhz" in lat and \
        lat["sm_clock_mhz"].notna().any() else float(staircase(lat)["clock_ghz"].median()) * 1e9
    out["smem_peak_tbs"] = sms * 128 * clock / 1e12
    out["smem_tbs1"] = float(plain[plain["stride"] == 1]["TB/s"].iloc[0])
    out["smem_of_peak"] = 100 * out["smem_tbs1"] / out["smem_peak_tbs"]
    out["smem_tbs32"] = float(plain[plain["stride"] == 32]["TB/s"].iloc[0])
    out["smem_pad32"] = float(pad[pad["stride"] == 32]["TB/s"].iloc[0])
    out["smem_pad32_x"] = out["smem_pad32"] / out["smem_tbs1"]
    out["smem_pad31"] = float(pad[pad["stride"] == 31]["TB/s"].iloc[0])
    out["smem_pad_other_lo"] = float(pad[pad["predicted_degree"] == 2]["TB/s"].min())
    out["smem_pad_other_hi"] = float(pad[pad["predicted_degree"] == 2]["TB/s"].max())
    out["bank_max_dev"] = 100 * float((bt["vs_predicted"] - 1).abs().max())
    worst = bt.loc[(bt["vs_predicted"] - 1).abs().idxmax()]
    out["bank_worst"] = f"{worst['variant']} stride {int(worst['stride'])}"
    if "wavefronts_per_ld" in bt:
        out["bank_counter_dev"] = float((bt["wavefronts_per_ld"] / bt["predicted_degree"] - 1).abs().max()) * 100
        out["wf_plain32"] = float(plain[plain["stride"] == 32]["wavefronts_per_ld"].iloc[0])
        out["wf_pad31"] = float(pad[pad["stride"] == 31]["wavefronts_per_ld"].iloc[0])
    else:
        out["bank_counter_dev"] = out["wf_plain32"] = out["wf_pad31"] = math.nan
    return out


def stream_ceiling_tbs(coal: pd.DataFrame) -> float:
    """cudaMemcpy's rate in the streaming kernels' race (the coalescing run's ceiling)."""
    stream = coal[coal["part"] == "stream"].set_index("variant")
    return float(stream.loc["cudaMemcpy", "TB/s"])


def coalescing_facts(coal: pd.DataFrame, prof: pd.DataFrame | None) -> dict:
    """Coalescing: the portfolio's pair against cudaMemcpy (with the profiler's sectors and
    DRAM bytes), the streaming kernels' race and the stride sweep."""
    out = {}
    pair = coal[coal["part"] == "pair"].set_index("variant")
    out["ceiling_pair_tbs"] = float(pair.loc["cudaMemcpy", "TB/s"])
    out["pair_in_tbs"], out["pair_in_x"] = float(pair.loc["interleaved", "TB/s"]), float(pair.loc["interleaved", "of_copy"])
    out["pair_runs_tbs"], out["pair_runs_x"] = float(pair.loc["per-thread runs", "TB/s"]), float(pair.loc["per-thread runs", "of_copy"])
    out["pair_gap"] = float(pair.loc["per-thread runs", "median_ms"] / pair.loc["interleaved", "median_ms"])
    out["pair_mib"] = float(pair.loc["interleaved", "bytes"]) / MiB
    if prof is not None and len(prof):
        pp = prof[prof["what"] == "pair"].set_index("variant")
        out["runs_sectors"] = float(pp.loc["per-thread runs", "gld_sectors_per_request"])
        out["in_sectors"] = float(pp.loc["interleaved", "gld_sectors_per_request"])
        out["runs_dram_mb"] = float(pp.loc["per-thread runs", "dram_read_MB"])
        out["in_dram_mb"] = float(pp.loc["interleaved", "dram_read_MB"])
        out["runs_l1hit"] = float(pp.loc["per-thread runs", "l1_hit_pct"])
    stream = coal[coal["part"] == "stream"].set_index("variant")
    kern = stream.drop(index=[b for b in ("cudaMemcpy", "cupy copyto") if b in stream.index])
    best = kern["of_copy"].idxmax()
    out["stream_best"], out["stream_best_x"] = shown(best), float(kern.loc[best, "of_copy"])
    out["stream_best_lo"], out["stream_best_hi"] = float(kern.loc[best, "of_copy_min"]), float(kern.loc[best, "of_copy_max"])
    out["stream_best_tbs"] = float(kern.loc[best, "TB/s"])
    out["stream_gib"] = float(kern.loc[best, "bytes"]) / GiB
    persist = kern[kern.index.str.startswith(("grid-strided", "blocked"))]
    for layout in ("grid-strided", "blocked"):
        g = persist[persist.index.str.startswith(layout)]
        out[f"{layout.split('-')[0]}_best_x"] = float(g["of_copy"].max())
    out["stream_rounds"] = int(kern.loc[best, "rounds"])
    sd = strided_table(coal, prof).set_index("stride")
    out["s1_tbs"] = float(sd.loc[1, "TB/s"])
    out["s8_tbs"] = float(sd.loc[8, "TB/s"])
    if "dram_per_useful" in sd:
        for s_ in (8, 16):
            out[f"s{s_}_fetch"] = float(sd.loc[s_, "dram_per_useful"]) * 4
    out["s8_model"] = float(sd.loc[8, "sector_model_TB/s"])
    return out


def inflight_facts(inf: pd.DataFrame, lat: pd.DataFrame) -> dict:
    """Little's law: the reads in flight the idle HBM latency (the latency walk's)
    predicts, what the copies needed, and the latency their rates imply."""
    hbm_ns, sms = hbm_latency_ns(lat), int(plots.device_of(lat)["sms"])
    out = {}
    d = inflight_frame(inf)
    base = inf[inf["variant"] == "cudaMemcpy"]
    ceiling_tbs = float(base["TB/s"].iloc[0])
    out["inf_mib"] = float(base["bytes"].iloc[0]) / MiB
    need = needed_inflight(inf, 0.9)
    out["inf_need_grid_kb"] = need.get("grid-strided") / 1024 if need.get("grid-strided") else float("nan")
    out["inf_best_x"] = float(d["of_copy"].max())
    bestc = d.loc[d["of_copy"].idxmax()]
    out["inf_best"] = f"{bestc['layout']}, {int(bestc['warps_per_sm'])} warps × K={int(bestc['K'])}"
    out["inf_best_kb"] = float(bestc["inflight_per_sm"]) / 1024
    read_rate = ceiling_tbs * 1e12 / 2
    out["little_total_mb"] = read_rate * hbm_ns * 1e-9 / 1e6
    out["little_per_sm_kb"] = out["little_total_mb"] * 1e6 / sms / 1024
    g = d[d["layout"] == "grid-strided"]
    for kb in (1, 8):
        at = g[g["inflight_per_sm"] == kb * 1024]
        rate = float(at["TB/s"].max()) * 1e12 / 2
        out[f"lat_at_{kb}k_ns"] = kb * 1024 * sms / rate * 1e9
        out[f"lat_at_{kb}k_over"] = out[f"lat_at_{kb}k_ns"] / hbm_ns
    out["need_over_little"] = out["inf_need_grid_kb"] / out["little_per_sm_kb"]
    return out


def run_facts(lat, ops, banks, coal, inf, grid) -> dict:
    """The run each finding comes from, and every run's checks."""
    frames = [lat, ops, banks, coal, inf, grid]
    out = {name: run_label(df) for name, df in (("run_lat", lat), ("run_ops", ops),
                                                 ("run_banks", banks), ("run_coal", coal),
                                                 ("run_inf", inf))}
    out["n_checked"] = sum(int(f["correct"].notna().sum()) for f in frames if "correct" in f)
    out["n_failed"] = sum(int((f["correct"] == False).sum()) for f in frames if "correct" in f)  # noqa: E712
    return out


#: the page's facts: (function, the experiments whose rows it takes, in order)
PAGE_FACTS = {"02-memory": (
    (latency_facts, ("memory.latency",)),
    (operator_facts, ("memory.operators", "memory.profile")),
    (bank_facts, ("memory.banks", "memory.profile", "memory.latency")),
    (coalescing_facts, ("memory.coalescing", "memory.profile")),
    (inflight_facts, ("memory.inflight", "memory.latency")),
    (run_facts, ("memory.latency", "memory.operators", "memory.banks", "memory.coalescing",
                 "memory.inflight", "memory.stride_chase")))}

#: the chapter's done-when list
TARGETS = {"02-memory": (
    Target("plateaus vs the published study: largest difference", "max_off", at_most=10,
           digits=1, unit=" %"),
    Target("spread of a plateau between its three walks, largest", "max_spread", at_most=3,
           digits=2, unit=" %"),
    Target("best streaming copy / cudaMemcpy, same rounds", "stream_best_x", at_least=0.95,
           digits=3, low="stream_best_lo", high="stream_best_hi"),
    Target("Little's-law curve, best / cudaMemcpy, same rounds", "inf_best_x", at_least=0.90,
           digits=3),
    Target("bank bandwidth vs stride-1 rate / degree: largest difference", "bank_max_dev",
           at_most=10, digits=1, unit=" %"),
    Target("profiler wavefronts per load vs predicted degree: largest difference",
           "bank_counter_dev", at_most=10, digits=1, unit=" %"),
    Target("padded stride 32 / unpadded stride 1", "smem_pad32_x", at_least=0.9, digits=3),
    Target("rows checked before timing ({n_checked}); failed", "n_failed", at_most=0, digits=0),
)}
