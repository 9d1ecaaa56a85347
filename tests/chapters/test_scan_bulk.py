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
        assert bx.bulk_reason("int32", sh) is None
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
    assert "compute capability 9.0" in why and "8.9" in why and "'chunked'" in why
    with pytest.raises(ConfigError, match="needs compute capability 9.0"):
        ops.require_bulk_copy()
    assert ex.available(("chunked", "bulk")) == ("chunked",)
    hopper = device.DeviceInfo(**{**info.__dict__, "compute_capability": "9.0", "arch": "sm_90"})
    monkeypatch.setattr(device, "current", lambda: hopper)
    assert ops.bulk_missing() is None
    assert ex.available(("chunked", "bulk")) == ("chunked", "bulk")


def test_bulk_kernels_compile_without_spills_at_their_defaults():
    from perflab import compile_report as cr
    specs = ([ops.bulk_spec(dt, inclusive=inc) for dt in DTYPES for inc in (True, False)]
             + [rle.bulk_spec()] + [rle.bulk_spec(rle.BULK, d) for d in rle.BULK_DIAGNOSTICS])
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
    assert "bulk" in rle.ALL
    assert [s.file for s in ex.RLE_SPECS["bulk"]()] == ["03-scan/17_rle_bulk.cu"]
    assert rle.staging_bytes(rle.BULK) == rle.BULK[0] * 2 * 32 * rle.BULK[6] * 4


def test_the_bulk_experiments_are_sweeps_with_their_baselines():
    for name in ("scan.bulk", "scan.rle_bulk"):
        e = registry.get(name)
        assert e.sweep and e.requires is ops.bulk_missing
    files = {s.file for s in registry.get("scan.bulk").kernels()}
    assert {"03-scan/16_single_pass_bulk.cu", "03-scan/12_single_pass_lookahead.cu",
            "03-scan/14_single_pass_chunked.cu"} <= files
    assert "bulk" in ex.TARGET_SCANS and "bulk" in ex.TARGET_ENCODERS
    assert {s.file for s in registry.get("scan.targets").kernels()} >= {
        "03-scan/16_single_pass_bulk.cu", "03-scan/17_rle_bulk.cu"}


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
    enc._bulk(x, shape)
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


def _targets_rows(of_copy=0.90, rle_x=4.1, failed=False):
    import pandas as pd
    r = dict(of_copy=of_copy, of_copy_min=of_copy - 0.01, of_copy_max=of_copy + 0.01,
             x_torch=1.5, x_torch_min=1.45, x_torch_max=1.55, median_ms=0.55)
    return pd.DataFrame([
        {"variant": "bulk", "part": "check", "n": 31, "correct": True},
        {"variant": "bulk", "part": "check", "n": 4097, "correct": not failed},
        {"variant": "chunked", "part": "check", "n": 31, "correct": False},     # not 16's
        {"variant": "bulk", "part": "large", "n": (1 << 30) + 1, "correct": True},
        {"variant": "rle bulk", "part": "large", "n": (1 << 31) + 5, "correct": None,
         "invalid": "n=2147483653: run positions and lengths are int32 here"},
        {"variant": "bulk", "part": "scan", **r, "GB/s": 3800.0},
        {"variant": "chunked", "part": "scan", **r, "median_ms": 0.66, "GB/s": 3200.0},
        {"variant": "bulk", "part": "rle", "kind": "short", "median_ms": 0.06,
         "x_torch": rle_x, "x_torch_min": rle_x - 0.1, "x_torch_max": rle_x + 0.1},
    ])


def _stress_rows(wrong=0):
    import pandas as pd
    return pd.DataFrame([{"variant": "bulk", "calls": 1000, "wrong_calls": wrong,
                          "correct": wrong == 0, "n": n} for n in (1000003, 1 << 24)])


def test_a_tries_defaults_come_from_its_own_rows():
    from perflab.chapters.scan import report
    s = report.defaults_summary(_targets_rows(), _stress_rows(), "bk6", "bulk", "bulk",
                                (("_ch", "chunked"),))
    assert (s["bk6_n_checked"], s["bk6_n_failed"]) == (3, 0)      # 14's failed row is not 16's
    assert s["bk6_of_copy"] == pytest.approx(90) and s["bk6_ch_us"] == pytest.approx(660)
    assert s["bk6_tbs"] == pytest.approx(3.8)
    assert s["bk6_rle_short_x_torch"] == pytest.approx(4.1)
    assert s["bk6_large_ok"] and s["bk6_large_sizes"] == "1,073,741,825"
    assert s["bk6_large_refusal"].startswith("n=2147483653")
    assert (s["bk6_stress_calls"], s["bk6_stress_runs"], s["bk6_stress_ok"]) == (1000, 2, True)


@pytest.mark.parametrize("of_copy,rle_x,failed,wrong,met", [
    (0.90, 4.1, False, 0, [True, True, True, True, True]),
    (0.849, 3.99, False, 0, [False, True, False, True, True]),
    (0.90, 4.1, True, 3, [True, True, True, False, False]),
])
def test_the_sixth_targets_are_met_only_by_the_numbers(of_copy, rle_x, failed, wrong, met):
    from perflab.chapters.scan import report
    s = report.defaults_summary(_targets_rows(of_copy, rle_x, failed), _stress_rows(wrong),
                                "bk6", "bulk", "bulk")
    s.update(bk6_shape=bx.shape_name(ops.BULK), bk6_rle_shape=bx.shape_name(rle.BULK))
    t = report.targets_sixth_try(s)
    assert list(t["met"]) == met
    assert t["target"][0].startswith("bulk-copy single pass (16, 16+4 warps")


def _ladder_rows():
    import pandas as pd
    d = f"rle bulk {bx.shape_name(rle.BULK)}"
    us = {d: 0.114, **{f"{d} diagnostic {k}": v for k, v in
                       zip(rle.BULK_DIAGNOSTICS, (0.094, 0.085, 0.071, 0.067))},
          "read ceiling": 0.048, "copy": 0.078, "torch.unique_consecutive": 0.292}
    return pd.DataFrame([{"variant": v, "kind": "short", "median_ms": ms,
                          "x_torch": None if v in ("copy", "torch.unique_consecutive") else 0.292 / ms}
                         for v, ms in us.items()])


def test_the_encoder_ladder_takes_one_part_away_a_step():
    from perflab.chapters.scan import report
    lad = report.rle_bulk_ladder(_ladder_rows(), "short")
    assert list(lad["step"])[:5] == ["17, the encoder"] + [f"diagnostic {d}" for d in rle.BULK_DIAGNOSTICS]
    costs = lad["cost_us"].iloc[1:5].round(1).tolist()
    assert costs == [20.0, 9.0, 14.0, 4.0]                  # each step's difference, in µs
    assert lad["cost_us"].iloc[[0, 5, 6]].isna().all()      # the encoder and the ceilings: none
    copy = lad[lad["step"] == "copy"].iloc[0]
    assert copy["x_torch"] == pytest.approx(0.292 / 0.078)  # no row ratio: from the medians
    assert (lad["taken away"].iloc[1:5] == list(rle.BULK_DIAGNOSTICS.values())).all()


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
