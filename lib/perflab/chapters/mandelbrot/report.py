"""Chapter 7's numbers, tables and figures, computed from the rows (live or recorded) and
from the SASS the offline compiler gives: the prose quotes only what the `*_facts` functions
return, one for each section (PAGE_FACTS); the targets are data (TARGETS)."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ... import host, lab, lookup, plots, race, registry, store
from ...targets import Target
from . import cpu, gpu, model
from .experiments import GPU_ITER, GPU_SIZE
from .views import VIEWS, view

#: The small views' titles in the image figure.
SHORT = {"cardioid": "inside the cardioid", "seahorse": "the seahorse valley"}
#: The recorded host's colour and the build machine's, in the CPU figure.
HOST_COLOR, LIVE_COLOR = "C0", "0.62"
#: What each CPU source is, on the page (the figure's legend, the tables' CPU column).
ROLES = {"host": "the GPU machine's host, recorded", "live": "this machine, measured live",
         "other": "recorded"}


# --------------------------------------------------------------------------- the CPU rows

@dataclass
class CpuSources:
    """Where the CPU rows come from. The findings are read from `host`: the rows recorded
    on the CPU of the machine that recorded the GPU runs (mandelbrot.versus names it), the
    same on every build. `live` is this machine, measured while the page is built where C
    builds and loads (None elsewhere, `why_not_live` says why); `others` are other CPUs'
    recorded rows (the tables show them)."""
    host: pd.DataFrame | None
    live: pd.DataFrame | None
    why_not_live: str | None
    others: dict = field(default_factory=dict)

    def frames(self) -> list[pd.DataFrame]:
        return [d for d in (self.host, self.live, *self.others.values()) if d is not None]


def host_slug() -> str | None:
    """The slug of the CPU of the recorded GPU machine: the host mandelbrot.versus ran on."""
    try:
        vs = lab.replay("mandelbrot.versus")
    except Exception:          # noqa: BLE001  (no recorded GPU run: no recorded host)
        return None
    if "cpu_model" not in vs or not len(vs):
        return None
    return host.cpu_slug(str(vs["cpu_model"].iloc[0]))


def cpu_frames() -> CpuSources:
    """The recorded host's rows, this machine's live rows where C builds here (and
    PERFLAB_MODE is not replay), and every other CPU's recorded rows."""
    why = host.unavailable()
    if why is None and not lab.live_here(registry.get("mandelbrot.cpu")):
        why = "PERFLAB_MODE=replay"
    live = None if why else lab.run("mandelbrot.cpu")
    if live is not None and live.attrs.get("source", {}).get("kind") != "live":
        live, why = None, "no live measurement"
    slug = host_slug()
    host_df = (lab.replay("mandelbrot.cpu", device_slug=slug)
               if slug and store.find("mandelbrot.cpu", slug) else None)
    here = host.cpu_slug(host.cpu_info()["model"]) if live is not None else None
    others = {d: lab.replay("mandelbrot.cpu", device_slug=d) for d in store.devices()
              if d not in (slug, here) and store.find("mandelbrot.cpu", d) is not None}
    return CpuSources(host_df, live, why, others)


def cpu_rows(src: CpuSources) -> pd.DataFrame:
    """Every CPU's rows in one frame, with the CPU's model, its role (the recorded host,
    this machine live, another recorded CPU), its caption, and the paths' order (scalar,
    AVX2, AVX-512, NumPy, Numba)."""
    parts = []
    for role, df in [("host", src.host), ("live", src.live)] + [("other", d) for d in
                                                                 src.others.values()]:
        if df is None:
            continue
        parts.append(df.assign(cpu=df.attrs["source"]["device"], role=role,
                               how="live" if role == "live" else "recorded",
                               caption=lab.caption(df)))
    if not parts:
        return pd.DataFrame()
    d = pd.concat(parts, ignore_index=True)
    order = {n: i for i, n in enumerate(list(cpu.C_PATHS) + ["NumPy", "Numba"])}
    d["order"] = d["variant"].map(order)
    rank = {"host": 0, "live": 1, "other": 2}
    d["rank"] = d["role"].map(rank)
    return d.sort_values(["rank", "cpu", "view", "order", "threads"], kind="stable")


def source_lines(parts: list[tuple[str, pd.DataFrame]]) -> list[str]:
    """One provenance line per source of a figure: "<what>: <lab.caption>"."""
    return [f"{what}: {lab.caption(df)}" for what, df in parts if df is not None]


def stamp_lines(fig, lines: list[str]) -> None:
    """Every source's caption under a figure, one line each (a figure that mixes a live
    and a recorded source says both)."""
    import textwrap
    text = "\n".join(textwrap.fill(x, 100, subsequent_indent="    ") for x in lines)
    fig.text(0.01, -0.02, text, fontsize=9, color="0.35", ha="left", va="top",
             linespacing=1.4)


def paths_table() -> pd.DataFrame:
    """The C paths, the instruction set each needs, and whether this machine runs it."""
    recs = []
    for p in cpu.C_PATHS.values():
        why = p.runs_here()
        recs.append({"path": p.name, "isa": p.isa or "any", "lanes": p.lanes,
                     "in_flight": p.in_flight, "file": f"kernels/{p.src.file}",
                     "runs": why is None, "why": why or "runs here"})
    return pd.DataFrame(recs)


def _spread(lo, hi) -> str:
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
        return "—"
    return f"{lo:.2f}–{hi:.2f}"


def _path_label(variant: str, threads: str) -> str:
    return f"{variant} · {'1 core' if threads == '1' else 'all'}"


