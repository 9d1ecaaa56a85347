"""The two scan pages' numbers, tables and figures from the rows, live or replayed: facts
(PAGE_FACTS), tries (`tries_table`) and TARGETS. A number a page quotes that its rows lack
is an error here, never a "nan" in the book."""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ... import lookup
from ...lookup import need, quote
from ...targets import Target, table as targets_table
from . import ops, rle as rle_mod
from .bulk import shape_name

#: One colour per series of the scan pages (CUB in the vendor greys, the copy dashed).
COLORS = {"single-pass": "C0", "three-kernel": "C2", "serial": "C1",
          "cupy.cumsum (CUB)": "0.55", "torch.cumsum": "0.25", "copy": "0.4",
          "fused": "C0", "unfused": "C2", "torch.unique_consecutive": "0.25",
          "NumPy (CPU)": "C4"}
LABELS = {"single-pass": "single pass (03)", "three-kernel": "three kernels, fixed (02)",
          "serial": "serial in block (01)", "cupy.cumsum (CUB)": "cupy.cumsum (CUB)",
          "torch.cumsum": "torch.cumsum (CUB)", "copy": "copy (cudaMemcpy)"}
BIG, RLE_N = 1 << 28, 1 << 25
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def pow2(n) -> str:
    """2^k as the pages print it in prose ("2²⁴"), never inside $…$ math."""
    return "2" + str(int(round(math.log2(n)))).translate(_SUPERSCRIPT)


# -- the scan page ------------------------------------------------------------------------
def sizes_facts(sizes) -> dict:
    """scan.sizes: the copy, 01 at its largest size, 02 and 03 at 2^28, the smallest size."""
    sp = "single-pass"
    f = quote(sizes, {"sp_of_copy": ("of_copy", sp), "tk_of_copy": ("of_copy", "three-kernel"),
                      "cub_of_copy": ("of_copy", "cupy.cumsum (CUB)"),
                      "torch_of_copy": ("of_copy", "torch.cumsum"),
                      "sp_of_copy_min": ("of_copy_min", sp),
                      "sp_of_copy_max": ("of_copy_max", sp)}, 100, n=BIG)
    f |= quote(sizes, {"sp_x_torch": ("x_torch", sp), "sp_x_cub": ("x_cub", sp)}, n=BIG)
    f["copy_tbs"] = need(sizes, "GB/s", variant="copy", n=BIG) / 1e3
    f["sp_tbs"] = need(sizes, "GB/s", variant=sp, n=BIG) / 1e3
    f["small_n_pow"] = pow2(small := int(sizes["n"].min()))
    f |= quote(sizes, {"sp_small_us": ("median_ms", sp), "copy_small_us": ("median_ms", "copy"),
                       "torch_small_us": ("median_ms", "torch.cumsum")}, 1e3, n=small)
    n_ser = int(sizes[(sizes["variant"] == "serial") & sizes["GB/s"].notna()]["n"].max())
    f["serial_n_pow"] = pow2(n_ser)
    f |= quote(sizes, {"serial_gbs": ("GB/s", "serial"),
                       "tk_at_serial_gbs": ("GB/s", "three-kernel")}, n=n_ser)
    f["serial_of_copy"] = need(sizes, "of_copy", variant="serial", n=n_ser) * 100
    f["tk_over_serial"] = f["tk_at_serial_gbs"] / f["serial_gbs"]
    return f


def profile_facts(prof) -> dict:
    return quote(prof, {"prof_serial_threads_per_inst": ("threads_per_inst", "serial"),
                        "prof_tk_threads_per_inst": ("threads_per_inst", "three-kernel")}
                 | {f"prof_{k}_dram_throughput_pct": ("dram_throughput_pct", v) for k, v in
                    (("serial", "serial"), ("tk", "three-kernel"), ("sp", "single-pass"))})


