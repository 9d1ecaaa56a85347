"""Chapter 4's numbers, tables and figures, computed from the rows (live or recorded): the
prose quotes only what the `*_facts` functions return, one for each section (PAGE_FACTS);
the targets are data (TARGETS)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ... import lookup, plots
from ...targets import Target
from . import ops, reference as ref
from .experiments import RADIUS

#: What the page calls each variant.
LABELS = {
    "per-element": "1 element / thread", "grid-stride": "grid-stride loop",
    "vec4": "float4 × 4 / thread", "CuPy a + b": "CuPy a + b",
    "per-pixel": "1 pixel / thread (2-D grid)", "vec4px": "4 pixels / thread (32-bit loads)",
    "vec16px": "16 pixels / thread (128-bit loads)", "CuPy array ops": "CuPy array ops",
    "naive": "naive: 81 global loads a pixel", "tiled": "shared-memory tile",
    "sliding": "running sums + shuffles", "cupyx uniform_filter": "cupyx uniform_filter",
    "cudaMemcpy": "cudaMemcpy (same bytes)", "cupy copyto": "cupy copyto (same bytes)",
    "chapter 0 copy kernel": "copy kernel of the machine chapter (same bytes)",
}
#: Short keys for glued names.
KEYS = {"per-element": "elem", "grid-stride": "stride", "vec4": "vec4", "CuPy a + b": "cupy",
        "per-pixel": "pix", "vec4px": "v4", "vec16px": "v16", "CuPy array ops": "cupy",
        "naive": "naive", "tiled": "tiled", "sliding": "slide", "cupyx uniform_filter": "cupyx",
        "cudaMemcpy": "memcpy", "cupy copyto": "copyto", "chapter 0 copy kernel": "copyk"}
ORDER = {k: i for i, k in enumerate(LABELS)}
KINDS = {"vecadd": ops.VECADD + ("CuPy a + b",), "gray": ops.GRAY + ("CuPy array ops",),
         "blur": ops.BLUR + ("cupyx uniform_filter",)}


def _f(x) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v


def timed(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of a race at its largest size (the timed run; the small sizes are the
    correctness pass's), in ladder order, with labels."""
    d = df.copy()
    if "n" in d:
        d = d[d["n"] == d["n"].max()]
    else:
        px = d["height"] * d["width"]
        d = d[px == px.max()]
        if "radius" in d:
            d = d[d["radius"] == RADIUS]
    d = d.assign(label=d["variant"].map(LABELS).fillna(d["variant"]),
                 order=d["variant"].map(ORDER))
    return d.sort_values("order")


def race_table(df: pd.DataFrame) -> pd.DataFrame:
    d = timed(df)
    if "median_ms" in d:
        d["median_us"] = d["median_ms"] * 1e3
    return d


#: the metrics of a contestant a page may quote: key -> (column, scale)
RACE_METRICS = {"x": ("of_copy", 1), "lo": ("of_copy_min", 1), "hi": ("of_copy_max", 1),
                "tbs": ("TB/s", 1), "us": ("median_ms", 1e3)}


def race_facts(df: pd.DataFrame, kind: str, quoted: dict) -> dict:
    """{kind}_{key}_{metric} for each contestant key of `quoted` and each of its metrics
    (RACE_METRICS: x, lo, hi its fraction of the copy ceiling, median and rounds; tbs; us),
    at the race's timed size."""
    d = timed(df)
    variants = {KEYS[v]: v for v in KINDS[kind]}
    out = {}
    for key, metrics in quoted.items():
        r = lookup.first(d, variant=variants[key])
        for m in metrics:
            col, scale = RACE_METRICS[m]
            out[f"{kind}_{key}_{m}"] = lookup.cell(r, col) * scale
    return out


def race_best(df: pd.DataFrame, kind: str) -> dict:
    """{kind}_best_x, _lo, _hi: the fastest kernel's fraction of the copy ceiling (median,
    lowest and highest round)."""
    kern = timed(df)
    kern = kern[kern["role"] == "kernel"]
    best = kern.loc[kern["of_copy"].idxmax()]
    return {f"{kind}_best_x": _f(best["of_copy"]), f"{kind}_best_lo": _f(best["of_copy_min"]),
            f"{kind}_best_hi": _f(best["of_copy_max"])}


