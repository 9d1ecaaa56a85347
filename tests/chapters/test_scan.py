"""Chapter 3 (perflab.chapters.scan) without a GPU: the tile rules and their reasons, the
float tolerance, the traffic models, the NumPy encoder; on a GPU: the correctness pass,
the edge sizes and inputs, bad input, and 1000 back-to-back single-pass scans."""
from __future__ import annotations

import re

import numpy as np
import pytest

from perflab import registry
from perflab.chapters.scan import experiments as ex
from perflab.chapters.scan import ops, rle
from perflab.errors import ConfigError


def test_experiments_are_registered_under_the_chapter():
    exps = {n: e for n, e in registry.all_experiments().items() if n.startswith("scan.")}
    assert {"scan.check", "scan.sizes", "scan.dtypes", "scan.tune", "scan.rle",
            "scan.large", "scan.stress", "scan.float_order", "scan.profile"} <= set(exps)
    assert all(e.chapter == "03-scan" for e in exps.values())


@pytest.mark.parametrize("dtype,block,items,why", [
    ("int32", 256, 2, "multiple of 4"),
    ("int64", 256, 3, "multiple of 2"),
    ("int32", 100, 16, "whole warps"),
    ("int32", 2048, 16, "whole warps"),
    ("int32", 256, 64, "at most 32"),
    ("float64", 256, 16, "not supported"),
])
def test_bad_tile_shapes_are_refused_with_the_rule(dtype, block, items, why):
    with pytest.raises(ConfigError, match=why):
        ops.check_tile(dtype, block, items)


def test_the_explorer_reasons_are_the_call_checks():
    for b in ex.TUNE_BLOCKS:
        for i in ex.TUNE_ITEMS:
            why = ex.tune_reason("int32", b, i)
            assert (why is None) == (i % 4 == 0 and i <= 32)


def test_float_tolerance_grows_with_n():
    ts = [ex.float_tolerance(n) for n in (1, 1 << 10, 1 << 20, 1 << 30)]
    assert ts == sorted(ts) and ts[0] > 0 and ts[-1] < 1e-3


def test_single_pass_moves_the_bytes_of_a_copy_and_three_kernels_half_again():
    n = 1 << 28
    one = ops.traffic_bytes("single-pass", n, 4)
    three = ops.traffic_bytes("three-kernel", n, 4)
    assert 2 * 4 * n <= one < 2 * 4 * n * 1.01
    assert 3 * 4 * n <= three < 3 * 4 * n * 1.01


def test_fused_encoder_moves_far_fewer_bytes():
    n, runs = 1 << 25, (1 << 25) // 8
    assert rle.traffic_bytes("unfused", n, runs) > 4 * rle.traffic_bytes("fused", n, runs)


@pytest.mark.parametrize("x", [np.array([], dtype=np.int32), np.array([5], dtype=np.int32),
                               np.array([1, 1, 2, 2, 2, 1], dtype=np.int32),
                               np.arange(31, dtype=np.int32), np.zeros(1000, dtype=np.int32)])
def test_numpy_encoder_round_trips(x):
    v, lengths = rle.numpy_encode(x)
    assert np.array_equal(np.repeat(v, lengths), x)
    assert (lengths > 0).all() and (v[1:] != v[:-1]).all()


@pytest.mark.parametrize("x", [np.array([], dtype=np.int32), np.array([5], dtype=np.int32),
                               np.array([1, 1, 2, 2, 2, 1], dtype=np.int32),
                               np.random.default_rng(3).integers(0, 3, 500).astype(np.int32)])
def test_numpy_steps_are_the_encoder_step_by_step(x):
    st = rle.numpy_steps(x)
    v, lengths = rle.numpy_encode(x)
    assert np.array_equal(st["values"], v) and np.array_equal(st["lengths"], lengths)
    assert np.array_equal(st["heads"], np.flatnonzero(st["flags"]))
    # a head's exclusive count of heads is its run's slot
    assert np.array_equal(st["positions"][st["heads"]], np.arange(v.size))
    assert np.array_equal(st["positions"], np.cumsum(st["flags"]) - st["flags"])