def lookback_facts(lookback, staged, chunked) -> dict:
    """03's two look-back widths, 10 and 14 with and without their chain of prefixes."""
    f = {f"lb_{lb}_tile": need(lookback, "of_copy", lookback=lb, grid="per-tile") * 100
         for lb in ("warp", "block")}
    st = staged[staged["of_copy"].notna() & staged["variant"].str.startswith("staged")]
    f["st_of_copy"] = float(st[st["lookback"] == True]["of_copy"].max()) * 100  # noqa: E712
    f["st_diag_of_copy"] = float(st[st["lookback"] == False]["of_copy"].max()) * 100  # noqa: E712
    return f | quote(chunked, {"ch5_of_copy": ("of_copy", CHUNKED_DEFAULT),
                               "ch5_diag_of_copy": ("of_copy", CHUNKED_ALONE),
                               "ch5_first": ("of_copy", "chunked 8x4x1x4 256 ns x8"),
                               "ch5_first_t32": ("of_copy", "chunked 8x4x1x4 256 ns tier 32")},
                     100)


def bulk_facts(bulk, bulk_prof) -> dict:
    """16 at its default in scan.bulk's rounds, and its DRAM bytes (scan.bulk_profile)."""
    default = f"bulk {shape_name(ops.BULK)}"
    f = {"bk6_shape": shape_name(ops.BULK)}
    f |= quote(bulk, {"bk6_of_copy": ("of_copy", default), "bk6_of_copy_min": ("of_copy_min", default),
                      "bk6_of_copy_max": ("of_copy_max", default),
                      "bk6_diag_of_copy": ("of_copy", f"{default} without sequencer")}, 100, n=BIG)
    f["bk6_x_torch"] = need(bulk, "x_torch", variant=default, n=BIG)
    f["bk6_over_sp"] = (need(bulk, "median_ms", variant="single-pass", n=BIG)
                        / need(bulk, "median_ms", variant=default, n=BIG))
    f["bk6_seq_pts"] = f["bk6_diag_of_copy"] - f["bk6_of_copy"]
    f |= quote(bulk, {"bk6_25_us": ("median_ms", default), "bk6_25_copy_us": ("median_ms", "copy")},
               1e3, n=RLE_N)
    f |= quote(bulk, {f"bk6_{dt}_of_copy": ("of_copy", {"dtype": dt}) for dt in ("int64", "float32")},
               100, variant="bulk")
    return f | quote(bulk_prof, {f"bk6_dram_{k}_x": (f"dram_{k}_over_input", "bulk")
                                 for k in ("read", "write")})


def order_facts(order) -> dict:
    nmax = int(order["n"].max())
    return {"order_n_pow": pow2(nmax)} | quote(order, {
        "order_tol": ("tolerance", "single-pass"), "order_sp_err": ("rel_err", "single-pass"),
        "order_serial_err": ("rel_err", "serial"), "order_cub_err": ("rel_err", "cupy.cumsum (CUB)"),
        "order_np_err": ("rel_err", "NumPy float32 (CPU, left to right)")}, n=nmax)


def check_facts(check, stress, targets) -> dict:
    """scan.check, scan.stress, and 16's and 17's checks in scan.targets."""
    t16 = targets[targets["variant"].isin(["bulk", "rle bulk"])
                  & targets["part"].isin(["check", "large"]) & targets["correct"].notna()]
    return {"n_checked": int(check["correct"].notna().sum()),
            "n_failed": int((check["correct"] == False).sum()),  # noqa: E712
            "stress_calls": int(stress["calls"].max()),
            "stress_wrong": int(stress["wrong_calls"].sum()),
            "bk6_stress_wrong": int(need(stress, "wrong_calls", variant="bulk")),
            "bk6_n_checked": int(len(t16)),
            "bk6_n_failed": int((t16["correct"] == False).sum())}  # noqa: E712


def tune_facts(tune) -> dict:
    t = tune[tune["of_copy"].notna()].sort_values("of_copy")
    return {k: v for key, r in (("best", t.iloc[-1]), ("worst", t.iloc[0])) for k, v in (
        (f"tune_{key}", f"block {int(r['block'])} × {int(r['items'])} items"),
        (f"tune_{key}_of_copy", float(r["of_copy"]) * 100))}


#: 14's default shape in the archived sweep (24 data warps, 8 vectors a lane, one batch,
#: one block an SM, 256 ns between polls, 4 words a lane), and the same without look-back
CHUNKED_DEFAULT = "chunked 24x8x1x1 256 ns x4"
CHUNKED_ALONE = "chunked 24x8x1x1 without look-back"


