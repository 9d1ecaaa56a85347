"""Chapter 3's re-read encoder (21: 20's rounds with nothing held in shared memory, each
segment read once to count its heads and again, from L2, to write its runs) without a
GPU: its shape rules, its compile (no spills, its registers within the SM for its
blocks), the experiments that sweep and profile it; on a GPU: its round trips at edge
sizes on every kind of runs, every swept shape, back-to-back calls. The same for the
mask-walk encoder (22: 21's counters leaving the heads as masks, the writers walking the
bits)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perflab import registry
from perflab.chapters.scan import experiments as ex
from perflab.chapters.scan import ops, rle
from perflab.chapters.scan import reread as rr
from perflab.errors import ConfigError


@pytest.mark.parametrize("shape,why", [
    ((8, 8, 32, 4, 1), "prefetch"),
    ((8, 8, 3, 4, 1, 1), "whole units of 512"),
    ((8, 8, 66, 4, 1, 1), "1 to 32 pieces"),
    ((3, 8, 32, 4, 1, 1), "a multiple of the counters"),
    ((2, 8, 32, 4, 1, 1), "at most 4 pieces each"),
    ((8, 5, 32, 4, 1, 1), "a multiple of the writers"),
    ((8, 2, 32, 4, 1, 1), "at most 4 pieces each"),
    ((8, 8, 32, 1, 1, 1), "2 to 16"),
    ((8, 8, 32, 17, 1, 1), "2 to 16"),
    ((8, 8, 32, 4, 1, 2), "0 or 1"),
    ((16, 16, 32, 4, 1, 0), "at most 1024"),
    ((8, 8, 32, 4, 9, 1), "1 to 8 blocks"),
])
def test_bad_reread_shapes_are_refused_with_the_rule(shape, why):
    with pytest.raises(ConfigError, match=why):
        rle.check_reread_shape(shape)


def test_every_swept_reread_shape_is_valid_and_the_default_is_first():
    for sh in rle.REREAD_SHAPES:
        rle.check_reread_shape(sh)
        assert rr.reread_reason(sh) is None
    assert rle.REREAD_SHAPES[0] == rle.REREAD
    assert len(set(rle.REREAD_SHAPES)) == len(rle.REREAD_SHAPES)
    assert rr.reread_reason((3, 8, 32, 4, 1, 1)) is not None


def test_shared_memory_is_the_writers_staging_alone():
    # a writer stages a piece's heads: 512 of them at most, a 2-byte index and a 4-byte value
    assert rle.reread_smem((8, 8, 32, 4, 1, 1)) == 8 * 512 * 6
    assert rle.reread_smem((4, 4, 16, 4, 2, 1)) == 4 * 512 * 6
    assert rle.reread_threads((8, 8, 32, 4, 1, 1)) == (8 + 8 + 1) * 32


@pytest.mark.parametrize("spec,default,shapes", [
    (rle.reread_spec, rle.REREAD, rle.REREAD_SHAPES), (rle.walk_spec, rle.WALK, rle.WALK_SHAPES)],
    ids=["21", "22"])
def test_the_kernels_compile_without_spills_and_fit_their_blocks(spec, default, shapes):
    from perflab import compile_report as cr
    specs = [spec(sh) for sh in shapes] + [spec(default, d) for d in rle.REREAD_DIAGNOSTICS]
    shapes = list(shapes) + [default] * len(rle.REREAD_DIAGNOSTICS)
    df = cr.report(specs, ("sm_90",))
    assert len(df) == len(specs)
    assert (df["spill_store_bytes"] == 0).all() and (df["spill_load_bytes"] == 0).all()
    for sh, (_, r) in zip(shapes, df.iterrows()):
        assert r["registers"] * rle.reread_threads(sh) * sh[4] <= 65536, sh


def test_the_reread_encoder_is_an_encoder_of_its_own_file():
    assert "reread" in rle.ALL and "reread" in rle.SM90 and "reread" in rle.ONE_PASS
    assert [s.file for s in ex.RLE_SPECS["reread"]()] == ["03-scan/21_rle_reread.cu"]
    assert rle.traffic_bytes("reread", 1000, 10) == 4 * 1000 + 8 * 10
    assert rle.reread_spec().template == (8, 8, 16 * 256, 4, 2, 0, 0)
    assert rle.reread_spec(rle.REREAD, 3).template[-1] == 3


def test_reread_names_say_warps_segments_slots_blocks_and_prefetch():
    assert rr.reread_name(rle.REREAD) == "rle reread 8+8 warps, 16 KiB, 4 slots, 2 a SM"
    assert rr.reread_name((8, 8, 32, 4, 1, 1)) == ("rle reread 8+8 warps, 32 KiB, 4 slots, 1 a SM, "
                                                   "prefetch")
    assert rr.reread_params(rle.REREAD)["prefetch"] == 0


def test_the_reread_experiments_sweep_and_profile_21():
    e = registry.get("scan.rle_reread")
    assert e.sweep and e.requires is ops.bulk_missing
    files = {s.file for s in e.kernels()}
    assert {"03-scan/21_rle_reread.cu", "03-scan/20_rle_rounds.cu",
            "00-machine/read.cu"} <= files
    p = registry.get("scan.reread_profile")
    assert [s.template[-1] for s in p.kernels()] == list(rr.REREAD_PROFILE_DIAGS)
    assert {s.file for s in p.kernels()} == {"03-scan/21_rle_reread.cu"}


# -- 22: the mask-walk encoder ------------------------------------------------------------
@pytest.mark.parametrize("shape,why", [
    ((8, 4, 16, 4, 2), "prefetch"),
    ((8, 4, 2, 4, 2, 0), "whole units of 1024"),
    ((8, 3, 16, 4, 2, 0), "a multiple of the writers"),
    ((8, 1, 32, 4, 1, 0), "at most 4 units each"),
    ((3, 4, 16, 4, 2, 0), "a multiple of the counters"),
    ((8, 8, 32, 4, 5, 0), "within the SM's 228 KiB"),
])
def test_bad_walk_shapes_are_refused_with_the_rule(shape, why):
    with pytest.raises(ConfigError, match=why):
        rle.check_walk_shape(shape)


def test_every_swept_walk_shape_is_valid_and_its_staging_is_a_unit_a_writer():
    for sh in rle.WALK_SHAPES:
        rle.check_walk_shape(sh)
        assert rr.reread_reason(sh, "walk") is None
    assert rle.WALK_SHAPES[0] == rle.WALK and len(set(rle.WALK_SHAPES)) == len(rle.WALK_SHAPES)
    assert rle.reread_smem(rle.WALK, rle.WALK_UNIT) == rle.WALK[1] * 1024 * 6
    assert rr.reread_name(rle.WALK, "walk") == "rle walk 8+4 warps, 16 KiB, 4 slots, 2 a SM"


def test_the_walk_encoder_and_its_experiments():
    assert "walk" in rle.ALL and "walk" in rle.SM90 and "walk" in rle.ONE_PASS
    assert [s.file for s in ex.RLE_SPECS["walk"]()] == ["03-scan/22_rle_walk.cu"]
    assert rle.walk_spec().template == (8, 4, 16 * 256, 4, 2, 0, 0)
    e = registry.get("scan.rle_walk")
    assert e.sweep and e.requires is ops.bulk_missing
    assert {"03-scan/22_rle_walk.cu", "03-scan/21_rle_reread.cu",
            "03-scan/20_rle_rounds.cu"} <= {s.file for s in e.kernels()}
    p = registry.get("scan.walk_profile")
    assert {s.file for s in p.kernels()} == {"03-scan/22_rle_walk.cu"}


# -- the page's numbers, from rows like the recorded ones --------------------------------
def _walk_rows(x22=3.0, failed=False):
    from perflab.chapters.scan import rounds as rd
    name = rr.reread_name(rle.WALK, "walk")
    t = 0.28
    rows = []
    for kind in ("short", "long", "mixed", "equal", "distinct"):
        for v, x in ((name, x22), (rr.reread_name(rle.REREAD), 2.5),
                     (rd.rounds_name(rle.ROUNDS), 3.2)):
            rows.append({"variant": v, "part": "race", "kind": kind, "diagnostic": 0,
                         "n": 1 << 25, "median_ms": t / x, "x_torch": x, "x_torch_min": x - 0.1,
                         "x_torch_max": x + 0.1, "correct": v != name or not failed})
        rows += [{"variant": "torch.unique_consecutive", "kind": kind, "median_ms": t,
                  "correct": True},
                 {"variant": "read ceiling", "kind": kind, "median_ms": 0.045, "x_torch": t / 0.045},
                 {"variant": "copy", "kind": kind, "median_ms": 0.075}]
    for dg, ms in ((1, 0.072), (2, 0.060), (3, 0.052)):
        rows.append({"variant": f"{name} diagnostic {dg}", "part": "race", "kind": "short",
                     "diagnostic": dg, "median_ms": ms, "x_torch": t / ms, "correct": None})
    rows += [{"variant": "rle walk", "part": "check", "n": n, "kind": "short", "correct": True}
             for n in (0, 1, 31)]
    rows += [{"variant": "rle walk", "part": "large", "n": (1 << 30) + 1, "kind": "short",
              "correct": True},
             {"variant": "rle walk", "part": "large", "n": (1 << 31) + 5, "kind": "short",
              "correct": None, "invalid": "n=2147483653: run positions and lengths are int32"},
             {"variant": "rle walk", "part": "stress", "n": 1000003, "calls": 1000,
              "wrong_calls": 0, "correct": True}]
    return pd.DataFrame(rows)


def _walk_profile():
    return pd.DataFrame([{"variant": "rle walk", "diagnostic": d, "duration_us": 68 - 8 * d,
                          "inst_executed": (37e6, 21e6, 13e6, 3e6)[d],
                          "issue_active_pct": 50.0, "dram_read_over_input": 1.03}
                         for d in rr.REREAD_PROFILE_DIAGS])


def test_the_eleventh_try_summary_comes_from_its_rows():
    from perflab.chapters.scan import report
    s = report.walk_summary(_walk_rows(), _walk_profile())
    assert s["wk11_short_x_torch"] == pytest.approx(3.0)
    assert s["wk11_over_rounds"] == pytest.approx(3.0 / 3.2)
    assert s["wk11_short_reread_x_torch"] == pytest.approx(2.5)
    assert s["wk11_cost_writers_us"] == pytest.approx(280 / 3 - 72)
    assert s["wk11_cost_waits_us"] == pytest.approx(12) and s["wk11_cost_counters_us"] == pytest.approx(8)
    assert s["wk11_loads_over_read_us"] == pytest.approx(52 - 45)
    assert s["wk11_need_us"] == pytest.approx(70)
    assert s["wk11_inst_writers_M"] == pytest.approx(16) and s["wk11_inst_counters_M"] == pytest.approx(10)
    assert s["wk11_mask_bytes"] == rle.WALK[2] * 1024 // 32
    assert s["wk11_n_failed"] == 0 and s["wk11_stress_ok"]
    lad = report.walk_ladder(_walk_rows())
    assert list(lad["step"])[:4] == ["22, the encoder", "diagnostic 1", "diagnostic 2",
                                     "diagnostic 3"]
    assert {"21, the encoder", "20, the encoder"} <= set(lad["step"])


def test_the_eleventh_try_targets_follow_the_rows():
    from perflab.chapters.scan import report
    assert report.targets_eleventh_try(report.walk_summary(_walk_rows(4.2)))["met"].iloc[0]
    assert not report.targets_eleventh_try(report.walk_summary(_walk_rows(3.0)))["met"].iloc[0]
    assert not report.targets_eleventh_try(
        report.walk_summary(_walk_rows(4.2, failed=True)))["met"].iloc[0]


# -- on a GPU -----------------------------------------------------------------------------
@pytest.fixture
def live(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["reread", "walk"])
@pytest.mark.parametrize("n", [1, 2, 31, 511, 513, 1023, 1025, 4097, 132 * 8192 - 1,
                               132 * 8192 * 3 + 1, 264 * 4096 - 1, 264 * 4096 * 3 + 1, 1000003])
@pytest.mark.parametrize("kind", ["equal", "distinct", "short", "long", "mixed"])
def test_the_encoders_round_trip(live, mode, n, kind):
    enc = rle.Encoder(n)
    x = rle.make_runs(n, kind, np.random.default_rng(n))
    chk, runs = ex.check_rle(x, *enc.encode(x, mode))
    assert chk.correct
    if kind == "equal":
        assert runs == 1
    if kind == "distinct":
        assert runs == n


@pytest.mark.gpu
@pytest.mark.parametrize("mode,shape", [("reread", sh) for sh in rle.REREAD_SHAPES]
                         + [("walk", sh) for sh in rle.WALK_SHAPES])
@pytest.mark.parametrize("kind", ["short", "distinct"])
def test_every_swept_shape_round_trips(live, mode, shape, kind):
    n = 1000003
    enc = rle.Encoder(n)
    x = rle.make_runs(n, kind, np.random.default_rng(4))
    getattr(enc, rr.MODES[mode][3])(x, shape)
    assert ex.check_rle(x, enc.values, enc.lengths, enc.count)[0].correct


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["reread", "walk"])
def test_back_to_back_encodes(live, mode):
    xs = [rle.make_runs(1000003, k, np.random.default_rng(9))
          for k in ("short", "long", "mixed", "distinct")]
    encs = [rle.Encoder(x.size) for x in xs]
    for k in range(100):
        encs[k % 4].encode(xs[k % 4], mode, check=False)
    for x, e in zip(xs, encs):
        assert ex.check_rle(x, e.values, e.lengths, e.count)[0].correct