# -- the library's variants and default -------------------------------------------------
def test_variants_lists_every_string_scan_accepts():
    assert len(set(ops.VARIANTS)) == len(ops.VARIANTS) and set(ops.RACED) <= set(ops.VARIANTS)
    for v in ops.VARIANTS:
        assert ops.specs(v, "int32", True)          # each names its kernels
    # the dispatch of the timed path knows no other names
    import inspect
    named = set(re.findall(r'variant == "([a-z-]+)"', inspect.getsource(ops.enqueue)))
    named |= set(re.findall(r'variant == "([a-z-]+)"', inspect.getsource(ops.specs)))
    assert named <= set(ops.VARIANTS)


@pytest.mark.parametrize("bad", ["", "Single-Pass", "bulk-nolookback", "cub", "nope"])
@pytest.mark.parametrize("n", [0, 1, 1000])
def test_an_unknown_variant_is_refused_at_every_size(bad, n):
    # refused before the array is looked at: the empty input too, and with no GPU
    with pytest.raises(ConfigError, match="unknown scan variant.*known: serial"):
        ops.scan(np.zeros(n, dtype=np.int32), variant=bad)
    with pytest.raises(ConfigError, match="unknown scan variant"):
        ops.specs(bad)


def test_the_default_is_the_fastest_variant_the_gpu_supports(monkeypatch):
    monkeypatch.setattr(ops, "bulk_missing", lambda *a: None)
    assert ops.default_variant() == "bulk"
    monkeypatch.setattr(ops, "bulk_missing", lambda *a: "needs compute capability 9.0")
    assert ops.default_variant() == "single-pass"
    assert "default_variant" in ops.scan.__doc__ and '"bulk"' in ops.scan.__doc__


def test_the_encoder_offers_four_variants_default_the_fastest(monkeypatch):
    import inspect
    from types import SimpleNamespace

    from perflab import device
    assert rle.VARIANTS == ("unfused", "fused", "bulk", "room")
    for cc, want in (("9.0", "room"), ("8.0", "room"), ("7.5", "fused")):
        monkeypatch.setattr(device, "current", lambda cc=cc: SimpleNamespace(compute_capability=cc))
        assert rle.default_variant() == want
    src = inspect.getsource(rle.Encoder.encode)
    assert "default_variant()" in src and "require(variant in VARIANTS" in src
    assert set(rle.SM90) | set(rle.ONE_PASS) <= set(rle.VARIANTS)


# -- the diagrams ----------------------------------------------------------------------
def _texts(fig):
    return [t for ax in fig.axes for t in ax.texts]


def _check_style(fig):
    assert fig.get_size_inches()[0] <= 7.5
    assert min(t.get_fontsize() for t in _texts(fig)) >= 9


def test_rle_diagram_shows_what_the_reference_computes():
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.patches import Rectangle

    from perflab.chapters.scan import diagrams
    x = diagrams.RLE_EXAMPLE
    assert x.size == 16
    d, st = diagrams.rle_rows(x), rle.numpy_steps(x)
    for key in ("flags", "positions", "heads", "values", "lengths"):
        assert np.array_equal(d[key], st[key]), key
    fig = diagrams.rle_figure()
    _check_style(fig)
    cells = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    runs = st["values"].size
    assert len(cells) == 4 * 16 + 2 * runs        # index, input, flags, scan; values, lengths
    words = [t.get_text() for t in _texts(fig)]
    for row in ("values", "lengths"):
        for v in st[row]:
            assert str(int(v)) in words
    assert f"{runs} runs" in " ".join(words)


def test_lookback_walk_is_an_exclusive_scan_and_waits_on_x():
    from perflab.chapters.scan import diagrams
    sums = diagrams.TILE_SUMS
    first, last = (diagrams.lookback_walk(p, sums, len(sums) - 1) for p in diagrams.POLLS)
    assert first["prefix"] is None and diagrams.POLLS[0][first["waits_on"]] == "X"
    assert last["prefix"] == int(np.cumsum(sums)[-2])
    assert diagrams.POLLS[1][last["read"][-1]] == "P"
    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(2, 12))
        v = rng.integers(0, 50, n)
        states = ["P"] + [str(rng.choice(["P", "A"])) for _ in range(n - 2)] + [None]
        assert diagrams.lookback_walk(states, v, n - 1)["prefix"] == int(v[:-1].sum())