def lookback_cost_table(f: dict) -> pd.DataFrame:
    """10, 14 and 16 with and without their chain of prefixes, each pair in one race."""
    rows = [("10: tile waits in shared memory, warp looks back", "st_of_copy", "st_diag_of_copy"),
            ("14: reduce from memory, scan from L2, warp looks back", "ch5_of_copy",
             "ch5_diag_of_copy"),
            ("16: bulk-copy ring, one sequencer", "bk6_of_copy", "bk6_diag_of_copy")]
    return pd.DataFrame([{"kernel": k, "with": f[a] / 100, "without": f[b] / 100,
                          "cost": f[b] - f[a]} for k, a, b in rows])


def sizes_figure(fig, sizes, bulk=None) -> list:
    """Time a call and fraction of the copy against n (with `bulk`, 16), the reference
    GPU's recorded fractions dotted; returns the frames to stamp."""
    from ... import sidebyside
    ax1, ax2 = fig.subplots(1, 2)
    frames = sidebyside.beside(sizes)
    for v in ("serial", "three-kernel", "single-pass", "cupy.cumsum (CUB)", "torch.cumsum", "copy"):
        d = sizes[(sizes["variant"] == v) & sizes["median_ms"].notna()].sort_values("n")
        panels = ((ax1, d["median_ms"] * 1e3, d["p20_ms"] * 1e3, d["p80_ms"] * 1e3),) + (
            () if v == "copy" else ((ax2, d["of_copy"], d["of_copy_min"], d["of_copy_max"]),))
        for ax, y, lo, hi in panels if len(d) else ():
            ax.plot(d["n"], y, "--" if v == "copy" else "-", marker="o", ms=3, color=COLORS[v],
                    label=LABELS[v])
            ax.fill_between(d["n"], lo, hi, color=COLORS[v], alpha=0.2)
    for ref in frames[1:]:
        for v in ("three-kernel", "single-pass", "torch.cumsum"):
            d = ref[(ref["variant"] == v) & ref["of_copy"].notna()].sort_values("n")
            ax2.plot(d["n"], d["of_copy"], ":", lw=1.2, color=COLORS[v])
        ax2.plot([], [], ":", color="0.3", label=f"{sidebyside.short_name(ref)}, recorded")
    bulk = bulk if bulk is not None and len(bulk) else None
    d = bulk[(bulk["variant"] == "bulk") & bulk["median_ms"].notna()].sort_values("n") \
        if bulk is not None else ()
    if len(d):
        kw = dict(color="C3", marker="D", ms=5, ls="none", label="bulk copy + sequencer (16)")
        ax1.plot(d["n"], d["median_ms"] * 1e3, **kw)
        ax2.plot(d["n"], d["of_copy"], **kw)
        ax2.errorbar(d["n"], d["of_copy"], yerr=[d["of_copy"] - d["of_copy_min"],
                     d["of_copy_max"] - d["of_copy"]], color="C3", ls="none")
    for ax, ylabel in ((ax1, "time per call (µs)"), (ax2, "speed as a fraction of the copy")):
        ax.set_xscale("log", base=2)
        ax.set(xlabel="elements (int32)", ylabel=ylabel)
    ax1.set_yscale("log")
    ax2.axhline(2 / 3, color="C2", lw=0.8, ls=":")
    ax2.text(2 ** 10, 2 / 3 + 0.02, "2/3: the three kernels' bound", color="C2", fontsize=9)
    legend = [*zip(*ax1.get_legend_handles_labels())] + [
        (h, lab_) for h, lab_ in zip(*ax2.get_legend_handles_labels()) if lab_.endswith(", recorded")]
    fig.legend(*zip(*legend), loc="lower center", bbox_to_anchor=(0.5, 0.01), ncol=3, fontsize=9,
               frameon=False)
    fig.tight_layout(rect=(0, 0.22, 1, 1))
    return frames + ([bulk] if bulk is not None else [])


def sizes_table(sizes):
    return sizes[sizes["median_ms"].notna()].sort_values(["n", "variant"])


def order_table(order):
    return order.sort_values(["n", "variant"])


def serial_source() -> str:
    """01_serial_block.cu for the page, its old "seed" names renamed (the file stays)."""
    from ... import paths
    text = (paths.ROOT / "kernels" / "03-scan" / "01_serial_block.cu").read_text()
    for old, new in (("The seed's scan", "The portfolio's scan"), ("SEED_BLOCK", "SERIAL_BLOCK"),
                     ("seed_", "serial_")):
        text = text.replace(old, new)
    return text


