"""Chapter 3's bulk-copy kernels (16: the scan, 17: the encoder, both with the sequencer)
without a GPU: their shape rules, the refusal on a GPU without bulk copies, their compile
(no spills at the defaults and at every swept shape on sm_90, every dtype, inclusive and
exclusive; the bulk copy and no fence in the SASS), the experiments that sweep them; on a
GPU: their checks at edge sizes, tile boundaries and the size of one wave of tiles, and
back-to-back calls."""
from __future__ import annotations

import numpy as np
import pytest

from perflab import registry
from perflab.chapters.scan import bulk as bx
from perflab.chapters.scan import experiments as ex
from perflab.chapters.scan import ops, rle
from perflab.errors import ConfigError

DTYPES = ("int32", "int64", "float32")


@pytest.mark.parametrize("dtype,shape,why", [
    ("int32", (0, 1, 32, 6, 8, 128), "1 to 16 scanner warps"),
    ("int32", (17, 1, 32, 6, 8, 128), "1 to 16 scanner warps"),
    ("int32", (8, 3, 32, 6, 8, 128), "a multiple of the reducer"),
    ("int32", (8, 4, 30, 6, 8, 128), "a multiple of 4 KiB"),
    ("int32", (16, 4, 4, 6, 8, 128), "whole 512-byte steps"),
    ("int32", (8, 4, 32, 1, 8, 128), "two or more"),
    ("int32", (8, 4, 64, 4, 8, 128), "shared memory a block may hold"),
    ("int32", (8, 4, 32, 6, 17, 128), "1 to 16 words"),
    ("int32", (8, 4, 32, 6, 8, -1), "between two polls"),
    ("float64", (8, 4, 32, 6, 8, 128), "not supported"),
])
def test_bad_bulk_shapes_are_refused_with_the_rule(dtype, shape, why):
    with pytest.raises(ConfigError, match=why):
        ops.check_bulk(dtype, shape)


@pytest.mark.parametrize("shape,why", [
    ((16, 4, 32, 6, 8, 128), "elements a lane"),
    ((16, 4, 32, 6, 8, 128, 6), "4, 8 or 16"),
    ((16, 4, 32, 6, 4, 128, 16), "shared memory a block may hold"),
    ((8, 4, 4, 2, 8, 128, 8), "whole steps of 32 x 8"),
    ((16, 4, 32, 7, 8, 128, 8), "shared memory a block may hold"),
])
def test_bad_encoder_shapes_are_refused_with_the_rule(shape, why):
    with pytest.raises(ConfigError, match=why):
        rle.check_bulk_shape(shape)


def test_every_swept_bulk_shape_is_valid():
    for sh in ops.BULK_SWEEP + ops.BULK_DIAGNOSTIC + (ops.BULK,):
        ops.check_bulk("int32", sh)
    for sh in rle.BULK_SHAPES + (rle.BULK,):
        rle.check_bulk_shape(sh)
        assert rle.bulk_smem(sh) <= ops.BULK_SMEM_LIMIT


def test_a_gpu_without_bulk_copies_is_told_which_scan_to_use(monkeypatch):
    from perflab import device
    info = device.DeviceInfo(name="An Ada GPU", slug="ada", compute_capability="8.9",
                             arch="sm_89", sms=58, l2_bytes=48 << 20,
                             **{k: 0 for k in device.DeviceInfo.__dataclass_fields__
                                if k not in ("name", "slug", "compute_capability", "arch",
                                             "sms", "l2_bytes")})
    monkeypatch.setattr(device, "current", lambda: info)
    why = ops.bulk_missing()
    assert "compute capability 9.0" in why and "8.9" in why and "'single-pass'" in why
    with pytest.raises(ConfigError, match="needs compute capability 9.0"):
        ops.require_bulk_copy()
    assert ex.available(("single-pass", "bulk")) == ("single-pass",)
    hopper = device.DeviceInfo(**{**info.__dict__, "compute_capability": "9.0", "arch": "sm_90"})
    monkeypatch.setattr(device, "current", lambda: hopper)
    assert ops.bulk_missing() is None
    assert ex.available(("single-pass", "bulk")) == ("single-pass", "bulk")