def race_ceiling_tbs(df: pd.DataFrame) -> float:
    """The copy ceiling of the same bytes the race was measured against (TB/s): the TB/s
    of the copy the rows name as their baseline (the faster of CEILINGS), in its own row."""
    d = timed(df)
    return lookup.cell(lookup.first(d, variant=d["baseline"].dropna().iloc[0]), "TB/s")


def race_rounds(df: pd.DataFrame) -> int:
    """How many rounds the race ran."""
    return int(timed(df)["rounds"].dropna().max())


def race_title(df: pd.DataFrame, what: str) -> str:
    """A race figure's title: what ran, its size and the bytes it moved."""
    d = timed(df)
    gib = _f(d["bytes_moved"].max()) / (1 << 30)
    if "n" in d:
        return f"{what}, 2^{math.log2(_f(d['n'].iloc[0])):.0f} floats ({gib:.1f} GiB moved)"
    return f"{what}, {int(d['height'].iloc[0])}² pixels ({gib:.1f} GiB moved)"


# ---- the profiler ------------------------------------------------------------------------------

#: Counters the page shows, by column: name -> (header, digits).
COUNTERS = {"dram_pct": ("DRAM throughput (% of peak)", 0),
            "dram_B_per_elem": ("DRAM bytes / element", 2),
            "gld_sectors_per_request": ("sectors / load request", 1),
            "gst_sectors_per_request": ("sectors / store request", 1),
            "l1_hit_pct": ("L1 hit rate (%)", 1),
            "achieved_occupancy_pct": ("achieved occupancy (%)", 0),
            "lsu_pipe_pct": ("LSU pipe (% of peak)", 0),
            "issue_active_pct": ("issue active (%)", 0),
            "stall_long_scoreboard": ("long-scoreboard stall (warps / issue)", 2),
            "smem_wavefronts_per_ld": ("shared wavefronts / load", 2),
            "smem_ld_bank_conflicts": ("shared-load bank conflicts", 0),
            "duration_us": ("profiled time (µs)", 1)}


def counters(prof: pd.DataFrame) -> pd.DataFrame:
    """One row per profiled kernel or library call, with derived counters: DRAM bytes per
    element (read + written over the elements of the profiled size) and shared-memory
    wavefronts per shared-load instruction."""
    d = prof.copy()
    elems = np.where(d["kind"] == "vecadd", d.get("n", np.nan),
                     d.get("height", np.nan) * d.get("width", np.nan))
    rd = d["dram_read_MB"] if "dram_read_MB" in d else np.nan
    wr = d["dram_write_MB"] if "dram_write_MB" in d else np.nan
    d["dram_B_per_elem"] = (rd + wr) * 1e6 / elems
    if "inst_executed" in d:                      # warp instructions × 32 lanes / elements
        d["inst_per_elem"] = d["inst_executed"] * 32 / elems
    if "smem_ld_wavefronts" in d and "smem_ld_instructions" in d:
        with np.errstate(divide="ignore", invalid="ignore"):
            d["smem_wavefronts_per_ld"] = np.where(d["smem_ld_instructions"] > 0,
                                                   d["smem_ld_wavefronts"] / d["smem_ld_instructions"],
                                                   np.nan)
    d["label"] = d["variant"].map(LABELS).fillna(d["variant"])
    d["short"] = d["variant"].map(TERSE).fillna(d["variant"])
    d["order"] = d["variant"].map(ORDER)
    return d.sort_values("order")


#: Names short enough for a table of counters.
TERSE = {"per-element": "1 / thread", "grid-stride": "grid-stride", "vec4": "float4 × 4",
         "CuPy a + b": "CuPy a + b", "per-pixel": "1 px / thread", "vec4px": "4 px, 32-bit",
         "vec16px": "16 px, 128-bit", "CuPy array ops": "CuPy ops", "naive": "naive",
         "tiled": "tiled", "sliding": "sliding", "cupyx uniform_filter": "cupyx"}


def counter_facts(prof: pd.DataFrame, kind: str, quoted: dict) -> dict:
    """p_{kind}_{key}_{counter} for each profiled call key of `quoted` (vecadd, gray, blur)
    and each of its counters: a counter of the row, or derived here: thread instructions
    per element (inst_per_elem: warp instructions × 32 / elements), DRAM bytes per element
    and the DRAM rate over the profiled time (dram_tbs)."""
    d = counters(prof)
    d = d[d["kind"] == kind]
    out = {}
    for key, names in quoted.items():
        r = d[d["variant"].map(KEYS) == key].iloc[0]
        for m in names:
            out[f"p_{kind}_{key}_{m}"] = ((_f(r.get("dram_read_MB")) + _f(r.get("dram_write_MB")))
                                          / _f(r.get("duration_us")) if m == "dram_tbs"
                                          else _f(r.get(m)))
    return out


