"""Chapter 8's numbers, tables and figures, computed from the rows (live or recorded): the
page quotes only what these functions return (the `*_facts` functions, one for each section:
PAGE_FACTS); the targets are data (TARGETS).

The seeds' published figures are the one exception to "measured here": they are typed
below with their source, and only ever shown as what they are (another GPU's numbers,
as a fraction of that GPU's published FP32 peak)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...plots import COLORS
from ...race import rate_at
from ...targets import Target
from .. import machine
from ..sgemm.report import size_label, with_size   # chapter 1's: "4096³", "8192×8192×4096"
from .experiments import BASELINE
from .variants import VARIANTS

ORDER = [v.name for v in VARIANTS]
#: The size the counters, the speed-ups and the roofline are read at (M = N = K).
M = 4096
LABELS = {v.name: v.label for v in VARIANTS}
#: One colour per kernel of this chapter (cuBLAS keeps the book's grey).
KCOLORS = {"naive": "C1", "tiled": "C0", "coarse-n2": "C9", "coarse-n4": "C2",
           "coarse-m2": "C4", "coarse-m4": "C3", "cm-plain": "C5", "cm-turned": "C6",
           "cm-turned-pad": "C8", BASELINE: COLORS[BASELINE]}


def _order(names) -> list:
    names = list(dict.fromkeys(names))
    return sorted(names, key=lambda n: (n != BASELINE, ORDER.index(n) if n in ORDER else 99))


# ------------------------------------------------------------------------ intensities

def structural_intensity(name: str) -> float:
    """FLOP per byte the kernel's global loads request, caches ignored (the seed's
    "structural" intensity): naive 2 FLOP per 8 B; a TILE-wide tile TILE/4; coarsening
    by c shares one operand's tile among c: 16c / (1 + c) at TILE = 32."""
    v = next(x for x in VARIANTS if x.name == name)
    p = v.params()
    if name == "naive":
        return 0.25
    T = int(p.get("TILE", 32))
    c = int(p.get("COARSE", 1))
    # per K step: (1 + c) tiles of T*T floats for 2 * c * T^3 FLOP
    return 2 * c * T ** 3 / (4 * (1 + c) * T * T)


def smem_loads_per_fma(name: str) -> float:
    """Shared-memory load instructions per FMA the SASS holds (offline compile report,
    `sass_counts`), for the kernels with a K loop of 32: predicted, not measured."""
    c = sass_counts()[name]
    return c["lds"] / c["ffma"] if c["ffma"] else math.nan


def sass_counts() -> dict:
    """name -> {"ffma", "lds", "lds128", "ldg"}: the instruction counts of each kernel's
    SASS (sm_90, NVRTC, offline)."""
    from ... import compile_report as cr
    out = {}
    for v in VARIANTS:
        out[v.name] = cr.count_families(cr.sass(v.kernels(v.params())[0], "sm_90"),
                                        {"ffma": "FFMA", "lds": "LDS", "lds128": "LDS.128",
                                         "ldg": "LDG"})
    return out


# ------------------------------------------------------------------------------ speed

def at(df: pd.DataFrame, variant: str, M, N, K, col: str = "GFLOP/s") -> float:
    r = df[(df["variant"] == variant) & (df["M"] == M) & (df["N"] == N) & (df["K"] == K)]
    if r.empty or col not in r or pd.isna(r[col].iloc[0]):
        return math.nan
    return float(r[col].iloc[0])


def speed_grid(kern: pd.DataFrame) -> pd.DataFrame:
    """kernel × size → "GFLOP/s (× cuBLAS)" as text, sizes in the recorded order."""
    d = with_size(kern)
    order = list(dict.fromkeys(d["size"]))

    def cell(r):
        if r["correct"] is False:
            return "FAIL"
        if pd.isna(r.get("GFLOP/s")):
            return "—"
        v = r.get("vs_cublas")
        return f"{r['GFLOP/s']:,.0f}" + ("" if pd.isna(v) else f" ({v:.2f}×)")

    d = d.assign(cell=[cell(r) for _, r in d.iterrows()])
    t = d.pivot_table(index="variant", columns="size", values="cell", aggfunc="first")
    t = t.reindex(_order(t.index))[order].fillna("—")
    t.insert(0, "kernel", [LABELS.get(n, n) for n in t.index])
    return t.reset_index().rename(columns={"variant": "name"})


