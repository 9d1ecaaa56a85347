"""Chapter 5's numbers, tables and figures, computed from the rows (live or replayed): the
page quotes only what the `*_facts` functions return, one for each section (PAGE_FACTS);
the targets are data (TARGETS)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ... import lookup, race, sidebyside
from ...targets import Target
from . import banks, ops

#: One colour per ladder entry across the chapter; the library calls in the vendor greys.
COLORS = {"naive-rows": "C1", "naive-cols": "C5", "tiled": "C3", "padded": "C0",
          "swizzled": "C9", "coarsened": "C2", "coarsened 64x4": "C8", "wide": "C4",
          "cudaMemcpy": "0.25", "copy kernel": "0.45", "cupy strided copy": "0.65"}
LABELS = {"naive-rows": "naive, rows read", "naive-cols": "naive, columns read",
          "tiled": "tiled, 32×32 threads", "padded": "padded, 32×32 threads",
          "swizzled": "swizzled, 32×32 threads", "coarsened": "padded, 32×8 threads",
          "coarsened 64x4": "padded, 64² tile, 64×4 threads",
          "wide": "wide, 64² tile, 16×16 threads", "cudaMemcpy": "cudaMemcpy",
          "copy kernel": "copy kernel (the machine chapter)", "cupy strided copy": "cupy.copyto(b, a.T)"}
#: The kernel file of each rung entry, from the rungs themselves (ops.RUNGS).
FILES = {**{v: rung.file for v, rung in ops.RUNGS.items()},
         "coarsened 64x4": ops.RUNGS["coarsened"].file}
ORDER = ("naive-rows", "naive-cols", "tiled", "padded", "swizzled", "coarsened",
         "coarsened 64x4", "wide", "cupy strided copy", "copy kernel", "cudaMemcpy")
RUNG_ENTRIES = ORDER[:8]
TARGET_CASE = ("float32", 8192, 8192)
CASES = (("float32", 8192, 8192), ("float32", 8191, 8193), ("float64", 8192, 8192),
         ("int32", 8192, 8192))


def entry(row) -> str:
    """The ladder entry a row is: its rung, with the tile where it is not the default."""
    v = row["variant"]
    if v in ops.TUNABLE and row.get("tile") is not None and not pd.isna(row.get("tile")):
        t, r = int(row["tile"]), int(row["block_rows"])
        if (t, r) != ops.default_tile(v, row["dtype"]):
            return f"{v} {t}x{r}"
    return v


def key(e: str) -> str:
    """An entry as the prefix of its glue names: "coarsened 64x4" -> "coarsened_64x4"."""
    return {"cudaMemcpy": "memcpy", "copy kernel": "copyk",
            "cupy strided copy": "cupy"}.get(e, e.replace("-", "_").replace(" ", "_"))


def label(e: str, dtype: str = "float32") -> str:
    """An entry's name on the page (the wide rung's tile is 32² for 8-byte types)."""
    if e == "wide" and ops.itemsize(dtype) == 8:
        return "wide, 32² tile, 16×16 threads"
    return LABELS.get(e, e)


def _with_entry(df: pd.DataFrame) -> pd.DataFrame:
    """The rows with their ladder entry."""
    d = df.copy()
    d["entry"] = [entry(r) for _, r in d.iterrows()] if len(d) else pd.Series(dtype=object)
    return d


def _case(df: pd.DataFrame, dtype: str, rows: int, cols: int) -> pd.DataFrame:
    return df[(df["dtype"] == dtype) & (df["rows"] == rows) & (df["cols"] == cols)]


def _launch_field(launch, name):
    if isinstance(launch, (list, tuple)) and launch and isinstance(launch[0], dict):
        return launch[0].get(name, np.nan)
    if isinstance(launch, dict):
        return launch.get(name, np.nan)
    return np.nan


def _span(lo, hi, digits: int = 2) -> str:
    if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
        return "—"
    return f"{lo:.{digits}f}–{hi:.{digits}f}"


# ---- correctness -----------------------------------------------------------------------

def check_table(check: pd.DataFrame) -> pd.DataFrame:
    """One row per shape: how many (rung, type) checks it had and how many failed."""
    d = check[check["correct"].notna()]
    g = d.groupby(["rows", "cols"], sort=False)
    out = pd.DataFrame({"checks": g.size(), "failed": g["correct"].apply(lambda c: int((~c.astype(bool)).sum())),
                        "types": g["dtype"].apply(lambda t: ", ".join(dict.fromkeys(t)))})
    out = out.reset_index()
    out["shape"] = [f"{r} × {c}" for r, c in zip(out["rows"], out["cols"])]
    out["elements"] = out["rows"] * out["cols"]
    return out.sort_values("elements").reset_index(drop=True)


def bad_inputs() -> pd.DataFrame:
    """What the Python call says to each bad input (the same check `transpose` makes),
    asked of NumPy stand-ins so that the page needs no GPU."""
    a = np.zeros((3, 4), np.float32)
    cases = [("float16 matrix", ops.operand_problem(a.astype(np.float16))),
             ("3-D array", ops.operand_problem(np.zeros((2, 3, 4), np.float32))),
             ("every other column (a view)", ops.operand_problem(a[:, ::2])),
             ("a.T (column-major)", ops.operand_problem(a.T)),
             ("out of the wrong shape", ops.operand_problem(a, np.zeros((3, 4), np.float32))),
             ("out = the input's memory", ops.operand_problem(a, a.reshape(4, 3))),
             ("TILE and ROWS for a fixed rung", ops.config_problem("tiled", "float32", 32, 8)),
             ("a 128² padded tile", ops.config_problem("coarsened", "float32", 128, 8))]
    return pd.DataFrame(cases, columns=["input", "ConfigError"])


# ---- the ladder ------------------------------------------------------------------------

def ladder_table(ladder: pd.DataFrame, case=TARGET_CASE) -> pd.DataFrame:
    """One row per entry and library call of one case, in the page's order, with its
    file, blocks per SM and the round-by-round ratios."""
    d = _with_entry(_case(ladder, *case))
    d["order"] = [ORDER.index(e) if e in ORDER else 99 for e in d["entry"]]
    d = d.sort_values("order")
    d["name"] = [label(e, case[0]) for e in d["entry"]]
    d["file"] = [FILES.get(e, "—") for e in d["entry"]]
    d["blocks_per_sm"] = [_launch_field(x, "blocks_per_sm") for x in d["launch"]]
    for c in ("of_copy", "of_copy_min", "of_copy_max", "x_strided", "x_strided_min",
              "x_strided_max", "TB/s", "median_ms", "p20_ms", "p80_ms"):
        if c not in d:
            d[c] = np.nan
    d["of_copy_span"] = [_span(a, b, 3) for a, b in zip(d["of_copy_min"], d["of_copy_max"])]
    d["x_strided_span"] = [_span(a, b) for a, b in zip(d["x_strided_min"], d["x_strided_max"])]
    return d.reset_index(drop=True)


def cases_table(ladder: pd.DataFrame) -> pd.DataFrame:
    """× copy of every entry in every case: one row per entry, one column per case."""
    d = _with_entry(ladder)
    d = d[d["entry"].isin(ORDER[:9])]
    d["case"] = [case_name(r["dtype"], r["rows"], r["cols"]) for _, r in d.iterrows()]
    wide = d.pivot_table(index="entry", columns="case", values="of_copy", aggfunc="first")
    wide = wide.reindex([e for e in ORDER if e in wide.index])
    cols = [c for c in (case_name(*k) for k in CASES) if c in wide.columns]
    out = wide[cols].reset_index()
    out["name"] = [label(e) for e in out["entry"]]
    return out


def case_name(dtype: str, rows: int, cols: int) -> str:
    """"8192² float32", "8191 × 8193 float32": a case as a column header."""
    shape = f"{int(rows)}²" if rows == cols else f"{int(rows)} × {int(cols)}"
    return f"{shape} {dtype}"


def plot_ladder(ax, ladder: pd.DataFrame, case=TARGET_CASE) -> None:
    """TB/s of every entry and library call (bars; whiskers: the 20th–80th percentile of
    the timed runs), the faster copy of the same run as the roof, and 0.85 of it."""
    d = ladder_table(ladder, case)
    d = d[d["TB/s"].notna()]
    tbs = d["TB/s"].to_numpy()
    lo = race.rate_at(d["TB/s"], d["median_ms"], d["p80_ms"]).to_numpy()
    hi = race.rate_at(d["TB/s"], d["median_ms"], d["p20_ms"]).to_numpy()
    y = np.arange(len(d))[::-1]
    ax.barh(y, tbs, color=[COLORS.get(e, "C7") for e in d["entry"]], height=0.7)
    ax.errorbar(tbs, y, xerr=[tbs - lo, hi - tbs], fmt="none", ecolor="0.2", lw=0.8,
                capsize=2)
    ax.set_yticks(y, d["name"], fontsize=9)
    roof = _roof(d)
    top = len(d) - 0.45
    if roof:
        ax.axvline(roof, color="0.2", ls="--", lw=1)
        ax.axvline(0.85 * roof, color="0.5", ls=":", lw=1)
        ax.text(roof, top, " copy", fontsize=9, va="bottom", ha="left", color="0.2")
        ax.text(0.85 * roof, top, "0.85 × copy ", fontsize=9, va="bottom", ha="right",
                color="0.4")
    # The values in a column right of the axes: clear of the whiskers and the roof lines.
    for yi, v in zip(y, tbs):
        ax.text(1.01, yi, f"{v:.2f}", va="center", ha="left", fontsize=9,
                transform=ax.get_yaxis_transform())
    ax.set_xlim(0, max(tbs.max(), roof or 0) * 1.08)
    ax.set_ylim(-0.6, len(d) + 0.3)
    ax.set_xlabel("TB/s: bytes read + written over the median time")


def ladder_beside(ax, live: pd.DataFrame, ref: pd.DataFrame, case=TARGET_CASE) -> list:
    """Every entry of one case as a fraction of the faster copy of its own GPU's run (×
    copy, round by round in the same run): this GPU's bar above the reference GPU's recorded
    one (plots.bars_beside); an entry this GPU could not run (`live` from
    sidebyside.fill_not_run) keeps its place with the reason. Returns the entries drawn."""
    from ...plots import bars_beside

    def entries(df):
        d = ladder_table(df, case)
        return {e: r for e, r in zip(d["entry"], d.to_dict("records"))}

    here, there = entries(live), entries(ref)
    value = lambda rows, e: float(rows[e]["of_copy"]) if e in rows and \
        pd.notna(rows[e]["of_copy"]) else np.nan
    names = [e for e in dict.fromkeys([*here, *there])
             if np.isfinite(value(here, e)) or np.isfinite(value(there, e))]
    rows = []
    for e in names:
        r, mine = here.get(e), value(here, e)
        note = "not timed here"
        if r is not None and pd.notna(r.get("not_run_reason")):      # the recorded row
            note, mine = f"not run here: {r['not_run_short']}", np.nan
        rows.append((label(e, case[0]), mine, value(there, e), COLORS.get(e, "C7"), note))
    bars_beside(ax, rows, here=sidebyside.label(live), there=sidebyside.label(ref),
                line=(1.0, "the faster copy on each GPU, same rounds (= 1)"), fmt="{:.2f}",
                xlabel=f"× the faster copy, {case_name(*case)}: each GPU against its own")
    return names


def ladder_figure(ladder: pd.DataFrame, case=TARGET_CASE):
    """The ladder against the copy as the page shows it, with its stamp: TB/s of every
    entry with the copy as the roof (plot_ladder); live on a GPU other than the reference,
    each GPU against its own faster copy, this one beside the recorded one (ladder_beside),
    stamped with both sources."""
    import matplotlib.pyplot as plt

    from ...plots import stamp

    frames = sidebyside.beside(ladder)
    if len(frames) == 1:
        fig, ax = plt.subplots(figsize=(6.7, 4.0))
        plot_ladder(ax, ladder, case)
        stamp(fig, ladder)
        return fig
    live, ref = sidebyside.fill_not_run(ladder, frames[1]), frames[1]
    n = len(ladder_table(ref, case))
    fig, ax = plt.subplots(figsize=(7.5, 1.3 + 0.34 * n))
    ladder_beside(ax, live, ref, case)
    fig.subplots_adjust(left=0.36, right=0.98)
    stamp(fig, live, ref)
    return fig


def _roof(d: pd.DataFrame) -> float | None:
    cp = d[d["entry"].isin(("cudaMemcpy", "copy kernel"))]["TB/s"]
    return float(cp.max()) if len(cp) else None


def row_sectors(row_elems: int, itemsize: int = 4, rows: int = 256) -> float:
    """Sectors a warp's 32 consecutive elements of a row touch, averaged over `rows` rows
    of `row_elems` elements (4 when every row starts on a 32-byte boundary)."""
    return float(np.mean([banks.sectors([(r * row_elems + x) * itemsize for x in range(32)],
                                        itemsize) for r in range(rows)]))


# ---- the counters ----------------------------------------------------------------------

def _ratio(num, den) -> float:
    if den is None or num is None or pd.isna(den) or pd.isna(num) or den == 0:
        return math.nan
    return num / den


def counter_table(prof: pd.DataFrame) -> pd.DataFrame:
    """One row per profiled kernel: predicted and measured sectors per global request and
    wavefronts per shared instruction, bank conflicts, DRAM and L2 traffic, stalls."""
    d = _with_entry(prof)
    recs = []
    for e in ORDER:
        r = lookup.first(d, entry=e)
        if r is None:
            continue
        v = r["variant"]
        p = banks.predicted(v, r["dtype"], *(ops.default_tile(v, r["dtype"]) if v in ops.TUNABLE
                                             else (None, None))) if v in ops.RUNGS else {}
        recs.append({
            "entry": e, "name": label(e),
            "ld_pred": p.get("ld"), "ld_meas": lookup.cell(r, "gld_sectors_per_request"),
            "st_pred": p.get("st"), "st_meas": lookup.cell(r, "gst_sectors_per_request"),
            "lds_pred": p.get("lds"),
            "lds_meas": _ratio(lookup.cell(r, "smem_ld_wavefronts"), lookup.cell(r, "smem_ld_instructions")),
            "sts_pred": p.get("sts"),
            "sts_meas": _ratio(lookup.cell(r, "smem_st_wavefronts"), lookup.cell(r, "smem_st_instructions")),
            "lds_conflicts": _ratio(lookup.cell(r, "smem_ld_bank_conflicts"), lookup.cell(r, "smem_ld_instructions")),
            "sts_conflicts": _ratio(lookup.cell(r, "smem_st_bank_conflicts"), lookup.cell(r, "smem_st_instructions")),
            "dram_MB": lookup.cell(r, "dram_read_MB") + lookup.cell(r, "dram_write_MB"),
            "dram_read_MB": lookup.cell(r, "dram_read_MB"), "dram_write_MB": lookup.cell(r, "dram_write_MB"),
            "l2_write_sectors_M": lookup.cell(r, "l2_write_sectors") / 1e6,
            "l2_read_sectors_M": lookup.cell(r, "l2_read_sectors") / 1e6,
            "l1_hit_pct": lookup.cell(r, "l1_hit_pct"),
            "dram_pct": lookup.cell(r, "dram_throughput_pct"),
            "duration_us": lookup.cell(r, "duration_us"),
            "stall_mio": lookup.cell(r, "stall_mio_throttle"),
            "stall_short_sb": lookup.cell(r, "stall_short_scoreboard"),
            "stall_barrier": lookup.cell(r, "stall_barrier"),
            "stall_long_sb": lookup.cell(r, "stall_long_scoreboard"),
            "stall_lg": lookup.cell(r, "stall_lg_throttle"),
            "mio_cycles": lookup.cell(r, "mio_throttle_latency"),
            "occupancy_pct": lookup.cell(r, "achieved_occupancy_pct"),
        })
    return pd.DataFrame(recs)


# ---- the explorer's sweep --------------------------------------------------------------

def loads_ahead(spec) -> int:
    """Global loads the compiled kernel (offline NVRTC, sm_90) issues before its first
    shared-memory store: how many of one thread's loads are in flight together."""
    from ... import compile_report as cr
    n = 0
    for ins in cr.instructions(cr.sass(spec, "sm_90")):
        if ins.base == "STS":
            break
        n += ins.opcode.startswith("LDG.E")
    return n