# -- the run-length page -------------------------------------------------------------------
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
#: the archived encoders' default rows (their own runs' names)
BALLOT_DEFAULT = "rle ballot 8 warps x 2048, 16 in flight, 384 staged, 3 a SM, sequencer 2"
ROUNDS_DEFAULT = "rle rounds 16+8 warps, 32 KiB x 2, 10 slots, 1 a SM"


def _parts(rows) -> pd.Series:
    return rows["part"] if "part" in rows else pd.Series("", index=rows.index)


def _race(rows, kind: str | None = "short"):
    r = rows[~_parts(rows).isin(["check", "large", "stress", "replay", "call time"])]
    return r if kind is None else r[r["kind"] == kind]


def encode_facts(rle) -> dict:
    """04 and 05 at 2^25 on runs of 1-15 (scan.rle)."""
    sel = dict(n=RLE_N, kind="short")
    fused, unfused = (lookup.first(rle, variant=v, **sel) for v in ("fused", "unfused"))
    return quote(rle, {"rle_short_us": ("median_ms", "fused"),
                       "rle_short_torch_us": ("median_ms", "torch.unique_consecutive")}, 1e3, **sel) | quote(
        rle, {"rle_short_x_torch": ("x_torch", "fused"),
              "rle_short_numpy_ms": ("median_ms", "NumPy (CPU)")}, **sel) | {
        "rle_short_runs": int(lookup.cell(fused, "runs")),
        "rle_short_fused_mb": lookup.cell(fused, "bytes_moved") / 1e6,
        "rle_short_unfused_mb": lookup.cell(unfused, "bytes_moved") / 1e6,
        "rle_short_fused_over_unfused": (lookup.cell(unfused, "median_ms")
                                         / lookup.cell(fused, "median_ms")),
        "rle_n_checked": int(rle[rle["variant"].isin(["fused", "unfused"])]["correct"]
                             .notna().sum())}


def sequencer_facts(targets, bulk_prof, rle_bulk, parts) -> dict:
    """17 against 15, its DRAM bytes, its ring alone and the read ceiling."""
    t = targets[(targets["part"] == "rle") & (targets["kind"] == "short")]
    default = f"rle bulk {shape_name(rle_mod.BULK)}"
    return quote(t, {"bk6_rle_short_us": ("median_ms", "bulk")}, 1e3) | quote(t, {
        "bk6_rle_short_x_torch": ("x_torch", "bulk"), "bk6_rle_ch_short_x_torch": ("x_torch", "chunked")}) | {
        "bk6_rle_dram_read_x": need(bulk_prof, "dram_read_over_input", variant="rle bulk"),
        "bk6_rsw_short_diag4_us": need(parts, "median_ms", variant=f"{default} diagnostic 4",
                                      kind="short") * 1e3,
        "bk6_rsw_short_read_us": need(rle_bulk, "median_ms", variant="read ceiling",
                                      kind="short") * 1e3}


def ballot_facts(rle_ballot, ballot_prof, walk_prof) -> dict:
    """23 against 20 in its rounds, its profile and 22's instructions."""
    b = _race(rle_ballot)
    us = need(b, "median_ms", variant=BALLOT_DEFAULT)
    p0 = dict(variant="rle ballot", diagnostic=0)
    prof = {d: lookup.first(ballot_prof, variant="rle ballot", diagnostic=d) for d in (0, 1, 2)}
    dur = {d: lookup.cell(r, "duration_us") for d, r in prof.items()}
    return {
        "bl12_tile_kib": rle_mod.BALLOT[0] * rle_mod.BALLOT[1] * 4 // 1024,
        "bl12_stages": rle_mod.BALLOT_STAGES,
        "bl12_over_rounds": need(b, "median_ms", variant=ROUNDS_DEFAULT) / us,
        "bl12_short_x_torch": need(b, "x_torch", variant=BALLOT_DEFAULT),
        "bl12_walk_over_read_us": (need(b, "median_ms", variant=f"{BALLOT_DEFAULT} diagnostic 3")
                                   - need(b, "median_ms", variant="read ceiling")) * 1e3,
        "bl12_enc_inst_M": need(ballot_prof, "inst_executed", **p0) / 1e6,
        "bl12_dram_read_x": need(ballot_prof, "dram_read_over_input", **p0),
        "bl12_prof_chain_us": dur[0] - dur[1], "bl12_prof_writes_us": dur[0] - dur[2],
        "wk11_enc_inst_M": need(walk_prof, "inst_executed", variant="rle walk",
                                diagnostic=0) / 1e6}