def plot_speed(ax, kern: pd.DataFrame) -> None:
    """GFLOP/s against N for the square sizes, one line per kernel, cuBLAS FP32 in grey;
    the spread over the rounds (p20-p80 of all timed calls) as a band: the row's rate at
    those times."""
    d = kern[(kern["M"] == kern["N"]) & (kern["N"] == kern["K"]) & kern["GFLOP/s"].notna()]
    for name in _order(d["variant"]):
        r = d[d["variant"] == name].sort_values("M")
        tf = r["GFLOP/s"] / 1e3
        ax.plot(r["M"], tf, "o-" if name != BASELINE else "s--",
                color=KCOLORS.get(name, "0.5"), ms=3.5, lw=1.4,
                label=name)
        if "p20_ms" in r:
            ax.fill_between(r["M"], rate_at(tf, r["median_ms"], r["p80_ms"]),
                            rate_at(tf, r["median_ms"], r["p20_ms"]),
                            color=KCOLORS.get(name, "0.5"), alpha=0.15, lw=0)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = sorted(d["M"].unique())
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.set_xlabel("M = N = K")
    ax.set_ylabel("TFLOP/s")
    ax.set_yticks([1, 2, 5, 10, 20, 50], ["1", "2", "5", "10", "20", "50"])
    ax.minorticks_off()
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def speed_long(kern: pd.DataFrame) -> pd.DataFrame:
    """Every row: size, kernel, GFLOP/s, × cuBLAS with its spread over rounds, × tiled."""
    d = with_size(kern).copy()
    d["kernel"] = [LABELS.get(n, n) for n in d["variant"]]
    d["cb_spread"] = [f"{lo:.3f}–{hi:.3f}" if pd.notna(lo) else None
                      for lo, hi in zip(d.get("vs_cublas_min", np.nan), d.get("vs_cublas_max", np.nan))]
    return d


# ---------------------------------------------------------------------------- roofline

def profiled(prof: pd.DataFrame, name: str, M, col: str) -> float:
    r = prof[(prof["variant"] == name) & (prof["M"] == M)]
    if r.empty or col not in r or pd.isna(r[col].iloc[0]):
        return math.nan
    return float(r[col].iloc[0])


def roofline_table(prof: pd.DataFrame, kern: pd.DataFrame, M: int) -> pd.DataFrame:
    """Per kernel at M³: the three intensities (structural, what the DRAM saw, what L2
    saw, in FLOP/B) and the speed of the same size timed in `kern` (TFLOP/s)."""
    flops = 2.0 * M ** 3
    rows = []
    for name in _order(prof.loc[prof["M"] == M, "variant"]):
        dram = (profiled(prof, name, M, "dram_read_MB") + profiled(prof, name, M, "dram_write_MB")) * 1e6
        l2 = profiled(prof, name, M, "l2_MB") * 1e6
        us = profiled(prof, name, M, "duration_us")
        rows.append({
            "variant": name, "kernel": LABELS.get(name, name),
            "structural": structural_intensity(name) if name != BASELINE else math.nan,
            "dram_ai": flops / dram if dram > 0 else math.nan,
            "l2_ai": flops / l2 if l2 > 0 else math.nan,
            "dram_GB": dram / 1e9, "l2_GB": l2 / 1e9,
            "TFLOP/s": at(kern, name, M, M, M) / 1e3,
            "profiled_TFLOP/s": flops / (us * 1e-6) / 1e12 if us > 0 else math.nan,
            "dram_TBps": dram / (us * 1e-6) / 1e12 if us > 0 else math.nan,
            "l2_TBps": l2 / (us * 1e-6) / 1e12 if us > 0 else math.nan,
        })
    return pd.DataFrame(rows)


def plot_roofline(ax, ceil, l2_Bps: float, rt: pd.DataFrame, names) -> None:
    """The measured roofs (FP32 FMA, DRAM copy from chapter 0, the L2 read roof of this
    chapter) and, per kernel, its three intensities at its measured speed: structural
    (open circle), L2 (square), DRAM (filled circle), joined by a line."""
    from ...roofline import attainable

    peak = ceil.peaks_flops["FP32 FMA"]
    ai = np.geomspace(0.05, 5000, 256)
    ax.plot(ai, attainable(ai, peak, ceil.bandwidth_Bps) / 1e12, "-", color="0.3", lw=1.2,
            label="FP32 and DRAM roofs (measured)")
    if l2_Bps and math.isfinite(l2_Bps):
        ax.plot(ai, attainable(ai, peak, l2_Bps) / 1e12, "--", color="0.55", lw=1.1,
                label="L2 roof (measured here)")
    ax.axhline(peak / 1e12, color="0.3", lw=0.6, ls=":")
    for name in names:
        r = rt[rt["variant"] == name]
        if r.empty or pd.isna(r["TFLOP/s"].iloc[0]):
            continue
        r = r.iloc[0]
        y = r["TFLOP/s"]
        col = KCOLORS.get(name, "0.5")
        xs = [x for x in (r["structural"], r["l2_ai"], r["dram_ai"]) if pd.notna(x)]
        ax.plot([min(xs), max(xs)], [y, y], "-", color=col, lw=0.8, alpha=0.7)
        if pd.notna(r["structural"]):
            ax.plot(r["structural"], y, "o", mfc="white", mec=col, ms=6)
        ax.plot(r["l2_ai"], y, "s", color=col, ms=5)
        ax.plot(r["dram_ai"], y, "o", color=col, ms=6, label=name)
    ax.plot([], [], "o", mfc="white", mec="0.4", label="structural (loads requested)")
    ax.plot([], [], "s", color="0.4", label="bytes L2 served")
    ax.plot([], [], "o", color="0.4", label="bytes DRAM moved")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(0.1, 3000)
    ax.set_ylim(0.2, 100)
    ax.set_yticks([0.5, 1, 2, 5, 10, 20, 50], ["0.5", "1", "2", "5", "10", "20", "50"])
    ax.set_xticks([0.1, 1, 10, 100, 1000], ["0.1", "1", "10", "100", "1000"])
    ax.minorticks_off()
    ax.set_xlabel("arithmetic intensity (FLOP per byte)")
    ax.set_ylabel("TFLOP/s")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0))


