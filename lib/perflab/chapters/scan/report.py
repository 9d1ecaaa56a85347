"""Chapter 3's numbers, tables and figures, computed from the rows (live or replayed):
every number the page quotes comes from `summary`."""
from __future__ import annotations

import math

import pandas as pd

from ... import lookup, plots

#: One colour per series of this chapter (CUB in the vendor greys, the copy dashed).
COLORS = {"single-pass": "C0", "three-kernel": "C2", "serial": "C1",
          "cupy.cumsum (CUB)": "0.55", "torch.cumsum": "0.25", "copy": "0.4",
          "fused": "C0", "unfused": "C2", "torch.unique_consecutive": "0.25",
          "NumPy (CPU)": "C4"}
LABELS = {"single-pass": "single pass (03)", "three-kernel": "three kernels, fixed (02)",
          "serial": "serial in block (01)", "cupy.cumsum (CUB)": "cupy.cumsum (CUB)",
          "torch.cumsum": "torch.cumsum (CUB)", "copy": "copy (cudaMemcpy)"}


def summary(check, sizes, dtypes, rle, large, stress, order, prof, tune, lookback) -> dict:
    """name -> value for every number the page quotes."""
    out = {}
    for lb in ("warp", "block"):
        for g in ("per-tile", "persistent"):
            r = lookup.first(lookback, lookback=lb, grid=g)
            out[f"lb_{lb}_{'tile' if g == 'per-tile' else g}"] = lookup.cell(r, "of_copy") * 100
    out["n_checked"] = int(check["correct"].notna().sum())
    out["n_failed"] = int((check["correct"] == False).sum())  # noqa: E712
    big = 1 << 28
    for key, v in (("sp", "single-pass"), ("tk", "three-kernel"), ("cub", "cupy.cumsum (CUB)"),
                   ("torch", "torch.cumsum"), ("copy", "copy")):
        r = lookup.first(sizes, variant=v, n=big)
        out[f"{key}_tbs"] = lookup.cell(r, "GB/s") / 1e3
        out[f"{key}_us"] = lookup.cell(r, "median_ms") * 1e3
        out[f"{key}_of_copy"] = lookup.cell(r, "of_copy") * 100
        out[f"{key}_of_copy_min"] = lookup.cell(r, "of_copy_min") * 100
        out[f"{key}_of_copy_max"] = lookup.cell(r, "of_copy_max") * 100
        out[f"{key}_x_torch"] = lookup.cell(r, "x_torch")
        out[f"{key}_x_torch_min"] = lookup.cell(r, "x_torch_min")
        out[f"{key}_x_torch_max"] = lookup.cell(r, "x_torch_max")
        out[f"{key}_x_cub"] = lookup.cell(r, "x_cub")
    out["has_torch"] = "torch.cumsum" in set(sizes["variant"])
    small = int(sizes["n"].min())
    out["small_n_log2"] = int(round(math.log2(small)))
    for key, v in (("sp", "single-pass"), ("tk", "three-kernel"), ("cub", "cupy.cumsum (CUB)"),
                   ("torch", "torch.cumsum"), ("copy", "copy"), ("serial", "serial")):
        out[f"{key}_small_us"] = lookup.cell(lookup.first(sizes, variant=v, n=small), "median_ms") * 1e3
    ser = sizes[(sizes["variant"] == "serial") & sizes["GB/s"].notna()]
    if len(ser):
        r = ser.sort_values("n").iloc[-1]
        out["serial_n_log2"] = int(round(math.log2(r["n"])))
        out["serial_gbs"] = float(r["GB/s"])
        out["serial_of_copy"] = float(r["of_copy"]) * 100
        tk = lookup.first(sizes, variant="three-kernel", n=int(r["n"]))
        out["tk_at_serial_gbs"] = lookup.cell(tk, "GB/s")
        out["tk_over_serial"] = lookup.cell(tk, "GB/s") / float(r["GB/s"])
    # int64 and float32, inclusive and exclusive, at 2^28
    for dt in ("int32", "int64", "float32"):
        for inc, tag in ((True, "inc"), (False, "exc")):
            r = lookup.first(dtypes, variant=f"single-pass {'inclusive' if inc else 'exclusive'}",
                     dtype=dt)
            out[f"dt_{dt}_{tag}_of_copy"] = lookup.cell(r, "of_copy") * 100
            out[f"dt_{dt}_{tag}_tbs"] = lookup.cell(r, "GB/s") / 1e3
        r = lookup.first(dtypes, variant="single-pass inclusive", dtype=dt)
        out[f"dt_{dt}_x_torch"] = lookup.cell(r, "x_torch")
        out[f"dt_{dt}_x_cub"] = lookup.cell(r, "x_cub")
    # run-length encoding
    for kind in ("short", "long", "mixed"):
        f = lookup.first(rle, variant="fused", n=1 << 25, kind=kind)
        u = lookup.first(rle, variant="unfused", n=1 << 25, kind=kind)
        t = lookup.first(rle, variant="torch.unique_consecutive", n=1 << 25, kind=kind)
        c = lookup.first(rle, variant="NumPy (CPU)", n=1 << 25, kind=kind)
        out[f"rle_{kind}_us"] = lookup.cell(f, "median_ms") * 1e3
        out[f"rle_{kind}_x_torch"] = lookup.cell(f, "x_torch")
        out[f"rle_{kind}_x_torch_min"] = lookup.cell(f, "x_torch_min")
        out[f"rle_{kind}_x_torch_max"] = lookup.cell(f, "x_torch_max")
        out[f"rle_{kind}_of_copy"] = lookup.cell(f, "of_copy") * 100
        out[f"rle_{kind}_torch_us"] = lookup.cell(t, "median_ms") * 1e3
        out[f"rle_{kind}_unfused_us"] = lookup.cell(u, "median_ms") * 1e3
        out[f"rle_{kind}_fused_over_unfused"] = lookup.cell(u, "median_ms") / lookup.cell(f, "median_ms")
        out[f"rle_{kind}_numpy_ms"] = lookup.cell(c, "median_ms")
        out[f"rle_{kind}_runs"] = int(lookup.cell(f, "runs", 0))
        out[f"rle_{kind}_fused_mb"] = lookup.cell(f, "bytes_moved") / 1e6
        out[f"rle_{kind}_unfused_mb"] = lookup.cell(u, "bytes_moved") / 1e6
    out["rle_all_round_trips"] = bool(rle[rle["variant"].isin(["fused", "unfused"])]["correct"].all())
    out["rle_n_checked"] = int(rle[rle["variant"].isin(["fused", "unfused"])]["correct"].notna().sum())
    # past 2^31
    out["large_ok"] = bool(large[large["correct"].notna()]["correct"].all())
    inv = large[large.get("invalid", pd.Series(dtype=object)).notna()] if "invalid" in large else large.iloc[0:0]
    out["large_refusal"] = str(inv["invalid"].iloc[0]) if len(inv) else "—"
    out["stress_calls"] = int(stress["calls"].max())
    out["stress_ok"] = bool(stress["correct"].all())
    out["stress_wrong"] = int(stress["wrong_calls"].sum())
    # float summation order at the largest size
    nmax = int(order["n"].max())
    out["order_n_log2"] = int(round(math.log2(nmax)))
    for key, v in (("sp", "single-pass"), ("tk", "three-kernel"), ("serial", "serial"),
                   ("cub", "cupy.cumsum (CUB)"), ("torch", "torch.cumsum"),
                   ("np", "NumPy float32 (CPU, left to right)")):
        r = lookup.first(order, variant=v, n=nmax)
        out[f"order_{key}_err"] = lookup.cell(r, "rel_err")
    out["order_tol"] = lookup.cell(lookup.first(order, variant="single-pass", n=nmax), "tolerance")
    # profiler
    for key, v in (("serial", "serial"), ("tk", "three-kernel"), ("sp", "single-pass"),
                   ("cub", "cupy.cumsum (CUB)")):
        r = lookup.first(prof, variant=v) if prof is not None and len(prof) else None
        for m in ("threads_per_inst", "achieved_occupancy_pct", "dram_throughput_pct",
                  "duration_us", "dram_read_MB", "dram_write_MB"):
            out[f"prof_{key}_{m}"] = lookup.cell(r, m)
    # tuning
    t = tune[tune["of_copy"].notna()] if "of_copy" in tune else tune.iloc[0:0]
    if len(t):
        best = t.sort_values("of_copy").iloc[-1]
        out["tune_best"] = f"block {int(best['block'])} × {int(best['items'])} items"
        out["tune_best_of_copy"] = float(best["of_copy"]) * 100
        worst = t.sort_values("of_copy").iloc[0]
        out["tune_worst"] = f"block {int(worst['block'])} × {int(worst['items'])} items"
        out["tune_worst_of_copy"] = float(worst["of_copy"]) * 100
        d = lookup.first(t, block=256, items=32)
        out["tune_default_of_copy"] = lookup.cell(d, "of_copy") * 100
    return out


def targets(s: dict) -> pd.DataFrame:
    """The done-when targets of issue #11, measured."""
    def row(what, target, measured, ok):
        return {"target": what, "wanted": target, "measured": measured,
                "met": None if ok is None else bool(ok)}
    rows = [
        row("single pass, 2^28 int32, × copy", "≥ 0.85",
            f"{s['sp_of_copy'] / 100:.2f} ({s['sp_of_copy_min'] / 100:.2f}–{s['sp_of_copy_max'] / 100:.2f})",
            s["sp_of_copy"] >= 85),
        row("single pass, 2^28 int32, × torch.cumsum", "≥ 1.2",
            "—" if not s["has_torch"] else
            f"{s['sp_x_torch']:.2f} ({s['sp_x_torch_min']:.2f}–{s['sp_x_torch_max']:.2f})",
            None if not s["has_torch"] else s["sp_x_torch"] >= 1.2),
        row("RLE encode, 2^25 int32 runs 1–15, × torch.unique_consecutive", "≥ 4",
            "—" if math.isnan(s["rle_short_x_torch"]) else
            f"{s['rle_short_x_torch']:.2f} ({s['rle_short_x_torch_min']:.2f}–{s['rle_short_x_torch_max']:.2f})",
            None if math.isnan(s["rle_short_x_torch"]) else s["rle_short_x_torch"] >= 4),
        row("RLE round trip exact at every size and input", "all",
            f"{s['rle_n_checked']} encodes", s["rle_all_round_trips"]),
        row("correct at 0, 1, 31, 1000003, 2^30 + 1, 2^31 + 5", "all",
            f"{s['n_checked']} checks, {s['n_failed']} failed", s["n_failed"] == 0 and s["large_ok"]),
        row(f"{s['stress_calls']} back-to-back single-pass scans", "no hang, all right",
            f"{s['stress_wrong']} wrong", s["stress_ok"]),
    ]
    return pd.DataFrame(rows)


def sizes_figure(fig, sizes, bulk=None):
    """Left: time per call against n (launch-bound at small n); right: fraction of the
    copy measured in the same rounds. With `bulk` (scan.bulk's rows), 16 at its default
    shape is drawn at the sizes that run measured (its own copy in its own rounds)."""
    ax1, ax2 = fig.subplots(1, 2)
    for v in ("serial", "three-kernel", "single-pass", "cupy.cumsum (CUB)", "torch.cumsum", "copy"):
        d = sizes[(sizes["variant"] == v) & sizes["median_ms"].notna()].sort_values("n")
        if not len(d):
            continue
        ls = "--" if v == "copy" else "-"
        ax1.plot(d["n"], d["median_ms"] * 1e3, ls, marker="o", ms=3, color=COLORS[v],
                 label=LABELS[v])
        ax1.fill_between(d["n"], d["p20_ms"] * 1e3, d["p80_ms"] * 1e3, color=COLORS[v], alpha=0.2)
        if v != "copy":
            ax2.plot(d["n"], d["of_copy"], ls, marker="o", ms=3, color=COLORS[v], label=LABELS[v])
            ax2.fill_between(d["n"], d["of_copy_min"], d["of_copy_max"], color=COLORS[v], alpha=0.2)
    if bulk is not None and len(bulk):
        d = bulk[(bulk["variant"] == "bulk") & bulk["median_ms"].notna()].sort_values("n")
        if len(d):
            kw = dict(color="C3", marker="D", ms=5, ls="none", label="bulk copy + sequencer (16)")
            ax1.plot(d["n"], d["median_ms"] * 1e3, **kw)
            ax2.plot(d["n"], d["of_copy"], **kw)
            ax2.errorbar(d["n"], d["of_copy"], yerr=[d["of_copy"] - d["of_copy_min"],
                         d["of_copy_max"] - d["of_copy"]], color="C3", ls="none")
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("elements (int32)")
    ax1.set_yscale("log")
    ax1.set_ylabel("time per call (µs)")
    ax2.set_ylabel("speed as a fraction of the copy")
    ax2.axhline(2 / 3, color="C2", lw=0.8, ls=":")
    ax2.text(2 ** 10, 2 / 3 + 0.02, "2/3: the three kernels' bound", color="C2", fontsize=9)
    handles, labels = ax1.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 0.01), ncol=3,
               fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.22, 1, 1))


def rle_figure(ax, rle, n=1 << 25):
    d = rle[(rle["n"] == n) & rle["median_ms"].notna()]
    kinds = [k for k in ("short", "long", "mixed", "equal", "distinct") if k in set(d["kind"])]
    variants = [v for v in ("fused", "unfused", "torch.unique_consecutive") if v in set(d["variant"])]
    w = 0.8 / max(len(variants), 1)
    for j, v in enumerate(variants):
        ys = [lookup.cell(lookup.first(d, variant=v, kind=k), "median_ms") * 1e3 for k in kinds]
        ax.bar([i + j * w for i in range(len(kinds))], ys, w, color=COLORS[v], label=v)
    ax.set_xticks([i + w * (len(variants) - 1) / 2 for i in range(len(kinds))])
    ax.set_xticklabels([f"{k} runs" for k in kinds], fontsize=9)
    ax.set_yscale("log")
    ax.set_ylabel(f"µs per encode of 2^{int(math.log2(n))} int32")
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)


def sizes_table(sizes):
    d = sizes[sizes["median_ms"].notna()].copy()
    return d.sort_values(["n", "variant"])


def order_table(order):
    return order.sort_values(["n", "variant"])