def dram_range_facts(prof: pd.DataFrame, kind: str) -> dict:
    """p_{kind}_dram_B_lo / _hi: the range of the kernels' DRAM bytes per element."""
    d = counters(prof)
    b = d[(d["kind"] == kind) & (d["role"] == "kernel")]["dram_B_per_elem"]
    return {f"p_{kind}_dram_B_lo": _f(b.min()), f"p_{kind}_dram_B_hi": _f(b.max())}


def counter_table(prof: pd.DataFrame, kind: str, cols: list[str]) -> pd.DataFrame:
    d = counters(prof)
    return d[d["kind"] == kind][["short"] + [c for c in cols if c in d]]


# ---- the roofline ------------------------------------------------------------------------------

SHORT = {"per-element": "VecAdd 1/thread", "grid-stride": "VecAdd grid-stride",
         "vec4": "VecAdd float4", "CuPy a + b": "CuPy a + b", "per-pixel": "gray 1 px",
         "vec4px": "gray 4 px", "vec16px": "gray 16 px", "CuPy array ops": "CuPy gray",
         "naive": "blur naive", "tiled": "blur tiled", "sliding": "blur sliding",
         "cupyx uniform_filter": "cupyx blur"}


def fp32_roof(ceil):
    """Chapter 0's measured copy bandwidth and FP32 FMA peak alone (the tensor-core roofs
    do not apply to these kernels)."""
    from ...roofline import Ceilings
    return Ceilings(ceil.bandwidth_Bps, {"FP32 FMA": ceil.peaks_flops["FP32 FMA"]}, ceil.source)


def roofline_points(races: dict, prof: pd.DataFrame) -> list:
    """(label, operations per DRAM byte, Tera-operations/s) of every kernel and library
    call: the operations the reference algorithm defines per element
    (reference.ops_per_element), the DRAM bytes per element the profiler saw, and the
    element rate of the timed race (its TB/s over the bytes it moved per element)."""
    c = counters(prof)
    pts = []
    for kind, df in races.items():
        d = timed(df)
        elems = _f(d["n"].iloc[0]) if kind == "vecadd" else \
            _f(d["height"].iloc[0]) * _f(d["width"].iloc[0])
        opsper = ref.ops_per_element(kind, RADIUS if kind == "blur" else 0)
        for v in KINDS[kind]:
            r = lookup.first(d, variant=v)
            q = c[(c["kind"] == kind) & (c["variant"] == v)]
            if r is None or not len(q) or not _f(r.get("TB/s")) > 0:
                continue
            bpe = _f(q["dram_B_per_elem"].iloc[0])
            if not bpe > 0:
                continue
            per_byte = elems * opsper / _f(r["bytes_moved"])     # operations per byte moved
            pts.append((SHORT[v], opsper / bpe, _f(r["TB/s"]) * per_byte))
    return pts


#: The families of the roofline's points (by their SHORT label), each drawn in one colour
#: and labelled as one stack.
FAMILY_COLORS = {"VecAdd": "C0", "gray": "C2", "blur": "C3"}


def _family(label: str) -> str:
    if label.startswith(("VecAdd", "CuPy a + b")):
        return "VecAdd"
    return "gray" if "gray" in label else "blur"