def tiles_table(tiles: pd.DataFrame) -> pd.DataFrame:
    """The recorded tile shapes that ran, fastest first, with the threads of a block, the
    elements each thread moves and the bytes of tiles in flight per SM (KiB)."""
    d = tiles[tiles["TB/s"].notna()].copy() if "TB/s" in tiles else tiles.iloc[0:0].copy()
    v4 = 4                                          # float32: 4 elements per 16 bytes
    d["rung"] = [("padded (05)" if v == "coarsened" else "wide (06)") for v in d["variant"]]
    d["block"] = [f"{int(t) if v == 'coarsened' else int(t) // v4} × {int(r)}"
                  for v, t, r in zip(d["variant"], d["tile"], d["block_rows"])]
    d["per_thread"] = d["tile"] * d["tile"] / d["threads"]
    d["inflight_kib"] = d["inflight_per_sm"] / 1024
    return d.sort_values("of_copy", ascending=False).reset_index(drop=True)


# ---- the numbers the prose quotes, section by section -----------------------------------

def _main(ladder: pd.DataFrame) -> pd.DataFrame:
    return _with_entry(_case(ladder, *TARGET_CASE))


def _bytes_and_roof(main: pd.DataFrame) -> tuple[float, float, float, float]:
    """(MB moved, cudaMemcpy TB/s, copy kernel TB/s, the faster of the two) of the main case."""
    n_mb = lookup.cell(lookup.first(main, entry="cudaMemcpy"), "bytes_moved") / 1e6
    memcpy = lookup.cell(lookup.first(main, entry="cudaMemcpy"), "TB/s")
    copyk = lookup.cell(lookup.first(main, entry="copy kernel"), "TB/s")
    copies = [x for x in (memcpy, copyk) if not math.isnan(x)]
    return n_mb, memcpy, copyk, (max(copies) if copies else math.nan)