def pipeline_summary(targets_rows, pipeline) -> dict:
    """The numbers of the second try (08, 09: persistent blocks, cp.async pipeline), from
    scan.targets and scan.pipeline."""
    out = {}
    t = targets_rows
    chk = t[t["part"] == "check"] if "part" in t else t.iloc[:0]
    chk = chk[chk["variant"] == "pipelined"]                  # 08 and 09 (12, 13: below)
    out["pl_n_checked"] = int(chk["correct"].notna().sum())
    out["pl_n_failed"] = int((chk["correct"] == False).sum())  # noqa: E712
    sc = t[t["part"] == "scan"] if "part" in t else t.iloc[:0]
    for key, v in (("pl", "pipelined"), ("pl_sp", "single-pass"), ("pl_torch", "torch.cumsum"),
                   ("pl_copy", "copy")):
        r = lookup.first(sc, variant=v)
        out[f"{key}_tbs"] = lookup.cell(r, "GB/s") / 1e3
        for m in ("of_copy", "of_copy_min", "of_copy_max"):
            out[f"{key}_{m}"] = lookup.cell(r, m) * 100
        for m in ("x_torch", "x_torch_min", "x_torch_max"):
            out[f"{key}_{m}"] = lookup.cell(r, m)
    rl = t[(t["part"] == "rle") & (t["kind"] == "short")] if "part" in t else t.iloc[:0]
    for key, v in (("pl_rle", "pipelined"), ("pl_rle_fused", "fused"),
                   ("pl_rle_torch", "torch.unique_consecutive")):
        r = lookup.first(rl, variant=v)
        out[f"{key}_us"] = lookup.cell(r, "median_ms") * 1e3
        for m in ("x_torch", "x_torch_min", "x_torch_max"):
            out[f"{key}_{m}"] = lookup.cell(r, m)
    p = pipeline[pipeline["variant"].str.startswith("pipelined")].dropna(subset=["of_copy"]) \
        if "of_copy" in pipeline else pipeline.iloc[:0]
    if len(p):
        best, worst = p.loc[p["of_copy"].idxmax()], p.loc[p["of_copy"].idxmin()]
        out["pl_best"] = best["variant"].replace("pipelined ", "")
        out["pl_best_of_copy"] = float(best["of_copy"]) * 100
        out["pl_worst"] = worst["variant"].replace("pipelined ", "")
        out["pl_worst_of_copy"] = float(worst["of_copy"]) * 100
    r = lookup.first(pipeline, variant="single-pass")
    out["pl_sweep_sp_of_copy"] = lookup.cell(r, "of_copy") * 100
    return out


def pipeline_table(pipeline) -> pd.DataFrame:
    """scan.pipeline: one row per shape, fraction of the copy and × torch.cumsum."""
    cols = [c for c in ("variant", "block", "items", "stages", "of_copy", "x_torch", "median_ms")
            if c in pipeline]
    d = pipeline[cols].copy()
    if "of_copy" in d:
        d["of_copy"] = d["of_copy"] * 100
    return d


def targets_second_try(s: dict) -> pd.DataFrame:
    """Issue #11's targets, measured for the second try (scan.targets)."""
    rows = [
        {"target": "pipelined single pass (08), 2^28 int32, × copy", "wanted": "≥ 0.85",
         "measured": f"{s['pl_of_copy'] / 100:.2f} ({s['pl_of_copy_min'] / 100:.2f}–"
                     f"{s['pl_of_copy_max'] / 100:.2f})", "met": bool(s["pl_of_copy"] >= 85)},
        {"target": "pipelined single pass (08), 2^28 int32, × torch.cumsum", "wanted": "≥ 1.2",
         "measured": f"{s['pl_x_torch']:.2f} ({s['pl_x_torch_min']:.2f}–{s['pl_x_torch_max']:.2f})",
         "met": bool(s["pl_x_torch"] >= 1.2)},
        {"target": "pipelined encoder (09), 2^25 runs 1–15, × torch.unique_consecutive",
         "wanted": "≥ 4",
         "measured": f"{s['pl_rle_x_torch']:.2f} ({s['pl_rle_x_torch_min']:.2f}–"
                     f"{s['pl_rle_x_torch_max']:.2f})", "met": bool(s["pl_rle_x_torch"] >= 4)},
        {"target": "pipelined scan and encoder correct (every dtype, 0 … 2^24 + 3)",
         "wanted": "all", "measured": f"{s['pl_n_checked']} checks, {s['pl_n_failed']} failed",
         "met": s["pl_n_failed"] == 0},
    ]
    return pd.DataFrame(rows)


def _sweep(staged, kind, lookback=True):
    d = staged[staged["variant"].str.startswith(kind)] if "variant" in staged else staged
    if "lookback" in d:
        d = d[d["lookback"] == lookback]
    return d.dropna(subset=["of_copy"]) if "of_copy" in d else d.iloc[:0]


def staged_summary(staged) -> dict:
    """The third try (10, 12: the tile waits in shared memory), from the scan.staged sweep:
    the structure without its look-back, the staged scan by pause and width, the
    look-ahead scan, all in the same rounds as the copy, torch.cumsum and 03."""
    out = {}
    chk = staged[staged["correct"].notna()] if "correct" in staged else staged.iloc[:0]
    out["st_n_checked"] = int(len(chk))
    out["st_n_failed"] = int((chk["correct"] == False).sum())  # noqa: E712
    diag = _sweep(staged, "staged", lookback=False)
    if len(diag):
        best = diag.loc[diag["of_copy"].idxmax()]
        out["st_diag"] = best["variant"].replace("staged ", "").replace(" without look-back", "")
        for m in ("of_copy", "of_copy_min", "of_copy_max"):
            out[f"st_diag_{m}"] = float(best[m]) * 100
    for key, kind in (("st", "staged"), ("la", "lookahead")):
        d = _sweep(staged, kind)
        if not len(d):
            continue
        best = d.loc[d["of_copy"].idxmax()]
        out[f"{key}_best"] = best["variant"].replace(f"{kind} ", "")
        for m in ("of_copy", "of_copy_min", "of_copy_max"):
            out[f"{key}_{m}"] = float(best[m]) * 100
        for m in ("x_torch", "x_torch_min", "x_torch_max"):
            out[f"{key}_{m}"] = float(best[m])
        out[f"{key}_us"] = float(best["median_ms"]) * 1e3
    v = {r["variant"]: r for _, r in staged.iterrows()} if "variant" in staged else {}

    def pct(name):
        return lookup.cell(v.get(name), "of_copy") * 100
    out["st_w1"] = pct("staged 128x32x12 1024 ns")
    out["st_w2"] = pct("staged 128x32x12 1024 ns x2")
    out["st_w4"] = pct("staged 128x32x12 1024 ns x4")
    out["st_d256"] = pct("staged 128x32x12 256 ns")
    out["st_d4096"] = pct("staged 128x32x12 4096 ns")
    out["st_256"] = pct("staged 256x32x6 1024 ns")
    out["la_d256"] = pct("lookahead 128x32x12 256 ns")
    out["st_sp_of_copy"] = pct("single-pass")
    out["st_sp_x_torch"] = lookup.cell(v.get("single-pass"), "x_torch")
    copy, torch = v.get("copy"), v.get("torch.cumsum")
    out["st_copy_tbs"] = lookup.cell(copy, "TB/s")
    out["st_torch_of_copy"] = (lookup.cell(copy, "median_ms") / lookup.cell(torch, "median_ms")) * 100
    return out


def staged_table(staged) -> pd.DataFrame:
    """scan.staged: one row per kernel and shape, fraction of the copy and × torch.cumsum."""
    cols = [c for c in ("variant", "registers", "of_copy", "of_copy_min", "of_copy_max",
                        "x_torch", "median_ms") if c in staged]
    d = _sweep(staged, "staged", True)
    d = pd.concat([_sweep(staged, "lookahead"), d, _sweep(staged, "staged", False),
                   staged[staged["variant"] == "single-pass"]])[cols].copy()
    for c in ("of_copy", "of_copy_min", "of_copy_max"):
        if c in d:
            d[c] = d[c] * 100
    return d.sort_values("of_copy", ascending=False)


def targets_third_try(s: dict) -> pd.DataFrame:
    """Issue #11's scan targets, measured for the look-ahead single pass (12) in scan.staged."""
    rows = [
        {"target": f"look-ahead single pass (12), best of the sweep ({s['la_best']}), "
                   "2^28 int32, × copy",
         "wanted": "≥ 0.85",
         "measured": f"{s['la_of_copy'] / 100:.2f} ({s['la_of_copy_min'] / 100:.2f}–"
                     f"{s['la_of_copy_max'] / 100:.2f})", "met": bool(s["la_of_copy"] >= 85)},
        {"target": f"look-ahead single pass (12), best of the sweep ({s['la_best']}), "
                   "2^28 int32, × torch.cumsum",
         "wanted": "≥ 1.2",
         "measured": f"{s['la_x_torch']:.2f} ({s['la_x_torch_min']:.2f}–{s['la_x_torch_max']:.2f})",
         "met": bool(s["la_x_torch"] >= 1.2)},
        {"target": "every shape of 10 and 12 checked exactly at 2^28 before it was timed",
         "wanted": "all", "measured": f"{s['st_n_checked']} checks, {s['st_n_failed']} failed",
         "met": s["st_n_failed"] == 0},
    ]
    return pd.DataFrame(rows)


RLE_KIND_NAMES = ("short", "long", "mixed", "distinct", "equal")


def defaults_summary(t, stress, key: str, scan: str, encoder: str, scan_rivals=(),
                     rle_rivals=()) -> dict:
    """A try's scan and encoder at their defaults, from scan.targets and scan.stress, as
    `key`-prefixed numbers: their checks (every dtype and size, and past 2^31), the 2^28
    scan with its rivals (suffix, variant) in the same rounds, the 2^25 encodes by kind of
    runs with theirs, and the back-to-back calls."""
    out = {}
    part = t["part"] if "part" in t else pd.Series("", index=t.index)
    ours = t[t["variant"].isin([scan, f"rle {encoder}"])] if "variant" in t else t.iloc[:0]
    chk = ours[part[ours.index].isin(["check", "large"]) & ours["correct"].notna()]
    out[f"{key}_n_checked"] = int(len(chk))
    out[f"{key}_n_failed"] = int((chk["correct"] == False).sum())  # noqa: E712
    sc = t[part == "scan"]
    for sfx, v in (("", scan),) + tuple(scan_rivals):
        r = lookup.first(sc, variant=v)
        out[f"{key}{sfx}_tbs"] = lookup.cell(r, "GB/s") / 1e3
        out[f"{key}{sfx}_us"] = lookup.cell(r, "median_ms") * 1e3
        for m in ("of_copy", "of_copy_min", "of_copy_max"):
            out[f"{key}{sfx}_{m}"] = lookup.cell(r, m) * 100
        for m in ("x_torch", "x_torch_min", "x_torch_max"):
            out[f"{key}{sfx}_{m}"] = lookup.cell(r, m)
    rl = t[part == "rle"]
    for kind in RLE_KIND_NAMES:
        k = rl[rl["kind"] == kind] if "kind" in rl else rl.iloc[:0]
        for sfx, v in (("", encoder),) + tuple(rle_rivals):
            r = lookup.first(k, variant=v)
            out[f"{key}_rle{sfx}_{kind}_us"] = lookup.cell(r, "median_ms") * 1e3
            for m in ("x_torch", "x_torch_min", "x_torch_max", "of_copy"):
                out[f"{key}_rle{sfx}_{kind}_{m}"] = lookup.cell(r, m)
    lg = ours[part[ours.index] == "large"]
    ok = lg[lg["correct"].notna()] if "correct" in lg else lg.iloc[:0]
    out[f"{key}_large_ok"] = bool(len(ok)) and bool(ok["correct"].all())
    out[f"{key}_large_sizes"] = (", ".join(f"{int(n):,}" for n in sorted(set(ok["n"])))
                                 if len(ok) else "—")
    inv = lg[lg["invalid"].notna()] if "invalid" in lg else lg.iloc[:0]
    out[f"{key}_large_refusal"] = str(inv["invalid"].iloc[0]) if len(inv) else "—"
    st = stress[stress["variant"] == scan] if "variant" in stress else stress.iloc[:0]
    out[f"{key}_stress_calls"] = int(st["calls"].max()) if len(st) else 0
    out[f"{key}_stress_runs"] = int(len(st))
    out[f"{key}_stress_wrong"] = int(st["wrong_calls"].sum()) if len(st) else -1
    out[f"{key}_stress_ok"] = bool(len(st)) and bool(st["correct"].all())
    return out


def defaults_targets(s: dict, key: str, scan: str, encoder: str, kernels: str,
                     stress: str) -> pd.DataFrame:
    """Issue #11's targets for a try's scan and encoder at their defaults (numbers from
    defaults_summary under `key`; `scan`, `encoder`: how the rows name them, `kernels`:
    both, `stress`: the scan in the back-to-back row)."""
    def ratio(m, scale=1):
        return (f"{s[f'{key}_{m}'] / scale:.2f} ({s[f'{key}_{m}_min'] / scale:.2f}–"
                f"{s[f'{key}_{m}_max'] / scale:.2f})")
    rows = [
        {"target": f"{scan}, 2^28 int32, × copy", "wanted": "≥ 0.85",
         "measured": ratio("of_copy", 100), "met": bool(s[f"{key}_of_copy"] >= 85)},
        {"target": f"{scan}, 2^28 int32, × torch.cumsum", "wanted": "≥ 1.2",
         "measured": ratio("x_torch"), "met": bool(s[f"{key}_x_torch"] >= 1.2)},
        {"target": f"{encoder}, 2^25 runs 1–15, × torch.unique_consecutive", "wanted": "≥ 4",
         "measured": ratio("rle_short_x_torch"), "met": bool(s[f"{key}_rle_short_x_torch"] >= 4)},
        {"target": f"{kernels} correct: every dtype, 0 … 2^24 + 3, every kind of runs, "
                   "2^30 + 1 and 2^31 + 5",
         "wanted": "all",
         "measured": f"{s[f'{key}_n_checked']} checks, {s[f'{key}_n_failed']} failed",
         "met": s[f"{key}_n_failed"] == 0 and s[f"{key}_n_checked"] > 0 and s[f"{key}_large_ok"]},
        {"target": f"{s[f'{key}_stress_calls']} back-to-back {stress} scans "
                   f"({s[f'{key}_stress_runs']} sizes)",
         "wanted": "no hang, all right", "measured": f"{s[f'{key}_stress_wrong']} wrong",
         "met": s[f"{key}_stress_ok"]},
    ]
    return pd.DataFrame(rows)


