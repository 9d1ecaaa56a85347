"""Chapter 6's numbers, tables and figures, computed from the rows (live or recorded): the
prose quotes only what the `*_facts` functions return, one for each section (PAGE_FACTS);
the targets are data (TARGETS)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ... import lookup, plots
from ...targets import Target
from .. import machine
from .experiments import COPIES, LIBRARY
from .variants import VARIANTS, get

#: Each variant's name in tables and figures.
LABELS = {name: v.label for name, v in VARIANTS.items()}
LABELS.update({LIBRARY: "cupyx.scipy.ndimage.convolve", "cudaMemcpy": "cudaMemcpy (copy)",
               "cupy copyto": "cupy.copyto (copy)"})


def span(lo: float, hi: float, digits: int = 2) -> str:
    a, b = f"{lo:.{digits}f}", f"{hi:.{digits}f}"
    return a if a == b else f"{a}–{b}"


# ---- correctness ------------------------------------------------------------------------

def kernels_table() -> pd.DataFrame:
    """The chapter's kernels in its order, before anything is measured: what each is, its
    dimensions, its filter (a full (2r+1)^d filter or a depthwise one), where the filter
    lives, and its file under kernels/06-convolution/."""
    return pd.DataFrame([{"kernel": v.name, "what": v.label, "dims": f"{v.dims}D",
                          "filter": "depthwise" if v.op == "depthwise" else "full",
                          "held in": "constant memory" if v.const else "global memory",
                          "file": v.file} for v in VARIANTS.values()])


def check_table(*frames: pd.DataFrame) -> pd.DataFrame:
    """One row per variant: the shapes, radii and tile configurations it was checked at,
    how many cases, whether all passed and the largest relative error."""
    d = pd.concat(frames, ignore_index=True)
    out = []
    for name, g in d.groupby("variant", sort=False):
        out.append({
            "variant": name, "label": LABELS.get(name, name),
            "shapes": ", ".join("×".join(map(str, s)) for s in   # by dimensions, then size
                                sorted({tuple(s) for s in g["shape"]}, key=lambda s: (len(s), s))),
            "radii": ", ".join(str(r) for r in sorted(g["r"].unique())),
            "configs": "; ".join(dict.fromkeys(g["config"])),
            "cases": len(g), "correct": bool(g["correct"].all()),
            "max_rel_err": float(g["rel_err"].max())})
    return pd.DataFrame(out)


def bad_inputs() -> pd.DataFrame:
    """What the Python call says to bad input: each case run through the same checks the
    kernels' `prepare` makes (NumPy arrays stand in for the operands; the checks of
    dtype, layout and shape come before the one that asks for a GPU array)."""
    from ...errors import messages
    from .variants import check_operands

    v2, v3 = get("2d-wide"), get("3d-dw-tiled")
    x = np.zeros((64, 64), np.float32)
    f5 = np.zeros((5, 5), np.float32)
    cases = [
        ("x is float64", lambda: check_operands(v2, x.astype(np.float64), f5, x)),
        ("x is a strided view", lambda: check_operands(v2, np.zeros((64, 128), np.float32)[:, ::2], f5, x)),
        ("filter 4 × 4", lambda: check_operands(v2, x, np.zeros((4, 4), np.float32), x)),
        ("filter float16", lambda: check_operands(v2, x, f5.astype(np.float16), x)),
        ("x on the host", lambda: check_operands(v2, x, f5, x.copy())),
        ("filter 129 × 129 (16 641 taps)", lambda: _reason(v2, (64, 64), 64, None)),
        ("depthwise: 700 slices × 5 × 5", lambda: _reason(v3, (700, 64, 64), 2, None)),
        ("block 128 × 16 threads", lambda: _reason(v2, (64, 64), 2, {"BX": 128, "BY": 16})),
        ("input tile 32 for radius 16", lambda: _reason(get("2d-tiled"), (64, 64), 16, None)),
    ]
    return pd.DataFrame(messages(cases), columns=["input", "message"])


def _reason(v, shape, r, given):
    from ...errors import ConfigError
    why = v.reason(v.params(**(given or {})), shape, r)
    if why:
        raise ConfigError(why)


# ---- the races --------------------------------------------------------------------------

def race_table(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of a race, fastest first, with their labels."""
    d = df.copy()
    d["label"] = [LABELS.get(v, v) for v in d["variant"]]
    d["what"] = [f"{LABELS.get(v, v)}" + (f" ({c})" if c not in ("-", "mode=constant") else "")
                 for v, c in zip(d["variant"], d["config"])]
    return d.sort_values("median_ms")


