"""Chapter 5 (perflab.chapters.transpose) without a GPU: the bank and sector model the
chapter predicts with (against chapter 2's conflict degree), the reasons a tile shape or
an input is refused, the launch geometry, what the compiler made of the kernels (offline
NVRTC, sm_90); and on a GPU the correctness pass and the Python call."""
from __future__ import annotations

import math

import numpy as np
import pytest

from perflab import registry
from perflab.chapters.memory.experiments import conflict_degree
from perflab.chapters.transpose import banks, ops
from perflab.chapters.transpose import experiments as ex
from perflab.errors import ConfigError


def test_experiments_are_registered_under_the_chapter():
    exps = {n: e for n, e in registry.all_experiments().items() if n.startswith("transpose.")}
    assert {"transpose.check", "transpose.ladder", "transpose.tiles", "transpose.profile"} <= set(exps)
    assert all(e.chapter == "05-transpose" for e in exps.values())
    assert exps["transpose.tiles"].sweep


@pytest.mark.parametrize("pad", [False, True])
@pytest.mark.parametrize("stride", range(1, 33))
def test_the_bank_model_is_chapter_2s_conflict_degree(stride, pad):
    assert banks.stride_wavefronts(stride, pad) == conflict_degree(stride, pad)


def test_the_model_predicts_the_ladders_counters():
    """Naive: 32 sectors per request on its strided side; tiled: 32 wavefronts per column
    read; padded and swizzled: one; the wide rung: the minimum for 16-byte accesses."""
    p = {v: banks.predicted(v) for v in ops.VARIANTS}
    assert (p["naive-rows"]["ld"], p["naive-rows"]["st"]) == (4, 32)
    assert (p["naive-cols"]["ld"], p["naive-cols"]["st"]) == (32, 4)
    assert p["tiled"]["lds"] == 32 and p["tiled"]["sts"] == 1
    assert conflict_degree(32, pad=False) == p["tiled"]["lds"]
    for v in ("padded", "swizzled", "coarsened"):
        assert p[v]["lds"] == p[v]["sts"] == 1 and p[v]["ld"] == p[v]["st"] == 4
    w = p["wide"]
    assert w["lds"] == w["sts"] == w["lds_ideal"] == 4 and w["ld"] == w["st"] == 16


def test_eight_byte_elements_stay_conflict_free_with_the_same_pad_and_swizzle():
    for v in ("padded", "swizzled", "coarsened", "wide"):
        p = banks.predicted(v, "float64")
        assert p["lds"] == p["lds_ideal"] and p["sts"] == p["sts_ideal"]
    assert banks.predicted("tiled", "float64")["lds"] == 32


def test_a_16_wide_tile_costs_two_way_conflicts():
    """TILE 16: a warp spans two 17-word rows of the padded tile and one bank is hit twice."""
    p = banks.predicted("coarsened", "float32", 16, 8)
    assert p["lds"] == 2 and p["sts"] == 2


def test_wavefronts_of_wide_accesses():
    # eight lanes of 16 bytes cover the 32 banks once: four phases, one pass each
    assert banks.wavefronts([16 * l for l in range(32)], 16) == 4
    # the same chunk column for eight lanes of a phase: eight passes in each phase
    assert banks.wavefronts([16 * 8 * l for l in range(32)], 16) == 32
    assert banks.sectors([4 * l for l in range(32)], 4) == 4
    assert banks.sectors([4 * 8192 * l for l in range(32)], 4) == 32


def test_explorer_grid_has_valid_and_refused_shapes_with_reasons():
    reasons = {(v, t, r): ex.tile_reason(v, t, r) for v in ops.TUNABLE for t in ex.TILES
               for r in ex.BLOCK_ROWS}
    valid = [k for k, why in reasons.items() if why is None]
    assert len(valid) == len(ex.tile_specs()) >= 20
    assert "1024" in reasons[("coarsened", 64, 32)]
    assert "48 KiB" in reasons[("coarsened", 128, 1)]
    assert "cannot exceed TILE" in reasons[("coarsened", 16, 32)]
    assert "at least 8" in reasons[("wide", 16, 4)]
    assert "cannot exceed" in reasons[("wide", 32, 16)]


