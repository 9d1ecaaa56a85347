"""Chapter 3's rounds encoder (20: no chain; the grid in lockstep rounds, one segment a
block a round, every block reading every block's count, the heads compacted into slots so
the stage is freed before the prefix) without a GPU: its shape rules, its compile (no
spills, its registers within the SM for its blocks), the cooperative prepared launch it
goes through, the experiment that sweeps it; on a GPU: its round trips at edge sizes on
every kind of runs, every swept shape, back-to-back calls."""
from __future__ import annotations

import numpy as np
import pytest

from perflab import registry
from perflab.chapters.scan import experiments as ex
from perflab.chapters.scan import ops, rle
from perflab.chapters.scan import rounds as rd
from perflab.errors import ConfigError


@pytest.mark.parametrize("shape,why", [
    ((8, 4, 32, 4, 6), "blocks an SM"),
    ((8, 4, 3, 4, 6, 1), "whole pieces of 512"),
    ((8, 4, 66, 2, 2, 1), "1 to 32 of them"),
    ((3, 4, 32, 4, 6, 1), "a multiple of the counters"),
    ((8, 17, 32, 4, 6, 1), "1 writer to one a piece"),
    ((8, 4, 32, 1, 6, 1), "2 to 16 each"),
    ((8, 4, 32, 4, 17, 1), "2 to 16 each"),
    ((8, 4, 32, 6, 6, 1), "within the SM's 228 KiB"),
    ((8, 4, 32, 4, 6, 2), "within the SM's 228 KiB"),
    ((16, 16, 32, 2, 10, 1), "at most 1024"),
])
def test_bad_rounds_shapes_are_refused_with_the_rule(shape, why):
    with pytest.raises(ConfigError, match=why):
        rle.check_rounds_shape(shape)


def test_every_swept_rounds_shape_is_valid_and_the_default_is_first():
    for sh in rle.ROUNDS_SHAPES:
        rle.check_rounds_shape(sh)
        assert rd.rounds_reason(sh) is None
    assert rle.ROUNDS_SHAPES[0] == rle.ROUNDS
    assert len(set(rle.ROUNDS_SHAPES)) == len(rle.ROUNDS_SHAPES)


def test_shared_memory_counts_ring_and_slots():
    # 32 KiB segments: 4 stages of (16 + 32768) B; a slot holds 16 pieces of 128 heads,
    # a 2-byte index and a 4-byte value each
    assert rle.rounds_smem((8, 4, 32, 4, 6, 1)) == 4 * 32784 + 6 * 16 * 128 * 6
    assert rle.rounds_smem((4, 2, 16, 4, 7, 2)) == 4 * 16400 + 7 * 8 * 128 * 6
    assert rle.rounds_threads((16, 8, 32, 2, 10, 1)) == (16 + 8 + 2) * 32


def test_rounds_kernels_compile_without_spills_and_fit_their_blocks():
    from perflab import compile_report as cr
    specs = [rle.rounds_spec(sh) for sh in rle.ROUNDS_SHAPES] + [
        rle.rounds_spec(rle.ROUNDS, d) for d in rle.ROUNDS_DIAGNOSTICS]
    shapes = list(rle.ROUNDS_SHAPES) + [rle.ROUNDS] * len(rle.ROUNDS_DIAGNOSTICS)
    df = cr.report(specs, ("sm_90",))
    assert len(df) == len(specs)
    assert (df["spill_store_bytes"] == 0).all() and (df["spill_load_bytes"] == 0).all()
    for sh, (_, r) in zip(shapes, df.iterrows()):
        assert r["registers"] * rle.rounds_threads(sh) * sh[5] <= 65536, sh


def test_the_rounds_encoder_is_an_encoder_of_its_own_file():
    assert "rounds" in rle.ALL
    assert [s.file for s in ex.RLE_SPECS["rounds"]()] == ["03-scan/20_rle_rounds.cu"]
    assert rle.traffic_bytes("rounds", 1000, 10) == 4 * 1000 + 8 * 10
    assert rle.rounds_spec().template == (16, 8, 32 * 256, 2, 10, 1, 0)