# ---------------------------------------------------------------------------- counters

def counters(prof: pd.DataFrame, M: int) -> pd.DataFrame:
    """The profiler's counters per kernel at M³, with the per-FMA ratios the text reads:
    shared-load instructions and wavefronts per FFMA instruction, shared-store wavefronts
    per store, and the stall reasons (warps waiting per issued instruction)."""
    d = prof[prof["M"] == M].copy()
    d = d.set_index("variant").reindex(_order(d["variant"])).reset_index()
    ffma = d.get("ffma_thread_inst", pd.Series(np.nan, index=d.index)) / 32.0
    d["kernel"] = [LABELS.get(n, n) for n in d["variant"]]
    d["lds_per_ffma"] = d.get("smem_ld_instructions") / ffma
    d["ldw_per_ffma"] = d.get("smem_ld_wavefronts") / ffma
    d["stw_per_st"] = d.get("smem_st_wavefronts") / d.get("smem_st_instructions")
    d["smw_per_ffma"] = (d.get("smem_ld_wavefronts") + d.get("smem_st_wavefronts")) / ffma
    d["ffma_share"] = ffma / d.get("inst_executed")
    d["flops_counted"] = d.get("ffma_thread_inst") * 2
    return d


# -------------------------------------------------------------------------------- audit

SYMBOL = {"pass": "✓", "clear-error": "E", "pass + clear-error": "✓ E", "reported": "✓",
          "fail": "✗", "not run": "—"}


#: Short column names of the audit's categories, in order.
SHORT = {"sizes": "edges", "tiny": "1×1×1", "skinny": "skinny", "layout": "views",
         "dtype": "dtype", "aliasing": "aliasing", "shapes": "shapes", "nonfinite": "NaN, ±Inf",
         "overflow": "overflow", "large_index": "past 2³¹", "bound": "error bound",
         "determinism": "repeats", "launch_failure": "fault"}


#: The grid in two parts (a page column holds seven categories): what the kernels are
#: given, and what they compute.
GIVEN = ("sizes", "tiny", "skinny", "layout", "dtype", "aliasing", "shapes")
COMPUTED = ("nonfinite", "overflow", "large_index", "bound", "determinism", "launch_failure")


def audit_grid(aud: pd.DataFrame, cats=None) -> pd.DataFrame:
    """Kernel × category (those of `cats`, default all): ✓ (right result), E (refused with
    a clear error), ✓ E (some of each), ✗ (a case failed); the columns are SHORT's names of
    the categories."""
    from .audit import CATEGORIES, subjects

    rows = []
    for s in subjects():
        sub = aud[aud["variant"] == s.name]
        if sub.empty:
            continue
        rec = {"kernel": s.name}
        for cat in (cats or CATEGORIES):
            r = sub[sub["category"] == cat]
            rec[SHORT[cat]] = SYMBOL.get(r["verdict"].iloc[0], r["verdict"].iloc[0]) if len(r) else "—"
        rows.append(rec)
    return pd.DataFrame(rows)


def category_legend() -> pd.DataFrame:
    """The audit's categories: the short name the grid uses, and what it checks."""
    from .audit import CATEGORIES
    return pd.DataFrame([{"column": SHORT[k], "category": c.title} for k, c in CATEGORIES.items()])


def audit_failures(aud: pd.DataFrame) -> pd.DataFrame:
    """The failed rows: category, kernel, its chapter, the detail of every case."""
    from .audit import CATEGORIES
    d = aud[aud["correct"] == False].copy()   # noqa: E712
    d["title"] = [CATEGORIES[c].title for c in d["category"]]
    return d


def audit_detail(aud: pd.DataFrame) -> pd.DataFrame:
    from .audit import CATEGORIES
    d = aud.copy()
    d["title"] = [CATEGORIES[c].title for c in d["category"]]
    return d


# ------------------------------------------------------------------- GPUs side by side