#: a ladder entry's numbers the page may quote: name -> (column, scale)
METRICS = {"tbs": ("TB/s", 1), "us": ("median_ms", 1e3), **{m: (m, 1) for m in (
    "of_copy", "of_copy_min", "of_copy_max", "x_strided", "x_strided_min", "x_strided_max")}}
_SPAN = ("of_copy", "of_copy_min", "of_copy_max")
#: what the page quotes of each entry of the ladder at 8192² float32
LADDER_QUOTED = {
    "naive-rows": ("tbs", "of_copy"), "naive-cols": ("tbs", "of_copy"),
    "tiled": ("tbs", "of_copy"), "padded": ("tbs", "of_copy", "inflight_kib"),
    "swizzled": ("tbs",),
    "coarsened": ("tbs", *_SPAN, "x_strided", "inflight_kib"),
    "coarsened 64x4": (*_SPAN, "x_strided", "x_strided_min", "x_strided_max", "blocks_per_sm",
                       "inflight_kib"),
    "wide": ("tbs", *_SPAN, "x_strided", "inflight_kib"),
    "cupy strided copy": ("tbs", "of_copy"), "copy kernel": ("tbs", "of_copy"),
    "cudaMemcpy": ("tbs",)}


def _entry_facts(r, k: str, names) -> dict:
    out = {}
    for m in names:
        if m in METRICS:
            col, scale = METRICS[m]
            out[f"{k}_{m}"] = lookup.cell(r, col) * scale
        else:                                   # blocks_per_sm, inflight_kib: its launch
            per_sm = float(_launch_field(r["launch"], "blocks_per_sm"))
            t = int(r["tile"]) if not pd.isna(r["tile"]) else 32
            out[f"{k}_{m}"] = per_sm if m == "blocks_per_sm" else per_sm * t * t * 4 / 1024
    return out