def graph_facts(rle_graph) -> dict:
    """24 (scan.rle_graph): its race with 23 and the host's part of a call."""
    g = _race(rle_graph)
    ct = rle_graph[_parts(rle_graph) == "call time"]
    return quote(ct, {"gr15_ct_bl_host_us": ("host_ms", "rle ballot"),
                      "gr15_ct_gr_host_us": ("host_ms", "rle graph")}, 1e3) | {
        "gr15_over_ballot": (need(g, "median_ms", variant="rle ballot")
                             / need(g, "median_ms", variant="rle graph")),
        "gr15_ct_work_diff_us": (need(ct, "queued_ms", variant="rle graph")
                                 - need(ct, "queued_ms", variant="rle ballot")) * 1e3}


def room_facts(rows) -> dict:
    """25 (scan.rle_room): its checks, the L1 race on runs of 1-15 and its call time."""
    part = _parts(rows)
    chk = rows[part.isin(["check", "large", "replay"]) & rows["correct"].notna()]
    refused = rows[(part == "large") & rows["invalid"].notna()] if "invalid" in rows else rows.iloc[:0]
    st, race, ct = rows[part == "stress"], _race(rows), rows[part == "call time"]
    us = {sfx: need(race, "median_ms", variant=nm) * 1e3 for sfx, nm, _ in ROOM_RACE}
    # the floor reads the input once and writes the runs; 25's "of_floor": the floor's time
    # over 25's, round by round, so 25 takes 1 / of_floor times the floor's
    f = {"rm17_n_checked": int(len(chk)), "rm17_n_failed": int((chk["correct"] == False).sum()),  # noqa: E712
         "rm17_replay_n": int((part == "replay").sum()), "rm17_refusal": str(refused["invalid"].iloc[0]),
         "rm17_stress_calls": int(st["calls"].max()), "rm17_stress_runs": int(len(st)),
         "rm17_stress_wrong": int(st["wrong_calls"].sum()), "rm17_short_us": us[""]}
    f |= quote(race, {"rm17_short_read_us": ("median_ms", "read ceiling"),
                      "rm17_short_floor_us": ("median_ms", "floor")}, 1e3)
    f["rle_room_over_read"] = f["rm17_short_us"] / f["rm17_short_read_us"]
    f |= {k: 1 / need(race, c, variant="rle room") for k, c in (
        ("rle_room_x_floor", "of_floor"), ("rle_room_x_floor_lo", "of_floor_max"),
        ("rle_room_x_floor_hi", "of_floor_min"))}
    f |= quote(race, {f"rm17{sfx}_{c}": (c, nm) for sfx, nm, _ in ROOM_RACE
                      if sfx in ("", "_g384") for c in ("shared_kib_sm", "l1_kib")}
               | {"rm17_g384_in_flight_kib": ("in_flight_kib", "rle graph")})
    measured = {"l1_gain_us": us["_g384"] - us["_g288"], "least_cost_us": us["_g288_least"] - us["_g288"],
                "g288_b32_cost_us": us["_g288_b32"] - us["_g288"],
                "room_b32_change_us": abs(us["_b32"] - us[""]),
                "room_least_cost_us": us["_least"] - us[""], "g288_off_room": abs(us["_g288"] / us[""] - 1)}
    f |= {f"rm17_{k}": v for k, v in measured.items()}
    held = targets_table(ROOM_PREDICTIONS, f)["met"].all()
    f["rm17_predictions"] = ("Every prediction held." if held else
                             "Not every prediction held; the table shows which.")
    f |= quote(ct, {f"rm17_ct_{short}_{m}_us": (f"{m}_ms", v) for v, (short, _) in ROOM_CALLS.items()
                    if short != "gr" for m in ("call", "queued")}, 1e3)
    f |= quote(ct, {f"rm17_ct_rm_{c}": (c, "rle room") for c in ("x_torch", "x_torch_queued")})
    t = quote(ct, {c: (c, "torch.unique_consecutive") for c in ("host_ms", "call_ms")})
    return f | {"rm17_ct_torch_host_pct": 100 * t["host_ms"] / t["call_ms"]}


