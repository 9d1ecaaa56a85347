"""Chapter 3's chunked kernels (14: the scan, 15: the encoder) without a GPU: their shape
rules, their compile (no spills at the defaults on sm_89 and sm_90, every dtype,
inclusive and exclusive, and at every swept shape on sm_90), the loads and stores they
compile to, the experiment that sweeps them; on a GPU: their checks at edge sizes, chunk
boundaries and the size of one wave of chunks."""
from __future__ import annotations

import numpy as np
import pytest

from perflab import registry
from perflab.chapters.scan import experiments as ex
from perflab.chapters.scan import ops, rle
from perflab.errors import ConfigError

DTYPES = ("int32", "int64", "float32")


@pytest.mark.parametrize("dtype,warps,vpl,batches,blocks,why", [
    ("int32", 32, 4, 1, 1, "1 to 31 data warps"),
    ("int32", 0, 4, 1, 1, "1 to 31 data warps"),
    ("int32", 8, 17, 1, 1, "1 to 16"),
    ("int32", 8, 4, 0, 1, "batches"),
    ("int32", 8, 4, 1, 8, "2048 threads"),
    ("float64", 8, 4, 1, 4, "not supported"),
])
def test_bad_chunked_shapes_are_refused_with_the_rule(dtype, warps, vpl, batches, blocks, why):
    with pytest.raises(ConfigError, match=why):
        ops.check_chunked(dtype, warps, vpl, batches, blocks)


def test_bad_chunked_knobs_are_refused():
    with pytest.raises(ConfigError, match="predecessors"):
        ops.chunked_spec("int32", width=17)
    with pytest.raises(ConfigError, match="policy"):
        ops.chunked_spec("int32", policy=3)
    with pytest.raises(ConfigError, match="between two polls"):
        ops.chunked_spec("int32", delay=-1)


def test_every_swept_chunked_shape_is_valid():
    for w, v, bt, m, *_ in ops.CHUNKED_SWEEP + ops.CHUNKED_DIAGNOSTIC + (ops.CHUNKED,):
        ops.check_chunked("int32", w, v, bt, m)
    for w, v, bt, m, *_ in rle.CHUNKED_SHAPES + (rle.CHUNKED,):
        ops.check_chunked("int32", w, v, bt, m)


def test_a_chunk_is_the_warps_vectors_and_batches():
    assert ops.chunk_elems("int32", 8, 4, 1) == 8 * 4 * 32 * 4
    assert ops.chunk_elems("int64", 8, 4, 1) == 8 * 4 * 32 * 2       # the same bytes
    assert ops.chunk_elems("float32", 8, 4, 2) == 2 * ops.chunk_elems("int32", 8, 4, 1)


def test_chunked_kernels_compile_without_spills_at_their_defaults():
    from perflab import compile_report as cr
    specs = ([ops.chunked_spec(dt, inclusive=inc) for dt in DTYPES for inc in (True, False)]
             + [rle.chunked_spec(), rle.tails_spec()])
    df = cr.report(specs, ("sm_89", "sm_90"))
    assert len(df) == 2 * len(specs)
    assert (df["spill_store_bytes"] == 0).all() and (df["spill_load_bytes"] == 0).all()
    assert (df["stack_frame_bytes"] == 0).all()
    # the blocks an SM is meant to hold fit its 65536 registers (8-register steps)
    w, _, _, m = ops.CHUNKED
    cap = 65536 // ((w + 1) * 32 * m) // 8 * 8
    hopper = df[df["arch"] == "sm_90"]
    assert (hopper[hopper["kernel"].str.startswith("scan_chunked")]["registers"] <= cap).all()
    w, _, _, m = rle.CHUNKED[:4]
    cap = 65536 // ((w + 1) * 32 * m) // 8 * 8
    assert (hopper[hopper["kernel"].str.startswith("rle_encode")]["registers"] <= cap).all()


def test_swept_chunked_shapes_compile_without_spills_on_hopper():
    from perflab import compile_report as cr
    specs = registry.get("scan.chunked").kernels()
    specs += [rle.chunked_spec(s) for s in rle.CHUNKED_SHAPES]
    df = cr.report(specs, ("sm_90",))
    assert (df["spill_store_bytes"] == 0).all()