#: The seeds' published figures: GFLOP/s of their naive (coalesced, one thread per
#: element) and 32x32 shared-memory tiled SGEMM kernels. seed 002 = the SGEMM case study
#: (T4 and H100 tables), seed 000 = the RTX 4000 Ada write-up (its 32x32 tiling stage).
SEED_FIGURES = [
    ("Tesla T4", "naive", (512, 512, 512), 275.35, "seed 002"),
    ("Tesla T4", "naive", (1024, 1024, 1024), 332.88, "seed 002"),
    ("Tesla T4", "naive", (2048, 2048, 2048), 335.50, "seed 002"),
    ("Tesla T4", "tiled", (512, 512, 512), 350.56, "seed 002"),
    ("Tesla T4", "tiled", (1024, 1024, 1024), 389.39, "seed 002"),
    ("Tesla T4", "tiled", (2048, 2048, 2048), 393.86, "seed 002"),
    ("H100 SXM5", "tiled", (4096, 4096, 4096), 6769.54, "seed 002"),
    ("H100 SXM5", "tiled", (8192, 8192, 4096), 6822.33, "seed 002"),
    ("H100 SXM5", "tiled", (4096, 4096, 8192), 6817.78, "seed 002"),
    ("H100 SXM5", "tiled", (8192, 8192, 8192), 6843.56, "seed 002"),
    ("RTX 4000 Ada", "tiled", (3072, 3072, 3072), 2140.0, "seed 000"),
]

#: Published FP32 peaks of the seeds' GPUs (vendor datasheets; not measured here).
SPEC_PEAKS = {
    "Tesla T4": (8.1e12, "NVIDIA T4 datasheet: 8.1 TFLOPS FP32 (40 SMs, 2560 lanes, 1590 MHz)"),
    "H100 SXM5": (66.9e12, "NVIDIA H100 datasheet: 67 TFLOPS FP32, SXM5 (the case study's 132 SMs "
                           "and 3.35 TB/s are the SXM5's)"),
    "RTX 4000 Ada": (26.7e12, "NVIDIA RTX 4000 Ada Generation datasheet: 26.7 TFLOPS FP32"),
}


def fp32_ceiling(slug: str, dev: dict) -> tuple[float, str]:
    """(FLOP/s, where it comes from) of a recorded device: chapter 0's measured FMA rate
    when that device has it recorded, else the rate its own attributes imply."""
    from ... import lab, store
    from ...device import fp32_peak_flops
    from ...errors import ResultsError

    if store.find("machine.fma", slug) is not None:
        try:
            fma = lab.replay("machine.fma", device_slug=slug)
            return float(fma["TFLOP/s"].max()) * 1e12, "measured (the machine chapter)"
        except ResultsError:
            pass
    return fp32_peak_flops(dev), "SMs × lanes × 2 × clock (its attributes)"


def device_runs(live: pd.DataFrame | None = None, experiment: str = "matmul.kernels") -> list:
    """(label, device dict, rows, ceiling FLOP/s, ceiling source) for every device with
    recorded results of `experiment`, and the live run when `live` was measured here."""
    from ... import lab, store

    out = []
    for slug in store.devices_with(experiment):
        df = lab.replay(experiment, device_slug=slug)
        dev = df.attrs.get("provenance", {}).get("device", {})
        peak, src = fp32_ceiling(slug, dev)
        out.append((f"{_short(dev.get('name', slug))} (recorded)", dev, df, peak, src))
    if live is not None and live.attrs.get("source", {}).get("kind") == "live":
        dev = live.attrs.get("provenance", {}).get("device", {})
        peak, src = fp32_ceiling(dev.get("slug", "?"), dev)
        out.append((f"{_short(dev.get('name', '?'))} (live)", dev, live, peak, src))
    return out


def _short(name: str) -> str:
    """A device name as a table column: the vendor's prefix dropped."""
    return name.replace("NVIDIA ", "", 1).strip()


def side_by_side(kernel: str, runs: list, value: str = "pct") -> pd.DataFrame:
    """Size × device for one kernel ("naive" or "tiled"): the seeds' published figures
    and every recorded device's, as % of that device's own FP32 ceiling (value="pct") or
    GFLOP/s (value="gflops")."""
    sizes = [s for _, k, s, _, _ in SEED_FIGURES if k == kernel]
    for _, _, df, _, _ in runs:
        d = df[df["variant"] == kernel]
        sizes += [tuple(int(x) for x in t) for t in zip(d["M"], d["N"], d["K"])]
    sizes = sorted(dict.fromkeys(sizes), key=lambda s: (s[0] * s[1] * s[2], s))
    table = {"size": [size_label(*s) for s in sizes]}
    for dev in SPEC_PEAKS:
        figs = {s: g for d, k, s, g, _ in SEED_FIGURES if d == dev and k == kernel}
        if not figs:
            continue
        peak = SPEC_PEAKS[dev][0]
        table[f"{_seedname(dev)} (published)"] = [_val(figs.get(s), peak, value) for s in sizes]
    for label, _, df, peak, _ in runs:
        table[label] = [_val(at(df, kernel, *s), peak, value) for s in sizes]
    return pd.DataFrame(table)


def _seedname(dev: str) -> str:
    return dev.replace("Tesla ", "")


def _val(gflops, peak, value):
    if gflops is None or not math.isfinite(gflops):
        return math.nan
    return 100 * gflops * 1e9 / peak if value == "pct" else gflops


