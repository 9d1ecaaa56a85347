"""Chapter 3's ballot encoder (23: each walker warp finds its heads by ballots and stages
them in shared memory at once; persistent blocks whose look-back warp, or a sequencer
warp, finds each tile's prefix while the walkers walk on, its runs waiting in one of three
stages) without a GPU: its shape rules, its compile (no spills, its registers within the
SM for its blocks), the experiments that sweep and profile it; on a GPU: its round trips
at edge sizes on every kind of runs, every swept shape, back-to-back calls."""
from __future__ import annotations

import numpy as np
import pytest

from perflab import registry
from perflab.chapters.scan import ballot as bl
from perflab.chapters.scan import experiments as ex
from perflab.chapters.scan import rle
from perflab.errors import ConfigError


@pytest.mark.parametrize("shape,why", [
    ((16, 2048, 16, 384, 2, 1), "sequencer tiles a lane"),
    ((31, 2048, 16, 384, 1, 1, 2), "1 to 31 walker warps"),
    ((16, 2000, 16, 384, 2, 1, 2), "whole batches"),
    ((16, 2048, 16, 2080, 1, 1, 2), "from 32 to the piece"),
    ((16, 2048, 16, 100, 2, 1, 2), "a multiple of 32"),
    ((16, 2048, 16, 384, 2, 3, 2), "1, 2, 4 or 8"),
    ((16, 2048, 16, 384, 2, 1, 8), "1, 2, 4 tiles"),
    ((16, 2048, 16, 512, 3, 1, 2), "228 KiB"),
    ((16, 1024, 16, 64, 4, 1, 2), "at most 64 warps"),
])
def test_bad_ballot_shapes_are_refused_with_the_rule(shape, why):
    with pytest.raises(ConfigError, match=why):
        rle.check_ballot_shape(shape)


def test_every_swept_shape_is_valid_and_the_default_is_first():
    for sh in rle.BALLOT_SHAPES:
        rle.check_ballot_shape(sh)
        assert bl.ballot_reason(sh) is None
    assert rle.BALLOT_SHAPES[0] == rle.BALLOT
    assert len(set(rle.BALLOT_SHAPES)) == len(rle.BALLOT_SHAPES)
    assert bl.ballot_reason((16, 2000, 16, 384, 2, 1, 2)) is not None


def test_shared_memory_is_the_kernels_stages_of_staged_heads():
    import re
    src = rle.ballot_spec().path.read_text()
    assert re.findall(r"^constexpr int STAGES = (\d+);", src, re.M) == [str(rle.BALLOT_STAGES)]
    # three stages a walker, CAP heads each, a 4-byte value and a 4-byte index a head
    assert rle.BALLOT_STAGES == 3
    assert rle.ballot_smem(rle.BALLOT) == 3 * 8 * 384 * 8
    assert rle.ballot_threads(rle.BALLOT) == (8 + 1 + 1) * 32        # and the sequencer's warp
    assert rle.ballot_threads((16, 2048, 16, 384, 2, 1, 0)) == (16 + 1) * 32