#: what the run-length page predicted of scan.rle_room's L1 race on runs of 1-15, as data
#: (the page shows it as a table): each a difference of the race's times a call (µs) or a
#: ratio, a fact of room_facts, and what was wanted of it
ROOM_PREDICTIONS = (
    Target("24 at 288 staged heads, faster than at 384", "rm17_l1_gain_us", at_least=1,
           unit=" µs"),
    Target("24 at 288, forced to the largest shared-memory split, slower again",
           "rm17_least_cost_us", at_least=1, unit=" µs"),
    Target("24 at 288, twice the loads in its small L1, slower", "rm17_g288_b32_cost_us",
           at_least=5, unit=" µs"),
    Target("25, twice the loads, as fast", "rm17_room_b32_change_us", at_most=1, unit=" µs"),
    Target("25 without its L1, slower", "rm17_room_least_cost_us", at_least=1, unit=" µs"),
    Target("24 at 288 as fast as 25 (relative difference)", "rm17_g288_off_room",
           at_most=0.03, digits=3),
)


def rle_figure(ax, rle, n=RLE_N):
    d = rle[(rle["n"] == n) & rle["median_ms"].notna()]
    kinds = [k for k in ("short", "long", "mixed", "equal", "distinct") if k in set(d["kind"])]
    variants = [v for v in ("fused", "unfused", "torch.unique_consecutive") if v in set(d["variant"])]
    w = 0.8 / max(len(variants), 1)
    for j, v in enumerate(variants):
        ys = [lookup.value(d, "median_ms", variant=v, kind=k) * 1e3 for k in kinds]
        ax.bar([i + j * w for i in range(len(kinds))], ys, w, color=COLORS[v], label=v)
    ax.set_xticks([i + w * (len(variants) - 1) / 2 for i in range(len(kinds))],
                  [f"{k} runs" for k in kinds], fontsize=9)
    ax.set(yscale="log", ylabel=f"µs per encode of 2^{int(math.log2(n))} int32")
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)


def room_l1_table(rows) -> pd.DataFrame:
    """scan.rle_room's race on runs of 1-15, a line an encoder of ROOM_RACE."""
    race = _race(rows)
    return pd.DataFrame([{"encoder": label, **{c: lookup.cell(r, c) for c in (
        "bytes_a_head", "shared_kib_sm", "l1_kib", "in_flight_kib", "x_torch")},
        "us": lookup.cell(r, "median_ms") * 1e3}
        for _, nm, label in ROOM_RACE for r in (lookup.first(race, variant=nm),)])


def room_call_table(rows) -> pd.DataFrame:
    """scan.rle_room's call-time part, a line a call of ROOM_CALLS."""
    ct = rows[_parts(rows) == "call time"]
    return pd.DataFrame([{"call": label, **{f"{m}_us": lookup.cell(r, f"{m}_ms") * 1e3
                                            for m in ("call", "host", "queued")},
                          **{c: lookup.cell(r, c) for c in ("x_torch", "x_torch_queued")}}
                         for v, (_, label) in ROOM_CALLS.items()
                         for r in (lookup.first(ct, variant=v),)])


def room_kinds_table(rows) -> pd.DataFrame:
    race = _race(rows, None)
    race = race[race["median_ms"].notna() & (race["variant"] != "copy")]
    cols = [c for c in ("variant", "kind", "runs", "median_ms", "x_torch", "x_torch_min",
                        "x_torch_max", "correct") if c in race]
    return race[cols].sort_values(["kind", "median_ms"])


# -- the tries, as data ----------------------------------------------------------------------
@dataclass(frozen=True)
class Try:
    """A page's try: its row (`where`; `best`: the largest `metric`), what it raced, kept."""
    idea: str
    kernel: str
    experiment: str
    where: dict
    kept: str
    against: tuple[str, dict] | None = None
    best: bool = False
    metric: str = "of_copy"


def scan_try(idea, kernel, experiment, variant, kept, against=None, best=False,
             metric="of_copy", **where) -> Try:
    """A try of `variant` where `where`; `against`: (kernel, variant) raced in its rows."""
    where = {"variant": variant, **where}
    return Try(idea, kernel, experiment, where, kept, against and (
        against[0], {**where, "variant": against[1]}), best, metric)