def lookahead_summary(targets_rows, staged, stress) -> dict:
    """The fourth try: the look-ahead scan (12) and encoder (13) at their defaults, from
    scan.targets (checks, 2^28 scan, 2^25 encodes, past 2^31), scan.stress and scan.staged."""
    from . import ops, rle as rle_mod
    t = targets_rows
    part = t["part"] if "part" in t else pd.Series("", index=t.index)
    out = defaults_summary(t, stress, "la4", "lookahead", "lookahead",
                           (("_sp", "single-pass"), ("_torch", "torch.cumsum"), ("_copy", "copy")),
                           (("_fused", "fused"), ("_torch", "torch.unique_consecutive")))
    b, i, m = ops.LOOKAHEAD
    out["la4_shape"] = f"{b}x{i}x{m} {ops.LOOKAHEAD_DELAY} ns"
    b, i, m, d = rle_mod.LOOKAHEAD
    out["la4_rle_shape"] = f"{b}x{i}x{m} {d} ns"
    # input read rates: the scan at 2^28, the encoder on long runs (it writes almost nothing)
    out["la4_read_tbs"] = out["la4_tbs"] / 2                       # GB/s counts read + write
    rl = t[part == "rle"]
    k = rl[rl["kind"] == "long"] if "kind" in rl else rl.iloc[:0]
    out["la4_rle_long_read_tbs"] = lookup.cell(lookup.first(k, variant="lookahead"), "GB/s") / 1e3
    v = {r["variant"]: r for _, r in staged.iterrows()} if "variant" in staged else {}

    def pct(name):
        return lookup.cell(v.get(name), "of_copy") * 100
    sw = lookahead_sweep_table(staged)
    if "early" in sw:
        sw = sw[sw["early"] == True]  # noqa: E712
    if len(sw):
        best = sw.loc[sw["of_copy"].idxmax()]
        out["la4_sw_best"] = str(best["variant"]).replace("lookahead ", "")
        out["la4_sw_best_pct"] = float(best["of_copy"])
    big = sw[sw["block"] >= 192] if "block" in sw else sw.iloc[:0]
    out["la4_sw_big_lo"] = float(big["of_copy"].min()) if len(big) else math.nan
    out["la4_sw_big_hi"] = float(big["of_copy"].max()) if len(big) else math.nan
    if "kib_per_sm" in sw:
        sw = sw[(sw["kib_per_sm"] >= 170) & (sw["kib_per_sm"] <= 230) & (sw["block"] <= 128)]
    out["la4_sw_lo"] = float(sw["of_copy"].min()) if len(sw) else math.nan
    out["la4_sw_hi"] = float(sw["of_copy"].max()) if len(sw) else math.nan
    gains = [pct(f"lookahead {sh} 2048 ns") - pct(f"lookahead {sh} 2048 ns late aggregate")
             for sh in ("128x32x12", "96x48x12")]
    out["la4_early_gain_lo"], out["la4_early_gain_hi"] = min(gains), max(gains)
    b, i, m = ops.LOOKAHEAD
    out["la4_sw_default"] = lookup.cell(v.get(f"lookahead {b}x{i}x{m} {ops.LOOKAHEAD_DELAY} ns"),
                                 "of_copy") * 100
    return out


def lookahead_sweep_table(staged) -> pd.DataFrame:
    """scan.staged, the look-ahead shapes only (12 at its pause, by tile shape)."""
    from . import ops
    d = _sweep(staged, "lookahead")
    if "delay_ns" in d:
        d = d[d["delay_ns"] == ops.LOOKAHEAD_DELAY]
    cols = [c for c in ("variant", "block", "items", "blocks_per_sm", "early", "of_copy", "of_copy_min",
                        "of_copy_max", "x_torch", "median_ms") if c in d]
    d = d[cols].copy()
    if "block" in d and "items" in d:
        d["tile_kib"] = d["block"] * d["items"] * 4 / 1024
        if "blocks_per_sm" in d:
            d["kib_per_sm"] = d["tile_kib"] * d["blocks_per_sm"]
    for c in ("of_copy", "of_copy_min", "of_copy_max"):
        if c in d:
            d[c] = d[c] * 100
    return d.sort_values("of_copy", ascending=False)


def targets_fourth_try(s: dict) -> pd.DataFrame:
    """Issue #11's targets for the look-ahead scan (12) and encoder (13), from scan.targets
    and scan.stress."""
    return defaults_targets(s, "la4", f"look-ahead single pass (12, {s['la4_shape']})",
                            "look-ahead encoder (13)", "12 and 13", "look-ahead")


def chunked_table(chunked) -> pd.DataFrame:
    """scan.chunked: every shape of 14, its diagnostic, 12 and 03 in the same rounds,
    fraction of the copy (%) and × torch.cumsum."""
    cols = [c for c in ("variant", "chunk_kib", "blocks_per_sm", "vpl", "of_copy", "of_copy_min",
                        "of_copy_max", "x_torch", "median_ms") if c in chunked]
    d = chunked[chunked["variant"].isin(["lookahead", "single-pass"])
                | chunked["variant"].str.startswith("chunked")] if "variant" in chunked else chunked
    d = d.dropna(subset=["of_copy"]) if "of_copy" in d else d.iloc[:0]
    d = d[cols].copy()
    for c in ("of_copy", "of_copy_min", "of_copy_max"):
        if c in d:
            d[c] = d[c] * 100
    return d.sort_values("of_copy", ascending=False)


def chunked_summary(chunked, rle_rows, targets_rows, stress, prof=None) -> dict:
    """The fifth try (14, 15: reduce from memory, scan one chunk later from L2), from the
    scan.chunked sweep, the scan.rle_chunked encodes, scan.targets (14 and 15 at their
    defaults, with every check), scan.stress and, when recorded, scan.chunked_profile."""
    from . import ops, rle as rle_mod
    out = {}
    chk = chunked[chunked["correct"].notna()] if "correct" in chunked else chunked.iloc[:0]
    out["ch5_sw_n_checked"] = int(len(chk))
    out["ch5_sw_n_failed"] = int((chk["correct"] == False).sum())  # noqa: E712
    v = {r["variant"]: r for _, r in chunked.iterrows()} if "variant" in chunked else {}

    def name(w, vv, bt, m, d, wd, pol=0, pre=0, tier=0):
        return (f"chunked {w}x{vv}x{bt}x{m} {d} ns" + (f" tier {tier}" if tier else f" x{wd}")
                + (f" policy {pol}" if pol else "") + (f" preload {pre}" if pre else ""))

    def pct(key):
        return lookup.cell(v.get(key), "of_copy") * 100
    w, vv, bt, m = ops.CHUNKED
    default = name(w, vv, bt, m, ops.CHUNKED_DELAY, ops.CHUNKED_WIDTH, tier=ops.CHUNKED_TIER)
    out["ch5_shape"] = f"{w}x{vv}x{bt}x{m}"
    out["ch5_chunk_kib"] = ops.chunk_elems("int32", w, vv, bt) * 4 / 1024
    out["ch5_blocks"] = 132 * m
    for key, nm in (("ch5_sw", default), ("ch5_sw_la", "lookahead"), ("ch5_sw_sp", "single-pass")):
        r = v.get(nm)
        for mm in ("of_copy", "of_copy_min", "of_copy_max"):
            out[f"{key}_{mm}"] = lookup.cell(r, mm) * 100
        for mm in ("x_torch", "x_torch_min", "x_torch_max"):
            out[f"{key}_{mm}"] = lookup.cell(r, mm)
        out[f"{key}_us"] = lookup.cell(r, "median_ms") * 1e3
    # the first default (8x4x1x4, 528 blocks, 8 words a lane), narrower, two-level
    out["ch5_first"] = pct(name(8, 4, 1, 4, 256, 8))
    out["ch5_first_w4"] = pct(name(8, 4, 1, 4, 256, 4))
    out["ch5_first_t32"] = pct(name(8, 4, 1, 4, 256, 8, tier=32))
    out["ch5_first_t16"] = pct(name(8, 4, 1, 4, 256, 8, tier=16))
    out["ch5_pol1"] = pct(name(w, vv, bt, m, ops.CHUNKED_DELAY, ops.CHUNKED_WIDTH, pol=1))
    diag = {k: r for k, r in v.items() if k.startswith("chunked") and "without look-back" in k}
    out["ch5_diag_of_copy"] = lookup.cell(diag.get(f"chunked {w}x{vv}x{bt}x{m} without look-back"),
                                   "of_copy") * 100
    out["ch5_diag_first_of_copy"] = lookup.cell(diag.get("chunked 8x4x1x4 without look-back"),
                                         "of_copy") * 100
    sw = chunked_table(chunked)
    sw = sw[sw["variant"].str.startswith("chunked") & ~sw["variant"].str.contains("without")] \
        if "variant" in sw else sw
    big = sw[sw["vpl"] == 8] if len(sw) and "vpl" in sw else sw.iloc[:0]
    out["ch5_big_lo"] = float(big["of_copy"].min()) if len(big) else math.nan
    out["ch5_big_hi"] = float(big["of_copy"].max()) if len(big) else math.nan
    if len(sw):
        best, worst = sw.iloc[0], sw.iloc[-1]
        out["ch5_best"] = str(best["variant"]).replace("chunked ", "")
        out["ch5_best_of_copy"] = float(best["of_copy"])
        out["ch5_worst"] = str(worst["variant"]).replace("chunked ", "")
        out["ch5_worst_of_copy"] = float(worst["of_copy"])
    copy, torch = v.get("copy"), v.get("torch.cumsum")
    out["ch5_copy_tbs"] = lookup.cell(copy, "TB/s")
    out["ch5_torch_of_copy"] = (lookup.cell(copy, "median_ms") / lookup.cell(torch, "median_ms")) * 100
    # scan.targets: 14 and 15 at their defaults, with every check
    out.update(defaults_summary(targets_rows, stress, "ch5", "chunked", "chunked",
                                (("_la", "lookahead"), ("_sp", "single-pass")),
                                (("_la", "lookahead"), ("_torch", "torch.unique_consecutive"))))
    out["ch5_over_la"] = out["ch5_la_us"] / out["ch5_us"]
    b = rle_mod.CHUNKED
    out["ch5_rle_shape"] = f"{b[0]}x{b[1]}x{b[2]}x{b[3]}" + (f", S = {b[6]}" if b[6] else "")
    # scan.rle_chunked: every shape, by kind
    rc = rle_rows[rle_rows["correct"].notna()] if "correct" in rle_rows else rle_rows.iloc[:0]
    out["ch5_rle_sw_n_checked"] = int(len(rc))
    out["ch5_rle_sw_n_failed"] = int((rc["correct"] == False).sum())  # noqa: E712
    k = rle_rows[rle_rows["kind"] == "short"] if "kind" in rle_rows else rle_rows.iloc[:0]
    k = k[k["variant"].str.startswith("rle chunked")].dropna(subset=["x_torch"]) \
        if len(k) and "x_torch" in k else k.iloc[:0]
    out["ch5_rle_sw_lo"] = float(k["x_torch"].min()) if len(k) else math.nan
    out["ch5_rle_sw_hi"] = float(k["x_torch"].max()) if len(k) else math.nan
    if prof is not None:
        p = {r["variant"]: r for _, r in prof.iterrows()} if "variant" in prof else {}
        for key, nm in (("ch5", "chunked"), ("ch5_la", "lookahead")):
            r = p.get(nm)
            out[f"{key}_dram_read_x"] = lookup.cell(r, "dram_read_over_input")
            out[f"{key}_dram_write_x"] = lookup.cell(r, "dram_write_over_input")
            out[f"{key}_l2_hit_pct"] = lookup.cell(r, "l2_hit_pct")
        out["ch5_second_read_miss_pct"] = (out["ch5_dram_read_x"] - 1) * 100
    return out


def rle_chunked_table(rle_rows) -> pd.DataFrame:
    cols = [c for c in ("variant", "kind", "runs", "median_ms", "x_torch", "x_torch_min",
                        "x_torch_max", "of_copy", "correct") if c in rle_rows]
    d = rle_rows[rle_rows["variant"] != "copy"] if "variant" in rle_rows else rle_rows
    return d[cols].sort_values(["kind", "median_ms"]) if len(d) else d[cols]


def targets_fifth_try(s: dict) -> pd.DataFrame:
    """Issue #11's targets for the chunked scan (14) and encoder (15), from scan.targets
    and scan.stress."""
    return defaults_targets(s, "ch5", f"chunked single pass (14, {s['ch5_shape']})",
                            f"chunked encoder (15, {s['ch5_rle_shape']})", "14 and 15", "chunked")


def _sweep_part(bulk):
    """scan.bulk's sweep rows (the dtype rows carry part = "dtype")."""
    return bulk[bulk["part"].isna()] if "part" in bulk else bulk


def bulk_table(bulk) -> pd.DataFrame:
    """scan.bulk: every shape of 16 and its diagnostic at each size, with 12, 14 and 03 in
    the same rounds: fraction of the copy (%) and × torch.cumsum."""
    cols = [c for c in ("variant", "n", "scanners", "reducers", "tile_kib", "stages", "of_copy",
                        "of_copy_min", "of_copy_max", "x_torch", "median_ms") if c in bulk]
    d = _sweep_part(bulk)
    if "variant" in d:
        d = d[d["variant"].isin(["lookahead", "chunked", "single-pass"])
              | d["variant"].str.startswith("bulk")]
    d = d.dropna(subset=["of_copy"]) if "of_copy" in d else d.iloc[:0]
    d = d[cols].copy()
    for c in ("of_copy", "of_copy_min", "of_copy_max"):
        if c in d:
            d[c] = d[c] * 100
    return d.sort_values(["n", "of_copy"], ascending=[False, False]) if len(d) else d