@pytest.mark.parametrize("variant,dtype,tile,rows,match", [
    ("tiled", "float32", 32, 8, "fixed block"),
    ("bogus", "float32", None, None, "unknown variant"),
    ("padded", "float16", None, None, "not supported"),
    ("coarsened", "float32", 32, None, "both"),
    ("coarsened", "float32", 24, 8, "powers of two"),
    ("wide", "float64", 8, 4, "at least 8"),
])
def test_bad_configurations_are_refused_with_the_reason(variant, dtype, tile, rows, match):
    assert match in ops.config_problem(variant, dtype, tile, rows)
    with pytest.raises(ConfigError, match=match):
        ops.spec(variant, dtype, tile, rows)


def test_bad_inputs_are_refused_with_the_reason():
    a = np.zeros((3, 4), np.float32)
    assert "2-D" in ops.operand_problem(np.zeros((2, 3, 4), np.float32))
    assert "2-D" in ops.operand_problem(np.zeros(5, np.float32))
    assert "float16 is not supported" in ops.operand_problem(a.astype(np.float16))
    assert "int64 is not supported" in ops.operand_problem(a.astype(np.int64))
    assert "C-contiguous" in ops.operand_problem(a[:, ::2])
    assert "column-major" in ops.operand_problem(a.T)
    assert ops.operand_problem(a, np.zeros((4, 3), np.float32)) is None
    assert "shape (4, 3)" in ops.operand_problem(a, np.zeros((3, 4), np.float32))
    assert "dtype" in ops.operand_problem(a, np.zeros((4, 3), np.float64))
    assert "in place" in ops.operand_problem(a, a.reshape(4, 3))
    assert ops.operand_problem(a, np.zeros((4, 3), np.float32)) is None
    for dt in ops.DTYPES:
        assert ops.operand_problem(a.astype(dt)) is None


def test_host_arrays_are_refused_before_anything_runs():
    with pytest.raises(ConfigError, match="CuPy array on the GPU"):
        ops.transpose(np.zeros((3, 4), np.float32))