def plot_race(ax, df: pd.DataFrame, title: str = "") -> None:
    """Each kernel as a fraction of the copy measured in the same rounds (bar: median of
    the per-round ratios; whisker: lowest to highest round); the library in grey."""
    d = race_table(df)
    d = d[~d["variant"].isin(COPIES)].iloc[::-1]
    y = np.arange(len(d))
    colors = ["0.55" if v == LIBRARY else plots.COLORS["fp32"] for v in d["variant"]]
    lo = (d["of_copy"] - d["of_copy_min"]).clip(lower=0)
    hi = (d["of_copy_max"] - d["of_copy"]).clip(lower=0)
    ax.barh(y, d["of_copy"], color=colors, xerr=[lo, hi], capsize=2, height=0.7)
    short = [v if c in ("-", "mode=constant") else f"{v} ({c})"
             for v, c in zip(d["variant"], d["config"])]
    ax.set_yticks(y, short, fontsize=9)
    ax.axvline(1.0, color="0.25", ls="--", lw=1)
    for yi, v in zip(y, d["of_copy"]):
        ax.text(v + 0.02, yi, f"{v:.2f}×", va="center", fontsize=9)
    ax.set_xlim(0, 1.16)
    ax.set_xlabel("× the copy of the same bytes (same rounds)")
    if title:
        ax.set_title(title, fontsize=9)
    ax.figure.tight_layout()              # the axis label inside the figure, clear of the stamp


# ---- the roofline and the radius ----------------------------------------------------------

def radius_frame(rad: pd.DataFrame, ceil) -> pd.DataFrame:
    """Per radius: measured time and rate, the two floors the roofline gives (memory: the
    bytes at the copy rate of the same rounds; compute: the FLOPs at chapter 0's FP32 peak)."""
    base = rad[rad["variant"].isin(COPIES)]["median_ms"].min()
    d = rad[~rad["variant"].isin(COPIES)].sort_values("r").copy()
    peak = ceil.peaks_flops["FP32 FMA"]
    d["k"] = 2 * d["r"] + 1
    d["mem_floor_ms"] = base
    d["fp32_floor_ms"] = d["flops"] / peak * 1e3
    d["roof_ms"] = np.maximum(d["mem_floor_ms"], d["fp32_floor_ms"])
    d["of_roof"] = d["roof_ms"] / d["median_ms"]
    d["of_peak"] = d["TFLOP/s"] * 1e12 / peak
    return d


def turn_radius(rad: pd.DataFrame, tol: float = 0.10) -> int | None:
    """The first radius whose time exceeds the radius-0 time by more than `tol`: where the
    kernel stops being held by its bytes."""
    d = rad[~rad["variant"].isin(COPIES)].sort_values("r")
    t0 = float(d[d["r"] == 0]["median_ms"].iloc[0])
    over = d[d["median_ms"] > (1 + tol) * t0]
    return int(over["r"].iloc[0]) if len(over) else None


def roofline_turn(ceil) -> int:
    """The first radius whose intensity, 2(2r+1)^2 / 8 FLOP/B, is past the FP32 ridge."""
    ridge = ceil.ridge("FP32 FMA")
    r = 0
    while 2 * (2 * r + 1) ** 2 / 8 <= ridge:
        r += 1
    return r


def roofline_points(frames: dict) -> list:
    """(label, FLOP/B, TFLOP/s) of every kernel and the library: FLOPs 2(2r+1)^d per output
    over the 8 bytes per output that must move (the kernels' own DRAM traffic is within a
    few % of that: see the counters)."""
    pts = []
    for tag, df in frames.items():
        d = df[~df["variant"].isin(COPIES) & df["TFLOP/s"].notna()]
        if tag.endswith("wide"):            # the four-wide tiles' races: their default rows
            d = d[(d["variant"].str.endswith("-wide")) &
                  (d["config"] == _cfg(d["variant"].iloc[0]))]
        for _, r in d.iterrows():
            pts.append((f"{tag.split()[0]} {r['variant'].split('-', 1)[-1] if r['variant'] != LIBRARY else 'cupyx'}",
                        float(r["intensity"]), float(r["TFLOP/s"])))
    return pts