def plot_cpu(axes, d: pd.DataFrame) -> list[str]:
    """× scalar on one core, every path, one panel per view: the recorded host's bars and,
    beside them, this machine's (where it measured live). Returns the CPUs drawn."""
    d = d[d["role"].isin(["host", "live"])]
    roles = [r for r in ("host", "live") if (d["role"] == r).any()]
    ok = d[d["runs_here"].astype(bool) & d["vs_scalar"].notna()]
    labels = list(dict.fromkeys(_path_label(a, t) for a, t in
                                zip(ok.sort_values(["order", "threads"])["variant"],
                                    ok.sort_values(["order", "threads"])["threads"])))
    width = 0.8 / max(len(roles), 1)
    for ax, view_name in zip(axes, ("full", "cardioid")):
        v = ok[ok["view"] == view_name]
        for k, role in enumerate(roles):
            g = v[v["role"] == role]
            y = [labels.index(_path_label(a, t)) + (k - (len(roles) - 1) / 2) * width
                 for a, t in zip(g["variant"], g["threads"])]
            name = f"{g['cpu'].iloc[0] if len(g) else role}: {ROLES[role]}"
            ax.barh(y, g["vs_scalar"], height=width,
                    color=HOST_COLOR if role == "host" else LIVE_COLOR, label=name)
            lo = (g["vs_scalar"] - g["vs_scalar_min"]).clip(lower=0)
            hi = (g["vs_scalar_max"] - g["vs_scalar"]).clip(lower=0)
            ax.errorbar(g["vs_scalar"], y, xerr=[lo, hi], fmt="none", ecolor="0.2",
                        elinewidth=0.7, capsize=1.5)
        ax.set_yticks(range(len(labels)))
        ax.set_yticklabels(labels, fontsize=9)
        ax.set_ylim(len(labels) - 0.5, -0.5)
        ax.set_xscale("log")
        ax.axvline(1, color="0.5", lw=0.6)
        ax.tick_params(axis="x", labelsize=9)
        ax.set_xlabel("× scalar C on one core (log)", fontsize=9)
        ax.set_title(view_name if view_name == "full" else "cardioid: no lane waits",
                     fontsize=10)
    handles, names = axes[0].get_legend_handles_labels()
    axes[0].figure.legend(handles, names, fontsize=9, loc="lower left", ncol=1,
                          bbox_to_anchor=(0.01, 1.0), frameon=False)
    return roles


def cpu_figure(src: CpuSources):
    """The CPU figure: the recorded host, and this machine beside it where it measured
    live, with both sources' captions under it."""
    import matplotlib.pyplot as plt

    d = cpu_rows(src)
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 4.4), sharey=True, sharex=True)
    plot_cpu(axes, d)
    fig.tight_layout()
    stamp_lines(fig, source_lines([("the GPU machine's host", src.host),
                                   ("this machine", src.live)]))
    return fig


# --------------------------------------------------------------------------- the SASS

#: The escape test, one FSETP (a compare with 4) per Mandelbrot step: the FSETPs of a loop
#: body are the steps it makes (8 for a chunk of 8, 2 for a thread that carries two
#: pixels), and the hot loop is the one with the most of them.
STEP = "FSETP"


def per_step(lp) -> dict:
    """Instructions and FP32 instructions per Mandelbrot step of a SASS loop (a
    compile_report.Loop)."""
    from ...compile_report import FP32

    steps, fp32 = lp.count(STEP), lp.count(*FP32)
    s = max(steps, 1)
    return {"steps_per_trip": steps, "instructions_per_trip": lp.instructions,
            "instructions_per_step": lp.instructions / s, "fp32_per_step": fp32 / s,
            "fp32_fraction": fp32 / lp.instructions if lp.instructions else 0.0,
            **{f"{o.lower()}_per_step": lp.ops[o] / s for o in FP32}}


def loop_costs(arch: str = "sm_90") -> pd.DataFrame:
    """The hot loop of every GPU kernel, from the SASS of the offline compile for `arch`:
    instructions and FP32 instructions per step, per trip, and the replay loop's length
    (chunked kernels); registers from the same compile."""
    from ... import compile_report as cr

    recs = []
    for name, k in gpu.KERNELS.items():
        text = cr.sass(k.spec, arch)
        hot = cr.hot_loop(text, STEP)
        others = [lp for lp in cr.loops(text) if lp.count(STEP) == 1 and lp != hot]
        replay = min((lp.instructions for lp in others), default=0) if k.spec.template else 0
        res = cr.resources(k.spec, arch)
        ps = per_step(hot)
        recs.append({"variant": name, "arch": arch, "registers_sass": res["registers"],
                     "trip": hot.instructions, "replay": replay,
                     **ps, "fp32_pct": 100 * ps["fp32_fraction"],
                     "spills": res["spill_store_bytes"] + res["spill_load_bytes"]})
    return pd.DataFrame(recs)


def hot_loop_text(name: str, arch: str = "sm_90") -> str:
    """The SASS of a kernel's hot loop, one instruction a line."""
    from ... import compile_report as cr

    text = cr.sass(gpu.kernel(name).spec, arch)
    return "\n".join(cr.loop_lines(text, cr.hot_loop(text, STEP)))


# --------------------------------------------------------------------------- the GPU rows