@pytest.mark.parametrize("variant", ops.VARIANTS)
@pytest.mark.parametrize("shape", [(1, 1), (33, 31), (8191, 8193), (10_000_000, 1), (1, 10_000_000)])
def test_the_grid_covers_every_element(variant, shape):
    """Each block's x covers `tile` columns (or 32 fast indices); the grid's y is capped at
    65535 and the kernels loop over the rest."""
    grid, block = ops.geometry(variant, "float32", shape)
    assert grid[1] <= ops.MAX_GRID_Y and block[0] * block[1] <= 1024
    rows, cols = shape
    if variant.startswith("naive"):
        fast = cols if ops.RUNGS[variant].row_read else rows
        assert grid[0] * 32 >= fast
    else:
        tile = ops.default_tile(variant, "float32")[0] if variant in ops.TUNABLE else 32
        assert grid[0] * tile >= cols
        assert grid[1] == min(-(-rows // tile), ops.MAX_GRID_Y)


def _sass(spec):
    from perflab import compile_report as cr
    return cr.sass(spec, "sm_90")


def test_more_elements_per_thread_issues_every_load_before_the_first_shared_store():
    """The coarsened rung's point: its TILE / ROWS loads are in flight together. ptxas keeps
    up to four loads ahead of the first shared store; past four it interleaves them."""
    from perflab.chapters.transpose import report
    for tile, rows in ((32, 8), (64, 16), (16, 4), (32, 32)):
        assert report.loads_ahead(ops.spec("coarsened", "float32", tile, rows)) == tile // rows
    assert 2 <= report.loads_ahead(ops.spec("coarsened", "float32", 64, 8)) < 8


def test_the_wide_rung_moves_16_bytes_per_access():
    sass = _sass(ops.spec("wide", "float32"))
    for op in ("LDG.E.128", "STS.128", "LDS.128", "STG.E.128"):
        assert op in sass
    plain = _sass(ops.spec("padded", "float32"))
    assert ".128" not in plain


def test_shared_memory_is_what_each_layout_says():
    from perflab import compile_report as cr
    size = {v: cr.resources(ops.spec(v, "float32"), "sm_90")["shared_static_bytes"]
            for v in ("tiled", "padded", "swizzled", "coarsened", "wide")}
    assert size == {"tiled": 32 * 32 * 4, "padded": 32 * 33 * 4, "swizzled": 32 * 32 * 4,
                    "coarsened": 32 * 33 * 4, "wide": 64 * 64 * 4}


def _fake_race(monkeypatch, times: dict, timing: bool = True):
    """A Context of transpose.ladder whose interleaved timing gives each call the per-round
    times `times[name]` (the names it was asked for land in ctx.timed), every check made
    on the host: `ex.check_exact` says wrong only for what `ctx.wrong` names."""
    from perflab import race
    from perflab.correctness import Check
    from perflab.registry import Context, get

    ctx = Context(get("transpose.ladder"), {"run_id": "t"}, timing=timing)
    ctx.timed, ctx.wrong, ctx.ran = None, set(), []

    def time_interleaved(calls, budget_s=None, rounds=None):
        ctx.timed = (list(calls), budget_s, rounds)
        return {k: {"median_ms": float(np.median(times[k])), "p20_ms": min(times[k]),
                    "p80_ms": max(times[k]), "min_ms": min(times[k]), "n_timed": 3 * len(times[k]),
                    "round_ms": times[k]} for k in calls}
    ctx.time_interleaved = time_interleaved
    monkeypatch.setattr(race, "checked", lambda fn, what: fn())
    monkeypatch.setattr(ex, "checked", lambda fn, what: fn())
    monkeypatch.setattr(ex, "poison", lambda x: None)
    monkeypatch.setattr(ex, "check_exact", lambda out, ref: Check(False, 0.5, 0.0, 2)
                        if ctx.ran[-1] in ctx.wrong else Check(True, 0.0, 0.0, 0))
    monkeypatch.setattr(ops, "plan", lambda a, out, v, t=None, r=None:
                        lambda: ctx.ran.append(ex.entry_name(v, t, r)))
    monkeypatch.setattr(ex, "baselines", lambda a, out, dst:
                        {n: (lambda n=n: ctx.ran.append(n)) for n in ex.BASELINES})
    return ctx


def test_the_ladder_race_keeps_its_rows(monkeypatch):
    """One case's race without a GPU: the entries in the ladder's order, then the library
    calls; checked in that order; a failed check written and never timed; the rows named
    as the recorded ones (variant the rung, of_copy against the faster copy and x_strided
    against CuPy's strided copy, round by round; bytes, 0 FLOPs, TB/s, the copy named)."""
    ladder = [e for e in ex.LADDER if e[0] != "naive-rows"]
    times = {ex.entry_name(*e): [2.0, 2.0, 2.0] for e in ladder}
    times["coarsened 64x4"] = [1.25, 2.0, 1.0]
    times.update({"cudaMemcpy": [1.0, 1.0, 1.0], "copy kernel": [1.1, 1.1, 1.1],
                  "cupy strided copy": [4.0, 5.0, 4.0]})
    ctx = _fake_race(monkeypatch, times)
    ctx.wrong = {"tiled"}
    a = np.zeros((64, 96), np.float32)
    out, dst = np.zeros((96, 64), np.float32), np.zeros_like(a)
    entries = ex.ladder_race(a, out, dst, a.T, ladder)
    names = [ex.entry_name(*e) for e in ladder] + list(ex.BASELINES)
    assert [e.name for e in entries] == names
    assert {e.name: e.baseline for e in entries if e.baseline} == ex.KEYS
    rows = ex.race.run(ctx, entries, budget_s=0.6, seed=7)
    assert ctx.ran == names and ctx.timed == ([n for n in names if n != "tiled"], 0.6, 9)
    r = rows["coarsened 64x4"]
    assert r["variant"] == "coarsened" and r["seed"] == 7 and r["baseline"] == "cudaMemcpy"
    assert r["params"] == {"dtype": "float32", "rows": 64, "cols": 96, "tile": 64,
                           "block_rows": 4}
    m = {k: v["value"] for k, v in r["metrics"].items()}
    assert m["bytes_moved"] == 2 * a.nbytes and m["flops"] == 0 and m["rounds"] == 3
    assert m["TB/s"] == pytest.approx(2 * a.nbytes / 1.25e-3 / 1e12)
    # copy / entry, round by round: 0.8, 0.5, 1.0; strided / entry: 3.2, 2.5, 4.0
    assert (m["of_copy"], m["of_copy_min"], m["of_copy_max"]) == pytest.approx((0.8, 0.5, 1.0))
    assert (m["x_strided"], m["x_strided_min"], m["x_strided_max"]) == \
        pytest.approx((3.2, 2.5, 4.0))
    assert rows["tiled"]["correct"] is False and "median_ms" not in rows["tiled"]["metrics"]
    assert rows["copy kernel"]["metrics"]["of_copy"]["value"] == pytest.approx(1 / 1.1)
    assert rows["copy kernel"]["launch"] == {} and rows["copy kernel"]["params"]["tile"] is None
    # the baseline itself, at 1 x copy as the old rows had it (and x_strided 1 likewise)
    assert rows["cudaMemcpy"]["metrics"]["of_copy"]["value"] == 1.0
    assert rows["cupy strided copy"]["metrics"]["x_strided"]["value"] == 1.0


def test_the_ladder_race_leaves_out_what_a_type_cannot_run(monkeypatch):
    _fake_race(monkeypatch, {}, timing=False)
    a = np.zeros((8, 8), np.float64)
    entries = ex.LADDER + (("coarsened", 128, 4),)
    names = [e.name for e in ex.ladder_race(a, a.T.copy(), np.zeros_like(a), a.T, entries)]
    assert "coarsened 128x4" not in names and "coarsened 64x4" in names   # a 128² tile: too big


def test_a_tile_shape_is_raced_against_cudamemcpy_alone(monkeypatch):
    import cupy

    class Kernel:
        num_regs = 40

    ctx = _fake_race(monkeypatch, {"coarsened": [2.0, 2.0, 2.0, 2.0, 2.0],
                                   "cudaMemcpy": [1.0, 1.0, 1.0, 1.0, 1.5]})
    monkeypatch.setattr(ex, "get_kernel", lambda spec: Kernel())
    monkeypatch.setattr(ex, "blocks_per_sm", lambda k, threads: 6)
    monkeypatch.setattr(cupy.cuda, "Device",
                        lambda: type("D", (), {"synchronize": lambda s: None})())
    a = np.zeros((64, 64), np.float32)
    args = (ctx, a, a.T.copy(), np.zeros_like(a), a.T)
    r = ex.tile_one(*args, "coarsened", 32, 4)
    assert ctx.timed == (["coarsened", "cudaMemcpy"], 0.3, 5)
    m = {k: v["value"] for k, v in r["metrics"].items()}
    assert (m["threads"], m["blocks_per_sm"], m["registers"]) == (128, 6, 40)
    assert m["inflight_per_sm"] == 6 * 32 * 32 * 4 and m["bytes_moved"] == 2 * a.nbytes
    assert m["of_copy"] == pytest.approx(0.5) and m["of_copy_max"] == pytest.approx(0.75)
    assert "x_strided" not in m and r["variant"] == "coarsened" and len(ctx.rows) == 1
    ctx.wrong, ctx.timed = {"coarsened 16x4"}, None
    r = ex.tile_one(*args, "coarsened", 16, 4)
    assert ctx.timed is None and r["correct"] is False      # the copy is not timed alone
    assert ex.tile_one(*args, "coarsened", 16, 32)["invalid"]

    def refused(*a, **k):
        raise ConfigError("too many registers")
    monkeypatch.setattr(ops, "plan", refused)
    assert ex.tile_one(*args, "coarsened", 32, 8)["invalid"] == "too many registers"


def test_fresh_inputs_cover_each_type():
    for dt in ops.DTYPES:
        x = ex.fresh_host((5, 7), dt, 1)
        assert str(x.dtype) == dt and x.shape == (5, 7)
    assert not np.array_equal(ex.fresh_host((5, 7), "float32", 1), ex.fresh_host((5, 7), "float32", 2))
    assert math.isfinite(float(ex.fresh_host((5, 7), "float64", 3).sum()))


@pytest.mark.gpu
def test_every_kernel_passes_its_check(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")
    from perflab import lab
    rows = lab.check_all(chapter="05-transpose")
    assert rows and all(r["correct"] for r in rows if r["correct"] is not None)


@pytest.mark.gpu
@pytest.mark.parametrize("variant", ops.VARIANTS)
def test_transpose_matches_numpy_and_refuses_views(variant):
    import cupy as cp
    host = ex.fresh_host((257, 130), "float32", 7)
    a = cp.asarray(host)
    assert np.array_equal(cp.asnumpy(ops.transpose(a, variant=variant)), host.T)
    with pytest.raises(ConfigError, match="C-contiguous"):
        ops.transpose(a[:, ::2], variant=variant)


def _recorded(name):
    from perflab import lab
    return lab.replay(name)


def test_the_report_quotes_the_rows_it_names():
    """Each glued ratio is the metric of exactly the ladder row of its entry, and a target
    is met exactly when its number clears its bound."""
    from perflab import targets
    from perflab.chapters.transpose import report
    ladder = _recorded("transpose.ladder")
    s = {**report.ladder_facts(ladder), **report.check_facts(_recorded("transpose.check"), ladder),
         **report.counter_facts(_recorded("transpose.profile"), ladder)}
    lt = report.ladder_table(ladder)
    assert lt["entry"].is_unique and set(lt["entry"]) <= set(report.ORDER)
    quoted = [e for e in lt["entry"] if f"{report.key(e)}_of_copy" in s]
    assert len(quoted) >= 8
    for e in quoted:
        row = lt[lt["entry"] == e].iloc[0]
        assert s[f"{report.key(e)}_of_copy"] == pytest.approx(row["of_copy"], nan_ok=True)
    t = targets.table(report.TARGETS["05-transpose"], s)
    first = t.iloc[0]
    value = float(first["measured"].split()[0])
    assert first["met"] == (value >= 0.85) or abs(value - 0.85) < 0.005


def test_the_explorer_carries_every_refused_shape_with_its_reason():
    from perflab.chapters.transpose.explorer import tile_explorer
    ex_ = tile_explorer(_recorded("transpose.tiles"))
    payload = ex_.payload()
    refused = {(r["params"]["tile"], r["params"]["block_rows"]) for r in payload["invalid"]}
    assert (64, 32) in refused and (128, 1) in refused and (16, 32) in refused
    shown = ex_.lookup({"tile": 32, "block_rows": 8})
    assert shown["status"] == "recorded" and 0 < shown["values"]["of_copy"] <= 1.2
    assert "1024" in ex_.lookup({"tile": 64, "block_rows": 32})["reason"]


# ---- the bank-map diagram ------------------------------------------------------------------

def _texts(fig):
    return [t for ax in fig.axes for t in ax.texts + [ax.title, ax.xaxis.label, ax.yaxis.label]
            + ax.get_xticklabels() + ax.get_yticklabels()] + list(fig.texts)


def test_the_bank_map_is_computed_from_the_layouts():
    """Plain: every column one bank (a column read is chapter 2's conflict degree at
    stride 32); padded: bank (r + c) mod 32; swizzled: bank c XOR r. The column read's
    passes are the model's wavefronts."""
    from perflab.chapters.transpose import diagrams

    plain, padded, swz = (diagrams.bank_map(v) for v in ("tiled", "padded", "swizzled"))
    r, c = np.mgrid[0:32, 0:32]
    assert (plain == c).all()
    assert (padded == (r + c) % 32).all()
    assert (swz == (c ^ r)).all()
    for col in (0, 5, 31):
        assert diagrams.column_read("tiled", col)["passes"] == conflict_degree(32, pad=False) == 32
        assert diagrams.column_read("padded", col)["passes"] == conflict_degree(32, pad=True) == 1
        assert diagrams.column_read("swizzled", col)["passes"] == 1
        assert sorted(diagrams.column_read("swizzled", col)["banks"]) == list(range(32))


def test_the_bank_map_draws_three_tiles_with_their_passes():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from perflab.chapters.transpose import diagrams

    fig = diagrams.draw_banks()
    try:
        images = [im for ax in fig.axes for im in ax.images]
        assert len(images) == 3 and all(im.get_array().shape == (32, 32) for im in images)
        titles = " ".join(ax.get_title() for ax in fig.axes)
        assert "32 passes" in titles and titles.count(": 1 pass") == 2
        assert fig.get_size_inches()[0] <= 7.5
        assert min(t.get_fontsize() for t in _texts(fig) if t.get_text()) >= 9
    finally:
        plt.close(fig)