def ceilings_table(runs: list) -> pd.DataFrame:
    """Every device of the comparison: its FP32 ceiling and where that number comes from."""
    rows = [{"device": f"{_seedname(d)} (published)", "TFLOP/s": p / 1e12, "source": src}
            for d, (p, src) in SPEC_PEAKS.items()]
    rows += [{"device": label, "TFLOP/s": peak / 1e12, "source": src}
             for label, _, _, peak, src in runs]
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------- compile report

def compile_table(kern: pd.DataFrame | None = None, M: int = 4096) -> pd.DataFrame:
    """Registers, shared memory and spills of every kernel (sm_90, NVRTC offline), with
    the blocks per SM the driver allowed for the launch recorded at M³."""
    from ... import compile_report
    specs = [v.kernels(v.params())[0] for v in VARIANTS]
    rep = compile_report.report(specs, archs=("sm_90",))
    rep.insert(0, "name", [v.name for v in VARIANTS])
    bps = []
    for v in VARIANTS:
        n = math.nan
        if kern is not None:
            r = kern[(kern["variant"] == v.name) & (kern["M"] == M) & (kern["N"] == M)]
            if len(r) and isinstance(r["launch"].iloc[0], list) and r["launch"].iloc[0]:
                n = r["launch"].iloc[0][0]["blocks_per_sm"]
        bps.append(n)
    rep["blocks_per_sm"] = bps
    rep["warps_per_sm"] = [b * 32 if pd.notna(b) else math.nan for b in bps]
    counts = sass_counts()
    rep["lds_per_ffma"] = [counts[v.name]["lds"] / counts[v.name]["ffma"] for v in VARIANTS]
    return rep


# ------------------------------------------------------------------------ the numbers

def _seed(device: str, kernel: str, size) -> float:
    return next(g for d, k, s, g, _ in SEED_FIGURES if d == device and k == kernel and s == size)


def pv(prof: pd.DataFrame, name: str, M: int, col: str) -> float:
    return profiled(prof, name, M, col)


def speed_facts(kern: pd.DataFrame, M: int = M) -> dict:
    """The speed of the kernels (matmul.kernels): GFLOP/s at the sizes the page names, the
    ratios to the naive and the tiled kernel and to cuBLAS in the same rounds, and the T4
    seed's ratio."""
    g = {"M": M, "naive_2048": at(kern, "naive", 2048, 2048, 2048),
         "tiled_2048": at(kern, "tiled", 2048, 2048, 2048),
         "coarse_m4_4096": at(kern, "coarse-m4", 4096, 4096, 4096),
         "cb_4096": at(kern, BASELINE, 4096, 4096, 4096)}
    for n in (2048, 4096, 8192):
        g[f"tiled_x_naive_{n}"] = at(kern, "tiled", n, n, n, "x_naive")
    for col in ("x_naive_min", "x_naive_max"):
        g[f"tiled_{col}_2048"] = at(kern, "tiled", 2048, 2048, 2048, col)
    g["tiled_vs_cb"] = at(kern, "tiled", M, M, M, "vs_cublas")
    g["m4_vs_cb"] = at(kern, "coarse-m4", M, M, M, "vs_cublas")
    for k in ORDER[2:]:
        g[f"{_key(k)}_x_tiled"] = at(kern, k, M, M, M, "x_tiled")
    for col in ("x_tiled_min", "x_tiled_max"):
        g[f"cm_turned_pad_{col}"] = at(kern, "cm-turned-pad", M, M, M, col)
    g["cm_turned_pad_x_plain"] = at(kern, "cm-turned-pad", M, M, M, "x_cm_plain")
    g["seed_t4_ratio"] = _seed("Tesla T4", "tiled", (2048,) * 3) / _seed("Tesla T4", "naive", (2048,) * 3)
    g["cb_512_ms"] = at(kern, BASELINE, 512, 512, 512, "median_ms")
    vs = pd.Series({k: at(kern, k, 512, 512, 512, "vs_cublas") for k in ORDER}).dropna()
    g |= {"cb_512_best_vs": float(vs.max()), "cb_512_n": int(len(vs)),
          "cb_512_beaten": int((vs > 1).sum())}
    return g


def sass_facts() -> dict:
    """What the compiler made of the tiled and coarsened loops (offline SASS, sm_90):
    shared loads per FFMA, and the tiled kernel's shared loads and FFMAs."""
    sc = sass_counts()
    g = {f"{_key(k)}_sass_lds": sc[k]["lds"] / sc[k]["ffma"] for k in ("tiled", "coarse-n4", "coarse-m4")}
    g["tiled_sass_lds_n"] = sc["tiled"]["lds"] - sc["tiled"]["lds128"]
    g["tiled_sass_lds128_n"] = sc["tiled"]["lds128"]
    g["tiled_sass_ffma_n"] = sc["tiled"]["ffma"]
    return g


#: the counters the page quotes, by kernel (counters' columns)
COUNTERS_QUOTED = {
    "naive": ("l1_hit_pct", "stall_lg_throttle", "stall_long_scoreboard"),
    "tiled": ("achieved_occupancy_pct", "gld_sectors_per_request", "lsu_pipe_pct",
              "stall_barrier", "stall_mio_throttle"),
    "coarse-n4": ("stall_barrier",),
    "cm-plain": ("gld_sectors_per_request", "stall_long_scoreboard"),
    "cm-turned": ("gld_sectors_per_request", "stw_per_st"), "cm-turned-pad": ("stw_per_st",)}