def rle_try(*args, **where) -> Try:
    """A run-length try: × torch on runs of 1-15."""
    return scan_try(*args, metric="x_torch", **where, kind="short")


SP = ("03", "single-pass")
SCAN_TRIES = (
    scan_try("one thread of each block works", "01", "scan.sizes", "serial",
             "replaced by 02: too few loads in flight", n=1 << 24),
    scan_try("every thread works, three kernels", "02", "scan.sizes", "three-kernel",
             "kept as the step that shows the 2/3 bound", n=BIG),
    scan_try("one pass, one warp looks back, one block a tile", "03", "scan.sizes",
             "single-pass", "kept: the portable single pass", n=BIG),
    scan_try("the whole block looks back", "03", "scan.lookback", "block look-back, per-tile",
             "dropped: no faster"),
    scan_try("persistent blocks take the next ticket early", "03", "scan.lookback",
             "warp look-back, persistent", "dropped: fewer blocks fit, slower"),
    scan_try("persistent blocks, tiles loading ahead by cp.async", "08", "scan.targets",
             "pipelined", "dropped: tiles leave ticket order", SP, part="scan"),
    scan_try("the tile waits in shared memory", "10", "scan.staged", "staged",
             "dropped; it showed the look-back is the cost", best=True, lookback=True),
    scan_try("a warp looks back while the tile loads", "12", "scan.targets", "lookahead",
             "dropped for 16", SP, part="scan"),
    scan_try("reduce from memory, scan again from L2", "14", "scan.targets", "chunked",
             "dropped for 16", SP, part="scan"),
    scan_try("two-level look-back over super-chunks", "14", "scan.chunked",
             "chunked 8x4x1x4 256 ns tier 32", "dropped with 14",
             ("its one-level shape", "chunked 8x4x1x4 256 ns x8")),
    scan_try("one sequencer warp, tiles by bulk copy into a ring", "16", "scan.targets", "bulk",
             "kept: the fastest (variant \"bulk\")", ("14", "chunked"), part="scan"),
)


LEAN = "rle lean 8+4 warps, 32 KiB x 3, 8 a lane, 2 a SM"
MASKS = "rle masks 1 x 4+2 warps, 16 KiB x 4, sequencer 4 x4, 3 a SM"
RLE_TRIES = (
    rle_try("flags, scan and scatter as separate passes", "04", "scan.rle", "unfused",
            "kept to show the bytes", n=RLE_N),
    rle_try("flags, scan and scatter fused on 03's look-back", "05", "scan.rle", "fused",
            "kept: the portable encoder", ("04", "unfused"), n=RLE_N),
    rle_try("05 on the cp.async pipeline", "09", "scan.targets", "pipelined", "dropped: slower",
            ("05", "fused"), part="rle"),
    rle_try("on 12's look-ahead, runs written in the pass", "13", "scan.targets", "lookahead",
            "dropped for 17", ("05", "fused"), part="rle"),
    rle_try("on 14: count from memory, write from L2", "15", "scan.targets", "chunked",
            "dropped for 17", ("13", "lookahead"), part="rle"),
    rle_try("a sequencer instead of look-backs, bulk-copy ring", "17", "scan.targets", "bulk",
            "its idea kept in 23–25", ("15", "chunked"), part="rle"),
    rle_try("fewer instructions a step, two blocks an SM", "18", "scan.rle_lean", LEAN,
            "dropped: the sequencer is the floor", ("17", "rle bulk")),
    rle_try("each head found once, as masks; the chain shared", "19", "scan.rle_masks", MASKS,
            "dropped: the ring turns at the prefixes' pace", ("18", LEAN)),
    rle_try("no chain: lockstep rounds, every block reads every count", "20", "scan.rle_rounds",
            ROUNDS_DEFAULT, "dropped for 23", ("19", MASKS)),
    rle_try("count from registers, read each segment again from L2", "21", "scan.rle_reread",
            "rle reread 8+8 warps, 16 KiB, 4 slots, 2 a SM", "dropped: slower",
            ("20", ROUNDS_DEFAULT)),
    rle_try("21 with the heads left as masks for the writers", "22", "scan.rle_walk",
            "rle walk 8+4 warps, 16 KiB, 4 slots, 2 a SM", "dropped: no faster",
            ("20", ROUNDS_DEFAULT)),
    rle_try("hold only the runs: ballots, three stages, a sequencer", "23", "scan.rle_ballot",
            BALLOT_DEFAULT, "kept inside 24 and 25", ("20", ROUNDS_DEFAULT)),
    rle_try("23 launched as a CUDA graph", "24", "scan.rle_graph", "rle graph", "kept inside 25",
            ("23", "rle ballot"), part="race"),
    rle_try("6-byte staged heads: L1 room for the loads", "25", "scan.rle_room", "rle room",
            "kept: the fastest (encoder \"room\")", ("24", "rle graph"), part="race"),
)