def ladder_facts(ladder: pd.DataFrame) -> dict:
    """The ladder at 8192² float32 (transpose.ladder): what the page quotes of each entry
    (LADDER_QUOTED: rates, ratios, blocks and tiles in flight per SM); the bytes and the
    floor the copy roof sets; the rounds and the best rung."""
    s: dict = {}
    main = _main(ladder)
    s["n_bytes_mb"], _, _, roof_tbs = _bytes_and_roof(main)
    for e, names in LADDER_QUOTED.items():
        s.update(_entry_facts(lookup.first(main, entry=e), key(e), names))
    s["floor_us"] = s["n_bytes_mb"] / roof_tbs           # MB / (TB/s) = µs
    s["rounds"] = int(lookup.cell(lookup.first(main, entry="wide"), "rounds", 0))
    rung = main[main["entry"].isin(RUNG_ENTRIES) & main["of_copy"].notna()]
    b = rung.sort_values("of_copy").iloc[-1]
    s["best"], s["best_of_copy"] = label(b["entry"]), float(b["of_copy"])
    return s


def check_facts(check: pd.DataFrame, ladder: pd.DataFrame) -> dict:
    """Correct before fast: the checks of the correctness run (transpose.check) and of the
    ladder's rows, and how many failed."""
    c = check[check["correct"].notna()]
    s = {"n_checks": int(len(c)), "n_failed": int((c["correct"] == False).sum()),  # noqa: E712
         "n_shapes": int(len(c.groupby(["rows", "cols"]))),
         "n_ladder_checks": int(ladder["correct"].notna().sum())}
    s["n_all_checks"] = s["n_checks"] + s["n_ladder_checks"]
    s["n_all_failed"] = s["n_failed"] + int((ladder["correct"] == False).sum())  # noqa: E712
    return s