def bulk_summary(bulk, rle_rows, targets_rows, stress, prof=None) -> dict:
    """The sixth try (16, 17: tiles by bulk copy, one sequencer warp for the grid), from the
    scan.bulk sweep, the scan.rle_bulk encodes, scan.targets (16 and 17 at their defaults,
    with every check), scan.stress and, when recorded, scan.bulk_profile."""
    from . import bulk as bulk_mod, ops, rle as rle_mod
    out = {}
    chk = bulk[bulk["correct"].notna()] if "correct" in bulk else bulk.iloc[:0]
    out["bk6_sw_n_checked"] = int(len(chk))
    out["bk6_sw_n_failed"] = int((chk["correct"] == False).sum())  # noqa: E712
    default = f"bulk {bulk_mod.shape_name(ops.BULK)}"
    out["bk6_shape"] = bulk_mod.shape_name(ops.BULK)
    out["bk6_rle_shape"] = bulk_mod.shape_name(rle_mod.BULK)
    sweep = _sweep_part(bulk)
    for n, key in ((1 << 28, "bk6_sw"), (1 << 25, "bk6_sw25")):
        d = sweep[sweep["n"] == n] if "n" in sweep else sweep.iloc[:0]
        for sfx, nm in (("", default), ("_diag", f"{default} without sequencer"),
                        ("_ch", "chunked"), ("_la", "lookahead"), ("_sp", "single-pass"),
                        ("_torch", "torch.cumsum"), ("_copy", "copy")):
            r = lookup.first(d, variant=nm)
            for m in ("of_copy", "of_copy_min", "of_copy_max"):
                out[f"{key}{sfx}_{m}"] = lookup.cell(r, m) * 100
            for m in ("x_torch", "x_torch_min", "x_torch_max"):
                out[f"{key}{sfx}_{m}"] = lookup.cell(r, m)
            out[f"{key}{sfx}_us"] = lookup.cell(r, "median_ms") * 1e3
        sw = bulk_table(d)
        sw = sw[sw["variant"].str.startswith("bulk") & ~sw["variant"].str.contains("without")] \
            if len(sw) else sw
        if len(sw):
            best, worst = sw.iloc[0], sw.iloc[-1]
            out[f"{key}_best"] = str(best["variant"]).replace("bulk ", "")
            out[f"{key}_best_of_copy"] = float(best["of_copy"])
            out[f"{key}_worst"] = str(worst["variant"]).replace("bulk ", "")
            out[f"{key}_worst_of_copy"] = float(worst["of_copy"])
    dt = bulk[bulk["part"] == "dtype"] if "part" in bulk else bulk.iloc[:0]
    for dtype in ("int64", "float32"):
        d = dt[dt["dtype"] == dtype] if "dtype" in dt else dt.iloc[:0]
        for sfx, nm in (("", "bulk"), ("_ch", "chunked")):
            r = lookup.first(d, variant=nm)
            out[f"bk6_{dtype}{sfx}_of_copy"] = lookup.cell(r, "of_copy") * 100
            out[f"bk6_{dtype}{sfx}_x_torch"] = lookup.cell(r, "x_torch")
    out.update(defaults_summary(targets_rows, stress, "bk6", "bulk", "bulk",
                                (("_ch", "chunked"), ("_la", "lookahead"), ("_sp", "single-pass")),
                                (("_ch", "chunked"), ("_torch", "torch.unique_consecutive"))))
    out["bk6_over_ch"] = out["bk6_ch_us"] / out["bk6_us"]
    # scan.rle_bulk: every shape and the diagnostics, by kind
    rc = rle_rows[rle_rows["correct"].notna()] if "correct" in rle_rows else rle_rows.iloc[:0]
    out["bk6_rle_sw_n_checked"] = int(len(rc))
    out["bk6_rle_sw_n_failed"] = int((rc["correct"] == False).sum())  # noqa: E712
    rdefault = f"rle bulk {bulk_mod.shape_name(rle_mod.BULK)}"
    named = [("", rdefault)] + [(f"_diag{d}", f"{rdefault} diagnostic {d}")
                                for d in rle_mod.BULK_DIAGNOSTICS]
    for kind in ("short", "long", "distinct"):
        k = rle_rows[rle_rows["kind"] == kind] if "kind" in rle_rows else rle_rows.iloc[:0]
        for sfx, nm in named + [("_ch", "chunked"), ("_torch", "torch.unique_consecutive"),
                                ("_copy", "copy"), ("_read", "read ceiling")]:
            r = lookup.first(k, variant=nm)
            out[f"bk6_rsw_{kind}{sfx}_us"] = lookup.cell(r, "median_ms") * 1e3
            out[f"bk6_rsw_{kind}{sfx}_x_torch"] = lookup.cell(r, "x_torch")
        s = k[k["variant"].str.startswith("rle bulk") & ~k["variant"].str.contains("diagnostic")]\
            .dropna(subset=["x_torch"]) if len(k) and "x_torch" in k else k.iloc[:0]
        out[f"bk6_rsw_{kind}_lo"] = float(s["x_torch"].min()) if len(s) else math.nan
        out[f"bk6_rsw_{kind}_hi"] = float(s["x_torch"].max()) if len(s) else math.nan
        if len(s):
            b = s.loc[s["x_torch"].idxmax()]
            out[f"bk6_rsw_{kind}_best"] = str(b["variant"]).replace("rle bulk ", "")
    # what 4x needs of the short runs' time; what each diagnostic step took away
    out["bk6_rsw_need_us"] = out["bk6_rsw_short_torch_us"] / 4
    lad = rle_bulk_ladder(rle_rows, "short")
    for d, c in zip(rle_mod.BULK_DIAGNOSTICS, lad["cost_us"].iloc[1:]):
        out[f"bk6_rsw_short_cost{d}_us"] = float(c)
    out["bk6_rsw_short_parts_us"] = out["bk6_rsw_short_us"] - out["bk6_rsw_short_diag4_us"]
    out["bk6_sw_seq_pts"] = out["bk6_sw_diag_of_copy"] - out["bk6_sw_of_copy"]
    if prof is not None:
        p = {r["variant"]: r for _, r in prof.iterrows()} if "variant" in prof else {}
        for key, nm in (("bk6", "bulk"), ("bk6_rle", "rle bulk")):
            out[f"{key}_dram_read_x"] = lookup.cell(p.get(nm), "dram_read_over_input")
            out[f"{key}_dram_write_x"] = lookup.cell(p.get(nm), "dram_write_over_input")
            out[f"{key}_prof_us"] = lookup.cell(p.get(nm), "duration_us")
    return out


def rle_bulk_ladder(rle_rows, kind: str = "short") -> pd.DataFrame:
    """17 at its default and its diagnostics, each with one more part taken away, then the
    read ceiling and the copy, on one kind of runs (one run's rounds): µs, × torch, and what
    the part taken away at each step cost (µs)."""
    from . import bulk as bulk_mod, rle as rle_mod
    k = rle_rows[rle_rows["kind"] == kind] if "kind" in rle_rows else rle_rows.iloc[:0]
    rdefault = f"rle bulk {bulk_mod.shape_name(rle_mod.BULK)}"
    steps = [("17, the encoder", rdefault, "")] + [
        (f"diagnostic {d}", f"{rdefault} diagnostic {d}", what)
        for d, what in rle_mod.BULK_DIAGNOSTICS.items()] + [
        ("read ceiling", "read ceiling", "the input read by 16-byte loads, nothing written"),
        ("copy", "copy", "the input read and written")]
    torch_us = lookup.cell(lookup.first(k, variant="torch.unique_consecutive"), "median_ms") * 1e3
    rows, prev = [], None
    for label, nm, what in steps:
        r = lookup.first(k, variant=nm)
        us = lookup.cell(r, "median_ms") * 1e3
        x = lookup.cell(r, "x_torch")
        rows.append({"step": label, "taken away": what, "us": us,
                     "x_torch": x if not math.isnan(x) else torch_us / us,
                     "cost_us": (prev - us) if prev is not None and label.startswith("diag")
                     else math.nan})
        prev = us
    return pd.DataFrame(rows)


def targets_sixth_try(s: dict) -> pd.DataFrame:
    """Issue #11's targets for the bulk-copy scan (16) and encoder (17), from scan.targets
    and scan.stress."""
    return defaults_targets(s, "bk6", f"bulk-copy single pass (16, {s['bk6_shape']})",
                            f"bulk-copy encoder (17, {s['bk6_rle_shape']})", "16 and 17",
                            "bulk-copy")


# -- the seventh try: the lean encoder (18) -----------------------------------------------
def _encoder_checks(rows, key: str) -> dict:
    """An encoder's checks (edge sizes, past 2^30, the refusal past 2^31 - 1) and its
    back-to-back calls, from the rows of its experiment (scan.rle_lean, scan.rle_masks)."""
    out = {}
    part = rows["part"] if "part" in rows else pd.Series("", index=rows.index)
    corr = rows["correct"] if "correct" in rows else pd.Series(None, index=rows.index)
    chk = rows[part.isin(["check", "large"]) & corr.notna()]
    out[f"{key}_n_checked"] = int(len(chk))
    out[f"{key}_n_failed"] = int((chk["correct"] == False).sum())  # noqa: E712
    large = rows[part == "large"]
    done = large[large["correct"].notna()] if len(large) else large
    out[f"{key}_large_ok"] = bool(len(done)) and bool((done["correct"] == True).all())  # noqa: E712
    out[f"{key}_large_sizes"] = ", ".join(f"{int(n):,}" for n in done["n"]) if len(done) else ""
    refused = large[large["invalid"].notna()] if "invalid" in large else large.iloc[:0]
    out[f"{key}_refusal"] = str(refused["invalid"].iloc[0]) if len(refused) else ""
    st = rows[part == "stress"]
    out[f"{key}_stress_calls"] = int(st["calls"].max()) if len(st) else 0
    out[f"{key}_stress_runs"] = int(len(st))
    out[f"{key}_stress_wrong"] = int(st["wrong_calls"].sum()) if len(st) else 0
    out[f"{key}_stress_ok"] = bool(len(st)) and out[f"{key}_stress_wrong"] == 0 and bool(
        (st["correct"] == True).all())  # noqa: E712
    return out


def _race_keys(rows, key: str, named, default: str) -> dict:
    """For each kind of runs, `{key}_{kind}{suffix}_us` and its × torch (median, from, to)
    for each (suffix, row name) of `named`, and `{key}_{kind}_ok`: whether `default`'s
    round trip held."""
    out = {}
    for kind in ("short", "long", "mixed", "equal", "distinct"):
        k = rows[rows["kind"] == kind] if "kind" in rows else rows.iloc[:0]
        for sfx, nm in named:
            r = lookup.first(k, variant=nm)
            out[f"{key}_{kind}{sfx}_us"] = lookup.cell(r, "median_ms") * 1e3
            for m in ("x_torch", "x_torch_min", "x_torch_max"):
                out[f"{key}_{kind}{sfx}_{m}"] = lookup.cell(r, m)
        ok = lookup.first(k, variant=default)
        out[f"{key}_{kind}_ok"] = ok is not None and ok["correct"] == True  # noqa: E712
    return out


def _best_worst(rows, key: str, prefix: str) -> dict:
    """The fastest and slowest shape (rows named `prefix`..., not diagnostics) on short
    runs: `{key}_best`, `{key}_worst` and their × torch."""
    sh = rows[(rows["kind"] == "short") & rows["variant"].str.startswith(prefix)
              & ~rows["variant"].str.contains("diagnostic")] if "kind" in rows else rows.iloc[:0]
    sh = sh.dropna(subset=["x_torch"]) if "x_torch" in sh else sh.iloc[:0]
    if not len(sh):
        return {}
    b, w = sh.loc[sh["x_torch"].idxmax()], sh.loc[sh["x_torch"].idxmin()]
    return {f"{key}_best": str(b["variant"]).replace(prefix + " ", ""),
            f"{key}_best_x_torch": float(b["x_torch"]),
            f"{key}_worst": str(w["variant"]).replace(prefix + " ", ""),
            f"{key}_worst_x_torch": float(w["x_torch"])}


def _profile_keys(prof, key: str, kernels, diags) -> dict:
    """Under the profiler, for each (name, row variant) of `kernels` and each diagnostic:
    `{key}_{name}_inst_M`, `_prof_us`, `_issue_pct` (suffix `_d{d}` past 0), and the
    scanners' work (the encoder less diagnostic 1) in instructions."""
    out = {}
    for name, nm in kernels:
        for d in diags:
            r = lookup.first(prof, variant=nm, diagnostic=d)
            sfx = "" if d == 0 else f"_d{d}"
            out[f"{key}_{name}_inst_M{sfx}"] = lookup.cell(r, "inst_executed") / 1e6
            out[f"{key}_{name}_prof_us{sfx}"] = lookup.cell(r, "duration_us")
            out[f"{key}_{name}_issue_pct{sfx}"] = lookup.cell(r, "issue_active_pct")
        out[f"{key}_{name}_scanner_inst_M"] = out[f"{key}_{name}_inst_M"] - out[f"{key}_{name}_inst_M_d1"]
    return out