def test_shape_names_say_warps_segments_slots_and_blocks():
    assert rd.rounds_name(rle.ROUNDS) == "rle rounds 16+8 warps, 32 KiB x 2, 10 slots, 1 a SM"
    assert rd.rounds_params(rle.ROUNDS)["segment_kib"] == 32


def test_the_rounds_experiment_sweeps_and_needs_bulk_copies():
    e = registry.get("scan.rle_rounds")
    assert e.sweep and e.requires is ops.bulk_missing
    files = {s.file for s in e.kernels()}
    assert {"03-scan/20_rle_rounds.cu", "03-scan/19_rle_masks.cu", "03-scan/18_rle_lean.cu",
            "00-machine/read.cu"} <= files


def test_the_rounds_profile_takes_20_and_its_diagnostics():
    p = registry.get("scan.rounds_profile")
    assert [s.template[-1] for s in p.kernels()] == list(rd.ROUNDS_PROFILE_DIAGS)
    assert {s.file for s in p.kernels()} == {"03-scan/20_rle_rounds.cu"}


def test_a_captured_cooperative_launch_stays_cooperative(monkeypatch):
    from perflab import kernels
    from perflab.kernels import PreparedLaunch
    seen = []
    monkeypatch.setattr(kernels, "launch", lambda k, g, b, args, shared_mem=0, cooperative=False:
                        seen.append(cooperative))
    pl = PreparedLaunch.__new__(PreparedLaunch)
    pl.kernel = type("K", (), {"name": "k"})()
    pl.grid, pl.block, pl.shared_mem, pl.kinds, pl.cooperative = 4, 64, 0, "q", True
    with kernels.capture_launches():
        pl(1, 5)
    assert seen == [True]


# -- on a GPU -----------------------------------------------------------------------------
@pytest.fixture
def live(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 2, 31, 4095, 4097, 132 * 8192 - 1, 132 * 8192 * 3 + 1,
                               1000003])
@pytest.mark.parametrize("kind", ["equal", "distinct", "short", "long", "mixed"])
def test_rounds_encoder_round_trips(live, n, kind):
    enc = rle.Encoder(n)
    x = rle.make_runs(n, kind, np.random.default_rng(n))
    chk, runs = ex.check_rle(x, *enc.encode(x, "rounds"))
    assert chk.correct
    assert runs == (1 if kind == "equal" else n if kind == "distinct" else runs)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", rle.ROUNDS_SHAPES)
@pytest.mark.parametrize("kind", ["short", "distinct"])
def test_every_rounds_shape_round_trips(live, shape, kind):
    n = 1000003
    enc = rle.Encoder(n)
    x = rle.make_runs(n, kind, np.random.default_rng(4))
    enc._rounds(x, shape)
    assert ex.check_rle(x, enc.values, enc.lengths, enc.count)[0].correct


@pytest.mark.gpu
def test_back_to_back_rounds_encodes(live):
    xs = [rle.make_runs(1000003, k, np.random.default_rng(9)) for k in ("short", "long", "mixed", "distinct")]
    encs = [rle.Encoder(x.size) for x in xs]
    for k in range(100):
        encs[k % 4].encode(xs[k % 4], "rounds", check=False)
    for x, e in zip(xs, encs):
        assert ex.check_rle(x, e.values, e.lengths, e.count)[0].correct


def test_a_cooperative_launch_goes_to_the_compiled_function(monkeypatch):
    from perflab import kernels
    seen = []

    class Fn:
        def __call__(self, grid, block, args, shared_mem=0, enable_cooperative_groups=False):
            seen.append((grid, block, shared_mem, enable_cooperative_groups))

    class K:
        name, kernel = "k", Fn()

        def __call__(self, *a, **kw):
            raise AssertionError("a cooperative launch through the RawKernel call")

    monkeypatch.setattr(kernels, "check_launch", lambda *a: None)
    kernels.launch(K(), 3, 64, (), shared_mem=128, cooperative=True)
    assert seen == [((3,), (64,), 128, True)]