def plot_roofline(ax, ceil, points: list) -> None:
    """The FP32 roof and the points (label, ops/B, Tops/s), one colour per family. Points
    whose intensities lie close are labelled as one stack, in a column right of them, a
    line apart, under the roof, with a leader line to each point: no label lands on
    another, on a marker or on the roof."""
    from ... import roofline

    roof = fp32_roof(ceil)
    roofline.plot(ax, roof, points=(), ai_range=(0.02, 200))
    ax.legend(fontsize=9, loc="lower right")
    for fam, color in FAMILY_COLORS.items():
        pts = [p for p in points if _family(p[0]) == fam]
        ax.plot([p[1] for p in pts], [p[2] for p in pts], "o", ms=6, ls="none", color=color)
    clusters: list = []                            # by intensity: within a factor 2.5
    for label, x, y in sorted(points, key=lambda p: p[1]):
        if clusters and x < 2.5 * clusters[-1][0][1]:
            clusters[-1].append((label, x, y))
        else:
            clusters.append([(label, x, y)])
    ax.figure.canvas.draw()
    to_px, to_data = ax.transData.transform, ax.transData.inverted().transform
    peak = roof.peaks_flops["FP32 FMA"]
    line = 15.0                                    # px between label rows (9 pt at 100 dpi)
    for cl in clusters:
        px = sorted(((*to_px((x, y)), label, (x, y)) for label, x, y in cl),
                    key=lambda p: p[1])
        ys = [p[1] for p in px]
        for i in range(1, len(ys)):                # push up until a line apart
            ys[i] = max(ys[i], ys[i - 1] + line)
        shift = (sum(p[1] for p in px) - sum(ys)) / len(ys)   # keep the stack centred
        ys = [y + shift for y in ys]
        x_text = max(p[0] for p in px) + 45
        ai_text = to_data((x_text, 0))[0]
        cap = to_px((ai_text, roofline.attainable(ai_text, peak, roof.bandwidth_Bps) / 1e12))[1]
        cap -= line                                # the top label's centre under the roof
        for i in range(len(ys) - 1, -1, -1):       # then push down from the top
            ys[i] = min(ys[i], cap if i == len(ys) - 1 else ys[i + 1] - line)
        for (x0, y0, label, xy), yt in zip(px, ys):
            ax.annotate(label, xy, xytext=to_data((x_text, yt)), textcoords="data",
                        fontsize=9, va="center", ha="left", color=FAMILY_COLORS[_family(label)],
                        arrowprops={"arrowstyle": "-", "lw": 0.7, "color": "0.55",
                                    "shrinkA": 2, "shrinkB": 4})


# ---- the photograph ----------------------------------------------------------------------------

def photo_images(radius: int = RADIUS) -> dict:
    """The photograph, its exact gray image and the exact blur, computed here (NumPy)."""
    img = ref.photo()
    g = ref.gray_ref(img)
    return {"rgb": img, "gray": g, "blur": ref.blur_ref(g, radius)}


def photo_hashes(photo: pd.DataFrame, images: dict) -> pd.DataFrame:
    """Each recorded output's sha256 against the sha256 of the image computed here."""
    d = photo.copy()
    want = {"gray": ref.digest(images["gray"]), "blur": ref.digest(images["blur"])}
    d["reference_sha256"] = d["stage"].map(want)
    d["same_bytes"] = d["output_sha256"] == d["reference_sha256"]
    d["label"] = d["variant"].map(LABELS).fillna(d["variant"])
    d["sha"] = d["output_sha256"].str[:12]
    return d


def plot_photo(fig, images: dict, photo: pd.DataFrame, radius: int = RADIUS) -> None:
    axes = fig.subplots(1, 3)
    h, w = images["gray"].shape
    for ax, (key, title) in zip(axes, (("rgb", f"the photograph ({w} × {h})"),
                                       ("gray", "RGB → gray"),
                                       ("blur", f"gray, then the {2 * radius + 1}×{2 * radius + 1} box blur"))):
        ax.imshow(images[key], cmap=None if key == "rgb" else "gray", vmin=0, vmax=255,
                  interpolation="nearest")
        ax.set_title(title, fontsize=9)
        ax.set_axis_off()
    fig.subplots_adjust(left=0.01, right=0.99, top=0.9, bottom=0.02, wspace=0.08)


# ---- correctness ---------------------------------------------------------------------------

def checks_table(frames: dict) -> pd.DataFrame:
    """Per experiment: rows checked, how many passed, the shapes or sizes they covered."""
    recs = []
    for name, df in frames.items():
        d = df[df["correct"].notna()]
        if "n" in d:
            sizes = sorted({int(x) for x in d["n"].dropna()})
            cover = ", ".join(f"{s:,}" for s in sizes)
        elif "height" in d:
            shapes = sorted({(int(a), int(b)) for a, b in zip(d["height"], d["width"])})
            cover = ", ".join(f"{a}×{b}" for a, b in shapes)
        else:
            cover = "—"
        recs.append({"experiment": name, "rows": len(d), "passed": int(d["correct"].sum()),
                     "covered": cover})
    return pd.DataFrame(recs)