def gpu_table(g: pd.DataFrame, costs: pd.DataFrame, prof: pd.DataFrame | None,
              dev: dict) -> pd.DataFrame:
    """Each kernel on each view: measured time and ratio to the one-pixel kernel (same
    rounds), the time the issue model predicts (warp trips × instructions per trip, one
    issue per scheduler per cycle at the boost clock), and the profiler's counters."""
    d = g.merge(costs[["variant", "trip", "replay", "instructions_per_step", "fp32_per_step"]],
                on="variant", how="left")
    regs = costs.set_index("variant")["registers_sass"]
    if "registers" not in d:
        d["registers"] = d["variant"].map(regs)
    if "occupancy" not in d:
        d["occupancy"] = [occupancy(r, 128, dev) for r in d["registers"]]
    d["occupancy_pct"] = 100 * d["occupancy"]
    d["warp_inst_model"] = _warp_inst_model(d)
    d["model_ms"] = [model.issue_time_s(w, int(dev["sms"]), float(dev["sm_clock_max_mhz"])) * 1e3
                     for w in d["warp_inst_model"]]
    d["measured_over_model"] = d["median_ms"] / d["model_ms"]
    base = d[d["variant"] == "pixel"].set_index("view")["model_ms"]
    d["model_vs_pixel"] = [m / base.get(v, math.nan) for m, v in zip(d["model_ms"], d["view"])]
    if prof is not None and len(prof):
        p = prof.set_index(["variant", "view"])
        for col in ("threads_per_inst", "branch_uniform_pct", "issue_active_pct",
                    "achieved_occupancy_pct", "warp_inst"):
            d[f"ncu_{col}"] = [p[col].get((a, v)) if col in p else None
                               for a, v in zip(d["variant"], d["view"])]
    d["active_lanes_model"] = 32 * d["active_lane_frac"]
    return d


def _warp_inst_model(d: pd.DataFrame) -> pd.Series:
    """Each row's modelled warp instructions: its trips × the SASS's instructions per trip."""
    return model.warp_instructions({"trips": d["warp_trips"], "replay_trips": d["replay_trips"]},
                                   d["trip"], d["replay"])