def _result(t: Try, df) -> str:
    """A try's result in its rows `df`: its `metric`, and how much faster than `against`."""
    if t.best:
        w = dict(t.where)
        d = df[df["variant"].str.startswith(w.pop("variant")) & df[t.metric].notna()]
        for k, v in w.items():
            d = d[d[k] == v]
        r = d.loc[d[t.metric].idxmax()] if len(d) else None
    else:
        r = lookup.first(df, **t.where)
    v = lookup.cell(r, t.metric)
    if math.isnan(v):
        raise ValueError(f"try {t.kernel} ({t.idea}): no {t.metric} in {t.experiment} "
                         f"where {t.where}")
    text = f"{v * 100:.0f} % of the copy" if t.metric == "of_copy" else f"{v:.2f}×"
    if not t.against:
        return text
    x = lookup.value(df, "median_ms", **t.against[1]) / lookup.cell(r, "median_ms")
    return text + f"; {x:.2f}× as fast as {t.against[0]}"


def tries_table(tries, runs: dict) -> pd.DataFrame:
    """A line a try: idea, kernel, result, run, kept; `runs`: experiment name -> rows."""
    return pd.DataFrame([{"idea": t.idea, "kernel": t.kernel,
                          "result": _result(t, runs[t.experiment]), "run": t.experiment,
                          "kept?": t.kept} for t in tries])


# -- the targets, as data --------------------------------------------------------------------
TARGETS = {
    "03-scan": (
        Target("default scan (16), 2^28 int32, × the copy in the same rounds", "bk6_of_copy",
               at_least=0.90, scale=0.01, low="bk6_of_copy_min", high="bk6_of_copy_max",
               digits=3),
        Target("default scan (16), 2^28 int32, × torch.cumsum", "bk6_x_torch", at_least=1.4),
        Target("single pass (03), 2^28 int32, × the copy", "sp_of_copy", at_least=0.85,
               scale=0.01, low="sp_of_copy_min", high="sp_of_copy_max"),
        Target("every check of the correctness run fails none", "n_failed", at_most=0),
        Target("1000 back-to-back scans, wrong results", "stress_wrong", at_most=0),
    ),
    "03-rle": (
        Target("default encoder (25), 2^25 runs 1–15: its time over its floor's (the input "
               "read once and the runs written, nothing computed), same rounds",
               "rle_room_x_floor", at_most=1.25, low="rle_room_x_floor_lo",
               high="rle_room_x_floor_hi"),
        Target("25's checks (edge sizes, every kind of runs, replayed graphs)",
               "rm17_n_failed", at_most=0),
        Target("1000 back-to-back encodes, wrong results", "rm17_stress_wrong", at_most=0),
    ),
}


#: each page's facts: (function, the experiments whose rows it takes, in order)
PAGE_FACTS = {
    "03-scan": ((sizes_facts, ("scan.sizes",)), (profile_facts, ("scan.profile",)),
                (lookback_facts, ("scan.lookback", "scan.staged", "scan.chunked")),
                (bulk_facts, ("scan.bulk", "scan.bulk_profile")),
                (order_facts, ("scan.float_order",)),
                (check_facts, ("scan.check", "scan.stress", "scan.targets")),
                (tune_facts, ("scan.tune",))),
    "03-rle": ((encode_facts, ("scan.rle",)),
               (sequencer_facts, ("scan.targets", "scan.bulk_profile", "scan.rle_bulk",
                                    "scan.rle_bulk_parts")),
               (ballot_facts, ("scan.rle_ballot", "scan.ballot_profile", "scan.walk_profile")),
               (graph_facts, ("scan.rle_graph",)), (room_facts, ("scan.rle_room",))),
}