def bad_inputs() -> pd.DataFrame:
    """What the chapter's calls answer to bad input: the ConfigError of each case, computed
    here by the same checks the calls make (on NumPy arrays of the same layout)."""
    from ...errors import messages

    u8 = np.uint8
    cases = [
        ("gray of a float32 image", lambda: ops.check_layout(np.zeros((4, 5, 3), np.float32), "rgb", u8, 3, channels=3)),
        ("gray of an RGBA image", lambda: ops.check_layout(np.zeros((4, 5, 4), u8), "rgb", u8, 3, channels=3)),
        ("gray of a 2-D array", lambda: ops.check_layout(np.zeros((4, 5), u8), "rgb", u8, 3, channels=3)),
        ("gray of every other column", lambda: ops.check_layout(np.zeros((4, 10, 3), u8)[:, ::2], "rgb", u8, 3, channels=3)),
        ("blur of a transposed image", lambda: ops.check_layout(np.zeros((4, 6), u8).T, "gray", u8, 2)),
        ("VecAdd of float64", lambda: ops.check_layout(np.zeros(8), "a", np.float32, 1)),
        ("sliding blur, radius 6", lambda: ops.blur_spec("sliding", 6)),
        ("a 64 × 32 block", lambda: ops.check_block((64, 32))),
    ]
    return pd.DataFrame(messages(cases), columns=["input", "error"])


def sanitizer_table(san: pd.DataFrame) -> pd.DataFrame:
    return san[["variant", "errors", "passed", "failed", "correct", "summary"]].copy() \
        if "errors" in san else san


def sanitized_sizes() -> dict:
    """What the sanitized pass covers, as text for the page (sanitize.SAN_*)."""
    from .sanitize import SAN_RADII, SAN_SHAPES, SAN_SIZES
    return {"san_sizes": ", ".join(f"{n:,}" for n in SAN_SIZES),
            "san_shapes": ", ".join(f"{h} × {w}" for h, w in SAN_SHAPES),
            "san_radii": " and ".join(str(r) for r in SAN_RADII)}


# ---- every number the prose quotes, section by section -----------------------------------------

def photo_facts(photo: pd.DataFrame) -> dict:
    """The photograph: how many kernels wrote the reference's bytes (photo_hashes)."""
    hashes = photo_hashes(photo, photo_images())
    kern = hashes[hashes["role"] == "kernel"]
    return {"photo_kernels_same": int(kern["same_bytes"].sum()), "photo_kernels": int(len(kern))}


def vecadd_facts(vec: pd.DataFrame, inf: pd.DataFrame) -> dict:
    """VecAdd: the race against the copy of the same bytes, and the memory chapter's
    measured copy rate (× cudaMemcpy, same rounds; memory.inflight) at 16 and 32 KB of
    reads in flight per SM, the best configuration at each, that the prediction reads."""
    d = inf[(inf["warps_per_sm"] > 0) & inf["correct"].astype(bool)]
    out = {f"ch2_at{kb}k": float(d[d["inflight_per_sm"] == kb * 1024]["of_copy"].max())
           for kb in (16, 32)}
    out["vecadd_ceiling_tbs"], out["vecadd_rounds"] = race_ceiling_tbs(vec), race_rounds(vec)
    out.update(race_best(vec, "vecadd"))
    out.update(race_facts(vec, "vecadd", {"elem": ("x", "lo", "hi"), "stride": ("x",),
                                          "vec4": ("x", "lo", "hi"), "cupy": ("x",)}))
    return out


def vecadd_counter_facts(prof: pd.DataFrame) -> dict:
    """VecAdd under the profiler (images.profile)."""
    return {**dram_range_facts(prof, "vecadd"), **counter_facts(prof, "vecadd", {
        "elem": ("dram_pct", "gld_sectors_per_request", "inst_per_elem"),
        "stride": ("dram_pct",), "vec4": ("dram_pct", "gld_sectors_per_request"),
        "cupy": ("achieved_occupancy_pct", "inst_per_elem")})}


def gray_facts(gray: pd.DataFrame) -> dict:
    """RGB → gray: the race and the speed-ups the prose quotes."""
    out = {"gray_ceiling_tbs": race_ceiling_tbs(gray), "gray_rounds": race_rounds(gray),
           **race_best(gray, "gray")}
    out.update(race_facts(gray, "gray", {"pix": ("x", "us"), "v4": ("x",),
                                         "v16": ("x", "lo", "hi", "us"), "cupy": ("x", "us")}))
    out["gray_v16_over_pix"] = out.pop("gray_pix_us") / out["gray_v16_us"]
    out["gray_v16_over_cupy"] = out.pop("gray_cupy_us") / out.pop("gray_v16_us")
    return out