def test_lookback_diagram_draws_the_computed_prefix():
    import matplotlib
    matplotlib.use("Agg")

    from perflab.chapters.scan import diagrams
    fig = diagrams.lookback_figure()
    _check_style(fig)
    words = " ".join(t.get_text() for t in _texts(fig))
    prefix = diagrams.lookback_walk(diagrams.POLLS[1], diagrams.TILE_SUMS, 7)["prefix"]
    assert f"= {prefix} " in words
    for state in ("not ready", "aggregate", "inclusive prefix"):
        assert state in words


# -- the pages' facts, tries and targets ---------------------------------------------------
def test_a_fact_the_rows_lack_is_an_error_not_a_nan():
    import pandas as pd

    from perflab.chapters.scan import report
    df = pd.DataFrame({"variant": ["a"], "x": [1.0]})
    assert report.need(df, "x", variant="a") == 1.0
    with pytest.raises(ValueError, match="'x'.*'b'"):
        report.need(df, "x", variant="b")


def test_the_tries_tables_come_from_the_runs_one_line_a_try():
    from perflab import lab
    from perflab.chapters.scan import report
    for tries, kept in ((report.SCAN_TRIES, {"02", "03", "16"}),
                        (report.RLE_TRIES, {"04", "05", "25"})):
        df = report.tries_table(tries, {t.experiment: lab.replay(t.experiment) for t in tries})
        assert len(df) == len(tries) and not df.isna().any().any()
        assert kept <= set(df[df["kept?"].str.startswith("kept")]["kernel"])
        assert df["kept?"].str.startswith(("kept", "dropped", "replaced", "its idea")).all()
    t = report.Try("x", "99", "scan.sizes", {"variant": "nothing"}, "dropped")
    with pytest.raises(ValueError, match="try 99"):
        report.tries_table((t,), {"scan.sizes": lab.replay("scan.sizes")})


def test_the_targets_are_data_each_read_from_the_facts_the_page_gives():
    from perflab import book, lab, targets
    from perflab.chapters.scan import report
    for page, tgts in report.TARGETS.items():
        facts = book.page_facts(report.PAGE_FACTS[page], lab.replay)
        df = targets.table(tgts, facts)
        assert len(df) == len(tgts) and df["met"].notna().all()


def test_a_fact_glued_twice_on_a_page_is_refused(monkeypatch):
    from perflab import book
    glued = []
    monkeypatch.setattr(book, "glue", lambda k, v: glued.append(k))
    facts = book.Facts()
    facts.add({"a": 1})
    with pytest.raises(KeyError, match="'a'"):
        facts.add({"a": 2, "b": 3})
    assert glued == ["a"] and facts == {"a": 1}


def test_the_retired_tries_replay_everywhere_and_name_their_commit(monkeypatch):
    from perflab import lab
    from perflab.chapters.scan import archive
    monkeypatch.setenv("PERFLAB_MODE", "replay")
    exp = registry.get("scan.rle_walk")
    assert exp.archived == archive.ARCHIVED_AT
    df = lab.run("scan.rle_walk")
    assert archive.ARCHIVED_AT in lab.caption(df)
    with pytest.raises(Exception, match="archived"):
        exp.func(None)
    assert "scan.rle_walk" not in {e.name for e in registry.all_experiments().values()
                                   if not e.archived}


def test_no_page_puts_a_glued_value_inside_math():
    from perflab import paths
    for page in ("03-scan", "03-rle"):
        text = (paths.ROOT / "chapters" / f"{page}.md").read_text()
        for math in re.findall(r"\$[^$\n]+\$", text):
            assert "glue" not in math, (page, math)
        assert "seed" not in text.lower(), page


