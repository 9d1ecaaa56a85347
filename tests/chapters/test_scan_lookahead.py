"""Chapter 3's look-ahead kernels (12: the scan, 13: the encoder) without a GPU: their
shape rules, their compile (no spills at the defaults on sm_89 and sm_90, every dtype,
inclusive and exclusive), the handoff they compile to, the experiments that run them; on
a GPU: their checks at edge sizes and tile boundaries."""
from __future__ import annotations

import numpy as np
import pytest

from perflab import registry
from perflab.chapters.scan import experiments as ex
from perflab.chapters.scan import ops, rle
from perflab.errors import ConfigError

DTYPES = ("int32", "int64", "float32")


@pytest.mark.parametrize("dtype,block,items,blocks,why", [
    ("int32", 128, 66, 6, "at most 64"),
    ("int32", 128, 30, 6, "multiple of 4"),
    ("int64", 128, 3, 6, "multiple of 2"),
    ("int32", 1000, 32, 1, "whole warps"),
    ("int32", 128, 32, 13, "2048 threads"),
    ("int32", 128, 64, 8, "224 KiB"),
    ("float64", 128, 32, 12, "not supported"),
])
def test_bad_lookahead_shapes_are_refused_with_the_rule(dtype, block, items, blocks, why):
    with pytest.raises(ConfigError, match=why):
        ops.check_lookahead(dtype, block, items, blocks)


def test_every_swept_lookahead_shape_is_valid():
    for b, i, m in ops.LOOKAHEAD_SHAPES + (ops.LOOKAHEAD,):
        ops.check_lookahead("int32", b, i, m)
        ops.check_lookahead("int64", b, i // 2, m)


def test_lookahead_kernels_compile_without_spills_at_their_defaults():
    from perflab import compile_report as cr
    specs = ([ops.lookahead_spec(dt, inclusive=inc) for dt in DTYPES for inc in (True, False)]
             + [rle.lookahead_spec(), rle.tails_spec()])
    df = cr.report(specs, ("sm_89", "sm_90"))
    assert len(df) == 2 * len(specs)
    assert (df["spill_store_bytes"] == 0).all() and (df["spill_load_bytes"] == 0).all()
    assert (df["stack_frame_bytes"] == 0).all()
    # the blocks an SM is meant to hold fit its 65536 registers (8-register steps)
    b, _, m = ops.LOOKAHEAD
    cap = 65536 // ((b + 32) * m) // 8 * 8
    hopper = df[df["arch"] == "sm_90"]
    assert (hopper[hopper["kernel"].str.startswith("scan_lookahead")]["registers"] <= cap).all()
    b, _, m, _ = rle.LOOKAHEAD
    cap = 65536 // ((b + 32) * m) // 8 * 8
    assert (hopper[hopper["kernel"].str.startswith("rle_encode")]["registers"] <= cap).all()


def test_swept_lookahead_shapes_compile_without_spills_on_hopper():
    from perflab import compile_report as cr
    specs = [ops.lookahead_spec("int32", b, i, m, True, ops.LOOKAHEAD_DELAY)
             for b, i, m in ops.LOOKAHEAD_SHAPES]
    df = cr.report(specs, ("sm_90",))
    assert (df["spill_store_bytes"] == 0).all()


def test_the_handoff_is_an_mbarrier_and_no_bar_arrive():
    from perflab import compile_report as cr
    for spec in (ops.lookahead_spec("int32"), rle.lookahead_spec()):
        text = cr.sass(spec, "sm_90")
        assert "SYNCS.PHASECHK" in text               # mbarrier try_wait
        assert "SYNCS.ARRIVE" in text                 # mbarrier arrive
        assert "BAR.ARV" not in text                  # no named-barrier arrive


def test_the_encoder_writes_values_and_lengths_in_its_pass():
    n, runs = 1 << 25, (1 << 25) // 8
    assert rle.traffic_bytes("lookahead", n, runs) == 4 * n + 8 * runs
    assert rle.traffic_bytes("lookahead", n, runs) < rle.traffic_bytes("fused", n, runs)
    assert "lookahead" in rle.ALL


def test_targets_and_stress_run_the_lookahead_kernels():
    files = {s.file for s in registry.get("scan.targets").kernels()}
    assert {"03-scan/12_single_pass_lookahead.cu", "03-scan/13_rle_lookahead.cu"} <= files
    files = {s.file for s in registry.get("scan.stress").kernels()}
    assert "03-scan/12_single_pass_lookahead.cu" in files
    assert (1 << 31) + 5 in ex.TARGET_LARGE and (1 << 30) + 1 in ex.TARGET_LARGE


# -- on a GPU --------------------------------------------------------------------------
@pytest.fixture
def live(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 31, 4095, 4096, 4097, 1000003])
def test_lookahead_scan_at_edge_sizes(live, dtype, n):
    import cupy as cp
    x = ex.fresh(n, dtype, 11)
    for inc in (True, False):
        out = cp.empty_like(x)
        ops.enqueue(x, out, inc, "lookahead")
        assert ex.check_scan(out, x, inc).correct, inc


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 31, 4095, 4096, 4097, 8193, 1000003])
@pytest.mark.parametrize("kind", ["equal", "distinct", "short", "long"])
def test_lookahead_encoder_round_trips(live, n, kind):
    enc = rle.Encoder(n)
    x = rle.make_runs(n, kind, np.random.default_rng(n))
    chk, runs = ex.check_rle(x, *enc.encode(x, "lookahead"))
    assert chk.correct
    assert runs == (1 if kind == "equal" else n if kind == "distinct" else runs)