def plot_roofline(ax, ceil, races: dict, sweeps: dict) -> None:
    """The FP32 roof (these kernels use no tensor cores), the races' kernels as four marker
    groups (2D ladder, 3D ladder, four-wide tiles, the library), only the four-wide tiles
    labelled on the plot, the two radius sweeps as lines, and the legend outside the axes."""
    from ... import roofline
    from ...roofline import Ceilings

    fp32 = Ceilings(ceil.bandwidth_Bps, {"FP32 FMA": ceil.peaks_flops["FP32 FMA"]}, ceil.source)
    roofline.plot(ax, fp32, points=(), ai_range=(0.1, 200))
    styles = {"2D ladder": ("o", "C0"), "3D ladder": ("^", "C9"),
              "four-wide tiles": ("D", "C3"), "cupyx convolve": ("s", "0.45")}
    groups: dict = {g: ([], [], []) for g in styles}
    for label, x, y in roofline_points(races):
        dims, what = label.split(" ", 1)
        g = ("cupyx convolve" if what == "cupyx" else "four-wide tiles" if what == "wide"
             else f"{dims} ladder")
        groups[g][0].append(x)
        groups[g][1].append(y)
        groups[g][2].append(label)
    for g, (xs, ys, labels) in groups.items():
        if not xs:
            continue
        marker, color = styles[g]
        ax.plot(xs, ys, marker, ls="none", ms=6, color=color, alpha=0.85, label=g)
        if g == "four-wide tiles":           # labels up in the empty room above the roof
            for k, (y, x, lab) in enumerate(sorted(zip(ys, xs, labels))):
                ax.annotate(lab, (x, y), textcoords="offset points", xytext=(-70, 24 + 20 * k),
                            ha="right", va="center", fontsize=9, color=color,
                            arrowprops={"arrowstyle": "-", "color": "0.5", "lw": 0.7})
    # The two sweeps share their intensities: only the first has its radii written.
    for i, ((name, d), color) in enumerate(zip(sweeps.items(), ("C1", "C2"))):
        d = d[~d["variant"].isin(COPIES)].sort_values("r")
        ax.plot(d["intensity"], d["TFLOP/s"], "s-", color=color, ms=3.5, lw=1,
                label=f"{name}, r = {int(d['r'].min())}…{int(d['r'].max())}")
        if i:
            continue
        for _, r in d.iterrows():
            if int(r["r"]) in (0, 4, 8):        # under the line, clear of the roof
                first = int(r["r"]) == 0
                ax.annotate(f"r={int(r['r'])}", (r["intensity"], r["TFLOP/s"]), fontsize=9,
                            textcoords="offset points", xytext=(-5, 4) if first else (4, -13),
                            ha="right" if first else "left", color=color)
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


# ---- the profiler -------------------------------------------------------------------------

def profile_table(*frames: pd.DataFrame) -> pd.DataFrame:
    """Per profiled segment: per-output instruction and branch counts (warp instructions
    over outputs / 32), branch efficiency, shared-memory wavefronts per load, stalls, and
    how busy L1 and DRAM were."""
    d = pd.concat(frames, ignore_index=True).copy()
    n = d["shape"].map(lambda s: float(np.prod(s)))
    warps = n / 32
    d["outputs"] = n
    d["inst_per_output"] = d["instructions"] / warps
    d["branch_per_warp"] = d["branch_instructions"] / warps
    d["wavefronts_per_lds"] = (d["smem_ld_wavefronts"] / d["smem_ld_instructions"]).where(
        d["smem_ld_instructions"] > 0)
    d["dram_GB"] = (d["dram_read_MB"] + d["dram_write_MB"]) / 1e3
    d["dram_per_min"] = d["dram_GB"] * 1e9 / (8 * n)
    d["label"] = [LABELS.get(v, v) for v in d["variant"]]
    return d


