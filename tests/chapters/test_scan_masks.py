"""Chapter 3's mask encoder (19: the heads found once, left as masks in shared memory,
the sequencer's chain shared by several warps, scanner groups) without a GPU: its shape
rules, its compile (no spills, its registers within the SM for its blocks), the prepared
launch it goes through, the experiments that sweep and profile it; on a GPU: its round
trips at edge sizes on every kind of runs, every swept shape, back-to-back calls."""
from __future__ import annotations

import numpy as np
import pytest

from perflab import registry
from perflab.chapters.scan import experiments as ex
from perflab.chapters.scan import masks as mx
from perflab.chapters.scan import ops, rle
from perflab.errors import ConfigError


@pytest.mark.parametrize("shape,why", [
    ((4, 2, 4, 4, 4, 128, 3), "scanner groups"),
    ((4, 3, 4, 4, 4, 128, 3, 1), "a multiple of the reducers"),
    ((17, 1, 4, 4, 4, 128, 1, 1), "1 to 16 scanners"),
    ((4, 2, 1, 4, 4, 128, 3, 1), "two or more"),
    ((4, 2, 4, 9, 4, 128, 3, 1), "1 to 8 tiles a lane"),
    ((4, 2, 4, 4, 5, 128, 3, 1), "1 to 4 warps"),
    ((4, 2, 4, 4, 4, -1, 3, 1), "0 or more"),
    ((4, 2, 3, 4, 4, 128, 3, 2), "a multiple of them"),
    ((16, 4, 4, 4, 4, 128, 1, 1), "within the SM's 228 KiB"),
    ((8, 4, 3, 4, 4, 128, 3, 1), "within the SM's 228 KiB"),
    ((16, 4, 2, 4, 4, 128, 1, 2), "at most 1024"),
])
def test_bad_mask_shapes_are_refused_with_the_rule(shape, why):
    with pytest.raises(ConfigError, match=why):
        rle.check_masks_shape(shape)


def test_every_swept_mask_shape_is_valid_and_the_default_is_first():
    for sh in rle.MASKS_SHAPES:
        rle.check_masks_shape(sh)
        assert mx.masks_reason(sh) is None
    assert rle.MASKS_SHAPES[0] == rle.MASKS
    assert len(set(rle.MASKS_SHAPES)) == len(rle.MASKS_SHAPES)


def test_shared_memory_counts_ring_masks_and_staging():
    # 4 scanners: 16 KiB tiles; 4 stages of (16 + 16384) B, a mask word for 32 elements,
    # 256 slots of 6 bytes a scanner of each group
    assert rle.masks_smem((4, 2, 4, 4, 4, 128, 3, 1)) == 4 * 16400 + 4 * 512 + 4 * 1536
    assert rle.masks_smem((4, 2, 4, 4, 4, 128, 2, 2)) == 4 * 16400 + 4 * 512 + 8 * 1536
    assert rle.masks_threads((4, 2, 4, 4, 4, 128, 2, 2)) == (8 + 2 + 1 + 4) * 32


def test_mask_kernels_compile_without_spills_and_fit_their_blocks():
    from perflab import compile_report as cr
    specs = [rle.masks_spec(sh) for sh in rle.MASKS_SHAPES] + [
        rle.masks_spec(rle.MASKS, d) for d in rle.BULK_DIAGNOSTICS]
    shapes = list(rle.MASKS_SHAPES) + [rle.MASKS] * len(rle.BULK_DIAGNOSTICS)
    df = cr.report(specs, ("sm_90",))
    assert len(df) == len(specs)
    assert (df["spill_store_bytes"] == 0).all() and (df["spill_load_bytes"] == 0).all()
    for sh, (_, r) in zip(shapes, df.iterrows()):
        assert r["registers"] * rle.masks_threads(sh) * sh[6] <= 65536, sh


def test_the_mask_encoder_is_an_encoder_of_its_own_file():
    assert "masks" in rle.ALL
    assert [s.file for s in ex.RLE_SPECS["masks"]()] == ["03-scan/19_rle_masks.cu"]
    assert rle.traffic_bytes("masks", 1000, 10) == 4 * 1000 + 8 * 10
    assert rle.masks_spec().template == rle.MASKS + (0,)


def test_the_mask_experiments_sweep_profile_and_need_bulk_copies():
    e = registry.get("scan.rle_masks")
    assert e.sweep and e.requires is ops.bulk_missing
    files = {s.file for s in e.kernels()}
    assert {"03-scan/19_rle_masks.cu", "03-scan/18_rle_lean.cu", "03-scan/17_rle_bulk.cu",
            "00-machine/read.cu"} <= files
    p = registry.get("scan.masks_profile")
    assert {s.file for s in p.kernels()} == {"03-scan/18_rle_lean.cu", "03-scan/19_rle_masks.cu"}


