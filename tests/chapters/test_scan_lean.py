"""Chapter 3's lean encoder (18: 17 on fewer instructions a step, several blocks an SM)
without a GPU: its shape rules, its compile (no spills at its default, its diagnostics and
every swept shape on sm_90, its registers within the SM for its blocks), the experiments
that sweep and profile it, the page's numbers from its rows; on a GPU: its round trips at
edge sizes on every kind of runs, every swept shape, back-to-back calls."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perflab import registry
from perflab.chapters.scan import experiments as ex
from perflab.chapters.scan import lean as lx
from perflab.chapters.scan import ops, report, rle
from perflab.errors import ConfigError


@pytest.mark.parametrize("shape,why", [
    ((8, 4, 32, 3, 4, 128, 8), "elements a lane, blocks an SM"),
    ((8, 4, 32, 3, 4, 128, 8, 0), "1 to 8 blocks"),
    ((8, 4, 32, 3, 4, 128, 8, 9), "1 to 8 blocks"),
    ((16, 4, 32, 6, 4, 128, 8, 2), "within the SM's 227 KiB"),
    ((8, 4, 32, 3, 4, 128, 3, 2), "4, 8 or 16"),
    ((8, 3, 32, 3, 4, 128, 8, 2), "a multiple of the reducer"),
])
def test_bad_lean_shapes_are_refused_with_the_rule(shape, why):
    with pytest.raises(ConfigError, match=why):
        rle.check_lean_shape(shape)


def test_every_swept_lean_shape_is_valid_and_17s_default_is_among_them():
    for sh in rle.LEAN_SHAPES + (rle.LEAN,):
        rle.check_lean_shape(sh)
        assert lx.lean_reason(sh) is None
    assert rle.LEAN in rle.LEAN_SHAPES
    assert rle.LEAN_SHAPES[0][:7] == rle.BULK       # 17's shape, one block an SM


def test_lean_kernels_compile_without_spills_and_fit_their_blocks():
    from perflab import compile_report as cr
    specs = [rle.lean_spec(sh) for sh in rle.LEAN_SHAPES] + [
        rle.lean_spec(rle.LEAN, d) for d in rle.BULK_DIAGNOSTICS]
    shapes = list(rle.LEAN_SHAPES) + [rle.LEAN] * len(rle.BULK_DIAGNOSTICS)
    df = cr.report(specs, ("sm_90",))
    assert len(df) == len(specs)
    assert (df["spill_store_bytes"] == 0).all() and (df["spill_load_bytes"] == 0).all()
    for sh, (_, r) in zip(shapes, df.iterrows()):
        assert r["registers"] * ops.bulk_threads(sh) * sh[7] <= 65536, sh


def test_the_lean_encoder_is_an_encoder_of_its_own_file():
    assert "lean" in rle.ALL
    assert [s.file for s in ex.RLE_SPECS["lean"]()] == ["03-scan/18_rle_lean.cu"]
    assert rle.traffic_bytes("lean", 1000, 10) == 4 * 1000 + 8 * 10
    spec = rle.lean_spec()
    assert spec.template[-2:] == (rle.LEAN[7], 0)


def test_a_gpu_without_bulk_copies_is_not_given_the_lean_encoder(monkeypatch):
    from perflab import device
    info = device.DeviceInfo(name="An Ada GPU", slug="ada", compute_capability="8.9",
                             arch="sm_89", sms=58, l2_bytes=48 << 20,
                             **{k: 0 for k in device.DeviceInfo.__dataclass_fields__
                                if k not in ("name", "slug", "compute_capability", "arch",
                                             "sms", "l2_bytes")})
    monkeypatch.setattr(device, "current", lambda: info)
    assert ex.available(("chunked", "lean", "bulk")) == ("chunked",)
    hopper = device.DeviceInfo(**{**info.__dict__, "compute_capability": "9.0", "arch": "sm_90"})
    monkeypatch.setattr(device, "current", lambda: hopper)
    assert ex.available(("chunked", "lean")) == ("chunked", "lean")


def test_the_lean_experiments_sweep_profile_and_need_bulk_copies():
    e = registry.get("scan.rle_lean")
    assert e.sweep and e.requires is ops.bulk_missing
    files = {s.file for s in e.kernels()}
    assert {"03-scan/18_rle_lean.cu", "03-scan/17_rle_bulk.cu",
            "03-scan/15_rle_chunked.cu", "00-machine/read.cu"} <= files
    p = registry.get("scan.lean_profile")
    assert {s.template[-1] for s in p.kernels()} == set(lx.PROFILE_DIAGS)


def test_shape_names_say_how_many_blocks_an_sm():
    assert lx.lean_name(rle.LEAN).endswith(f", {rle.LEAN[7]} a SM")
    assert "16+4 warps" in lx.lean_name(rle.LEAN_SHAPES[0])


# -- the page's numbers, from rows like the recorded ones --------------------------------
def _race_rows(x18=3.0, x17=2.5, failed=False):
    d = rle.LEAN
    rows = []
    for kind, f in (("short", 1.0), ("long", 1.1), ("distinct", 0.8)):
        t = 0.3
        rows += [
            {"variant": lx.lean_name(d), "part": "race", "kind": kind, "diagnostic": 0, "n": 1 << 25,
             "median_ms": t / (x18 * f), "x_torch": x18 * f, "x_torch_min": x18 * f - 0.1,
             "x_torch_max": x18 * f + 0.1, "correct": not failed},
            {"variant": "rle bulk", "part": "race", "kind": kind, "median_ms": t / (x17 * f),
             "x_torch": x17 * f, "x_torch_min": x17 * f - 0.1, "x_torch_max": x17 * f + 0.1,
             "correct": True},
            {"variant": "torch.unique_consecutive", "part": "race", "kind": kind,
             "median_ms": t, "correct": True},
            {"variant": "read ceiling", "kind": kind, "median_ms": 0.04, "x_torch": 7.5},
            {"variant": "copy", "kind": kind, "median_ms": 0.08},
        ]
    for dg, us in ((1, 0.07), (2, 0.066), (3, 0.062), (4, 0.05)):
        rows.append({"variant": lx.lean_name(d) + f" diagnostic {dg}", "part": "race",
                     "kind": "short", "diagnostic": dg, "median_ms": us, "x_torch": t / us,
                     "correct": None, "removed": rle.BULK_DIAGNOSTICS[dg]})
    rows += [{"variant": "rle lean", "part": "check", "n": n, "kind": k, "correct": True}
             for n in (0, 1, 31) for k in ("short", "equal")]
    rows += [{"variant": "rle lean", "part": "large", "n": (1 << 30) + 1, "kind": "short",
              "correct": True},
             {"variant": "rle lean", "part": "large", "n": (1 << 31) + 5, "kind": "short",
              "correct": None, "invalid": "n=2147483653: run positions and lengths are int32"},
             {"variant": "rle lean", "part": "stress", "n": 1000003, "calls": 1000,
              "wrong_calls": 0, "correct": True}]
    return pd.DataFrame(rows)


def _profile_rows():
    rows = []
    for v, sh, inst, us in (("rle bulk", rle.BULK, 48e6, 80.0), ("rle lean", rle.LEAN, 31e6, 70.0)):
        for d in lx.PROFILE_DIAGS:
            rows.append({"variant": v, "diagnostic": d, "duration_us": us - 8 * d,
                         "inst_executed": inst / (d + 1), "issue_active_pct": 60.0 - 10 * d,
                         "dram_read_over_input": 1.0, "dram_write_over_input": 0.18})
    return pd.DataFrame(rows)


def test_the_seventh_try_summary_comes_from_its_rows():
    s = report.lean_summary(_race_rows(), _profile_rows())
    assert s["ln7_short_x_torch"] == pytest.approx(3.0)
    assert s["ln7_over_bulk"] == pytest.approx(3.0 / 2.5)
    assert s["ln7_long_x_torch"] == pytest.approx(3.3)
    assert s["ln7_n_checked"] == 7 and s["ln7_n_failed"] == 0      # 6 checks, the large one
    assert s["ln7_bulk_inst_M"] == pytest.approx(48) and s["ln7_lean_inst_M"] == pytest.approx(31)
    assert s["ln7_bulk_scanner_inst_M"] == pytest.approx(48 - 24)
    assert s["ln7_inst_cut_pct"] == pytest.approx(100 * (1 - 31 / 48))
    assert s["ln7_need_us"] == pytest.approx(300 / 4)
    assert s["ln7_diag3_us"] == pytest.approx(62)
    assert s["ln7_tiles"] == 4096 and s["ln7_seq_tiles_per_us"] == pytest.approx(4096 / (70 - 24))
    assert s["ln7_stress_ok"] and s["ln7_refusal"].startswith("n=2147483653")


def test_the_seventh_try_targets_follow_the_rows():
    t = report.targets_seventh_try(report.lean_summary(_race_rows(x18=4.2), _profile_rows()))
    assert t["met"].tolist()[0] is True
    t = report.targets_seventh_try(report.lean_summary(_race_rows(x18=3.0), _profile_rows()))
    assert t["met"].tolist()[0] is False
    t = report.targets_seventh_try(report.lean_summary(_race_rows(x18=4.2, failed=True),
                                                       _profile_rows()))
    assert t["met"].tolist()[0] is False


def test_the_lean_table_leaves_out_the_untimed_rows():
    t = report.lean_table(_race_rows())
    assert t["median_ms"].notna().all() and "copy" not in set(t["variant"])


def test_the_instruction_ladder_has_one_row_per_kernel_and_diagnostic():
    lad = report.lean_profile_table(_profile_rows())
    assert len(lad) == 2 * len(lx.PROFILE_DIAGS)
    assert set(lad["kernel"]) == {"17", "18"}
    assert (lad["inst_M"] > 0).all()


# -- on a GPU -----------------------------------------------------------------------------
@pytest.fixture
def live(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 2, 31, 8191, 8193, 264 * 8192 + 1, 1000003])
@pytest.mark.parametrize("kind", ["equal", "distinct", "short", "long", "mixed"])
def test_lean_encoder_round_trips(live, n, kind):
    enc = rle.Encoder(n)
    x = rle.make_runs(n, kind, np.random.default_rng(n))
    chk, runs = ex.check_rle(x, *enc.encode(x, "lean"))
    assert chk.correct
    assert runs == (1 if kind == "equal" else n if kind == "distinct" else runs)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", rle.LEAN_SHAPES)
def test_every_lean_shape_round_trips(live, shape):
    n = 1000003
    enc = rle.Encoder(n)
    x = rle.make_runs(n, "short", np.random.default_rng(4))
    enc._lean(x, shape)
    assert ex.check_rle(x, enc.values, enc.lengths, enc.count)[0].correct


@pytest.mark.gpu
def test_back_to_back_lean_encodes(live):
    xs = [rle.make_runs(1000003, k, np.random.default_rng(9)) for k in ("short", "long", "mixed", "distinct")]
    encs = [rle.Encoder(x.size) for x in xs]
    for k in range(100):
        encs[k % 4].encode(xs[k % 4], "lean", check=False)
    for x, e in zip(xs, encs):
        assert ex.check_rle(x, e.values, e.lengths, e.count)[0].correct