def counter_facts(prof: pd.DataFrame, kern: pd.DataFrame, M: int = M) -> dict:
    """The profiler's counters at M³ (matmul.profile) the page quotes (COUNTERS_QUOTED);
    the shared-memory wavefront model of the speed-ups over the tiled kernel and how the
    measured speed-ups (matmul.kernels, same rounds) compare with it (the lowest of the
    four coarsened kernels'); the instructions the coarsening cut."""
    c = counters(prof, M).set_index("variant")
    g = {f"{_key(k)}_{col}": float(c.loc[k, col]) for k, cols in COUNTERS_QUOTED.items()
         for col in cols}
    wf_model = {k: c.loc["tiled", "smw_per_ffma"] / c.loc[k, "smw_per_ffma"] for k in ORDER[2:]}
    for k in ("coarse-n4", "coarse-m4", "cm-plain", "cm-turned"):
        g[f"{_key(k)}_wf_model"] = float(wf_model[k])
    vs_model = {k: at(kern, k, M, M, M, "x_tiled") / wf_model[k] for k in ORDER[2:6]}
    g["coarse_n4_vs_model"] = float(vs_model["coarse-n4"])
    g["vs_model_min"] = float(min(vs_model.values()))
    g["n4_inst_cut_pct"] = 100 * (1 - c.loc["coarse-n4", "inst_executed"] / c.loc["tiled", "inst_executed"])
    return g


def compile_facts(kern: pd.DataFrame, M: int = M) -> dict:
    """What the compiler and the driver said (compile_table: the offline compile and the
    recorded launch at M³): registers, spills, blocks and warps per SM; the blocks of one
    wave and the operands against the device's L2."""
    g = {}
    ct = compile_table(kern, M)
    g["regs_max"] = int(ct["registers"].max())
    g["spills"] = int((ct["spill_store_bytes"] + ct["spill_load_bytes"]).sum())
    g["blocks_min"] = int(ct["blocks_per_sm"].min())
    g["warps_min"] = int(ct["warps_per_sm"].min())
    dev = kern.attrs.get("provenance", {}).get("device", {})
    g["sms"] = int(dev.get("sms", 0))
    tiled_bps = ct.set_index("name").loc["tiled", "blocks_per_sm"]
    g["wave_rows"] = g["sms"] * tiled_bps / (M / 32)          # block-rows of C in one wave
    g["operands_over_l2"] = 12 * M * M / dev.get("l2_bytes", math.nan)
    return g


def traffic_facts(prof: pd.DataFrame, kern: pd.DataFrame, ceil, M: int = M) -> dict:
    """The bytes each kernel moved (roofline_table: the profiler's DRAM and L2 traffic at
    M³ and 2048³ over the timed rate) against the machine chapter's ceilings; the
    structural ceiling of the naive kernel and the compulsory bytes; the kernels whose
    three roofline points all come from measured bytes."""
    peak, bw = ceil.peaks_flops["FP32 FMA"], ceil.bandwidth_Bps
    g = {"ridge": peak / bw}
    rt = roofline_table(prof, kern, M).set_index("variant")
    rt2 = roofline_table(prof, kern, 2048).set_index("variant")
    for col, name in (("dram_ai", "dram_ai"), ("l2_ai", "l2_ai"), ("dram_GB", "dram_gb"),
                      ("l2_GB", "l2_gb"), ("l2_TBps", "l2_tbs")):
        g[f"naive_{name}"] = float(rt.loc["naive", col])
    g["naive_dram_ai_2048"] = float(rt2.loc["naive", "dram_ai"])
    for col, name in (("dram_GB", "dram_gb"), ("dram_TBps", "dram_tbs"), ("l2_ai", "l2_ai")):
        g[f"tiled_{name}"] = float(rt.loc["tiled", col])
    g["coarse_n4_dram_gb"] = float(rt.loc["coarse-n4", "dram_GB"])
    g["naive_struct_ceiling_tf"] = 0.25 * bw / 1e12
    g["naive_above"] = at(kern, "naive", M, M, M) / 1e3 / g["naive_struct_ceiling_tf"]
    g["seed_naive_above"] = _seed("Tesla T4", "naive", (1024,) * 3) / (0.25 * 320)
    g["tiled_dram_pct"] = 100 * g["tiled_dram_tbs"] * 1e12 / bw
    g["seed_tiled_dram_pct"] = 100 * 49.2 / 320
    g["compulsory_gb"] = 12 * M * M / 1e9
    g["roofline_kernels"] = int(rt[["structural", "l2_ai", "dram_ai"]].notna().all(axis=1).sum())
    g["n_kernels"] = len(ORDER)
    return g