def test_shape_names_say_groups_sequencer_and_blocks():
    name = mx.masks_name((4, 2, 4, 4, 4, 128, 3, 1))
    assert name == "rle masks 1 x 4+2 warps, 16 KiB x 4, sequencer 4 x4, 3 a SM"
    assert mx.masks_params(rle.MASKS)["tile_kib"] == 16


def test_a_prepared_launch_refuses_a_grid_or_arguments_it_was_not_made_for():
    from perflab.errors import LaunchConfigError
    from perflab.kernels import PreparedLaunch
    pl = PreparedLaunch.__new__(PreparedLaunch)        # no kernel needed to check the rule
    pl.kernel = type("K", (), {"name": "k"})()
    pl.grid, pl.kinds = 4, "pq"
    with pytest.raises(LaunchConfigError, match="grid 5 of at most 4"):
        pl(5, None, 1)
    with pytest.raises(LaunchConfigError, match="1 arguments of 2"):
        pl(2, None)


def test_a_prepared_launch_puts_each_argument_where_its_pointer_points():
    import ctypes
    import struct
    from types import SimpleNamespace
    from perflab.kernels import PreparedLaunch
    pl = PreparedLaunch.__new__(PreparedLaunch)
    kinds = "pIqpIp"
    pl._lay_out(kinds)
    arrays = [SimpleNamespace(data=SimpleNamespace(ptr=p)) for p in (0x7f0012340000, 16, 1 << 40)]
    pl._put((arrays[0], 7, -(1 << 40), arrays[1], 0xffffffff, arrays[2]))
    ctype = {"p": ctypes.c_void_p, "q": ctypes.c_longlong, "I": ctypes.c_uint32}
    got = [ctypes.cast(pl._params[i], ctypes.POINTER(ctype[k])).contents.value
           for i, k in enumerate(kinds)]
    assert got == [0x7f0012340000, 7, -(1 << 40), 16, 0xffffffff, 1 << 40]
    assert all(pl._params[i] % ctypes.sizeof(ctype[k]) == 0 for i, k in enumerate(kinds))
    with pytest.raises(struct.error):               # a value its kind cannot hold: refused
        pl._put((arrays[0], 1 << 32, 0, arrays[1], 0, arrays[2]))
    with pytest.raises(struct.error):
        pl._put((arrays[0], -1, 0, arrays[1], 0, arrays[2]))


def test_a_captured_prepared_launch_goes_through_launch_with_the_kernels_widths(monkeypatch):
    from perflab import kernels
    from perflab.kernels import PreparedLaunch
    seen = []
    monkeypatch.setattr(kernels, "launch", lambda k, g, b, args, shared_mem=0:
                        seen.append((g, b, args, shared_mem)))
    pl = PreparedLaunch.__new__(PreparedLaunch)
    pl.kernel = type("K", (), {"name": "k"})()
    pl.grid, pl.block, pl.shared_mem, pl.kinds = 4, 64, 1024, "pqI"
    arr = object()
    with kernels.capture_launches():
        pl(3, arr, 5, 7)
    (g, b, args, smem), = seen
    assert (g, b, smem) == ((3,), (64,), 1024)
    assert args[0] is arr and args[1].dtype == np.int64 and args[2].dtype == np.uint32
    assert (int(args[1]), int(args[2])) == (5, 7)


# -- on a GPU -----------------------------------------------------------------------------
@pytest.fixture
def live(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 2, 31, 4095, 4097, 396 * 4096 + 1, 1000003])
@pytest.mark.parametrize("kind", ["equal", "distinct", "short", "long", "mixed"])
def test_mask_encoder_round_trips(live, n, kind):
    enc = rle.Encoder(n)
    x = rle.make_runs(n, kind, np.random.default_rng(n))
    chk, runs = ex.check_rle(x, *enc.encode(x, "masks"))
    assert chk.correct
    assert runs == (1 if kind == "equal" else n if kind == "distinct" else runs)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", rle.MASKS_SHAPES)
@pytest.mark.parametrize("kind", ["short", "distinct"])
def test_every_mask_shape_round_trips(live, shape, kind):
    n = 1000003
    enc = rle.Encoder(n)
    x = rle.make_runs(n, kind, np.random.default_rng(4))
    enc._masks(x, shape)
    assert ex.check_rle(x, enc.values, enc.lengths, enc.count)[0].correct


@pytest.mark.gpu
def test_back_to_back_mask_encodes(live):
    xs = [rle.make_runs(1000003, k, np.random.default_rng(9)) for k in ("short", "long", "mixed", "distinct")]
    encs = [rle.Encoder(x.size) for x in xs]
    for k in range(100):
        encs[k % 4].encode(xs[k % 4], "masks", check=False)
    for x, e in zip(xs, encs):
        assert ex.check_rle(x, e.values, e.lengths, e.count)[0].correct