def test_bulk_kernels_compile_without_spills_at_their_defaults():
    from perflab import compile_report as cr
    specs = ([ops.bulk_spec(dt, inclusive=inc) for dt in DTYPES for inc in (True, False)]
             + [rle.bulk_spec()])
    df = cr.report(specs, ("sm_90",))
    assert len(df) == len(specs)
    assert (df["spill_store_bytes"] == 0).all() and (df["spill_load_bytes"] == 0).all()
    assert (df["stack_frame_bytes"] == 0).all()
    # one block an SM: every thread's registers fit the SM's 65536
    for spec, (_, r) in zip(specs, df.iterrows()):
        shape = rle.BULK if spec.name == "rle_encode_bulk" else ops.BULK
        assert r["registers"] * ops.bulk_threads(shape) <= 65536, spec.name_expression


def test_swept_bulk_shapes_compile_without_spills_on_hopper():
    from perflab import compile_report as cr
    specs = registry.get("scan.bulk").kernels() + registry.get("scan.rle_bulk").kernels()
    df = cr.report(specs, ("sm_90",))
    assert (df["spill_store_bytes"] == 0).all()


def test_the_tiles_come_by_bulk_copy_and_nothing_fences():
    from perflab import compile_report as cr
    for spec in (ops.bulk_spec("int32"), ops.bulk_spec("int64"), rle.bulk_spec()):
        text = cr.sass(spec, "sm_90")
        assert "UBLKCP" in text, spec.name_expression         # cp.async.bulk
        assert "SYNCS" in text                                # the mbarriers
        assert "MEMBAR" not in text, spec.name_expression      # SplitStatus: no fence
    assert "STG.E.EF.128" in cr.sass(ops.bulk_spec("int32"), "sm_90")   # st.global.cs


def test_the_bulk_encoder_writes_values_and_lengths_in_its_pass():
    n, runs = 1 << 25, (1 << 25) // 8
    assert rle.traffic_bytes("bulk", n, runs) == 4 * n + 8 * runs
    assert "bulk" in rle.VARIANTS and "bulk" in rle.SM90
    assert [s.file for s in ex.RLE_SPECS["bulk"]()] == ["03-scan/17_rle_bulk.cu"]
    assert rle.staging_bytes(rle.BULK) == rle.BULK[0] * 2 * 32 * rle.BULK[6] * 4


def test_the_bulk_experiments_are_sweeps_with_their_baselines():
    for name in ("scan.bulk", "scan.rle_bulk"):
        e = registry.get(name)
        assert e.sweep and e.requires is ops.bulk_missing
    files = {s.file for s in registry.get("scan.bulk").kernels()}
    assert {"03-scan/16_single_pass_bulk.cu", "03-scan/tiles_alone.cu",
            "03-scan/03_single_pass.cu"} == files
    files = {s.file for s in registry.get("scan.rle_bulk").kernels()}
    assert {"03-scan/17_rle_bulk.cu", "00-machine/read.cu"} == files


def test_shape_names_say_what_differs_from_the_default():
    assert bx.shape_name(ops.BULK) == "16+4 warps, 32 KiB x 6"
    assert bx.shape_name((8, 4, 32, 6, 8, 512)) == "8+4 warps, 32 KiB x 6, sequencer x8, 512 ns"
    assert bx.shape_name(rle.BULK).endswith(", 8 a lane")