def seed_branches(prof: pd.DataFrame) -> dict:
    """The seed's comparison (volumetric 3D vs cached depthwise) in this run's counters."""
    p = profile_table(prof)
    p3 = p[p["what"] == "3d"]
    pick = lambda v, c: lookup.value(p3, c, variant=v)  # noqa: E731
    return {
        "br_naive3d": pick("3d-naive", "branch_instructions"),
        "br_dwc": pick("3d-dw-cached", "branch_instructions"),
        "br_dwt": pick("3d-dw-tiled", "branch_instructions"),
        "be_dwc": pick("3d-dw-cached", "branch_efficiency_pct"),
        "be_dwt": pick("3d-dw-tiled", "branch_efficiency_pct"),
        "div_dwc": pick("3d-dw-cached", "divergent_branch_targets"),
        "bpw_dwc": pick("3d-dw-cached", "branch_per_warp"),
        "tpi_dwc": pick("3d-dw-cached", "threads_per_instruction"),
        "tpi_naive3d": pick("3d-naive", "threads_per_instruction"),
        "br_cached2d": lookup.value(p[p["what"] == "2d"], "branch_instructions", variant="2d-cached"),
        "be_cached2d": lookup.value(p[p["what"] == "2d"], "branch_efficiency_pct", variant="2d-cached"),
    }


def sass_facts() -> dict:
    """What the compiler made of the kernels the prose discusses (NVRTC, sm_90, offline)."""
    from ... import compile_report as cr
    from .experiments import RACE_R

    w3 = get("3d-wide")
    regs = cr.resources(w3.spec(RACE_R[3], w3.params()), "sm_90")["registers"]

    def count(name, **given):
        v = get(name)
        return cr.count_instructions(cr.sass(v.spec(RACE_R[v.dims], v.params(**given)), "sm_90"),
                                     base=True)
    c = {n: count(n) for n in ("3d-naive", "3d-dw-cached", "2d-wide", "1d-naive")}
    return {"sass_regs_wide3d": int(regs), "sass_total_naive1d": sum(c["1d-naive"].values()),
            "sass_ldg_naive3d": c["3d-naive"].get("LDG", 0),
            "sass_bra_dwc": c["3d-dw-cached"].get("BRA", 0),
            "sass_ffma_wide2d": c["2d-wide"].get("FFMA", 0),
            "sass_lds_wide2d": c["2d-wide"].get("LDS", 0)}


def sass_folds() -> list:
    """SASS excerpts, each closed in a dropdown."""
    from ... import compile_report as cr
    from ...tables import fold_text
    from .experiments import RACE_R

    def sass(name):
        v = get(name)
        return cr.sass(v.spec(RACE_R[v.dims], v.params()), "sm_90")
    return [
        fold_text("3d-naive: each tap a predicated load, no branch (sm_90 SASS)",
                  cr.sass_excerpt(sass("3d-naive"), r"@!?P\d LDG", r"@!?P\d LDG", context=10, run=3)),
        fold_text("3d-dw-cached: the if/else of every tap, BSSY … BRA … BSYNC (sm_90 SASS)",
                  cr.sass_excerpt(sass("3d-dw-cached"), r"BSSY", r"BRA", context=14, within=12, run=1)),
        fold_text("2d-wide: 16-byte shared loads feeding runs of FFMA (sm_90 SASS)",
                  cr.sass_excerpt(sass("2d-wide"), r"LDS\.128", r"FFMA", context=12)),
    ]


# ---- every number the prose quotes, section by section -------------------------------------

def _race_numbers(df: pd.DataFrame, tag: str, quoted: dict, lib: tuple = ()) -> dict:
    """{tag}_{kernel}_x of each kernel `quoted` names (its first row; a four-wide tile's
    fastest), and the library's {tag}_lib_{ms, x} that `lib` names."""
    out = {}
    r = lookup.first(df, variant=LIBRARY)
    for m in lib:
        out[f"{tag}_lib_{m}"] = lookup.cell(r, {"ms": "median_ms", "x": "of_copy"}[m])
    for n, metrics in quoted.items():
        d = df[df["variant"] == n]
        r = d.sort_values("median_ms").iloc[0] if n.endswith("-wide") else d.iloc[0]
        for m in metrics:
            out[f"{tag}_{n.replace('-', '_')}_{m}"] = float(r[{"x": "of_copy"}[m]])
    return out