def l2_facts(l2: pd.DataFrame) -> dict:
    """The L2 and DRAM read rates of matmul.l2, and the L2's size it read from."""
    l2row = l2[l2["variant"] == "L2"]
    dr = l2[l2["variant"] == "DRAM"]
    return {"l2_tbs": float(l2row["TB/s"].iloc[0]) if len(l2row) else math.nan,
            "l2_mib": float(l2row["bytes"].iloc[0]) / (1 << 20) if len(l2row) else math.nan,
            "dram_read_tbs": float(dr["TB/s"].iloc[0]) if len(dr) else math.nan}


def audit_facts(aud: pd.DataFrame) -> dict:
    """The audit (matmul.audit): rows, categories and cases, what passed for this
    chapter's kernels and for the SGEMM ladder's (rows, and kernels right or refused
    clearly in every category), the worst bound, and the two fixes."""
    from .audit import CATEGORIES
    g = {}
    ours = aud[aud["kernel_chapter"] == "08-matmul"]
    theirs = aud[aud["kernel_chapter"] != "08-matmul"]
    g["audit_rows"] = len(aud)
    g["audit_pass"] = int(aud["correct"].astype(bool).sum())
    g["audit_categories"] = len(CATEGORIES)
    g["audit_kernels"] = aud["variant"].nunique()
    g["cases"] = int(aud["cases"].sum())
    g["bound_worst"] = float(aud.loc[aud["category"] == "bound", "bound_ratio"].max())
    for who, d in (("ours", ours), ("theirs", theirs)):
        g[f"{who}_rows"] = len(d)
        g[f"{who}_pass"] = int(d["correct"].astype(bool).sum())
        g[f"{who}_kernels"] = int(d["variant"].nunique())
        g[f"{who}_kernels_ok"] = int(d.groupby("variant")["correct"].all().sum())
    g.update(audit_fixed(aud))
    return g


def gpus_facts(kern: pd.DataFrame, ceil) -> dict:
    """GPUs compared fairly: the tiled kernel here and the seeds' published figures, each
    as a fraction of its own GPU's FP32 peak (the machine chapter's, here)."""
    peak = ceil.peaks_flops["FP32 FMA"]
    g = {}
    h100 = [s for d, k, s, _, _ in SEED_FIGURES if d == "H100 SXM5"]
    t4_tiled = _seed("Tesla T4", "tiled", (2048,) * 3)
    h100_avg = float(np.mean([_seed("H100 SXM5", "tiled", s) for s in h100]))
    h200_avg = float(np.mean([at(kern, "tiled", *s) for s in h100]))
    t4 = SPEC_PEAKS["Tesla T4"][0]
    hp = SPEC_PEAKS["H100 SXM5"][0]
    g["seed_scaling"] = h100_avg / t4_tiled
    g["t4_pct"] = 100 * t4_tiled * 1e9 / t4
    g["h100_pct"] = 100 * h100_avg * 1e9 / hp
    g["h200_pct"] = 100 * h200_avg * 1e9 / peak
    g["h100_t4_peaks"] = hp / t4
    g["h100_t4_frac"] = g["h100_pct"] / g["t4_pct"]
    g["h200_t4_scaling"] = h200_avg / t4_tiled
    g["h200_t4_peaks"] = peak / t4
    g["ada_pct"] = 100 * _seed("RTX 4000 Ada", "tiled", (3072,) * 3) * 1e9 / SPEC_PEAKS["RTX 4000 Ada"][0]
    g["h200_3072_pct"] = 100 * at(kern, "tiled", 3072, 3072, 3072) * 1e9 / peak
    return g


def _cases(aud: pd.DataFrame, variant: str, category: str) -> list[dict]:
    """The cases of one row as {"case", "outcome"}, read from its detail line
    (audit.summary_detail: "case: outcome (detail) | ..."; the row's "cases" column is
    the count)."""
    r = aud[(aud["variant"] == variant) & (aud["category"] == category)]
    if not len(r):
        return []
    out = []
    for part in str(r["detail"].iloc[0]).split(" | "):
        case, _, rest = part.partition(": ")
        out.append({"case": case, "outcome": rest.split(" ", 1)[0]})
    return out


def audit_fixed(aud: pd.DataFrame) -> dict:
    """What the page says about the two fixes the first audit called for, from the rows:
    how many kernels refuse the 2-byte-offset operand with a clear error (and how many
    faulted on it), and rung 09's rows and how many passed."""
    mis = [c for v in aud["variant"].unique() for c in _cases(aud, v, "layout")
           if c["case"].startswith("A at a 2-byte offset")]
    out = {"misaligned_refused": sum(c["outcome"] == "clear-error" for c in mis),
           "misaligned_faults": sum(c["outcome"] == "fault" for c in mis),
           "misaligned_kernels": len(mis)}
    r09 = aud[aud["variant"] == "09-3xtf32"]
    out["r09_pass"] = int(r09["correct"].astype(bool).sum())
    out["r09_rows"] = len(r09)
    return out