def occupancy(registers: float, threads: int, dev: dict) -> float:
    """The share of an SM's threads that blocks of `threads` threads with `registers`
    registers each can fill (registers allocated per warp in units of 256, at most 32
    blocks per SM): what the driver's occupancy query answers."""
    if registers is None or math.isnan(registers):
        return math.nan
    per_warp = math.ceil(registers * 32 / 256) * 256
    warps = threads // 32
    by_regs = int(dev["regs_per_sm"]) // (per_warp * warps)
    blocks = min(32, int(dev["max_threads_per_sm"]) // threads, by_regs)
    return blocks * threads / int(dev["max_threads_per_sm"])


def profile_table(prof: pd.DataFrame, costs: pd.DataFrame, dev: dict) -> pd.DataFrame:
    """The profiler's counters next to the model: warp instructions counted and predicted
    (trips × the SASS's instructions per trip), threads per instruction counted and
    predicted, FP32 thread instructions per iteration, the SM clock and the instructions
    each scheduler issued per cycle."""
    d = prof.merge(costs[["variant", "trip", "replay", "fp32_per_step"]], on="variant", how="left")
    d["warp_inst_model"] = _warp_inst_model(d)
    d["inst_over_model"] = d["warp_inst"] / d["warp_inst_model"]
    fp32 = sum(d[c] for c in ("fadd_thread_inst", "fmul_thread_inst", "ffma_thread_inst")
               if c in d)
    d["fp32_per_iter"] = fp32 / d["iterations"]
    d["clock_mhz"] = d["sm_cycles"] / d["duration_us"] if "sm_cycles" in d else math.nan
    d["ipc_per_scheduler"] = d["warp_inst"] / (4 * int(dev["sms"]) * d["sm_cycles"]) \
        if "sm_cycles" in d else math.nan
    d["threads_model"] = 32 * d["active_lane_frac"]
    return d


def rate_table(rate: pd.DataFrame, costs: pd.DataFrame) -> pd.DataFrame:
    """Inside the cardioid: each kernel's step rate, its FP32 instruction rate (the SASS's
    FP32 per step × steps per second) and that rate against the FFMA peak timed in the same
    rounds (an FFMA, FADD or FMUL is one instruction: instructions per second, not FLOP/s)."""
    peak = rate[rate["variant"] == "FFMA peak"]
    d = rate[rate["variant"] != "FFMA peak"].merge(
        costs[["variant", "fp32_per_step", "instructions_per_step", "fp32_fraction", "fp32_pct"]],
        on="variant", how="left")
    d["steps_per_s"] = d["Giter/s"] * 1e9
    d["fp32_per_s"] = d["steps_per_s"] * d["fp32_per_step"]
    d["ffma_per_s"] = float(peak["FFMA/s"].iloc[0]) if len(peak) else math.nan
    d["of_peak"] = d["fp32_per_s"] / d["ffma_per_s"]
    d["tips"] = d["fp32_per_s"] / 1e12
    rounds = next((r.get("round_ms") for r in raw_rows(rate, "mandelbrot.rate")
                   if r["variant"] == "FFMA peak"), None)
    lo, hi = [], []
    for v, it, f in zip(d["variant"], d["iterations"], d["fp32_per_step"]):
        if isinstance(rounds, dict) and v in rounds and "FFMA peak" in rounds:
            per = race.by_rate_rounds(rounds, v, it * f, "FFMA peak", peak["ffma"].iloc[0])
            lo.append(min(per))
            hi.append(max(per))
        else:
            lo.append(math.nan)
            hi.append(math.nan)
    d["of_peak_min"], d["of_peak_max"] = lo, hi
    return d


def versus_table(vs: pd.DataFrame) -> pd.DataFrame:
    """The GPU-against-CPU rows with the rounds' spread as one text column."""
    d = vs.copy()
    d["rounds"] = [_spread(a, b) if pd.notna(a) else "—"
                   for a, b in zip(d.get("vs_best_cpu_min", [None] * len(d)),
                                   d.get("vs_best_cpu_max", [None] * len(d)))]
    return d


# --------------------------------------------------------------------------- the image

@functools.lru_cache(maxsize=4)
def render_here(view_name: str = "full", size=GPU_SIZE, max_iter: int = GPU_ITER):
    """The count map of a view rendered on this machine: by the fastest C path it runs
    (every core) at the GPU run's size, or, where no C builds, by NumPy at a quarter of
    the size. (counts, how, same grid as the GPU's); kept for the figure and the facts,
    which both read it."""
    paths = cpu.widest()
    if paths:
        p = [q for q in paths if q.in_flight == 2][0]
        g = view(view_name).grid(*size)
        return cpu.c_render(p, g, max_iter, threads=0), f"{p.name}, every core", True
    g = view(view_name).grid(size[0] // 4, size[1] // 4)
    return cpu.numpy_render(g, max_iter), "NumPy (no C compiler here)", False


def plot_counts(ax, counts: np.ndarray, max_iter: int, where=None, title: str = "") -> None:
    """The count map (log colour scale; black: still iterating at the limit), with the
    pixels where the FMA build's count differs marked."""
    import matplotlib

    c = np.log1p(counts.astype(float))
    c = np.where(counts >= max_iter, np.nan, c)
    cmap = matplotlib.colormaps["bone"].with_extremes(bad="black")
    ax.imshow(c, cmap=cmap, interpolation="antialiased", origin="lower",
              vmin=0, vmax=np.log1p(max_iter))
    if where:
        w = np.asarray(where)
        ax.scatter(w[:, 0], w[:, 1], s=2.0, color="#e8112d", lw=0, label="FMA build differs")
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title, fontsize=9)


# --------------------------------------------------------------------------- the numbers

def lanes_facts() -> dict:
    """What the page says about the lanes diagram (diagrams.lanes_summary of its row)."""
    from . import diagrams
    return diagrams.lanes_summary(diagrams.row_lanes())


def image_facts(g: pd.DataFrame) -> dict:
    """The image rendered on this machine (render_here, the GPU run's grid): its size, how
    it was rendered, its median count, whether its counts hash to the GPU's, and where the
    FMA build's first mismatching pixels lie (their median count, the share of them within
    `near_px` pixels of the set)."""
    w, h, mi = int(g["w"].iloc[0]), int(g["h"].iloc[0]), int(g["max_iter"].iloc[0])
    full, how, same_grid = render_here("full", (w, h), mi)
    near = 5
    s = {"full_median": float(np.median(full)), "near_px": near,
         "fma_where_median": math.nan, "fma_where_near_pct": math.nan,
         "fma_where_n": 0, "fma_where_last_row": 0}
    where = _mismatch_where(g) if same_grid else None
    if where:
        w_ = np.asarray(where)
        s["fma_where_median"] = float(np.median(w_[:, 2]))
        inside = _dilate(full >= mi, near)
        s["fma_where_near_pct"] = 100 * float(inside[w_[:, 1], w_[:, 0]].mean())
        s["fma_where_n"] = len(where)
        s["fma_where_last_row"] = int(w_[:, 1].max())
    sha = gpu.counts_sha256(full)
    gpu_sha = g[(g["variant"] == "pixel") & (g["view"] == "full")]["counts_sha256"]
    if not same_grid:
        match = ("Without a C compiler here it is NumPy's, at a quarter of the size, so it "
                 "cannot be compared pixel for pixel with the GPU's.")
    elif len(gpu_sha) and gpu_sha.iloc[0] == sha:
        match = (f"Its count map hashes to the one the {g.attrs['source']['device']} "
                 f"computed (sha256 {sha[:12]}…): the same count at every pixel.")
    else:
        match = (f"Its count map (sha256 {sha[:12]}…) differs from the one recorded on the "
                 f"{g.attrs['source']['device']}: something here rounds differently.")
    s["img_h"], s["img_w"] = full.shape
    s["img_how"], s["img_match"] = how, match
    return s


def exact_facts(g: pd.DataFrame, src: CpuSources) -> dict:
    """One iteration, one order of operations: the GPU run's grid, the pixels where the FMA
    build's count differs on each view, and the mismatches of every exact GPU kernel
    (mandelbrot.gpu) and CPU path (the CPU rows of every source)."""
    s: dict = {}
    for v in ("full", "cardioid", "seahorse"):
        s[f"fma_mismatch_{v}"] = lookup.value(g, "mismatches", variant="pixel FMA", view=v)
    for v in ("full", "seahorse"):
        s[f"fma_mismatch_pct_{v}"] = 100 * lookup.value(g, "mismatch_frac", variant="pixel FMA", view=v)
    s["fma_maxdiff_full"] = lookup.value(g, "max_count_diff", variant="pixel FMA", view="full")
    exact = g[g["variant"] != "pixel FMA"]
    s["gpu_exact_mismatches"] = int(exact["mismatches"].fillna(0).sum())
    s["gpu_w"], s["gpu_h"] = int(g["w"].iloc[0]), int(g["h"].iloc[0])
    s["gpu_iter"] = int(g["max_iter"].iloc[0])
    s["cpu_mismatches"] = int(cpu_rows(src)["mismatches"].fillna(0).sum())
    s["exact_mismatches"] = s["gpu_exact_mismatches"] + s["cpu_mismatches"]
    return s


def cpu_facts(src: CpuSources) -> dict:
    """The CPU section's numbers: the recorded host's ("host_*"), whatever machine builds
    the page; this machine's live rows only feed cpu_live_note (cpu_notes)."""
    s: dict = cpu_notes(src)
    df = src.host
    s["host_cpu"] = df.attrs["source"]["device"]
    s["host_cores"] = int(df["cores"].max())
    one = lambda name, v, col="vs_scalar": lookup.value(df, col, variant=name, view=v, threads="1")  # noqa: E731
    for v in ("full", "cardioid"):
        for name, key in (("AVX-512", "avx512"), ("AVX-512 ×2", "avx512x2"), ("NumPy", "numpy")):
            s[f"host_{key}_{v}"] = one(name, v)
        s[f"host_numba_all_{v}"] = lookup.value(df, "vs_scalar", variant="Numba", view=v, threads="all")
    s["host_avx512_full_lo"] = one("AVX-512", "full", "vs_scalar_min")
    s["host_scalarx2_full"] = one("scalar ×2", "full")
    s["host_numba_full"] = one("Numba", "full")
    best = df[(df["view"] == "full") & df["vs_scalar"].notna()].sort_values("vs_scalar").iloc[-1]
    s["host_best_full"] = float(best["vs_scalar"])
    s["host_best_full_name"] = f"{best['variant']} on {int(best['cores'])} cores"
    s["host_scalar_all_full"] = lookup.value(df, "vs_scalar", variant="scalar", view="full", threads="all")
    nb = df[df["variant"] == "Numba"]["version"] if "version" in df else pd.Series(dtype=str)
    s["host_numba_version"] = str(nb.iloc[0]) if len(nb) else "not installed"
    s["host_512_over_256_cardioid"] = s["host_avx512_cardioid"] / one("AVX2", "cardioid")
    return s


def gpu_facts(g: pd.DataFrame, prof: pd.DataFrame) -> dict:
    """The GPU section's numbers: each kernel on each view against the one-pixel kernel
    and the issue model (gpu_table), the loops' registers and instructions (loop_costs, for
    the run's GPU), and the profiler's counters (profile_table)."""
    dev = plots.device_of(g)
    costs = loop_costs(dev.get("arch", "sm_90"))
    gt, pt = gpu_table(g, costs, prof, dev), profile_table(prof, costs, dev)
    s: dict = {}
    at = lambda col, name, v, d=gt: lookup.value(d, col, variant=name, view=v)   # noqa: E731
    chunked = f"chunked U={gpu.DEFAULT_CHUNK}"
    for v in ("full", "cardioid", "seahorse"):
        for name, key in (("one lane", "onelane"), ("two pixels", "two"), (chunked, "chunked")):
            s[f"{key}_{v}"] = at("slower_than_base", name, v)
        s[f"pixel_over_model_{v}"] = at("measured_over_model", "pixel", v)
        s[f"ncu_inst_ratio_{v}"] = at("warp_inst", "two pixels", v, pt) / at("warp_inst", "pixel", v, pt)
    s["onelane_full_model"] = at("model_vs_pixel", "one lane", "full")
    s["pixel_ms_cardioid"] = at("median_ms", "pixel", "cardioid")
    for v in ("full", "seahorse"):
        s[f"useful_{v}"] = 100 * at("useful_frac", "pixel", v)
    s["useful_two_seahorse"] = 100 * at("useful_frac", "two pixels", "seahorse")
    s["regs_pixel"] = at("registers", "pixel", "full")
    s["regs_two"] = at("registers", "two pixels", "full")
    s["occ_pixel"] = at("occupancy_pct", "pixel", "full")
    s["occ_two"] = at("occupancy_pct", "two pixels", "full")
    s["ips_pixel"] = lookup.value(costs, "instructions_per_step", variant="pixel")
    s["ips_two"] = lookup.value(costs, "instructions_per_step", variant="two pixels")
    s["fp32share_pixel"] = 100 * lookup.value(costs, "fp32_fraction", variant="pixel")
    s["sms"] = int(dev["sms"])
    ratios = gt["measured_over_model"].dropna()
    s["model_lo"], s["model_hi"] = float(ratios.min()), float(ratios.max())
    s["ncu_fp32_iter_pixel"] = at("fp32_per_iter", "pixel", "cardioid", pt)
    for name, key, counters in (
            ("pixel", "pixel", {"cardioid": ("alu", "issue", "occ", "throttle"),
                                "seahorse": ("issue", "occ")}),
            ("two pixels", "two", {"cardioid": ("alu", "issue", "thr", "throttle")})):
        for v, cs in counters.items():
            for c in cs:
                s[f"ncu_{c}_{key}_{v}"] = (
                    100 * at("pipe_alu_inst", name, v, pt) / at("warp_inst", name, v, pt)
                    if c == "alu" else at(NCU[c], name, v, pt))
    r = pt["inst_over_model"].dropna()
    s["inst_model_lo"], s["inst_model_hi"] = float(r.min()), float(r.max())
    return s


#: the profiler's counters gpu_facts quotes, by the short name of their fact
NCU = {"thr": "threads_per_inst", "issue": "issue_active_pct", "occ": "achieved_occupancy_pct",
       "throttle": "stall_math_pipe_throttle"}


def rate_facts(rate: pd.DataFrame) -> dict:
    """FP32 rate in the cardioid (rate_table: mandelbrot.rate, with the loops' SASS for the
    run's GPU): the one-pixel kernel and the best against the FFMA peak of the same rounds,
    against their SASS's FP32 share, and the rounds at the clock limit."""
    rt = rate_table(rate, loop_costs(plots.device_of(rate).get("arch", "sm_90")))
    px = lookup.first(rt, variant="pixel")
    s = {"rate_pixel": lookup.cell(px, "of_peak"), "rate_pixel_lo": lookup.cell(px, "of_peak_min"),
         "rate_pixel_hi": lookup.cell(px, "of_peak_max")}
    s["rate_pixel_of_share"] = s["rate_pixel"] / lookup.cell(px, "fp32_fraction")
    best = rt.sort_values("of_peak").iloc[-1]
    s["rate_best"] = float(best["of_peak"])
    s["rate_best_lo"] = float(best["of_peak_min"])
    s["rate_best_hi"] = float(best["of_peak_max"])
    s["rate_best_of_share"] = float(best["of_peak"] / best["fp32_fraction"])
    s["rate_best_name"] = str(best["variant"])
    s["rate_best_tips"] = float(best["fp32_per_s"]) / 1e12
    s["ffma_tips"] = float(rt["ffma_per_s"].iloc[0]) / 1e12
    s["rate_at_limit"] = 100 * float(rt["at_limit"].min())
    return s


def versus_facts(vs: pd.DataFrame) -> dict:
    """The GPU against the best CPU path of its host (mandelbrot.versus), same rounds."""
    gv = vs[vs["side"] == "gpu"]
    chunked = f"chunked U={gpu.DEFAULT_CHUNK}"
    s = {f"vs_{v}": lookup.value(gv, "vs_best_cpu", variant=chunked, view=v)
         for v in ("full", "cardioid")}
    s["vs_full_lo"] = lookup.value(gv, "vs_best_cpu_min", variant=chunked, view="full")
    s["vs_full_hi"] = lookup.value(gv, "vs_best_cpu_max", variant=chunked, view="full")
    s["vs_full_cpu"] = str(gv[gv["view"] == "full"]["best_cpu"].iloc[0])
    s["vs_host"] = str(vs["cpu_model"].iloc[0])
    return s


def sweep_facts(sw: pd.DataFrame, kernel: str = "pixel", max_iter: int = 1024) -> dict:
    """The block shapes' spread in the explorer's sweep: the fastest and the slowest shape
    of `kernel` at `max_iter` in the seahorse valley (their times and useful lane-step
    shares), and the spread between them there and in the cardioid."""
    out = {"sw_iter": max_iter}
    d = sw[(sw["variant"] == kernel) & (sw["max_iter"] == max_iter) & sw["median_ms"].notna()]
    for v in ("cardioid", "seahorse"):
        x = d[d["view"] == v].sort_values("median_ms")
        lo, hi = x.iloc[0], x.iloc[-1]
        out[f"sw_{v}_spread_pct"] = 100 * (float(hi["median_ms"]) / float(lo["median_ms"]) - 1)
        if v == "seahorse":
            out["sw_seahorse_best"] = f"{int(lo['bx'])}×{int(lo['by'])}"
            out["sw_seahorse_worst"] = f"{int(hi['bx'])}×{int(hi['by'])}"
            out["sw_seahorse_best_ms"] = float(lo["median_ms"])
            out["sw_seahorse_best_useful"] = 100 * float(lo["useful_frac"])
            out["sw_seahorse_worst_useful"] = 100 * float(hi["useful_frac"])
    return out


def run_name(df: pd.DataFrame | None) -> str:
    """How a finding names its run: "recorded run <id>" or "measured live, run <id>" (the
    finding names the device)."""
    if df is None:
        return "no run"
    src = df.attrs.get("source", {})
    runs = ", ".join(src.get("run_ids", []))
    if src.get("kind") == "live":
        return f"measured live, run {runs}"
    return f"recorded run {runs}"


def run_facts(g, rate, vs, prof, sweep, src: CpuSources) -> dict:
    """The run each finding names (run_name) and the GPU's; the rows of every run checked
    before timing, and how many failed."""
    out = {f"run_{k}": run_name(v) for k, v in (("gpu", g), ("rate", rate), ("vs", vs),
                                                ("prof", prof), ("host", src.host))}
    out["dev_gpu"] = g.attrs.get("source", {}).get("device", "?")
    frames = [g, rate, vs, sweep] + src.frames()
    out["n_checked"] = sum(int(f["correct"].notna().sum()) for f in frames if "correct" in f)
    out["n_failed"] = sum(int((f["correct"] == False).sum()) for f in frames if "correct" in f)  # noqa: E712
    return out


def cpus_in(run) -> CpuSources:
    """The CPU rows of every source (cpu_frames: the recorded host's, this machine's live
    ones where C builds here): an input of the page's facts."""
    return cpu_frames()


#: the page's facts: (function, its inputs: experiments' names, or the CPU sources), in order
PAGE_FACTS = {"07-mandelbrot": (
    (lanes_facts, ()), (image_facts, ("mandelbrot.gpu",)),
    (exact_facts, ("mandelbrot.gpu", cpus_in)), (cpu_facts, (cpus_in,)),
    (gpu_facts, ("mandelbrot.gpu", "mandelbrot.profile")), (rate_facts, ("mandelbrot.rate",)),
    (versus_facts, ("mandelbrot.versus",)), (sweep_facts, ("mandelbrot.sweep",)),
    (run_facts, ("mandelbrot.gpu", "mandelbrot.rate", "mandelbrot.versus", "mandelbrot.profile",
                 "mandelbrot.sweep", cpus_in)))}

#: the chapter's done-when list
TARGETS = {"07-mandelbrot": (
    Target("exact implementations: pixels whose count differs from scalar C, every view",
           "exact_mismatches", at_most=0, digits=0),
    Target("FP32 instruction rate / FFMA peak, same rounds, cardioid ({rate_best_name})",
           "rate_best", at_least=0.7, digits=3, low="rate_best_lo", high="rate_best_hi"),
    Target("FP32 instruction rate / FFMA peak, one pixel per thread", "rate_pixel",
           at_least=0.7, digits=3, low="rate_pixel_lo", high="rate_pixel_hi"),
    Target("AVX-512 / scalar, one core, full view ({host_cpu})", "host_avx512_full", at_least=8),
    Target("AVX-512 / scalar, one core, cardioid", "host_avx512_cardioid", at_least=8),
    Target("GPU / best CPU path of its host, full view ({vs_full_cpu})", "vs_full", digits=1,
           low="vs_full_lo", high="vs_full_hi"),
    Target("rows checked before timing ({n_checked}); failed", "n_failed", at_most=0, digits=0),
)}


# --------------------------------------------------------------------------- page blocks

def image_panel(g: pd.DataFrame) -> dict:
    """The figure of the three views rendered here (the full view large, the FMA build's
    mismatching pixels on it) and the sources its stamp names; what the text says about it
    is image_facts'."""
    import matplotlib.pyplot as plt

    w, h, mi = int(g["w"].iloc[0]), int(g["h"].iloc[0]), int(g["max_iter"].iloc[0])
    full, how, same_grid = render_here("full", (w, h), mi)
    fig = plt.figure(figsize=(7.5, 3.85))
    ax = fig.add_axes([0.0, 0.0, 0.64, 0.94])
    where = _mismatch_where(g) if same_grid else None
    plot_counts(ax, full, mi, where, "the whole set")
    if where:
        ax.legend(loc="lower left", fontsize=9, markerscale=4, framealpha=0.85,
                  title=f"the first {len(where)} recorded, row by row", title_fontsize=9)
    for k, v in enumerate(("cardioid", "seahorse")):
        sub = fig.add_axes([0.66, 0.5 - 0.5 * k, 0.34, 0.41])
        counts, _, _ = render_here(v, (w // 4, h // 4), mi)
        plot_counts(sub, counts, mi, None, SHORT[v])
    sources = [f"the image: rendered live on this machine ({host.cpu_info()['model']}) by {how}"]
    if where:
        sources.append(f"the red pixels: {lab.caption(g)}")
    return {"fig": fig, "sources": sources}


def raw_rows(df: pd.DataFrame, experiment: str) -> list[dict]:
    """The results-file rows behind a recorded frame (a frame keeps no lists or dicts:
    the FMA build's mismatch positions, the FFMA peak's round times); [] for a live one."""
    src = df.attrs.get("source", {})
    path = store.find(experiment, src.get("slug")) if src.get("kind") == "recorded" else None
    return store.load(path)["rows"] if path is not None else []


def _dilate(mask: np.ndarray, r: int) -> np.ndarray:
    """`mask` grown by `r` pixels in every direction (a square neighbourhood)."""
    out = mask.copy()
    h, w = mask.shape
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            src = mask[max(0, -dy):h - max(0, dy), max(0, -dx):w - max(0, dx)]
            out[max(0, dy):h - max(0, -dy), max(0, dx):w - max(0, -dx)] |= src
    return out


def _mismatch_where(g: pd.DataFrame):
    """The FMA build's mismatching pixels on the full view (as [i, j, reference, got])."""
    for r in raw_rows(g, "mandelbrot.gpu"):
        if r["variant"] == "pixel FMA" and r["params"]["view"] == "full":
            return r.get("mismatch_where") or None
    return None


def cpu_notes(src: CpuSources) -> dict:
    """The sentences that say where the CPU rows come from beside the recorded host's: this
    machine (a sentence that is the same in meaning on every build: it says what this
    machine is, or that it measured nothing) and the other recorded CPUs."""
    if src.live is not None:
        lv = src.live
        sc = lv[(lv["variant"] == "scalar") & (lv["threads"] == "all")]
        cores = int(sc["cores"].max()) if len(sc) else 1
        here = (f"The grey bars are this machine ({lv.attrs['source']['device']}), measured "
                f"live while the page was built, the all-core rows on the {cores} cores this "
                f"process may use, shared with whatever else runs there.")
    else:
        here = (f"This machine measured nothing live ({src.why_not_live}): the host is "
                f"shown alone.")
    others = ", ".join(f"{d.attrs['source']['device']} (run "
                       f"{', '.join(d.attrs['source']['run_ids'])})" for d in src.others.values())
    return {"cpu_live_note": here,
            "cpu_others_note": (f"The tables also hold the rows recorded on the {others}."
                                if others else "")}


def cpu_tables(d: pd.DataFrame):
    """Every CPU's rows, both views, in one dropdown."""
    from IPython.display import display

    from ...tables import Col, table
    sub = d.copy()
    if sub.empty:
        return
    sub["where"] = [f"{c} ({ROLES[r]})" for c, r in zip(sub["cpu"], sub["role"])]
    sub["threads_used"] = [int(c) if r else None for c, r in zip(sub["cores"], sub["runs_here"])]
    sub["spread"] = [_spread(a, b) for a, b in zip(sub["vs_scalar_min"], sub["vs_scalar_max"])]
    sub["note"] = [r if r else "" for r in sub["reason"]]
    sub["case"] = [f"{v} ({w}×{h}, limit {mi})" for v, w, h, mi in
                   zip(sub["view"], sub["w"], sub["h"], sub["max_iter"])]
    display(table(sub, {"where": "CPU", "case": "view", "variant": "path",
                        "threads_used": Col("cores", "num", 0),
                        "median_ms": Col("median", "time", 3), "Giter/s": Col("Giter/s", "num", 2),
                        "vs_scalar": Col("× scalar, 1 core", "ratio", 2),
                        "spread": "rounds (lowest–highest)", "correct": Col("checked", "bool"),
                        "note": "not run because"},
                  fold="Every CPU path on every CPU, both views: times, speed-ups, checks"))


def plot_model(ax, gt: pd.DataFrame) -> None:
    """Measured time against the issue model's, every kernel on every view (log-log)."""
    from ... import plots

    d = gt[gt["median_ms"].notna() & gt["model_ms"].notna()]
    colors = {"pixel": "C0", "pixel FMA": "C9", "one lane": "0.4", "two pixels": "C3",
              f"chunked U={gpu.DEFAULT_CHUNK}": "C2"}
    marks = {"full": "o", "cardioid": "s", "seahorse": "^"}
    for (k, v), r in d.groupby(["variant", "view"], sort=False):
        c = colors.get(k, "C7")
        hollow = k == "pixel FMA"          # drawn over the exact build's marker: let it show
        ax.scatter(r["model_ms"], r["median_ms"], marker=marks[v], s=40 if hollow else 26,
                   facecolors="none" if hollow else c, edgecolors=c, linewidths=1.2,
                   label=f"{k}" if v == "full" else None, zorder=4 if hollow else 3)
    lo, hi = d[["model_ms", "median_ms"]].min().min() / 1.5, d[["model_ms", "median_ms"]].max().max() * 1.5
    ax.plot([lo, hi], [lo, hi], color="0.5", lw=0.8, ls="--", label="measured = model")
    ax.set_xlim(lo, hi * 2.5)           # room for the labels right of the top points
    ax.set_ylim(lo, hi * 2.5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("issue model (ms): Σ warp trips × instructions per trip / issue rate")
    ax.set_ylabel("measured median (ms)")
    pts = [(float(r["model_ms"]), float(r["median_ms"]), r["view"]) for _, r in d.iterrows()
           if r["variant"] == "one lane"]
    plots.label_points(ax, pts, fontsize=9)
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
              title="○ full  □ cardioid  △ seahorse", title_fontsize=9)


def gpu_tables(gt: pd.DataFrame):
    """Every kernel on every view: measured, modelled, the profiler's counters."""
    from IPython.display import display

    from ...tables import Col, table
    d = gt.copy()
    d["spread"] = [_spread(a, b) for a, b in zip(d["slower_than_base_min"],
                                                 d["slower_than_base_max"])]
    cols = {"view": "view", "variant": "kernel", "median_ms": Col("median", "time", 3),
            "model_ms": Col("model", "time", 3),
            "measured_over_model": Col("measured / model", "ratio", 3),
            "slower_than_base": Col("× one-pixel time", "ratio", 2), "spread": "rounds",
            "model_vs_pixel": Col("model ×", "ratio", 2),
            "useful_frac": Col("useful lane-steps", "pct", 1),
            "registers": Col("registers", "num", 0), "occupancy_pct": Col("occupancy", "pct", 0),
            "mismatches": Col("pixels ≠ scalar", "num", 0), "correct": Col("checked", "bool")}
    d["useful_frac"] = 100 * d["useful_frac"]
    display(table(d, cols, fold="Every kernel on every view: measured, modelled, checked"))
    if "ncu_threads_per_inst" in d:
        p = d[d["ncu_threads_per_inst"].notna()].copy()
        display(table(p, {"view": "view", "variant": "kernel",
                          "ncu_threads_per_inst": Col("threads per instruction (profiler)", "num", 1),
                          "active_lanes_model": Col("lanes in the loop (model)", "num", 1),
                          "ncu_branch_uniform_pct": Col("uniform branches", "pct", 1),
                          "ncu_issue_active_pct": Col("issue slots used", "pct", 1),
                          "ncu_achieved_occupancy_pct": Col("achieved occupancy", "pct", 0)},
                      fold="The profiler's counters (1000×750, limit 1024), next to the model"))


def plot_rate(ax, rt: pd.DataFrame) -> None:
    """FP32 instruction rate / FFMA peak per kernel (same rounds), with the SASS's FP32
    share (the issue-bound ceiling) and the 0.7 target."""
    d = rt.reset_index(drop=True)
    y = np.arange(len(d))
    ax.barh(y, d["of_peak"], color=["C3" if v == "two pixels" else "C0" for v in d["variant"]],
            height=0.6, label="measured, same rounds as the FFMA peak")
    lo = (d["of_peak"] - d["of_peak_min"]).clip(lower=0).fillna(0)
    hi = (d["of_peak_max"] - d["of_peak"]).clip(lower=0).fillna(0)
    ax.errorbar(d["of_peak"], y, xerr=[lo, hi], fmt="none", ecolor="0.2", elinewidth=0.7,
                capsize=1.5)
    ax.scatter(d["fp32_fraction"], y, marker="|", s=200, color="k", zorder=3,
               label="FP32 share of the loop (SASS): the issue-bound ceiling")
    ax.axvline(0.7, color="C1", ls="--", lw=0.9, label="target 0.7")
    ax.set_yticks(y)
    ax.set_yticklabels(d["variant"], fontsize=9)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("FP32 instructions/s ÷ FFMA instructions/s (the FFMA peak kernel, same rounds)")
    ax.legend(fontsize=9, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=1, frameon=False)