def default_row(df: pd.DataFrame, name: str) -> pd.Series:
    v = get(name)
    from .experiments import config_label
    d = df[(df["variant"] == name) & (df["config"] == config_label(v.params()))]
    return d.iloc[0]


def check_facts(check: pd.DataFrame, check_wide: pd.DataFrame) -> dict:
    """The correctness runs (convolution.check and check_wide): cases, failures, the largest
    relative error and the kernels checked."""
    allc = pd.concat([check, check_wide], ignore_index=True)
    return {"n_checks": int(len(allc)),
            "n_failed": int((allc["correct"] != True).sum()),  # noqa: E712
            "max_rel_err": float(allc["rel_err"].max()),
            "n_variants": int(allc[allc["variant"] != LIBRARY]["variant"].nunique())}


def ceiling_facts(ceil) -> dict:
    """The machine chapter's ceilings, the ridge and the radius where a 2D filter's
    intensity crosses it."""
    s = {"ridge": ceil.ridge("FP32 FMA"), "fp32_tflops": ceil.peaks_flops["FP32 FMA"] / 1e12,
         "ceil_copy_tbs": ceil.bandwidth_Bps / 1e12}
    s["roof_turn"] = roofline_turn(ceil)
    s["turn_ai"] = 2 * (2 * s["roof_turn"] + 1) ** 2 / 8
    s["before_ai"] = 2 * (2 * s["roof_turn"] - 1) ** 2 / 8
    return s


def conv1d_facts(c1: pd.DataFrame) -> dict:
    """The 1D race (convolution.conv1d) and its length."""
    s = _race_numbers(c1, "c1", {n: ("x",) for n in ("1d-naive", "1d-const", "1d-tiled")})
    s["c1_n"] = int(c1["shape"].iloc[0][0])
    return s


def conv2d_facts(c2: pd.DataFrame) -> dict:
    """The 2D ladder's race (convolution.conv2d)."""
    return _race_numbers(c2, "c2", {n: ("x",) for n in (
        "2d-naive", "2d-const", "2d-tiled", "2d-cached", "2d-regtile")}, lib=("ms", "x"))


def conv3d_facts(c3: pd.DataFrame) -> dict:
    """The 3D ladder's race (convolution.conv3d)."""
    return _race_numbers(c3, "c3", {n: ("x",) for n in (
        "3d-naive", "3d-tiled", "3d-regtile", "3d-dw-cached", "3d-dw-tiled")}, lib=("ms", "x"))


def shape_text(df: pd.DataFrame) -> str:
    """"8192×8192": the shape of a race's rows."""
    return "×".join(map(str, df["shape"].iloc[0]))


def wide_facts(w2: pd.DataFrame, w3: pd.DataFrame) -> dict:
    """The four-wide tiles' races (convolution.wide2d and wide3d): each default tile against
    the copy and the library, a second 2D tile shape, the first register tile of the same
    run, the shapes, and the 3D tile's block and shared memory."""
    s = _race_numbers(w2, "w2", {"2d-regtile": ("x",)})
    for tag, df, name in (("w2", w2, "2d-wide"), ("w3", w3, "3d-wide")):
        r = default_row(df, name)
        s[f"{tag}_x"], s[f"{tag}_lo"], s[f"{tag}_hi"] = (float(r["of_copy"]), float(r["of_copy_min"]),
                                                        float(r["of_copy_max"]))
        s[f"{tag}_lib"], s[f"{tag}_lib_lo"], s[f"{tag}_lib_hi"] = (
            float(r["vs_library"]), float(r["vs_library_min"]), float(r["vs_library_max"]))
    s["w2_tbs"] = float(default_row(w2, "2d-wide")["TB/s"])
    r = default_row(w2, "2d-wide")
    a = w2[(w2["variant"] == "2d-wide") & (w2["config"] != r["config"])].iloc[0]
    s["w2_alt"], s["w2_alt_x"] = a["config"], float(a["of_copy"])
    s["shape2"] = shape_text(w2)
    s["shape3"] = shape_text(w3)
    v3 = get("3d-wide")
    p3 = v3.params()
    s["w3_threads"] = p3["BX"] * p3["BY"]
    s["w3_smem_kib"] = v3.smem(1, p3) / 1024
    return s