def test_the_second_read_and_the_stores_are_streaming_and_16_bytes():
    from perflab import compile_report as cr
    text = cr.sass(ops.chunked_spec("int32"), "sm_90")
    assert "LDG.E.EF.128" in text                     # ld.global.cs: the read from L2
    assert "STG.E.EF.128" in text                     # st.global.cs
    assert "LDG.E.128" in text                        # the reduction's plain read
    assert "BAR.ARV" not in text


def test_the_chunked_encoder_writes_values_and_lengths_in_its_pass():
    n, runs = 1 << 25, (1 << 25) // 8
    assert rle.traffic_bytes("chunked", n, runs) == 4 * n + 8 * runs
    assert "chunked" in rle.ALL
    assert {s.file for s in ex.RLE_SPECS["chunked"]()} == {"03-scan/15_rle_chunked.cu",
                                                           "03-scan/13_rle_lookahead.cu"}


def test_the_chunked_sweep_is_a_sweep_with_its_baselines():
    e = registry.get("scan.chunked")
    assert e.sweep
    files = {s.file for s in e.kernels()}
    assert {"03-scan/14_single_pass_chunked.cu", "03-scan/12_single_pass_lookahead.cu"} <= files


# -- on a GPU --------------------------------------------------------------------------
@pytest.fixture
def live(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")


def _edges():
    w, v, bt, m = ops.CHUNKED
    c = ops.chunk_elems("int32", w, v, bt)
    return [0, 1, 31, c - 1, c, c + 1, 2 * c + 1, 132 * m * c + 1, 1000003]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", _edges())
def test_chunked_scan_at_edge_sizes(live, dtype, n):
    import cupy as cp
    x = ex.fresh(n, dtype, 13, "wrap" if dtype == "int32" else "small")
    for inc in (True, False):
        out = cp.empty_like(x)
        ops.enqueue(x, out, inc, "chunked")
        assert ex.check_scan(out, x, inc).correct, inc


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 31, 511, 512, 513, 4097, 1000003])
@pytest.mark.parametrize("kind", ["equal", "distinct", "short", "long"])
def test_chunked_encoder_round_trips(live, n, kind):
    enc = rle.Encoder(n)
    x = rle.make_runs(n, kind, np.random.default_rng(n))
    chk, runs = ex.check_rle(x, *enc.encode(x, "chunked"))
    assert chk.correct
    assert runs == (1 if kind == "equal" else n if kind == "distinct" else runs)


def test_the_fifth_targets_are_met_only_by_the_numbers():
    from perflab.chapters.scan import report
    s = {"ch5_shape": "24x8x1x1", "ch5_rle_shape": "8x8x1x3, S = 32",
         "ch5_of_copy": 84.9, "ch5_of_copy_min": 80.0, "ch5_of_copy_max": 86.0,
         "ch5_x_torch": 1.21, "ch5_x_torch_min": 1.19, "ch5_x_torch_max": 1.25,
         "ch5_rle_short_x_torch": 3.99, "ch5_rle_short_x_torch_min": 3.5,
         "ch5_rle_short_x_torch_max": 4.2, "ch5_n_checked": 10, "ch5_n_failed": 0,
         "ch5_large_ok": True, "ch5_stress_calls": 1000, "ch5_stress_runs": 2,
         "ch5_stress_wrong": 0, "ch5_stress_ok": True}
    t = report.targets_fifth_try(s)
    assert list(t["met"]) == [False, True, False, True, True]
    s.update(ch5_of_copy=85.0, ch5_rle_short_x_torch=4.0, ch5_n_failed=1)
    assert list(report.targets_fifth_try(s)["met"]) == [True, True, True, False, True]


@pytest.mark.gpu
@pytest.mark.parametrize("tier", [16, 32])
@pytest.mark.parametrize("supers", [0, 1, 2, 5])
@pytest.mark.parametrize("dtype", DTYPES)
def test_two_level_look_back_at_super_chunk_edges(live, tier, supers, dtype):
    import cupy as cp
    c = ops.chunk_elems(dtype, 8, 4, 1)
    for n in {max(1, supers * tier * c - 1), supers * tier * c + 1, (supers * tier + 1) * c}:
        x = ex.fresh(n, dtype, n, "wrap" if dtype == "int32" else "small")
        for inc in (True, False):
            out = cp.empty_like(x)
            ops.enqueue_chunked(x, out, inc, 8, 4, 1, 4, tier=tier)
            assert ex.check_scan(out, x, inc).correct, (n, inc)
