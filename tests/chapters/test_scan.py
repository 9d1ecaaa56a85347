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


# -- the pages' tables -----------------------------------------------------------------
class _Keys(dict):
    """A summary in which every key is 50.0 (the tables' formatting, not their data)."""

    def __missing__(self, key):
        return "16+4 warps" if key.endswith("shape") else 50.0


def test_the_tries_tables_have_one_line_a_try_and_no_nan():
    from perflab.chapters.scan import report
    s = _Keys(serial_n_log2=24)
    for df, kernels in ((report.scan_tries_table(s), {"01", "02", "03", "16"}),
                        (report.rle_tries_table(s), {"04", "05", "17", "23", "24", "25"})):
        assert kernels <= set(df["kernel"])
        assert not df.isna().any().any()
        assert df["kept?"].str.startswith(("kept", "dropped", "replaced", "its idea")).all()
    cost = report.lookback_cost_table(s)
    assert len(cost) == 3 and (cost["cost"] == 0).all()
    assert report.powers_of_two({"a_n_log2": 24, "b": 3}) == {"a_n_pow": "2²⁴"}


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


@pytest.mark.gpu
def test_1000_back_to_back_scans_neither_hang_nor_go_wrong(live):
    from perflab import device, registry as reg, store
    exp = reg.get("scan.stress")
    ctx = reg.Context(exp, store.new_run(device.current().as_dict()), timing=False)
    exp.func(ctx, calls=1000, sizes=(1000003,))
    assert ctx.rows and all(r["correct"] for r in ctx.rows)


@pytest.mark.parametrize("block,items,stages,why", [
    (32, 16, 2, "at least 2 warps"), (256, 16, 0, "1 to 8"), (1024, 32, 2, "200 KiB"),
    (256, 6, 2, "multiple of 4")])
def test_bad_pipeline_shapes_are_refused_with_the_rule(block, items, stages, why):
    with pytest.raises(ConfigError, match=why):
        ops.check_pipeline("int32", block, items, stages)
    assert ex.pipeline_reason(block, items, stages)


def test_every_swept_pipeline_shape_can_run_and_the_defaults_are_in_the_specs():
    assert all(ex.pipeline_reason(*shape) is None for shape in ops.PIPELINE_SHAPES)
    assert "scan.targets" in registry.all_experiments()
    assert ops.traffic_bytes("pipelined", 1 << 28, 4) < 2 * 4 * (1 << 28) * 1.01


def test_used_by_keeps_the_quoted_keys_and_refuses_a_missing_one(tmp_path, monkeypatch):
    from perflab import paths
    from perflab.chapters.scan import report
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "x.md").write_text("a {glue:text}`k1:.2f` b {glue:text}`k2`")
    monkeypatch.setattr(paths, "ROOT", tmp_path)
    assert report.used_by({"k1": 1.0, "k2": "s", "k3": 3}, "x") == {"k1": 1.0, "k2": "s"}
    with pytest.raises(KeyError, match="k2"):
        report.used_by({"k1": 1.0}, "x")