#: what the page quotes of each profiled entry (counter_table's columns)
COUNTERS_QUOTED = {
    "naive-rows": ("ld_pred", "ld_meas", "st_pred", "st_meas", "dram_MB", "stall_long_sb"),
    "naive-cols": ("l1_hit_pct",), "tiled": ("lds_meas", "lds_conflicts", "sts_meas",
                                             "stall_mio", "stall_short_sb"),
    "padded": ("lds_meas", "sts_conflicts", "dram_pct", "stall_mio", "stall_short_sb",
               "stall_barrier", "stall_long_sb"),
    "swizzled": ("lds_meas",), "coarsened": ("dram_pct", "stall_barrier"),
    "wide": ("ld_pred", "ld_meas", "lds_pred", "lds_meas", "lds_conflicts", "sts_meas"),
    "cupy strided copy": ("l1_hit_pct",), "copy kernel": ("stall_mio",)}


def counter_facts(prof: pd.DataFrame, ladder: pd.DataFrame) -> dict:
    """The profiler's counters at 8192² float32 (transpose.profile): what the page quotes
    of each entry (COUNTERS_QUOTED); the rungs' DRAM range and the L2 sectors against the
    copy kernel's and against the ideal for the ladder's bytes."""
    ct = counter_table(prof).set_index("entry")
    s = {f"{key(e)}_{m}": float(ct.loc[e, m]) for e, names in COUNTERS_QUOTED.items()
         for m in names}
    rungs = ct[ct.index.isin(RUNG_ENTRIES)]
    s["dram_lo_mb"], s["dram_hi_mb"] = float(rungs["dram_MB"].min()), float(rungs["dram_MB"].max())
    l2 = lambda e, m: float(ct.loc[e, f"l2_{m}_sectors_M"])   # noqa: E731
    s["naive_rows_l2w_x"] = l2("naive-rows", "write") / l2("copy kernel", "write")
    s["cupy_l2r_x"] = l2("cupy strided copy", "read") / l2("copy kernel", "read")
    s["naive_cols_l2r_x"] = l2("naive-cols", "read") / l2("copy kernel", "read")
    ideal = _bytes_and_roof(_main(ladder))[0] * 1e6 / 2 / 32 / 1e6
    s["copyk_l2w_over_ideal"] = l2("copy kernel", "write") / ideal
    return s