# -- on a GPU --------------------------------------------------------------------------
@pytest.fixture
def live(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")


def _edges():
    t = ops.BULK[2] * 256                              # int32 elements a tile
    return [0, 1, 31, t - 1, t, t + 1, 2 * t + 1, 132 * t - 1, 132 * t + 1, 1000003]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", _edges())
def test_bulk_scan_at_edge_sizes(live, dtype, n):
    import cupy as cp
    x = ex.fresh(n, dtype, 17, "wrap" if dtype == "int32" else "small")
    for inc in (True, False):
        out = cp.empty_like(x)
        ops.enqueue(x, out, inc, "bulk")
        assert ex.check_scan(out, x, inc).correct, inc


@pytest.mark.gpu
@pytest.mark.parametrize("shape", ops.BULK_SWEEP)
def test_every_swept_bulk_shape_scans(live, shape):
    import cupy as cp
    x = ex.fresh((1 << 20) + 3, "int32", 5, "wrap")
    out = cp.empty_like(x)
    ops.enqueue_bulk(x, out, True, shape)
    assert ex.check_scan(out, x, True).correct


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 2, 31, 8191, 8192, 8193, 132 * 8192 + 1, 1000003])
@pytest.mark.parametrize("kind", ["equal", "distinct", "short", "long", "mixed"])
def test_bulk_encoder_round_trips(live, n, kind):
    enc = rle.Encoder(n)
    x = rle.make_runs(n, kind, np.random.default_rng(n))
    chk, runs = ex.check_rle(x, *enc.encode(x, "bulk"))
    assert chk.correct
    assert runs == (1 if kind == "equal" else n if kind == "distinct" else runs)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", rle.BULK_SHAPES)
def test_every_encoder_shape_round_trips(live, shape):
    n = 1000003
    enc = rle.Encoder(n)
    x = rle.make_runs(n, "short", np.random.default_rng(3))
    enc.encode(x, "bulk", shape=shape)
    assert ex.check_rle(x, enc.values, enc.lengths, enc.count)[0].correct


@pytest.mark.gpu
def test_back_to_back_bulk_scans(live):
    import cupy as cp
    xs = [ex.fresh(1000003, "int32", k, "wrap") for k in range(4)]
    outs = [cp.empty_like(x) for x in xs]
    for k in range(100):
        ops.enqueue(xs[k % 4], outs[k % 4], True, "bulk")
    for x, out in zip(xs, outs):
        assert ex.check_scan(out, x, True).correct


def _bulk_rows(of_copy=0.90):
    import pandas as pd
    d = f"bulk {bx.shape_name(ops.BULK)}"
    big, small = 1 << 28, 1 << 25
    r = dict(of_copy=of_copy, of_copy_min=of_copy - 0.01, of_copy_max=of_copy + 0.01,
             x_torch=1.5, median_ms=0.55)
    return pd.DataFrame([
        {"variant": d, "n": big, **r},
        {"variant": f"{d} without sequencer", "n": big, **r, "of_copy": of_copy + 0.03},
        {"variant": "single-pass", "n": big, "median_ms": 0.71, "of_copy": 0.68},
        {"variant": d, "n": small, **r, "median_ms": 0.110},
        {"variant": "copy", "n": small, "median_ms": 0.075},
        {"variant": "bulk", "dtype": "int64", "of_copy": 0.83, "part": "dtype"},
        {"variant": "bulk", "dtype": "float32", "of_copy": 0.87, "part": "dtype"},
    ])


def test_16s_facts_come_from_its_own_sweep():
    import pandas as pd

    from perflab.chapters.scan import report
    prof = pd.DataFrame([{"variant": "bulk", "dram_read_over_input": 1.0,
                          "dram_write_over_input": 0.97}])
    f = report.bulk_facts(_bulk_rows(), prof)
    assert f["bk6_of_copy"] == pytest.approx(90) and f["bk6_seq_pts"] == pytest.approx(3)
    assert f["bk6_over_sp"] == pytest.approx(0.71 / 0.55)
    assert f["bk6_25_us"] == pytest.approx(110) and f["bk6_int64_of_copy"] == pytest.approx(83)
    assert f["bk6_shape"] == "16+4 warps, 32 KiB x 6"
    with pytest.raises(ValueError, match="dram_read_over_input"):
        report.bulk_facts(_bulk_rows(), prof.iloc[:0])


def test_the_read_ceiling_compiles_and_reads_only():
    from perflab import compile_report as cr
    from perflab.chapters import machine
    from perflab.kernels import read_source
    df = cr.report([machine.read_spec()], ("sm_80", "sm_90"))
    assert (df["spill_store_bytes"] == 0).all()
    src = read_source("00-machine/read.cu")
    body = src[src.index("read_vec4("):]
    assert body.count("*sink = ") == 1 and "src[" in body      # one guarded store, the loads
    assert registry.get("scan.rle_bulk").kernels()[-1] == machine.read_spec()