def sanitize_facts(san: pd.DataFrame) -> dict:
    """compute-sanitizer's rows (matmul.sanitize): errors, hazards and clean verdicts, the
    checks that ran under racecheck, the longest tool's wall time and the size it ran."""
    from .sanitize import SAN_SIZE

    r = {tool: san[san["variant"] == tool].iloc[0] for tool in ("memcheck", "racecheck")}
    n = lambda tool, k: float(r[tool][k]) if k in r[tool] and pd.notna(r[tool][k]) else math.nan  # noqa: E731
    g = {"memcheck_errors": n("memcheck", "errors"), "racecheck_hazards": n("racecheck", "hazards"),
         "racecheck_passed": n("racecheck", "passed"),
         "memcheck_clean": bool(r["memcheck"]["correct"]),
         "racecheck_clean": bool(r["racecheck"]["correct"])}
    g["san_problems"] = g["memcheck_errors"] + n("racecheck", "errors") + g["racecheck_hazards"]
    g["san_wall_max"] = max(n("memcheck", "wall_s"), n("racecheck", "wall_s"))
    g["san_size"] = "×".join(str(x) for x in SAN_SIZE)
    return g


def sanitizer_table(san: pd.DataFrame) -> pd.DataFrame:
    cols = [c for c in ("variant", "errors", "hazards", "passed", "failed", "wall_s", "summary")
            if c in san.columns]
    return san[cols]


def _key(name: str) -> str:
    return {"cuBLAS FP32": "cb"}.get(name, name.replace("-", "_"))


#: the page's facts: (function, its inputs: experiments' names, or the machine chapter's
#: ceilings), in order
PAGE_FACTS = {"08-matmul": (
    (speed_facts, ("matmul.kernels",)), (sass_facts, ()),
    (counter_facts, ("matmul.profile", "matmul.kernels")), (compile_facts, ("matmul.kernels",)),
    (traffic_facts, ("matmul.profile", "matmul.kernels", machine.ceilings_in)),
    (l2_facts, ("matmul.l2",)), (audit_facts, ("matmul.audit",)),
    (sanitize_facts, ("matmul.sanitize",)), (gpus_facts, ("matmul.kernels", machine.ceilings_in)))}

#: the chapter's targets on this GPU
TARGETS = {"08-matmul": (
    Target("kernels of this chapter right or refused clearly in all {audit_categories} "
           "categories", "ours_kernels_ok", equal="ours_kernels", digits=0),
    Target("SGEMM ladder rungs right or refused clearly in all {audit_categories} categories",
           "theirs_kernels_ok", equal="theirs_kernels", digits=0),
    Target("compute-sanitizer memcheck: clean", "memcheck_clean", equal=True),
    Target("compute-sanitizer racecheck: clean", "racecheck_clean", equal=True),
    Target("compute-sanitizer memcheck errors + racecheck errors and hazards", "san_problems",
           at_most=0, digits=0),
    Target("kernels with all three roofline points from measured bytes", "roofline_kernels",
           equal="n_kernels", digits=0),
    Target("corner-turned, padded / tiled at {M}³", "cm_turned_pad_x_tiled", at_least=0.95,
           digits=3, low="cm_turned_pad_x_tiled_min", high="cm_turned_pad_x_tiled_max"),
    Target("coarsening speed-up / shared-wavefront model (lowest of four)", "vs_model_min",
           at_least=0.9, digits=3),
)}


def plot_coarsening(ax, kern: pd.DataFrame, prof: pd.DataFrame, M: int = 4096) -> None:
    """Speed-up over the tiled kernel (median of the rounds, the rounds' range as error
    bars) beside what the shared-memory wavefronts predict (tiled's load and store
    wavefronts per FFMA ÷ the kernel's), for the coarsened and column-major kernels."""
    c = counters(prof, M).set_index("variant")
    names = [n for n in ORDER[2:] if n in c.index]
    x = np.arange(len(names))
    got = np.array([at(kern, n, M, M, M, "x_tiled") for n in names])
    lo = np.array([at(kern, n, M, M, M, "x_tiled_min") for n in names])
    hi = np.array([at(kern, n, M, M, M, "x_tiled_max") for n in names])
    model = np.array([c.loc["tiled", "smw_per_ffma"] / c.loc[n, "smw_per_ffma"] for n in names])
    ax.bar(x - 0.2, got, 0.4, yerr=[got - lo, hi - got], color=[KCOLORS[n] for n in names])
    ax.bar(x + 0.2, model, 0.4, color="none", edgecolor="0.3", hatch="///", lw=0.8)
    ax.axhline(1.0, color="0.4", lw=0.8, ls=":")
    # two lines a name, split at its last hyphen, so that neighbours never touch
    ax.set_xticks(x, ["\n".join(n.rsplit("-", 1)) for n in names], fontsize=9)
    ax.set_ylabel(f"× tiled at {M}³")
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color="0.55", label="measured (bars: range over the rounds)"),
                       Patch(facecolor="none", edgecolor="0.3", hatch="///",
                             label="shared-memory wavefronts per FFMA: tiled ÷ kernel")],
              fontsize=9, loc="lower left", bbox_to_anchor=(0, 1.0), ncol=1, frameon=False)