def gray_counter_facts(prof: pd.DataFrame) -> dict:
    """RGB → gray under the profiler."""
    return counter_facts(prof, "gray", {
        "pix": ("dram_pct", "gld_sectors_per_request", "l1_hit_pct"),
        "v16": ("dram_pct", "l1_hit_pct"), "cupy": ("dram_B_per_elem", "dram_tbs")})


def blur_facts(blur: pd.DataFrame) -> dict:
    """The box blur: the race, the times and speed-ups the prose quotes, and how far
    cupyx's truncating filter is from the exact blur."""
    out = {"blur_rounds": race_rounds(blur)}
    out.update(race_facts(blur, "blur", {"naive": ("x", "us"), "tiled": ("us",),
                                         "slide": ("x", "us"), "cupyx": ("us",)}))
    naive, tiled, cupyx = (out.pop(f"blur_{k}_us") for k in ("naive", "tiled", "cupyx"))
    out["blur_naive_ms"], out["blur_tiled_ms"], out["blur_cupyx_ms"] = (
        naive / 1e3, tiled / 1e3, cupyx / 1e3)
    out["blur_tiled_over_naive"] = naive / tiled
    out["blur_slide_over_naive"] = naive / out["blur_slide_us"]
    out["blur_slide_over_cupyx"] = cupyx / out["blur_slide_us"]
    r = lookup.first(timed(blur), variant="cupyx uniform_filter")
    out["cupyx_max_diff"] = _f(r.get("max_abs_diff"))
    out["cupyx_pct_differ"] = 100 * _f(r.get("pixels_differing")) / (_f(r["height"]) * _f(r["width"]))
    return out


def blur_counter_facts(prof: pd.DataFrame) -> dict:
    """The blur under the profiler."""
    return counter_facts(prof, "blur", {
        "naive": ("dram_B_per_elem", "inst_per_elem", "issue_active_pct", "l1_hit_pct",
                  "lsu_pipe_pct"),
        "tiled": ("inst_per_elem", "lsu_pipe_pct", "smem_wavefronts_per_ld"),
        "slide": ("achieved_occupancy_pct", "dram_pct", "inst_per_elem", "issue_active_pct"),
        "cupyx": ("inst_per_elem", "issue_active_pct")})


def check_facts(vec, gray, blur, photo, blk, san: pd.DataFrame) -> dict:
    """Correct before fast: the rows of the five runs checked and failed, compute-sanitizer's
    verdicts (images.sanitize) and the sizes it covered."""
    frames = [vec, gray, blur, photo, blk]
    out = {"checked_rows": int(sum(f["correct"].notna().sum() for f in frames if "correct" in f)),
           "failed_rows": int(sum((f["correct"] == False).sum() for f in frames if "correct" in f))}  # noqa: E712
    for tool in ("memcheck", "racecheck"):
        d = san[san["variant"] == tool]
        out[f"{tool}_errors"] = int(_f(d["errors"].iloc[0]))
        out[f"{tool}_clean"] = bool(d["correct"].iloc[0])
    out["memcheck_passed"] = int(_f(san[san["variant"] == "memcheck"]["passed"].iloc[0]))
    out.update(sanitized_sizes())
    return out