def lean_summary(rows, prof=None) -> dict:
    """The seventh try (18: 17 on fewer instructions a step, two blocks an SM), from
    scan.rle_lean (checks, back-to-back calls, and the race of 18's shapes and
    diagnostics with 17, 15 and torch at 2^25) and, when recorded, scan.lean_profile."""
    from . import lean as lean_mod, rle as rle_mod
    out = _encoder_checks(rows, "ln7")
    default = lean_mod.lean_name(rle_mod.LEAN)
    out["ln7_shape"] = default.replace("rle lean ", "")
    named = [("", default), ("_bulk", "rle bulk"), ("_ch", "chunked"),
             ("_torch", "torch.unique_consecutive"), ("_copy", "copy"), ("_read", "read ceiling")]
    named += [(f"_diag{d}", f"{default} diagnostic {d}") for d in rle_mod.BULK_DIAGNOSTICS]
    out.update(_race_keys(rows, "ln7", named, default))
    out["ln7_over_bulk"] = out["ln7_short_bulk_us"] / out["ln7_short_us"]
    r = lookup.first(rows, variant=default)
    n = lookup.cell(r, "n", 1 << 25)
    out["ln7_tiles"] = int(-(-int(n) // (rle_mod.LEAN[2] * 256)))
    out["ln7_seq_window"] = 32 * rle_mod.LEAN[4]          # tiles a sequencer round reads
    out["ln7_need_us"] = out["ln7_short_torch_us"] / 4
    for d in rle_mod.BULK_DIAGNOSTICS:
        out[f"ln7_diag{d}_us"] = out[f"ln7_short_diag{d}_us"]
    out["ln7_cost_sequencer_us"] = out["ln7_diag3_us"] - out["ln7_diag4_us"]
    out["ln7_cost_scanners_us"] = out["ln7_short_us"] - out["ln7_diag1_us"]
    out.update(_best_worst(rows, "ln7", "rle lean"))
    if prof is not None and len(prof):
        out.update(_profile_keys(prof, "ln7", (("bulk", "rle bulk"), ("lean", "rle lean")),
                                 lean_mod.PROFILE_DIAGS))
        for key in ("bulk", "lean"):
            out[f"ln7_{key}_scanner_inst_pct"] = (100 * out[f"ln7_{key}_scanner_inst_M"]
                                                 / out[f"ln7_{key}_inst_M"])
        out["ln7_inst_cut_pct"] = 100 * (1 - out["ln7_lean_inst_M"] / out["ln7_bulk_inst_M"])
        # the sequencer's pace: with nothing else waiting or working (DIAG 3) the kernel
        # ends when the sequencer has turned every aggregate into a prefix
        out["ln7_seq_tiles_per_us"] = out["ln7_tiles"] / out["ln7_lean_prof_us_d3"]
        out["ln7_prof_cut_pct"] = 100 * (1 - out["ln7_lean_prof_us"] / out["ln7_bulk_prof_us"])
        r = lookup.first(prof, variant="rle lean", diagnostic=0)
        out["ln7_dram_read_x"] = lookup.cell(r, "dram_read_over_input")
        out["ln7_dram_write_x"] = lookup.cell(r, "dram_write_over_input")
    return out


def lean_table(rows) -> pd.DataFrame:
    """scan.rle_lean's timed rows (18 by shape, its diagnostics, 17, 15, torch, the read
    ceiling) by kind of runs, fastest first."""
    timed = rows[rows["median_ms"].notna()] if "median_ms" in rows else rows
    return rle_chunked_table(timed)


def _ladder(rows, kind: str, default: str, label: str, others, diags=None) -> pd.DataFrame:
    """An encoder at its default (`default`, the row name; `label`, its rung) and its
    diagnostics (`diags`: 17's four by default), each with one more part taken away, then
    `others` (label, row name, what) and the read ceiling and the copy, on one kind of runs
    (one run's rounds)."""
    from . import rle as rle_mod
    k = rows[rows["kind"] == kind] if "kind" in rows else rows.iloc[:0]
    diags = rle_mod.BULK_DIAGNOSTICS if diags is None else diags
    steps = [(f"{label}, the encoder", default, "")] + [
        (f"diagnostic {d}", f"{default} diagnostic {d}", what)
        for d, what in diags.items()] + list(others) + [
        ("read ceiling", "read ceiling", "the input read by 16-byte loads, nothing written"),
        ("copy", "copy", "the input read and written")]
    torch_us = lookup.cell(lookup.first(k, variant="torch.unique_consecutive"), "median_ms") * 1e3
    rows_, prev = [], None
    for lab_, nm, what in steps:
        us = lookup.cell(lookup.first(k, variant=nm), "median_ms") * 1e3
        rows_.append({"step": lab_, "taken away": what, "us": us, "x_torch": torch_us / us,
                      "cost_us": (prev - us) if lab_.startswith("diag") else math.nan})
        prev = us
    return pd.DataFrame(rows_)


def lean_ladder(rows, kind: str = "short") -> pd.DataFrame:
    """18 at its default and its diagnostics (each with one more part taken away), 17 at
    its default, the read ceiling and the copy, on one kind of runs (one run's rounds)."""
    from . import lean as lean_mod, rle as rle_mod
    return _ladder(rows, kind, lean_mod.lean_name(rle_mod.LEAN), "18",
                   [("17, the encoder", "rle bulk", "(17 at its default, for comparison)")])


#: the rung of each one-pass encoder's profiled rows
RUNGS = {"rle bulk": "17", "rle lean": "18", "rle masks": "19", "rle rounds": "20",
         "rle reread": "21", "rle walk": "22", "rle ballot": "23"}


def lean_profile_table(prof) -> pd.DataFrame:
    """17 and 18 (or 18 and 19, or 20, or 21) and their diagnostics under the profiler: the
    kernel's time, the warp instructions it executed (millions), and how often its
    schedulers issued one."""
    from . import rle as rle_mod
    out = []
    for _, r in prof.iterrows():
        d = int(r["diagnostic"])
        names = {"rle rounds": rle_mod.ROUNDS_DIAGNOSTICS,
                 "rle reread": rle_mod.REREAD_DIAGNOSTICS,
                 "rle walk": rle_mod.REREAD_DIAGNOSTICS,
                 "rle ballot": rle_mod.BALLOT_DIAGNOSTICS}.get(r["variant"],
                                                             rle_mod.BULK_DIAGNOSTICS)
        out.append({"kernel": RUNGS[r["variant"]],
                    "step": "the encoder" if d == 0 else f"diagnostic {d}: {names[d]}",
                    "us": lookup.cell(r, "duration_us"), "inst_M": lookup.cell(r, "inst_executed") / 1e6,
                    "issue_pct": lookup.cell(r, "issue_active_pct")})
    return pd.DataFrame(out)


def _encoder_targets(s: dict, key: str, what: str, rung: str) -> pd.DataFrame:
    """Issue #11's encoder targets for one try's encoder (`what`, rung `rung`), from the
    `{key}_*` values of its summary: × torch on runs of 1-15, its checks, its back-to-back
    calls."""
    x = s[f"{key}_short_x_torch"]
    ok = s[f"{key}_n_failed"] == 0 and s[f"{key}_n_checked"] > 0 and s[f"{key}_large_ok"]
    rows = [
        {"target": f"{what} ({rung}, {s[f'{key}_shape']}), 2^25 runs 1–15, "
                   "× torch.unique_consecutive",
         "wanted": "≥ 4",
         "measured": f"{x:.2f} ({s[f'{key}_short_x_torch_min']:.2f}–"
                     f"{s[f'{key}_short_x_torch_max']:.2f})",
         "met": bool(x >= 4 and ok and s[f"{key}_short_ok"])},
        {"target": f"{rung} correct: 0 … 2^25 + 5 on every kind of runs, 2^30 + 1, "
                   "2^31 + 5 refused",
         "wanted": "all",
         "measured": f"{s[f'{key}_n_checked']} checks, {s[f'{key}_n_failed']} failed",
         "met": bool(ok)},
        {"target": f"{s[f'{key}_stress_calls']} back-to-back calls of {rung} "
                   f"({s[f'{key}_stress_runs']} sizes)",
         "wanted": "no hang, all right", "measured": f"{s[f'{key}_stress_wrong']} wrong",
         "met": bool(s[f"{key}_stress_ok"])},
    ]
    return pd.DataFrame(rows)


def targets_seventh_try(s: dict) -> pd.DataFrame:
    """Issue #11's encoder targets for the lean encoder (18), from scan.rle_lean."""
    return _encoder_targets(s, "ln7", "lean encoder", "18")


# -- the eighth try: the mask encoder (19) -----------------------------------------------
def masks_summary(rows, prof=None) -> dict:
    """The eighth try (19: the heads found once, the sequencer's chain over several warps),
    from scan.rle_masks (checks, back-to-back calls, and the race of 19's shapes and
    diagnostics with 18, 17, 15 and torch at 2^25) and, when recorded, scan.masks_profile."""
    from . import lean as lean_mod, masks as masks_mod, rle as rle_mod
    out = _encoder_checks(rows, "mk8")
    default = masks_mod.masks_name(rle_mod.MASKS)
    out["mk8_shape"] = default.replace("rle masks ", "")
    named = [("", default), ("_lean", lean_mod.lean_name(rle_mod.LEAN)), ("_bulk", "rle bulk"),
             ("_ch", "chunked"), ("_torch", "torch.unique_consecutive"), ("_copy", "copy"),
             ("_read", "read ceiling")]
    named += [(f"_diag{d}", f"{default} diagnostic {d}") for d in rle_mod.BULK_DIAGNOSTICS]
    # 18's tile and blocks with one, two and four sequencer warps; two scanner groups
    for sq in (1, 2, 4):
        named.append((f"_seq{sq}", masks_mod.masks_name((8, 4, 3, 4, sq, 128, 2, 1))))
    named.append(("_groups", masks_mod.masks_name((4, 2, 4, 4, 4, 128, 2, 2))))
    out.update(_race_keys(rows, "mk8", named, default))
    out["mk8_over_lean"] = out["mk8_short_lean_us"] / out["mk8_short_us"]
    out["mk8_need_us"] = out["mk8_short_torch_us"] / 4
    r = lookup.first(rows, variant=default)
    n = int(lookup.cell(r, "n", 1 << 25))
    out["mk8_tiles"] = int(-(-n // (rle_mod.MASKS[0] * rle_mod.MASK_PIECE)))
    out["mk8_seq_warps"] = rle_mod.MASKS[4]
    d = {i: out[f"mk8_short_diag{i}_us"] for i in rle_mod.BULK_DIAGNOSTICS}
    out["mk8_cost_scanners_us"] = out["mk8_short_us"] - d[1]
    out["mk8_cost_reducers_us"] = d[1] - d[2]
    out["mk8_cost_waits_us"] = d[2] - d[3]
    out["mk8_cost_sequencer_us"] = d[3] - d[4]
    out["mk8_ring_over_read_us"] = d[4] - out["mk8_short_read_us"]
    # what an encoder on this ring and sequencer could reach if its scanners' work and
    # waits were hidden: the ring and the sequencer, plus the reducers' reading
    out["mk8_bound_us"] = d[3] + out["mk8_cost_reducers_us"]
    out["mk8_bound_x_torch"] = out["mk8_short_torch_us"] / out["mk8_bound_us"]
    out.update(_best_worst(rows, "mk8", "rle masks"))
    if prof is not None and len(prof):
        out.update(_profile_keys(prof, "mk8", (("lean", "rle lean"), ("masks", "rle masks")),
                                 masks_mod.MASKS_PROFILE_DIAGS))
        out["mk8_inst_cut_pct"] = 100 * (1 - out["mk8_masks_inst_M"] / out["mk8_lean_inst_M"])
        out["mk8_scanner_cut_pct"] = 100 * (1 - out["mk8_masks_scanner_inst_M"]
                                            / out["mk8_lean_scanner_inst_M"])
        out["mk8_prof_cut_pct"] = 100 * (1 - out["mk8_masks_prof_us"] / out["mk8_lean_prof_us"])
        r = lookup.first(prof, variant="rle masks", diagnostic=0)
        out["mk8_dram_read_x"] = lookup.cell(r, "dram_read_over_input")
        out["mk8_dram_write_x"] = lookup.cell(r, "dram_write_over_input")
    return out


def masks_ladder(rows, kind: str = "short") -> pd.DataFrame:
    """19 at its default and its diagnostics, 18 at its default, the read ceiling and the
    copy, on one kind of runs (one run's rounds)."""
    from . import lean as lean_mod, masks as masks_mod, rle as rle_mod
    return _ladder(rows, kind, masks_mod.masks_name(rle_mod.MASKS), "19",
                   [("18, the encoder", lean_mod.lean_name(rle_mod.LEAN),
                     "(18 at its default, for comparison)")])


def targets_eighth_try(s: dict) -> pd.DataFrame:
    """Issue #11's encoder targets for the mask encoder (19), from scan.rle_masks."""
    return _encoder_targets(s, "mk8", "mask encoder", "19")


# -- the ninth try: the rounds encoder (20) -----------------------------------------------
#: the shapes of 20 the page names (beside the default): fewer writers, fewer counters,
#: fewer counters and writers, two blocks an SM
ROUNDS_NAMED = (("_c16w4", (16, 4, 32, 2, 10, 1)), ("_c8w8", (8, 8, 32, 4, 6, 1)),
                ("_c8w4", (8, 4, 32, 4, 6, 1)), ("_two", (4, 4, 16, 4, 7, 2)))


def rounds_summary(rows, prof=None) -> dict:
    """The ninth try (20: no chain; the grid in lockstep rounds, every block reading every
    block's count, the heads compacted into slots), from scan.rle_rounds (checks,
    back-to-back calls, and the race of 20's shapes and diagnostics with 19, 18, 15 and
    torch at 2^25) and, when recorded, scan.rounds_profile."""
    from . import lean as lean_mod, masks as masks_mod, rle as rle_mod, rounds as rounds_mod
    out = _encoder_checks(rows, "rd9")
    default = rounds_mod.rounds_name(rle_mod.ROUNDS)
    out["rd9_shape"] = default.replace("rle rounds ", "")
    named = [("", default), ("_masks", masks_mod.masks_name(rle_mod.MASKS)),
             ("_lean", lean_mod.lean_name(rle_mod.LEAN)), ("_ch", "chunked"),
             ("_torch", "torch.unique_consecutive"), ("_copy", "copy"),
             ("_read", "read ceiling")]
    named += [(f"_diag{d}", f"{default} diagnostic {d}") for d in rle_mod.ROUNDS_DIAGNOSTICS]
    named += [(sfx, rounds_mod.rounds_name(sh)) for sfx, sh in ROUNDS_NAMED]
    out.update(_race_keys(rows, "rd9", named, default))
    out["rd9_over_masks"] = out["rd9_short_masks_us"] / out["rd9_short_us"]
    out["rd9_need_us"] = out["rd9_short_torch_us"] / 4
    c, w, kib = rle_mod.ROUNDS[:3]
    out["rd9_counters"], out["rd9_writers"], out["rd9_seg_kib"] = c, w, kib
    out["rd9_slot_kib"] = rle_mod.rounds_smem((c, w, kib, 0, 1, 1)) / 1024
    d = {i: out[f"rd9_short_diag{i}_us"] for i in rle_mod.ROUNDS_DIAGNOSTICS}
    out["rd9_cost_writers_us"] = out["rd9_short_us"] - d[1]
    out["rd9_cost_waits_us"] = d[1] - d[2]
    out["rd9_cost_counters_us"] = d[2] - d[3]
    out["rd9_ring_over_read_us"] = d[3] - out["rd9_short_read_us"]
    # what this structure could reach if the writes and the waits were hidden: the ring
    # and the counters (diagnostic 2)
    out["rd9_bound_us"] = d[2]
    out["rd9_bound_x_torch"] = out["rd9_short_torch_us"] / d[2]
    out.update(_best_worst(rows, "rd9", "rle rounds"))
    if prof is not None and len(prof):
        out.update(_profile_keys(prof, "rd9", (("rounds", "rle rounds"),),
                                 rounds_mod.ROUNDS_PROFILE_DIAGS))
        i = {d: out["rd9_rounds_inst_M" + ("" if d == 0 else f"_d{d}")]
             for d in rounds_mod.ROUNDS_PROFILE_DIAGS}
        out["rd9_inst_writers_M"] = i[0] - i[1]
        out["rd9_inst_waits_M"] = i[1] - i[2]
        out["rd9_inst_counters_M"] = i[2] - i[3]
        r = lookup.first(prof, variant="rle rounds", diagnostic=0)
        out["rd9_dram_read_x"] = lookup.cell(r, "dram_read_over_input")
    return out


def rounds_ladder(rows, kind: str = "short") -> pd.DataFrame:
    """20 at its default and its diagnostics, 19 at its default, the read ceiling and the
    copy, on one kind of runs (one run's rounds)."""
    from . import masks as masks_mod, rle as rle_mod, rounds as rounds_mod
    return _ladder(rows, kind, rounds_mod.rounds_name(rle_mod.ROUNDS), "20",
                   [("19, the encoder", masks_mod.masks_name(rle_mod.MASKS),
                     "(19 at its default, for comparison)")], rle_mod.ROUNDS_DIAGNOSTICS)


def targets_ninth_try(s: dict) -> pd.DataFrame:
    """Issue #11's encoder targets for the rounds encoder (20), from scan.rle_rounds."""
    return _encoder_targets(s, "rd9", "rounds encoder", "20")


# -- the tenth try: the re-read encoder (21) ----------------------------------------------
def reread_summary(rows, prof=None, mode: str = "reread", key: str = "rr10") -> dict:
    """The tenth try (21: 20's rounds with nothing held in shared memory, each segment
    counted from registers and read again from L2 to be written), from scan.rle_reread
    (checks, back-to-back calls, and the race of 21's shapes and diagnostics with 20, 15
    and torch at 2^25) and, when recorded, scan.reread_profile; or, with mode="walk" and
    key="wk11", the eleventh (22, the heads left as masks), from scan.rle_walk (which also
    races 21) and scan.walk_profile."""
    from . import reread as reread_mod, rle as rle_mod, rounds as rounds_mod
    out = _encoder_checks(rows, key)
    shape = rle_mod.REREAD if mode == "reread" else rle_mod.WALK
    prefix = reread_mod.MODES[mode][0]
    default = reread_mod.reread_name(shape, mode)
    out[f"{key}_shape"] = default.replace(prefix + " ", "")
    named = [("", default), ("_rounds", rounds_mod.rounds_name(rle_mod.ROUNDS)),
             ("_ch", "chunked"), ("_torch", "torch.unique_consecutive"), ("_copy", "copy"),
             ("_read", "read ceiling")]
    if mode == "walk":
        named.append(("_reread", reread_mod.reread_name(rle_mod.REREAD)))
    named += [(f"_diag{d}", f"{default} diagnostic {d}") for d in rle_mod.REREAD_DIAGNOSTICS]
    out.update(_race_keys(rows, key, named, default))
    out[f"{key}_over_rounds"] = out[f"{key}_short_rounds_us"] / out[f"{key}_short_us"]
    c, w, kib, sl, mb = shape[:5]
    out[f"{key}_counters"], out[f"{key}_writers"], out[f"{key}_seg_kib"] = c, w, kib
    out[f"{key}_blocks"], out[f"{key}_slots"] = mb, sl
    out[f"{key}_mask_bytes"] = kib * 1024 // 32        # one bit an element
    unit = rle_mod.REREAD_PIECE if mode == "reread" else rle_mod.WALK_UNIT
    out[f"{key}_staging_kib"] = rle_mod.reread_smem(shape, unit) / 1024
    d = {i: out[f"{key}_short_diag{i}_us"] for i in rle_mod.REREAD_DIAGNOSTICS}
    out[f"{key}_cost_writers_us"] = out[f"{key}_short_us"] - d[1]
    out[f"{key}_cost_waits_us"] = d[1] - d[2]
    out[f"{key}_cost_counters_us"] = d[2] - d[3]
    out[f"{key}_loads_over_read_us"] = d[3] - out[f"{key}_short_read_us"]
    out[f"{key}_bound_x_torch"] = out[f"{key}_short_torch_us"] / d[2]
    out[f"{key}_need_us"] = out[f"{key}_short_torch_us"] / 4
    out.update(_best_worst(rows, key, prefix))
    if prof is not None and len(prof):
        from .reread import REREAD_PROFILE_DIAGS
        out.update(_profile_keys(prof, key, (("enc", prefix),), REREAD_PROFILE_DIAGS))
        i = {d: out[f"{key}_enc_inst_M" + ("" if d == 0 else f"_d{d}")]
             for d in REREAD_PROFILE_DIAGS}
        out[f"{key}_inst_writers_M"] = i[0] - i[1]
        out[f"{key}_inst_waits_M"] = i[1] - i[2]
        out[f"{key}_inst_counters_M"] = i[2] - i[3]
        r = lookup.first(prof, variant=prefix, diagnostic=0)
        out[f"{key}_dram_read_x"] = lookup.cell(r, "dram_read_over_input")
    return out


def walk_summary(rows, prof=None) -> dict:
    """The eleventh try (22), from scan.rle_walk and scan.walk_profile (reread_summary's
    keys, prefix wk11)."""
    return reread_summary(rows, prof, "walk", "wk11")


def reread_ladder(rows, kind: str = "short") -> pd.DataFrame:
    """21 at its default and its diagnostics, 20 at its default, the read ceiling and the
    copy, on one kind of runs (one run's rounds)."""
    from . import reread as reread_mod, rle as rle_mod, rounds as rounds_mod
    return _ladder(rows, kind, reread_mod.reread_name(rle_mod.REREAD), "21",
                   [("20, the encoder", rounds_mod.rounds_name(rle_mod.ROUNDS),
                     "(20 at its default, for comparison)")], rle_mod.REREAD_DIAGNOSTICS)


def targets_tenth_try(s: dict) -> pd.DataFrame:
    """Issue #11's encoder targets for the re-read encoder (21), from scan.rle_reread."""
    return _encoder_targets(s, "rr10", "re-read encoder", "21")


def walk_ladder(rows, kind: str = "short") -> pd.DataFrame:
    """22 at its default and its diagnostics, 21 and 20 at their defaults, the read
    ceiling and the copy, on one kind of runs (one run's rounds)."""
    from . import reread as reread_mod, rle as rle_mod, rounds as rounds_mod
    return _ladder(rows, kind, reread_mod.reread_name(rle_mod.WALK, "walk"), "22",
                   [("21, the encoder", reread_mod.reread_name(rle_mod.REREAD),
                     "(21 at its default, for comparison)"),
                    ("20, the encoder", rounds_mod.rounds_name(rle_mod.ROUNDS),
                     "(20 at its default, for comparison)")], rle_mod.REREAD_DIAGNOSTICS)


def targets_eleventh_try(s: dict) -> pd.DataFrame:
    """Issue #11's encoder targets for the mask-walk encoder (22), from scan.rle_walk."""
    return _encoder_targets(s, "wk11", "mask-walk encoder", "22")


#: scan.call_time's rows on the page: variant -> (short key, label)
CALL_TIME_NAMED = {"rle rounds": ("enc", "20, as the races call it"),
                   "rle rounds, prepared launch alone": ("raw", "20, its prepared launch alone"),
                   "read ceiling": ("read", "read ceiling"),
                   "copy": ("copy", "copy"),
                   "torch.unique_consecutive": ("torch", "torch.unique_consecutive"),
                   "an empty call": ("empty", "an empty call")}


def call_time_summary(rows) -> dict:
    """What a call costs (scan.call_time): each call's time with the GPU idle before it,
    the host's time in it, its work alone (queued behind spin.cu), and what 4× the torch
    call asks of an encoder against the least an encoder's call can take: the read
    ceiling's call and the runs' 8 bytes each at the copy's rate."""
    out = {}
    for v, (key, _) in CALL_TIME_NAMED.items():
        r = lookup.first(rows, variant=v)
        for m in ("call", "host", "queued", "lead"):
            out[f"ct_{key}_{m}_us"] = lookup.cell(r, f"{m}_ms") * 1e3
        for m in ("x_torch", "x_torch_min", "x_torch_max", "x_torch_queued"):
            out[f"ct_{key}_{m}"] = lookup.cell(r, m)
    enc = lookup.first(rows, variant="rle rounds")
    t = lookup.first(rows, variant="torch.unique_consecutive")
    n, runs = int(lookup.cell(enc, "n", 0)), int(lookup.cell(enc, "runs", 0))
    out["ct_ok"] = bool(enc is not None and enc["correct"] is True)
    out["ct_torch_ok"] = bool(t is not None and t["correct"] is True)
    out["ct_n_log2"] = int(round(math.log2(n))) if n else 0
    out["ct_runs_M"] = runs / 1e6
    out["ct_torch_kernels_us"] = lookup.cell(t, "kernels_ms") * 1e3
    # the torch call: how much of it its kernels and copies run (its host time covers its
    # wait for the GPU, so it says nothing of where the GPU's time goes)
    out["ct_torch_kernels_pct"] = 100 * out["ct_torch_kernels_us"] / out["ct_torch_call_us"]
    # the Python around 20's launch: the race's call against the prepared launch alone
    out["ct_python_us"] = out["ct_enc_call_us"] - out["ct_raw_call_us"]
    # the copy's rate with its host part hidden, and the least an encoder's work takes:
    # the input read (the read ceiling's work) and 8 bytes a run written at that rate
    copy_rate = 8 * n / (out["ct_copy_queued_us"] * 1e-6)          # bytes a second
    out["ct_copy_tbs"] = copy_rate / 1e12
    out["ct_write_us"] = 8 * runs / copy_rate * 1e6
    out["ct_floor_queued_us"] = out["ct_read_queued_us"] + out["ct_write_us"]
    # ... and a call of it: that work behind the lead of 20's prepared launch alone, the
    # leanest launch measured
    out["ct_floor_call_us"] = out["ct_floor_queued_us"] + out["ct_raw_lead_us"]
    out["ct_floor_x_torch"] = out["ct_torch_call_us"] / out["ct_floor_call_us"]
    # 4x the torch call: the call it allows, and the work that leaves behind 20's lead as
    # the races call it, or behind the prepared launch's
    out["ct_need_call_us"] = out["ct_torch_call_us"] / 4
    out["ct_need_queued_us"] = out["ct_need_call_us"] - out["ct_enc_lead_us"]
    out["ct_need_queued_lean_us"] = out["ct_need_call_us"] - out["ct_raw_lead_us"]
    out["ct_need_of_floor"] = out["ct_need_queued_us"] / out["ct_floor_queued_us"]
    out["ct_need_lean_of_floor"] = out["ct_need_queued_lean_us"] / out["ct_floor_queued_us"]
    out["ct_enc_of_floor"] = out["ct_enc_queued_us"] / out["ct_floor_queued_us"]
    out["ct_cut_pct"] = 100 * (1 - out["ct_need_queued_us"] / out["ct_enc_queued_us"])
    # ... and of what 20's pipeline adds to the floor, the share 4x asks it to shed
    out["ct_enc_over_floor_us"] = out["ct_enc_queued_us"] - out["ct_floor_queued_us"]
    out["ct_overhead_cut_pct"] = 100 * (1 - (out["ct_need_queued_us"] - out["ct_floor_queued_us"])
                                        / (out["ct_enc_queued_us"] - out["ct_floor_queued_us"]))
    return out


def call_time_table(rows) -> pd.DataFrame:
    """One line a call of scan.call_time: its time three ways and its lead (the call's
    time less its work alone), in the page's order."""
    out = []
    for v, (_, label) in CALL_TIME_NAMED.items():
        r = lookup.first(rows, variant=v)
        if r is None:
            continue
        out.append({"call": label, "call_us": lookup.cell(r, "call_ms") * 1e3,
                    "host_us": lookup.cell(r, "host_ms") * 1e3,
                    "queued_us": lookup.cell(r, "queued_ms") * 1e3,
                    "lead_us": lookup.cell(r, "lead_ms") * 1e3,
                    # (an empty call against the torch call says nothing)
                    "x_torch": math.nan if v == "an empty call" else lookup.cell(r, "x_torch")})
    return pd.DataFrame(out)


def targets_call_time(s: dict) -> pd.DataFrame:
    """Issue #11's encoder target as scan.call_time measured it: 20's call against the
    torch call in the same rounds."""
    x = s["ct_enc_x_torch"]
    return pd.DataFrame([{
        "target": f"rounds encoder (20), 2^{s['ct_n_log2']} runs 1–15, × torch.unique_consecutive "
                  "(scan.call_time's rounds)",
        "wanted": "≥ 4",
        "measured": f"{x:.2f} ({s['ct_enc_x_torch_min']:.2f}–{s['ct_enc_x_torch_max']:.2f})",
        "met": bool(x >= 4 and s["ct_ok"] and s["ct_torch_ok"])}])


def call_time_figure(ax, rows) -> None:
    """Each call of scan.call_time but the torch call as two bars end to end, its work on
    the GPU (queued) then its lead; the floor of an encoder (the read ceiling's work, the
    runs written at the copy's rate, the bare launch's lead); a line at 4x the torch
    call."""
    s = call_time_summary(rows)
    bars = [("20, as the races call it", [("work", s["ct_enc_queued_us"]), ("lead", s["ct_enc_lead_us"])]),
            ("20, prepared launch alone", [("work", s["ct_raw_queued_us"]), ("lead", s["ct_raw_lead_us"])]),
            ("copy", [("work", s["ct_copy_queued_us"]), ("lead", s["ct_copy_lead_us"])]),
            ("read ceiling", [("work", s["ct_read_queued_us"]), ("lead", s["ct_read_lead_us"])]),
            ("floor of an encoder", [("work", s["ct_read_queued_us"]), ("writes", s["ct_write_us"]),
                                     ("lead", s["ct_raw_lead_us"])])]
    colors = {"work": "C0", "writes": "C9", "lead": "0.7"}
    seen = set()
    for i, (label, parts) in enumerate(bars):
        left = 0.0
        for part, w in parts:
            name = {"work": "work on the GPU (queued)", "writes": "the runs written at the copy's rate",
                    "lead": "lead (host and launch)"}[part]
            ax.barh(i, w, left=left, color=colors[part], height=0.6,
                    label=None if name in seen else name)
            seen.add(name)
            left += w
        ax.text(left + 1, i, f"{left:.0f} µs", va="center", fontsize=9)
    need = s["ct_need_call_us"]
    ax.axvline(need, color="C3", lw=1, ls="--")
    ax.text(need - 1, -0.55, f"4× the torch call ({s['ct_torch_call_us']:.0f} µs): {need:.0f} µs",
            color="C3", fontsize=9, va="center", ha="right")
    ax.set_yticks(range(len(bars)))
    ax.set_yticklabels([b[0] for b in bars], fontsize=9)
    ax.invert_yaxis()
    ax.set_ylim(len(bars) - 0.3, -0.9)
    ax.set_xlim(0, max(sum(w for _, w in b[1]) for b in bars) * 1.4)   # (room for the legend)
    ax.set_xlabel(f"time a call, $2^{{{s['ct_n_log2']}}}$ int32 on runs of 1–15 (µs)")
    ax.legend(fontsize=9, loc="lower right")


# -- the twelfth try: the ballot encoder (23) ---------------------------------------------
def ballot_summary(rows, prof=None) -> dict:
    """The twelfth try (23: heads found by ballots and staged at once, persistent blocks
    whose look-back warp or a sequencer finds each tile's prefix while the walkers walk the
    next one, its runs waiting in one of three stages), from scan.rle_ballot (checks,
    back-to-back calls, and the race of 23's shapes and diagnostics with 22, 20, 15 and
    torch at 2^25) and, when recorded, scan.ballot_profile. Keys bl12_*."""
    from . import ballot as ballot_mod, reread as reread_mod, rle as rle_mod
    from . import rounds as rounds_mod
    key = "bl12"
    out = _encoder_checks(rows, key)
    default = ballot_mod.ballot_name(rle_mod.BALLOT)
    out[f"{key}_shape"] = default.replace("rle ballot ", "")
    base = rle_mod.BALLOT
    variants = {"_seq4": base[:6] + (4,), "_seq1": base[:6] + (1,),
                "_lb1": base[:5] + (1, 0), "_lb4": base[:5] + (4, 0)}
    named = [("", default), ("_rounds", rounds_mod.rounds_name(rle_mod.ROUNDS)),
             ("_walk", reread_mod.reread_name(rle_mod.WALK, "walk")), ("_ch", "chunked"),
             ("_torch", "torch.unique_consecutive"), ("_copy", "copy"),
             ("_read", "read ceiling")]
    named += [(sfx, ballot_mod.ballot_name(sh)) for sfx, sh in variants.items()]
    named += [(f"_diag{d}", f"{default} diagnostic {d}") for d in rle_mod.BALLOT_DIAGNOSTICS]
    out.update(_race_keys(rows, key, named, default))
    out[f"{key}_over_rounds"] = out[f"{key}_short_rounds_us"] / out[f"{key}_short_us"]
    out[f"{key}_over_walk"] = out[f"{key}_short_walk_us"] / out[f"{key}_short_us"]
    w, piece, batch, cap, mb, width, seq = base
    out.update({f"{key}_warps": w, f"{key}_piece": piece, f"{key}_batch": batch,
                f"{key}_cap": cap, f"{key}_blocks": mb, f"{key}_seq": seq,
                f"{key}_tile": w * piece, f"{key}_tile_kib": w * piece * 4 // 1024,
                f"{key}_seq_window": 32 * seq, f"{key}_stages": rle_mod.BALLOT_STAGES,
                f"{key}_smem_kib": rle_mod.ballot_smem(base) // 1024})
    n = lookup.cell(lookup.first(rows, variant=default), "n", 1 << 25)
    out[f"{key}_tiles"] = int(-(-int(n) // (w * piece)))
    d = {i: out[f"{key}_short_diag{i}_us"] for i in rle_mod.BALLOT_DIAGNOSTICS}
    full = out[f"{key}_short_us"]
    out[f"{key}_cost_chain_us"] = full - d[1]          # the prefixes' chain (with the writes)
    out[f"{key}_cost_writes_us"] = full - d[2]         # the runs written (with the chain)
    out[f"{key}_cost_both_us"] = full - d[3]
    out[f"{key}_walk_over_read_us"] = d[3] - out[f"{key}_short_read_us"]
    out[f"{key}_need_us"] = out[f"{key}_short_torch_us"] / 4
    out[f"{key}_verdict"] = _verdict(out[f"{key}_short_x_torch"])
    out[f"{key}_diag3_x_torch"] = out[f"{key}_short_torch_us"] / d[3]
    out.update(_best_worst(rows, key, "rle ballot"))
    if prof is not None and len(prof):
        out.update(_profile_keys(prof, key, (("enc", "rle ballot"),),
                                 ballot_mod.BALLOT_PROFILE_DIAGS))
        r = lookup.first(prof, variant="rle ballot", diagnostic=0)
        out[f"{key}_dram_read_x"] = lookup.cell(r, "dram_read_over_input")
        out[f"{key}_dram_write_x"] = lookup.cell(r, "dram_write_over_input")
        out[f"{key}_inst_per_chunk"] = out[f"{key}_enc_inst_M_d3"] * 1e6 / (int(n) / 32)
        # the call (race) against the kernel alone (profiler): the launch and the host's part
        out[f"{key}_lead_pct"] = 100 * (1 - out[f"{key}_enc_prof_us"] / out[f"{key}_short_us"])
        out[f"{key}_prof_chain_us"] = out[f"{key}_enc_prof_us"] - out[f"{key}_enc_prof_us_d1"]
        out[f"{key}_prof_writes_us"] = out[f"{key}_enc_prof_us"] - out[f"{key}_enc_prof_us_d2"]
    return out


def ballot_ladder(rows, kind: str = "short") -> pd.DataFrame:
    """23 at its default, each diagnostic (what it takes away, and the µs a call that
    saves against the encoder), the other ways of chaining the tiles, 22 and 20 at their
    defaults, the read ceiling and the copy, on one kind of runs (one run's rounds)."""
    from . import ballot as ballot_mod, reread as reread_mod, rle as rle_mod
    from . import rounds as rounds_mod
    k = rows[rows["kind"] == kind] if "kind" in rows else rows.iloc[:0]
    default = ballot_mod.ballot_name(rle_mod.BALLOT)
    base = rle_mod.BALLOT
    steps = [("23, the encoder", default, "")] + [
        (f"diagnostic {d}", f"{default} diagnostic {d}", what)
        for d, what in rle_mod.BALLOT_DIAGNOSTICS.items()] + [
        ("23, sequencer 4 tiles a lane", ballot_mod.ballot_name(base[:6] + (4,)), ""),
        ("23, look-backs (width 1)", ballot_mod.ballot_name(base[:5] + (1, 0)),
         "each tile's look-back warp walks back itself"),
        ("22, the encoder", reread_mod.reread_name(rle_mod.WALK, "walk"), "(for comparison)"),
        ("20, the encoder", rounds_mod.rounds_name(rle_mod.ROUNDS), "(for comparison)"),
        ("read ceiling", "read ceiling", "the input read by 16-byte loads, nothing written"),
        ("copy", "copy", "the input read and written")]
    torch_us = lookup.cell(lookup.first(k, variant="torch.unique_consecutive"), "median_ms") * 1e3
    full = lookup.cell(lookup.first(k, variant=default), "median_ms") * 1e3
    out = []
    for lab_, nm, what in steps:
        us = lookup.cell(lookup.first(k, variant=nm), "median_ms") * 1e3
        out.append({"step": lab_, "taken away": what, "us": us, "x_torch": torch_us / us,
                    "saved_us": (full - us) if lab_.startswith("diag") else math.nan})
    return pd.DataFrame(out)


def targets_twelfth_try(s: dict) -> pd.DataFrame:
    """Issue #11's encoder targets for the ballot encoder (23), from scan.rle_ballot."""
    return _encoder_targets(s, "bl12", "ballot encoder", "23")


# -- the fifteenth try: 23 launched as a CUDA graph (24) -----------------------------------
#: scan.rle_graph's call-time rows on the page: variant -> (short key, label)
GRAPH_CALLS = {"rle graph": ("gr", "24, launched as a graph"),
               "rle ballot": ("bl", "23, its prepared launch"),
               "torch.unique_consecutive": ("torch", "torch.unique_consecutive")}


def _parts(rows):
    return rows["part"] if "part" in rows else pd.Series("", index=rows.index)


def _graph_checks(rows, key: str) -> dict:
    """_encoder_checks of a graph-launched encoder, its replayed graphs' checks (rows part
    "replay") counted in: `{key}_replay_n`, `{key}_replay_failed`."""
    out = _encoder_checks(rows, key)
    rep = rows[_parts(rows) == "replay"]
    bad = int((rep["correct"] == False).sum()) if len(rep) else 0  # noqa: E712
    out[f"{key}_replay_n"] = int(len(rep))
    out[f"{key}_replay_failed"] = bad
    out[f"{key}_n_checked"] += int(len(rep))
    out[f"{key}_n_failed"] += bad
    return out


def graph_summary(rows) -> dict:
    """The fifteenth try (24: 23 launched as a CUDA graph, its epoch a word on the GPU),
    from scan.rle_graph: its checks (with its graph replayed), its back-to-back calls, the
    race of 24 and 23 with 15 and torch at 2^25 on every kind of runs, and the call-time
    part (each call's time, its host part and its GPU work alone). Keys gr15_*."""
    key = "gr15"
    part = _parts(rows)
    out = _graph_checks(rows, key)
    out[f"{key}_shape"] = "23's default shape"
    race = rows[~part.isin(["check", "large", "stress", "replay", "call time"])]
    named = [("", "rle graph"), ("_ballot", "rle ballot"), ("_ch", "chunked"),
             ("_torch", "torch.unique_consecutive"), ("_copy", "copy"),
             ("_read", "read ceiling")]
    out.update(_race_keys(race, key, named, "rle graph"))
    out[f"{key}_over_ballot"] = out[f"{key}_short_ballot_us"] / out[f"{key}_short_us"]
    out[f"{key}_saved_us"] = out[f"{key}_short_ballot_us"] - out[f"{key}_short_us"]
    out[f"{key}_need_us"] = out[f"{key}_short_torch_us"] / 4
    out[f"{key}_over_need_us"] = out[f"{key}_short_us"] - out[f"{key}_need_us"]
    out.update(_call_keys(rows[part == "call time"], key, GRAPH_CALLS, "gr"))
    out[f"{key}_ct_host_saved_us"] = out[f"{key}_ct_bl_host_us"] - out[f"{key}_ct_gr_host_us"]
    out[f"{key}_ct_lead_saved_us"] = out[f"{key}_ct_bl_lead_us"] - out[f"{key}_ct_gr_lead_us"]
    out[f"{key}_ct_work_diff_us"] = out[f"{key}_ct_gr_queued_us"] - out[f"{key}_ct_bl_queued_us"]
    out[f"{key}_verdict"] = _verdict(out[f"{key}_short_x_torch"])
    return out


def _verdict(x: float) -> str:
    """A ratio to the torch call against issue #11's 4×, in words for the page."""
    if not x == x:                                     # (nan: not measured)
        return "not measured against 4×"
    return "past 4×" if x >= 4 else "short of 4×"


def _call_keys(ct, key: str, calls: dict, enc: str) -> dict:
    """The call-time part's numbers (rows part "call time"): for each variant of `calls`
    (variant -> (short key, label)) its call, host part, GPU work alone (queued) and lead,
    each × torch; then what 4× the torch call asks of encoder `enc` (a short key): the call
    (`{key}_ct_need_us`), less its lead the time left for its work (`_need_work_us`), and
    its work over that (`_work_over_need_us`, below 0 when it fits) and in words
    (`_work_verdict`)."""
    out = {}
    for v, (short, _) in calls.items():
        r = lookup.first(ct, variant=v)
        for m in ("call", "host", "queued", "lead"):
            out[f"{key}_ct_{short}_{m}_us"] = lookup.cell(r, f"{m}_ms") * 1e3
        for m in ("x_torch", "x_torch_min", "x_torch_max", "x_torch_queued"):
            out[f"{key}_ct_{short}_{m}"] = lookup.cell(r, m)
        out[f"{key}_ct_{short}_ok"] = r is not None and r["correct"] == True  # noqa: E712
    out[f"{key}_ct_need_us"] = out[f"{key}_ct_torch_call_us"] / 4
    out[f"{key}_ct_need_work_us"] = out[f"{key}_ct_need_us"] - out[f"{key}_ct_{enc}_lead_us"]
    over = out[f"{key}_ct_{enc}_queued_us"] - out[f"{key}_ct_need_work_us"]
    out[f"{key}_ct_work_over_need_us"] = over
    out[f"{key}_ct_work_margin_us"] = abs(over)
    out[f"{key}_ct_work_verdict"] = ("more than that" if over > 0 else "less than that")
    return out


def graph_call_table(rows, calls=None) -> pd.DataFrame:
    """scan.rle_graph's call-time part (or another experiment's, with its `calls`:
    variant -> (short key, label); GRAPH_CALLS by default), one line a call: its time with
    the GPU idle before it, the host's part, its work on the GPU alone (queued), its lead
    (the call less its work), and its × torch both ways, round by round."""
    part = _parts(rows)
    ct = rows[part == "call time"]
    out = []
    for v, (_, label) in (calls or GRAPH_CALLS).items():
        r = lookup.first(ct, variant=v)
        if r is None:
            continue
        out.append({"call": label, "call_us": lookup.cell(r, "call_ms") * 1e3,
                    "host_us": lookup.cell(r, "host_ms") * 1e3, "queued_us": lookup.cell(r, "queued_ms") * 1e3,
                    "lead_us": lookup.cell(r, "lead_ms") * 1e3, "x_torch": lookup.cell(r, "x_torch"),
                    "x_torch_queued": lookup.cell(r, "x_torch_queued")})
    return pd.DataFrame(out)


def _call_targets(s: dict, key: str, enc: str, what: str, rung: str) -> pd.DataFrame:
    """_encoder_targets for rung `rung` (`what`), with its call against the torch call in
    the call-time part's rounds (encoder `enc`'s `{key}_ct_*` keys) after the race's row."""
    t = _encoder_targets(s, key, what, rung)
    ct = f"{key}_ct_{enc}"
    x = s[f"{ct}_x_torch"]
    extra = pd.DataFrame([{
        "target": f"{what} ({rung}), 2^25 runs 1–15, × torch.unique_consecutive "
                  "(the call-time part's rounds)",
        "wanted": "≥ 4",
        "measured": f"{x:.2f} ({s[f'{ct}_x_torch_min']:.2f}–{s[f'{ct}_x_torch_max']:.2f})",
        "met": bool(x >= 4 and s[f"{ct}_ok"] and s[f"{key}_ct_torch_ok"])}])
    return pd.concat([t.iloc[:1], extra, t.iloc[1:]], ignore_index=True)


def targets_fifteenth_try(s: dict) -> pd.DataFrame:
    """Issue #11's encoder targets for 24 (23 launched as a graph), from scan.rle_graph's
    race, and its call against the torch call in the call-time part's rounds."""
    return _call_targets(s, "gr15", "gr", "graph-launched encoder", "24")


# -- the seventeenth try: room in L1 for the loads (25) ----------------------------------
#: scan.rle_room's call-time rows on the page: variant -> (short key, label)
ROOM_CALLS = {"rle room": ("rm", "25, launched as a graph"),
              "rle graph": ("gr", "24, launched as a graph"),
              "torch.unique_consecutive": ("torch", "torch.unique_consecutive")}
#: scan.rle_room's race rows in the page's order: (suffix of its keys, row name, label)
ROOM_RACE = (("_g384", "rle graph", "24, 384 heads"),
             ("_g288", "rle graph, 288 heads", "24, 288 heads"),
             ("_g288_least", "rle graph, 288 heads, least L1", "24, 288 heads, least L1"),
             ("_g288_b32", "rle graph, 288 heads, 32 chunks a batch",
              "24, 288 heads, twice the loads"),
             ("", "rle room", "25"),
             ("_b32", "rle room, 32 chunks a batch", "25, twice the loads"),
             ("_least", "rle room, least L1", "25, least L1"))


def room_summary(rows) -> dict:
    """The seventeenth try (25: 24 with 6-byte staged heads, so that L1 keeps room for the
    loads in flight), from scan.rle_room: its checks (with its graph replayed), its
    back-to-back calls, the race of 25 and 24 at the shapes that set L1's room (with 15,
    torch and the read ceiling) at 2^25 on every kind of runs, and the call-time part.
    Keys rm17_*."""
    key = "rm17"
    part = _parts(rows)
    out = _graph_checks(rows, key)
    race = rows[~part.isin(["check", "large", "stress", "replay", "call time"])]
    named = [(sfx, nm) for sfx, nm, _ in ROOM_RACE] + [
        ("_ch", "chunked"), ("_torch", "torch.unique_consecutive"), ("_copy", "copy"),
        ("_read", "read ceiling")]
    out.update(_race_keys(race, key, named, "rle room"))
    short = race[race["kind"] == "short"] if "kind" in race else race.iloc[:0]
    for sfx, nm, _ in ROOM_RACE:
        r = lookup.first(short, variant=nm)
        for m in ("shared_kib_sm", "l1_kib", "in_flight_kib", "cap", "batch"):
            out[f"{key}{sfx}_{m}"] = lookup.cell(r, m)
    sh = f"{key}_short"
    out[f"{key}_shape"] = "6-byte heads, 288 a walker"
    out[f"{key}_l1_gain_us"] = out[f"{sh}_g384_us"] - out[f"{sh}_g288_us"]
    out[f"{key}_least_cost_us"] = out[f"{sh}_g288_least_us"] - out[f"{sh}_g288_us"]
    out[f"{key}_b32_cost_us"] = out[f"{sh}_g288_b32_us"] - out[f"{sh}_g288_us"]
    out[f"{key}_room_b32_diff_us"] = out[f"{sh}_b32_us"] - out[f"{sh}_us"]
    out[f"{key}_room_least_cost_us"] = out[f"{sh}_least_us"] - out[f"{sh}_us"]
    out[f"{key}_over_g384"] = out[f"{sh}_g384_us"] / out[f"{sh}_us"]
    out[f"{key}_over_g288"] = out[f"{sh}_g288_us"] / out[f"{sh}_us"]
    out[f"{key}_walk_room_us"] = out[f"{sh}_us"] - out[f"{sh}_read_us"]
    out[f"{key}_verdict"] = _verdict(out[f"{sh}_x_torch"])
    held = (out[f"{key}_l1_gain_us"] > 1 and out[f"{key}_least_cost_us"] > 1
            and out[f"{key}_b32_cost_us"] > 5 and abs(out[f"{key}_room_b32_diff_us"]) < 1
            and out[f"{key}_room_least_cost_us"] > 1 and abs(out[f"{key}_over_g288"] - 1) < 0.03)
    out[f"{key}_predictions"] = ("Every prediction held." if held else
                                 "Not every prediction held; the table shows which.")
    out.update(_call_keys(rows[part == "call time"], key, ROOM_CALLS, "rm"))
    out[f"{key}_ct_torch_host_pct"] = (100 * out[f"{key}_ct_torch_host_us"]
                                       / out[f"{key}_ct_torch_call_us"])
    out[f"{key}_ct_verdict"] = _verdict(out[f"{key}_ct_rm_x_torch"])
    return out


def room_l1_table(rows) -> pd.DataFrame:
    """scan.rle_room's race on runs of 1-15, one line an encoder of ROOM_RACE: its bytes
    a staged head, heads a walker, chunks a batch, what its blocks take of an SM's shared
    memory, the L1 left (inferred from the split), the loads its walkers can have in
    flight an SM, its time a call and × torch (median of the rounds, from, to)."""
    part = _parts(rows)
    race = rows[(part == "race") & (rows["kind"] == "short")] if "kind" in rows else rows.iloc[:0]
    out = []
    for _, nm, label in ROOM_RACE:
        r = lookup.first(race, variant=nm)
        if r is None:
            continue
        out.append({"encoder": label, "bytes_a_head": lookup.cell(r, "bytes_a_head"),
                    "cap": lookup.cell(r, "cap"), "batch": lookup.cell(r, "batch"),
                    "shared_kib_sm": lookup.cell(r, "shared_kib_sm"), "l1_kib": lookup.cell(r, "l1_kib"),
                    "in_flight_kib": lookup.cell(r, "in_flight_kib"),
                    "us": lookup.cell(r, "median_ms") * 1e3, "x_torch": lookup.cell(r, "x_torch"),
                    "x_torch_min": lookup.cell(r, "x_torch_min"), "x_torch_max": lookup.cell(r, "x_torch_max"),
                    "correct": r["correct"] == True})  # noqa: E712
    return pd.DataFrame(out)


def targets_seventeenth_try(s: dict) -> pd.DataFrame:
    """Issue #11's encoder targets for 25 (24 with 6-byte staged heads), from
    scan.rle_room's race, and its call against the torch call in the call-time part's
    rounds."""
    return _call_targets(s, "rm17", "rm", "roomy encoder", "25")


# -- the two distilled pages: their tries tables, the look-back's cost, their targets ----
def _pct(s: dict, k: str) -> str:
    return f"{s[k]:.0f} %"


def _x(s: dict, k: str) -> str:
    return f"{s[k]:.2f}×"


def scan_tries_table(s: dict) -> pd.DataFrame:
    """Every scan tried on the scan page's way to 16, one line each: the idea, its kernel,
    its result at 2^28 int32 from its recorded rows (fractions of the copy in the same
    rounds; the runs differ from line to line), and whether it was kept. `s` holds the
    keys of summary, pipeline_summary, staged_summary, lookahead_summary, chunked_summary
    and bulk_summary."""
    rows = [
        ("one thread of each block works", "01",
         f"{s['serial_of_copy']:.1f} % of the copy at "
         + "2" + str(int(s["serial_n_log2"])).translate(_SUPERSCRIPT),
         "replaced by 02: too few loads in flight"),
        ("every thread works, three kernels", "02", f"{_pct(s, 'tk_of_copy')} of the copy",
         "kept as the step that shows the 2/3 bound"),
        ("one pass, one warp looks back, one block a tile", "03",
         f"{_pct(s, 'sp_of_copy')} of the copy, {_x(s, 'sp_x_torch')} torch.cumsum",
         "kept: the portable single pass"),
        ("the whole block looks back", "03", f"{s['lb_block_tile']:.0f} % (one warp "
         f"{s['lb_warp_tile']:.0f} %)", "dropped: no faster"),
        ("persistent blocks take the next ticket early", "03",
         f"{s['lb_warp_persistent']:.0f} %", "dropped: fewer blocks fit, slower"),
        ("persistent blocks, tiles loading ahead by cp.async", "08",
         f"{_pct(s, 'pl_of_copy')} (03: {_pct(s, 'pl_sp_of_copy')})",
         "dropped: tiles leave ticket order"),
        ("the tile waits in shared memory", "10",
         f"{_pct(s, 'st_of_copy')}; without its look-back {_pct(s, 'st_diag_of_copy')}",
         "dropped; it showed the look-back is the cost"),
        ("a warp looks back while the tile loads", "12",
         f"{_pct(s, 'la4_of_copy')}, {_x(s, 'la4_x_torch')} torch.cumsum",
         "dropped for 16"),
        ("bigger tiles for 12", "12", f"{s['la4_sw_lo']:.0f}–{s['la4_sw_hi']:.0f} %",
         "dropped: the rate is set per tile"),
        ("reduce from memory, scan again from L2", "14",
         f"{_pct(s, 'ch5_of_copy')}; without its look-back {_pct(s, 'ch5_diag_of_copy')}",
         "dropped for 16"),
        ("two-level look-back over super-chunks", "14",
         f"first shape {s['ch5_first']:.0f} % → {s['ch5_first_t32']:.0f} %",
         "dropped with 14"),
        ("one sequencer warp, tiles by bulk copy into a ring", "16",
         f"{_pct(s, 'bk6_of_copy')}, {_x(s, 'bk6_x_torch')} torch.cumsum",
         "kept: the fastest (variant \"bulk\")"),
    ]
    return pd.DataFrame(rows, columns=["idea", "kernel", "result at 2²⁸ int32", "kept?"])


def lookback_cost_table(s: dict) -> pd.DataFrame:
    """Three single passes at 2^28 int32 with and without their chaining of the tiles
    (the diagnostic that scans each tile alone), each pair in the same rounds."""
    rows = [("10: tile waits in shared memory, warp looks back", "st_of_copy", "st_diag_of_copy"),
            ("14: reduce from memory, scan from L2, warp looks back", "ch5_of_copy",
             "ch5_diag_of_copy"),
            ("16: bulk-copy ring, one sequencer", "bk6_sw_of_copy", "bk6_sw_diag_of_copy")]
    return pd.DataFrame([{"kernel": k, "with": s[a] / 100, "without": s[b] / 100,
                          "cost": (s[b] - s[a])} for k, a, b in rows])


def rle_tries_table(s: dict) -> pd.DataFrame:
    """Every encoder tried on the run-length page, one line each: the idea, its kernel,
    its result on 2^25 int32 in runs of 1–15 (× torch.unique_consecutive in its own run,
    and against its predecessor in the same rounds), and whether it was kept. `s` holds
    the keys of summary and of the later tries' summaries."""
    rows = [
        ("flags, scan and scatter as separate passes", "04",
         f"{s['rle_short_fused_over_unfused']:.1f}× slower than 05", "kept to show the bytes"),
        ("flags, scan and scatter fused on 03's look-back", "05",
         f"{_x(s, 'rle_short_x_torch')}", "kept: the portable encoder"),
        ("05 on the cp.async pipeline", "09", f"{_x(s, 'pl_rle_x_torch')} (05: "
         f"{_x(s, 'pl_rle_fused_x_torch')})", "dropped: slower"),
        ("on 12's look-ahead, runs written in the pass", "13",
         f"{_x(s, 'la4_rle_short_x_torch')} (05: {_x(s, 'la4_rle_fused_short_x_torch')})",
         "dropped for 17"),
        ("on 14: count from memory, write from L2", "15", f"{_x(s, 'ch5_rle_short_x_torch')}",
         "dropped for 17"),
        ("a sequencer instead of look-backs, bulk-copy ring", "17",
         f"{_x(s, 'bk6_rle_short_x_torch')} (15: {_x(s, 'bk6_rle_ch_short_x_torch')})",
         "its idea kept in 23–25"),
        ("fewer instructions a step, two blocks an SM", "18",
         f"{_x(s, 'ln7_short_x_torch')}, {s['ln7_over_bulk']:.2f}× as fast as 17",
         "dropped: the sequencer is the floor"),
        ("each head found once, as masks; the chain shared", "19",
         f"{_x(s, 'mk8_short_x_torch')}, {s['mk8_over_lean']:.2f}× as fast as 18",
         "dropped: the ring turns at the prefixes' pace"),
        ("no chain: lockstep rounds, every block reads every count", "20",
         f"{_x(s, 'rd9_short_x_torch')}, {s['rd9_over_masks']:.2f}× as fast as 19",
         "dropped for 23"),
        ("count from registers, read each segment again from L2", "21",
         f"{_x(s, 'rr10_short_x_torch')}, {s['rr10_over_rounds']:.2f}× as fast as 20",
         "dropped: slower"),
        ("21 with the heads left as masks for the writers", "22",
         f"{_x(s, 'wk11_short_x_torch')}, {s['wk11_over_rounds']:.2f}× as fast as 20",
         "dropped: no faster"),
        ("hold only the runs: ballots, three stages, a sequencer", "23",
         f"{_x(s, 'bl12_short_x_torch')}, {s['bl12_over_rounds']:.2f}× as fast as 20",
         "kept inside 24 and 25"),
        ("23 launched as a CUDA graph", "24",
         f"{_x(s, 'gr15_short_x_torch')}, {s['gr15_over_ballot']:.2f}× as fast as 23",
         "kept inside 25"),
        ("6-byte staged heads: L1 room for the loads", "25",
         f"{_x(s, 'rm17_short_x_torch')}, {s['rm17_over_g384']:.2f}× as fast as 24",
         "kept: the fastest (encoder \"room\")"),
    ]
    return pd.DataFrame(rows, columns=["idea", "kernel", "result (× torch.unique_consecutive)",
                                       "kept?"])


def scan_page_targets(s: dict) -> pd.DataFrame:
    """The scan page's targets: 03's (summary) and 16's (bulk_summary)."""
    t = targets(s)
    t6 = targets_sixth_try(s)
    return pd.concat([t.iloc[[0, 1, 4, 5]], t6.iloc[[0, 1, 3, 4]]], ignore_index=True)


def rle_page_targets(s: dict) -> pd.DataFrame:
    """The run-length page's targets: 05's (summary), 17's (bulk_summary), 25's
    (room_summary)."""
    t = targets(s)
    t6 = targets_sixth_try(s)
    return pd.concat([t.iloc[[2, 3]], t6.iloc[[2]], targets_seventeenth_try(s)],
                     ignore_index=True)


def rle_page_summary(s: dict) -> dict:
    """The few numbers the run-length page derives from the later tries' keys: 25's call
    against the read ceiling in the same rounds (`rle_room_over_read`), and the torch
    call's GPU work alone against 25's (`rle_torch_work_over_room`)."""
    return {"rle_room_over_read": s["rm17_short_us"] / s["rm17_short_read_us"],
            "rle_torch_work_over_room": s["rm17_ct_torch_queued_us"] / s["rm17_ct_rm_queued_us"],
            "rle_torch_host_over_room_call": s["rm17_ct_torch_host_us"] / s["rm17_ct_rm_call_us"]}


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def powers_of_two(s: dict) -> dict:
    """The sizes the pages quote as plain text ("2²⁴"), never inside $…$ math: keys
    `*_n_pow` from the `*_n_log2` keys of `s`."""
    return {k.replace("_n_log2", "_n_pow"): "2" + str(int(v)).translate(_SUPERSCRIPT)
            for k, v in s.items() if k.endswith("_n_log2") and v == v}


def serial_source() -> str:
    """kernels/03-scan/01_serial_block.cu for the page, with the lab's old word for the
    write-up it came from renamed in its identifiers and first comment (the file itself,
    whose hash is in the recorded rows, stays as it ran)."""
    from ... import paths
    text = (paths.ROOT / "kernels" / "03-scan" / "01_serial_block.cu").read_text()
    for old, new in (("The seed's scan", "The portfolio's scan"), ("SEED_BLOCK", "SERIAL_BLOCK"),
                     ("seed_", "serial_")):
        text = text.replace(old, new)
    return text


def used_by(values: dict, page: str) -> dict:
    """The entries of `values` that chapters/<page>.md quotes with {glue:text}: the pages
    glue only those (thousands of keys across the runs, some eighty a page). A key the
    page quotes and `values` lacks is an error here, not a blank in the book."""
    import re

    from ... import paths
    text = (paths.ROOT / "chapters" / f"{page}.md").read_text()
    names = set(re.findall(r"\{glue:text\}`([^`:]+)", text))
    missing = sorted(names - set(values))
    if missing:
        raise KeyError(f"chapters/{page}.md quotes keys no summary gives: {missing}")
    return {k: values[k] for k in sorted(names)}