def smem_facts(ladder: pd.DataFrame) -> dict:
    """The shared-memory bound of the tiled and padded rungs: one wavefront per cycle per
    SM at the device's maximum clock, for the ladder's bytes, against its copy roof; and
    the bank-conflict degree of a column read, unpadded and padded."""
    from ..memory.experiments import conflict_degree
    s: dict = {"degree_plain": conflict_degree(32, pad=False),
               "degree_pad": conflict_degree(32, pad=True)}
    n_mb, _, _, roof = _bytes_and_roof(_main(ladder))
    dev = ladder.attrs.get("provenance", {}).get("device", {})
    s["sms"] = int(dev.get("sms", 0))
    s["clock_ghz"] = dev.get("sm_clock_max_mhz", math.nan) / 1e3
    elems = n_mb * 1e6 / 8
    for v in ("tiled", "padded"):
        p = banks.predicted(v)
        wf = elems * (p["lds"] + p["sts"]) / 32
        s[f"{v}_smem_us"] = wf / (s["sms"] * s["clock_ghz"] * 1e9) * 1e6
    s["tiled_wf_per_tile"] = (banks.predicted("tiled")["lds"] + 1) * 32
    s["tiled_smem_bound_tbs"] = n_mb / s["tiled_smem_us"]
    s["tiled_smem_bound_of_copy"] = s["tiled_smem_bound_tbs"] / roof
    return s