def test_the_kernels_compile_without_spills_and_fit_their_blocks():
    from perflab import compile_report as cr
    plan = ([(sh, 0) for sh in rle.BALLOT_SHAPES]
            + [(rle.BALLOT, d) for d in rle.BALLOT_DIAGNOSTICS])
    df = cr.report([rle.ballot_spec(sh, d) for sh, d in plan], ("sm_90", "sm_80"))
    assert len(df) == 2 * len(plan)
    assert (df["spill_store_bytes"] == 0).all() and (df["spill_load_bytes"] == 0).all()
    for k, (_, r) in enumerate(df.iterrows()):
        sh = plan[k // 2][0]
        assert r["registers"] * rle.ballot_threads(sh) * sh[4] <= 65536, sh


def test_the_ballot_encoder_is_an_encoder_of_its_own_file_for_any_recent_gpu():
    assert "ballot" in rle.ALL and "ballot" in rle.ONE_PASS and "ballot" not in rle.SM90
    assert [s.file for s in ex.RLE_SPECS["ballot"]()] == ["03-scan/23_rle_ballot.cu"]
    assert rle.traffic_bytes("ballot", 1000, 10) == 4 * 1000 + 8 * 10
    assert rle.ballot_spec().template == (8, 2048, 16, 384, 3, 1, 2, 0)
    assert rle.ballot_spec(rle.BALLOT, 3).template[-1] == 3


def test_ballot_names_say_the_shape_and_the_chain():
    assert bl.ballot_name(rle.BALLOT) == ("rle ballot 8 warps x 2048, 16 in flight, 384 staged, "
                                          "3 a SM, sequencer 2")
    assert bl.ballot_name((16, 2048, 16, 384, 2, 4, 0)).endswith("look-back width 4")
    assert bl.ballot_params(rle.BALLOT)["tile"] == 8 * 2048


def test_the_ballot_experiments_sweep_and_profile_23():
    e = registry.get("scan.rle_ballot")
    assert e.sweep and e.requires is None
    files = {s.file for s in e.kernels()}
    assert {"03-scan/23_rle_ballot.cu", "03-scan/22_rle_walk.cu", "03-scan/20_rle_rounds.cu",
            "00-machine/read.cu"} <= files
    p = registry.get("scan.ballot_profile")
    assert [s.template[-1] for s in p.kernels()] == list(bl.BALLOT_PROFILE_DIAGS)
    assert {s.file for s in p.kernels()} == {"03-scan/23_rle_ballot.cu"}


# -- the page's numbers, from rows like the recorded ones --------------------------------
def _ballot_rows(x23=3.6, failed=False):
    import pandas as pd
    from perflab.chapters.scan import reread as rr, rounds as rd
    name = bl.ballot_name(rle.BALLOT)
    t = 0.28
    others = [(bl.ballot_name(sh), 3.2) for sh in rle.BALLOT_SHAPES[1:]]
    rows = []
    for kind in ("short", "long", "mixed", "equal", "distinct"):
        for v, x in [(name, x23), (rr.reread_name(rle.WALK, "walk"), 3.1),
                     (rd.rounds_name(rle.ROUNDS), 3.2)] + others:
            rows.append({"variant": v, "part": "race", "kind": kind, "diagnostic": 0,
                         "n": 1 << 25, "median_ms": t / x, "x_torch": x, "x_torch_min": x - 0.1,
                         "x_torch_max": x + 0.1, "correct": v != name or not failed})
        rows += [{"variant": "torch.unique_consecutive", "kind": kind, "median_ms": t,
                  "correct": True},
                 {"variant": "read ceiling", "kind": kind, "median_ms": 0.045, "x_torch": t / 0.045},
                 {"variant": "copy", "kind": kind, "median_ms": 0.075}]
    for dg, ms in ((1, 0.070), (2, 0.063), (3, 0.054)):
        rows.append({"variant": f"{name} diagnostic {dg}", "part": "race", "kind": "short",
                     "diagnostic": dg, "median_ms": ms, "x_torch": t / ms, "correct": None})
    rows += [{"variant": "rle ballot", "part": "check", "n": n, "kind": "short", "correct": True}
             for n in (0, 1, 31)]
    rows += [{"variant": "rle ballot", "part": "large", "n": (1 << 30) + 1, "kind": "short",
              "correct": True},
             {"variant": "rle ballot", "part": "large", "n": (1 << 31) + 5, "kind": "short",
              "correct": None, "invalid": "n=2147483653: run positions and lengths are int32"},
             {"variant": "rle ballot", "part": "stress", "n": 1000003, "calls": 1000,
              "wrong_calls": 0, "correct": True}]
    return pd.DataFrame(rows)


def _ballot_profile():
    import pandas as pd
    return pd.DataFrame([{"variant": "rle ballot", "diagnostic": d,
                          "duration_us": (56.0, 49.5, 50.0, 38.0)[d],
                          "inst_executed": (26e6, 25.7e6, 21.6e6, 16e6)[d],
                          "issue_active_pct": 50.0, "dram_read_over_input": 1.0,
                          "dram_write_over_input": 0.13}
                         for d in bl.BALLOT_PROFILE_DIAGS])


def test_the_twelfth_try_summary_comes_from_its_rows():
    from perflab.chapters.scan import report
    s = report.ballot_summary(_ballot_rows(), _ballot_profile())
    assert s["bl12_short_x_torch"] == pytest.approx(3.6)
    assert s["bl12_over_rounds"] == pytest.approx(3.6 / 3.2)
    assert s["bl12_over_walk"] == pytest.approx(3.6 / 3.1)
    assert s["bl12_cost_chain_us"] == pytest.approx(280 / 3.6 - 70)
    assert s["bl12_cost_writes_us"] == pytest.approx(280 / 3.6 - 63)
    assert s["bl12_walk_over_read_us"] == pytest.approx(54 - 45)
    assert s["bl12_need_us"] == pytest.approx(70)
    assert s["bl12_inst_per_chunk"] == pytest.approx(16e6 / ((1 << 25) / 32))
    assert s["bl12_lead_pct"] == pytest.approx(100 * (1 - 56.0 / (280 / 3.6)))
    assert s["bl12_tiles"] == (1 << 25) // (rle.BALLOT[0] * rle.BALLOT[1])
    assert s["bl12_stages"] == 3 and s["bl12_smem_kib"] == 3 * 8 * 384 * 8 // 1024
    assert s["bl12_n_failed"] == 0 and s["bl12_stress_ok"] and s["bl12_large_ok"]
    lad = report.ballot_ladder(_ballot_rows())
    assert list(lad["step"])[:4] == ["23, the encoder", "diagnostic 1", "diagnostic 2",
                                     "diagnostic 3"]
    assert lad["saved_us"].iloc[3] == pytest.approx(280 / 3.6 - 54)
    assert {"22, the encoder", "20, the encoder", "read ceiling"} <= set(lad["step"])


def test_the_twelfth_try_targets_follow_the_rows():
    from perflab.chapters.scan import report
    assert report.targets_twelfth_try(report.ballot_summary(_ballot_rows(4.2)))["met"].iloc[0]
    assert not report.targets_twelfth_try(report.ballot_summary(_ballot_rows(3.6)))["met"].iloc[0]
    assert not report.targets_twelfth_try(
        report.ballot_summary(_ballot_rows(4.2, failed=True)))["met"].iloc[0]


# -- on a GPU -----------------------------------------------------------------------------
@pytest.fixture
def live(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")


TILE = rle.BALLOT[0] * rle.BALLOT[1]


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 2, 31, 32, 33, 2047, 2049, TILE - 1, TILE, TILE + 1,
                               264 * TILE + 7, 1000003])