def radius_facts(rad: pd.DataFrame, ceil) -> dict:
    """The register tile's radius sweep (convolution.radius): where it turns, its rate at
    radius 0 and its best rate."""
    f = radius_frame(rad, ceil)
    return {"rad_turn": turn_radius(rad), "rad_r0_x": float(f[f["r"] == 0]["of_copy"].iloc[0]),
            "rad_max_tflops": float(f["TFLOP/s"].max())}


def radius_wide_facts(radw: pd.DataFrame, ceil) -> dict:
    """The four-wide tile's radius sweep (convolution.radius_wide): where it turns, its best
    rate against the FP32 peak, and the largest radius swept."""
    f = radius_frame(radw, ceil)
    return {"radw_turn": turn_radius(radw), "radw_max_tflops": float(f["TFLOP/s"].max()),
            "radw_max_of_peak": 100 * float(f["of_peak"].max()), "radw_rmax": int(f["r"].max())}


def intensity_facts() -> dict:
    """FLOP per byte of the races: 2D at 5×5, 3D at 3×3×3 (8 bytes per output)."""
    return {"ai2": 2 * 25 / 8, "ai3": 2 * 27 / 8}


#: The profiler's counters the prose quotes, by glue suffix.
COUNTERS = {"ipo": "inst_per_output", "mio": "stall_mio_throttle", "l1hit": "l1_hit_pct",
            "issue": "issue_active_pct", "be": "branch_efficiency_pct",
            "wfl": "wavefronts_per_lds", "dram": "dram_throughput_pct",
            "lsb": "stall_long_scoreboard", "bar": "stall_barrier",
            "l1": "l1_throughput_pct", "occ": "achieved_occupancy_pct"}


def _counter_facts(p: pd.DataFrame, quoted: dict) -> dict:
    """p_{variant}_{counter} of each kernel `quoted` names, at its default tile, for each
    of its counters (COUNTERS' suffixes)."""
    s = {}
    for n, keys in quoted.items():
        d = p[p["what"] == n[:2]]
        for k in keys:
            s[f"p_{n.replace('-', '_')}_{k}"] = lookup.value(d, COUNTERS[k], variant=n, config=_cfg(n))
    return s


def profile_facts(prof: pd.DataFrame) -> dict:
    """The profiler's run of the ladders (convolution.profile): the kernels' counters the
    prose quotes, the library's instructions, the register tile's bank conflicts at two
    block widths, and the branches of the 3D pair the PMPP kernels on a T4 compared."""
    p = profile_table(prof)
    two = p[p["what"] == "2d"]
    s = _counter_facts(p, {"2d-const": ("ipo", "issue", "l1hit", "mio"),
                           "2d-tiled": ("bar", "ipo", "issue", "mio"),
                           "2d-regtile": ("be", "ipo", "wfl"), "3d-regtile": ("ipo",)})
    s["p_lib2_ipo"] = lookup.value(two, "inst_per_output", variant=LIBRARY)
    conf = two[(two["variant"] == "2d-regtile") & (two["config"] == "BX=16 BY=8 PY=8")]
    s["p_bx16_wfl"] = float(conf["wavefronts_per_lds"].iloc[0])
    s["p_bx16_conf_M"] = float(conf["smem_ld_bank_conflicts"].iloc[0]) / 1e6
    s["p_bx32_conf_M"] = lookup.value(two, "smem_ld_bank_conflicts", variant="2d-regtile",
                                      config=_cfg("2d-regtile")) / 1e6
    b = seed_branches(prof)
    s.update({k: b[k] for k in ("br_naive3d", "be_dwc", "be_dwt", "bpw_dwc", "tpi_dwc",
                                "tpi_naive3d", "be_cached2d")})
    s.update({f"{k}_M": b[k] / 1e6 for k in ("br_dwc", "br_dwt", "div_dwc")})
    return s