def block_facts(blk: pd.DataFrame) -> dict:
    """The block-shape sweep (images.blocks): each kernel's best and worst shape, the
    default's share of the best, the shapes within 10 % of the best, and the time per
    block per SM (the kernel's time over the blocks each SM ran)."""
    sms = _f(plots.device_of(blk).get("sms"))
    sweep = {}
    for kern, key in (("gray per-pixel", "gray"), ("blur naive", "naive"),
                      ("blur tiled", "tiled")):
        d = blk[(blk["variant"] == kern) & blk["TB/s"].notna()]
        sweep[key] = (d, d.loc[d["TB/s"].idxmax()], d.loc[d["TB/s"].idxmin()])
    shape = lambda r: f"{int(r['bx'])} × {int(r['by'])}"   # noqa: E731
    d, best, worst = sweep["gray"]
    out = {"bk_gray_best": shape(best), "bk_gray_worst": shape(worst),
           "bk_gray_worst_x": _f(worst["TB/s"]) / _f(best["TB/s"]),
           "bk_gray_default_x": _f(d[(d["bx"] == 32) & (d["by"] == 8)]["TB/s"].iloc[0])
           / _f(best["TB/s"])}
    per = d["median_us"] * 1e3 * sms / (np.ceil(d["width"] / d["bx"]) * np.ceil(d["height"] / d["by"]))
    for bx in (8, 256):
        out[f"bk_gray_ns_per_block_{bx}x1"] = _f(per[(d["bx"] == bx) & (d["by"] == 1)].iloc[0])
    threads = d["bx"] * d["by"]
    out["bk_gray_of_best_64_lo"] = _f(d[threads == 64]["of_best"].min())
    out["bk_gray_of_best_128_lo"] = _f(d[threads == 128]["of_best"].min())
    out["bk_gray_of_best_128_hi"] = _f(d[threads == 128]["of_best"].max())
    d, best, _ = sweep["naive"]
    out["bk_naive_within10"] = int((d["TB/s"] >= 0.9 * _f(best["TB/s"])).sum())
    out["bk_naive_shapes"] = int(len(d))
    out["bk_tiled_best"] = shape(sweep["tiled"][1])
    return out


#: the page's facts: (function, the experiments whose rows it takes, in order)
PAGE_FACTS = {"04-images": (
    (photo_facts, ("images.photo",)),
    (vecadd_facts, ("images.vecadd", "memory.inflight")),
    (vecadd_counter_facts, ("images.profile",)),
    (gray_facts, ("images.gray",)), (gray_counter_facts, ("images.profile",)),
    (blur_facts, ("images.blur",)), (blur_counter_facts, ("images.profile",)),
    (check_facts, ("images.vecadd", "images.gray", "images.blur", "images.photo",
                   "images.blocks", "images.sanitize")),
    (block_facts, ("images.blocks",)))}

#: the chapter's done-when list
TARGETS = {"04-images": (
    Target("VecAdd, best kernel / copy ceiling of the same bytes, same rounds", "vecadd_best_x",
           at_least=0.90, digits=3, low="vecadd_best_lo", high="vecadd_best_hi"),
    Target("RGB → gray, best kernel / copy ceiling of the same bytes, same rounds",
           "gray_best_x", at_least=0.90, digits=3, low="gray_best_lo", high="gray_best_hi"),
    Target("rows checked against the exact reference before timing ({checked_rows}): failed",
           "failed_rows", at_most=0, digits=0),
    Target("compute-sanitizer memcheck: clean", "memcheck_clean", equal=True),
    Target("compute-sanitizer memcheck, errors", "memcheck_errors", at_most=0, digits=0),
    Target("compute-sanitizer racecheck: clean", "racecheck_clean", equal=True),
    Target("compute-sanitizer racecheck, errors", "racecheck_errors", at_most=0, digits=0),
    Target("photograph: kernel outputs byte-identical to the reference", "photo_kernels_same",
           equal="photo_kernels", digits=0),
)}


def plot_race(ax, df: pd.DataFrame, title: str) -> None:
    """Each contestant's rate over the copy ceiling of the same rounds: the median, and
    the lowest and highest round as a bar."""
    d = timed(df)
    d = d[d["role"] != "copy"].iloc[::-1]
    y = np.arange(len(d))
    colors = [plots.COLORS["kernel"] if r == "kernel" else plots.COLORS["cuBLAS FP32"]
              for r in d["role"]]
    ax.barh(y, d["of_copy"], color=colors, alpha=0.85, height=0.6)
    ax.errorbar(d["of_copy"], y, xerr=[d["of_copy"] - d["of_copy_min"],
                                       d["of_copy_max"] - d["of_copy"]],
                fmt="none", ecolor="0.2", capsize=3, lw=1)
    for yi, v in zip(y, d["of_copy"]):        # a column right of the axes: clear of the lines
        ax.text(1.01, yi, f"{v:.2f}×", va="center", ha="left", fontsize=9,
                transform=ax.get_yaxis_transform())
    ax.axvline(1.0, color="0.3", ls="--", lw=1)
    ax.axvline(0.9, color="C3", ls=":", lw=1)
    ax.set_yticks(y, d["label"], fontsize=9)
    ax.set_xlim(0, 1.1)
    ax.set_xlabel("rate / copy ceiling of the same bytes (same rounds)", fontsize=9)
    ax.set_title(title, fontsize=9, loc="left")
    ax.figure.tight_layout()              # the axis label inside the figure, clear of the stamp