@pytest.mark.parametrize("kind", ["equal", "distinct", "short", "long", "mixed"])
def test_the_encoder_round_trips(live, n, kind):
    enc = rle.Encoder(n)
    x = rle.make_runs(n, kind, np.random.default_rng(n))
    chk, runs = ex.check_rle(x, *enc.encode(x, "ballot"))
    assert chk.correct
    if kind == "equal":
        assert runs == 1
    if kind == "distinct":
        assert runs == n


@pytest.mark.gpu
@pytest.mark.parametrize("shape", rle.BALLOT_SHAPES)
@pytest.mark.parametrize("kind", ["short", "distinct"])
def test_every_swept_shape_round_trips(live, shape, kind):
    n = 1000003
    enc = rle.Encoder(n)
    x = rle.make_runs(n, kind, np.random.default_rng(4))
    enc._ballot(x, shape)
    assert ex.check_rle(x, enc.values, enc.lengths, enc.count)[0].correct


@pytest.mark.gpu
def test_back_to_back_encodes(live):
    xs = [rle.make_runs(1000003, k, np.random.default_rng(9))
          for k in ("short", "long", "mixed", "distinct")]
    encs = [rle.Encoder(x.size) for x in xs]
    for k in range(100):
        encs[k % 4].encode(xs[k % 4], "ballot", check=False)
    for x, e in zip(xs, encs):
        assert ex.check_rle(x, e.values, e.lengths, e.count)[0].correct