# -- on a GPU --------------------------------------------------------------------------
@pytest.fixture
def live(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")


@pytest.mark.gpu
def test_every_kernel_passes_its_check(live):
    from perflab import lab
    rows = lab.check_all(chapter="03-scan")
    bad = [(r["experiment"], r["variant"], r["params"]) for r in rows if r["correct"] is False]
    assert rows and not bad


@pytest.mark.gpu
@pytest.mark.parametrize("n", [0, 1, 31, 1000003])
@pytest.mark.parametrize("kind", ["equal", "distinct", "short"])
def test_rle_round_trip_at_edge_sizes(live, n, kind):
    enc = rle.Encoder(max(n, 1))
    x = rle.make_runs(n, kind, np.random.default_rng(n)) if n else \
        __import__("cupy").zeros(0, dtype="int32")
    values, lengths, count = enc.encode(x)
    chk, runs = ex.check_rle(x, values, lengths, count)
    assert chk.correct
    if n and kind == "equal":
        assert runs == 1
    if n and kind == "distinct":
        assert runs == n


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32"])
@pytest.mark.parametrize("n", [0, 1, 31, 1000003])
def test_scans_at_edge_sizes(live, dtype, n):
    import cupy as cp
    x = ex.fresh(n, dtype, 7)
    for v in ops.VARIANTS:
        if v == "bulk" and ops.bulk_missing():
            continue
        for inc in (True, False):
            out = ops.scan(x, inclusive=inc, variant=v)
            assert ex.check_scan(out, x, inc).correct, (v, inc)
    same = cp.full(n, 3, dtype=dtype)
    assert ex.check_scan(ops.scan(same), same, True).correct


@pytest.mark.gpu
def test_bad_input_is_refused(live):
    import cupy as cp
    x = cp.arange(100, dtype=cp.int32)
    with pytest.raises(ConfigError, match="in-place"):
        ops.scan(x, x)
    with pytest.raises(ConfigError, match="16 bytes"):
        ops.scan(x[1:])
    with pytest.raises(ConfigError, match="1-D"):
        ops.scan(x.reshape(10, 10))
    with pytest.raises(ConfigError, match="dtype"):
        ops.scan(x.astype(cp.float64))
    with pytest.raises(ConfigError, match="CuPy array"):
        ops.scan(np.arange(4, dtype=np.int32))
    with pytest.raises(ConfigError, match="must match"):
        ops.scan(x, cp.empty(99, dtype=cp.int32))
    with pytest.raises(ConfigError, match="dtype"):
        rle.Encoder(10).encode(x.astype(cp.float32))
    with pytest.raises(ConfigError, match="not contiguous"):
        ops.scan(x[::2])
    with pytest.raises(ConfigError, match="in-place"):
        ops.scan(x[:64], x[32:96])
    for empty in (cp.zeros(0, dtype=cp.int32), x):
        with pytest.raises(ConfigError, match="unknown scan variant 'tiled'"):
            ops.scan(empty, variant="tiled")
        with pytest.raises(ConfigError, match="unknown encoder 'graph'"):
            rle.Encoder(100).encode(empty, "graph")
    with pytest.raises(ConfigError, match="head_bytes"):
        rle.Encoder(100).encode(x, "fused", head_bytes=8)


@pytest.mark.gpu
def test_1000_back_to_back_scans_neither_hang_nor_go_wrong(live):
    from perflab import device, registry as reg, store
    exp = reg.get("scan.stress")
    ctx = reg.Context(exp, store.new_run(device.current().as_dict()), timing=False)
    exp.func(ctx, calls=1000, sizes=(1000003,))
    assert ctx.rows and all(r["correct"] for r in ctx.rows)


def test_17s_parts_are_archived_and_held_against_the_commit_that_had_them():
    """17's diagnostics left the kernel (no flag in a teaching kernel): their rows are the
    archived scan.rle_bulk_parts, held against the commit whose 17 had them, while the
    same file today has no DIAG at all."""
    from perflab import paths, store
    from perflab.chapters.scan import archive
    exp = registry.get("scan.rle_bulk_parts")
    assert exp.archived == archive.PARTS_AT
    src = (paths.KERNELS / "03-scan" / "17_rle_bulk.cu").read_text()
    assert "DIAG" not in src and "DIAG" not in (paths.KERNELS / "03-scan" / "ballot.cuh").read_text()
    rows = store.load(store.find(exp.name, "nvidia-h200"))["rows"]
    assert rows and all(r["params"]["diagnostic"] for r in rows)
    assert all(store.stale_kernels(r, exp.archived) == [] for r in rows)
    assert all(store.stale_kernels(r) == ["03-scan/17_rle_bulk.cu"] for r in rows)