def loads_ahead_facts() -> dict:
    """The global loads one thread has in flight before its first shared store, in the
    compiled padded rung at its 32×8 and 64×4 shapes (loads_ahead)."""
    return {f"ahead_{t}x{r}": loads_ahead(ops.spec("coarsened", "float32", t, r))
            for t, r in ((32, 8), (64, 4))}


def shape_facts(ladder: pd.DataFrame) -> dict:
    """Other shapes and types: × copy at 8191 × 8193 float32, 8192² float64 and int32 of
    the entries the page names; the sectors a row's 32 elements touch at the odd shape."""
    s: dict = {}
    for dtype, m, n, tag, entries in (
            ("float32", 8191, 8193, "odd", ("coarsened", "wide")),
            ("float64", 8192, 8192, "f64", ("coarsened", "wide")),
            ("int32", 8192, 8192, "i32", ("wide",))):
        d = _with_entry(_case(ladder, dtype, m, n))
        for e in entries:
            s[f"{tag}_{key(e)}_of_copy"] = lookup.cell(lookup.first(d, entry=e), "of_copy")
    odd = _with_entry(_case(ladder, "float32", 8191, 8193))
    s["odd_memcpy_tbs"] = lookup.cell(lookup.first(odd, entry="cudaMemcpy"), "TB/s")
    s["odd_ld_sectors"] = row_sectors(8193)
    s["odd_st_sectors"] = row_sectors(8191)
    s["odd_sector_x"] = (s["odd_ld_sectors"] + s["odd_st_sectors"]) / 8
    main_coarsened = lookup.cell(lookup.first(_main(ladder), entry="coarsened"), "of_copy")
    s["odd_coarsened_drop"] = main_coarsened / s["odd_coarsened_of_copy"]
    return s


def tile_facts(tiles: pd.DataFrame) -> dict:
    """The explorer's sweep (transpose.tiles): the padded rung's best and worst shape."""
    tt = tiles_table(tiles)
    d = tt[tt["variant"] == "coarsened"]
    b, w = d.iloc[0], d.iloc[-1]
    return {"tp_best": f"{int(b['tile'])}² tile, {b['block']} threads",
            "tp_best_of_copy": float(b["of_copy"]),
            "tp_worst": f"{int(w['tile'])}² tile, {w['block']} threads",
            "tp_worst_of_copy": float(w["of_copy"])}


#: the page's facts: (function, the experiments whose rows it takes, in order)
PAGE_FACTS = {"05-transpose": (
    (ladder_facts, ("transpose.ladder",)),
    (check_facts, ("transpose.check", "transpose.ladder")),
    (counter_facts, ("transpose.profile", "transpose.ladder")),
    (smem_facts, ("transpose.ladder",)), (loads_ahead_facts, ()),
    (shape_facts, ("transpose.ladder",)), (tile_facts, ("transpose.tiles",)))}

_BEST = "coarsened 64x4"
#: the done-when targets of the issue
TARGETS = {"05-transpose": (
    Target(f"padded transpose ({label(_BEST)}), 8192² float32, × copy", "coarsened_64x4_of_copy",
           at_least=0.85, low="coarsened_64x4_of_copy_min", high="coarsened_64x4_of_copy_max"),
    Target("the same × cupy.copyto(b, a.T)", "coarsened_64x4_x_strided", at_least=2.5,
           low="coarsened_64x4_x_strided_min", high="coarsened_64x4_x_strided_max"),
    Target("the classic padded 32×8 × copy", "coarsened_of_copy", at_least=0.85,
           low="coarsened_of_copy_min", high="coarsened_of_copy_max"),
    Target("counters: naive store sectors per request (32 predicted)", "naive_rows_st_meas",
           at_least=31, digits=1),
    Target("counters: wavefronts per column read, tiled (32 predicted)", "tiled_lds_meas",
           at_least=31, digits=2),
    Target("counters: wavefronts per column read, padded (1 predicted)", "padded_lds_meas",
           at_most=1.1, digits=3),
    Target("checks of the correctness run: odd shapes, float32, float64, int32", "n_checks",
           at_least=1, digits=0),
    Target("every rung bit-exact: checks failed, of {n_all_checks} (correctness run and ladder)",
           "n_all_failed", equal=0, digits=0),
)}