def profile_wide_facts(profw: pd.DataFrame) -> dict:
    """The profiler's run of the four-wide tiles (convolution.profile_wide): their counters."""
    return _counter_facts(profile_table(profw), {"2d-wide": ("ipo",),
                                                 "3d-wide": ("dram", "issue", "l1", "occ")})


def dram_facts(prof: pd.DataFrame, profw: pd.DataFrame) -> dict:
    """Every profiled kernel's DRAM traffic over the 8 bytes per output that must move: the
    lowest and the highest."""
    p = profile_table(prof, profw)
    k = p[p["variant"] != LIBRARY]["dram_per_min"]
    return {"dram_min_ratio": float(k.min()), "dram_max_ratio": float(k.max())}


def tile_facts(t2: pd.DataFrame, t3: pd.DataFrame) -> dict:
    """The block-shape sweeps of the register tiles (convolution.tiles2d and tiles3d): the
    configurations checked and the fastest."""
    s = {}
    for tag, t in (("t2", t2), ("t3", t3)):
        ok = t[t["correct"] == True]  # noqa: E712
        b = ok.sort_values("median_ms").iloc[0]
        s[f"{tag}_n"], s[f"{tag}_best_ms"] = int(len(ok)), float(b["median_ms"])
        s[f"{tag}_best"] = " ".join(f"{k}={int(b[k])}" for k in ("BX", "BY", "PY", "PZ") if k in b and not pd.isna(b[k]))
    return s


def _cfg(name: str) -> str:
    from .experiments import config_label
    return config_label(get(name).params())


#: the page's facts: (function, its inputs: experiments' names, or the machine chapter's
#: ceilings), in order
PAGE_FACTS = {"06-convolution": (
    (check_facts, ("convolution.check", "convolution.check_wide")),
    (ceiling_facts, (machine.ceilings_in,)),
    (conv1d_facts, ("convolution.conv1d",)), (sass_facts, ()),
    (conv2d_facts, ("convolution.conv2d",)), (profile_facts, ("convolution.profile",)),
    (radius_facts, ("convolution.radius", machine.ceilings_in)),
    (wide_facts, ("convolution.wide2d", "convolution.wide3d")),
    (profile_wide_facts, ("convolution.profile_wide",)),
    (conv3d_facts, ("convolution.conv3d",)),
    (radius_wide_facts, ("convolution.radius_wide", machine.ceilings_in)), (intensity_facts, ()),
    (dram_facts, ("convolution.profile", "convolution.profile_wide")),
    (tile_facts, ("convolution.tiles2d", "convolution.tiles3d")))}

#: the done-when list
TARGETS = {"06-convolution": (
    Target("2D {shape2}, 5×5, four-wide tile: × copy, same rounds", "w2_x", at_least=0.75,
           digits=3, low="w2_lo", high="w2_hi"),
    Target("2D: × cupyx convolve, same rounds", "w2_lib", at_least=1.0, low="w2_lib_lo",
           high="w2_lib_hi"),
    Target("3D {shape3}, 3×3×3, four-wide tile: × copy, same rounds", "w3_x", at_least=0.6,
           digits=3, low="w3_lo", high="w3_hi"),
    Target("3D: × cupyx convolve, same rounds", "w3_lib", at_least=1.0, low="w3_lib_lo",
           high="w3_lib_hi"),
    Target("radius where the four-wide 2D tile turns compute-bound (the roofline says "
           "{roof_turn})", "radw_turn", digits=0),
    Target("correctness cases checked ({n_checks}); failed", "n_failed", at_most=0, digits=0),
)}


__all__ = ["LABELS", "PAGE_FACTS", "TARGETS", "bad_inputs", "check_table", "plot_race",
           "plot_roofline", "profile_table", "race_table", "radius_frame", "roofline_points",
           "sass_facts", "sass_folds", "seed_branches", "span", "turn_radius", "check_facts",
           "ceiling_facts", "conv1d_facts", "conv2d_facts", "conv3d_facts", "wide_facts",
           "radius_facts", "radius_wide_facts", "intensity_facts", "profile_facts",
           "profile_wide_facts", "dram_facts", "tile_facts", "shape_text"]
