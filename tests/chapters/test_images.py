"""Chapter 4 (perflab.chapters.images) without a GPU: the exact references against a
brute-force loop at edge shapes, every bad input refused with its reason, the sanitizer
report parsed, and every kernel compiled offline with the instructions the chapter's
predictions rest on; on a GPU the correctness pass."""
from __future__ import annotations

import re

import numpy as np
import pytest

from perflab import registry
from perflab.chapters.images import blocks, ops, reference as ref, sanitize
from perflab.errors import ConfigError

EDGE_SHAPES = [(1, 1), (1, 17), (17, 1), (2, 3), (5, 9), (13, 11), (9, 40)]


def test_experiments_are_registered_under_the_chapter():
    exps = {n: e for n, e in registry.all_experiments().items() if n.startswith("images.")}
    assert {"images.vecadd", "images.gray", "images.blur", "images.photo", "images.blocks",
            "images.sanitize", "images.profile"} <= set(exps)
    assert all(e.chapter == "04-images" for e in exps.values())
    assert exps["images.blocks"].sweep


@pytest.mark.parametrize("shape", EDGE_SHAPES)
@pytest.mark.parametrize("radius", [1, 2, 4])
def test_blur_reference_is_the_clamped_box_mean(shape, radius):
    img = np.random.default_rng().integers(0, 256, shape, dtype=np.uint8)
    assert np.array_equal(ref.blur_ref(img, radius), ref.blur_brute(img, radius))


def test_blur_reference_keeps_a_flat_image_and_rounds_to_nearest():
    assert np.array_equal(ref.blur_ref(np.full((6, 7), 255, np.uint8), 4),
                          np.full((6, 7), 255, np.uint8))
    img = np.zeros((9, 9), np.uint8)     # the centre's window is the image, nothing clamped
    img[4, 4] = 41                       # 41 / 81 = 0.506 -> 1; 40 / 81 -> 0
    assert ref.blur_ref(img, 4)[4, 4] == 1
    img[4, 4] = 40
    assert ref.blur_ref(img, 4)[4, 4] == 0
    row = np.zeros((1, 9), np.uint8)     # one row: clamping repeats it 9 times
    row[0, 4] = 41
    assert ref.blur_ref(row, 4)[0, 4] == (9 * 41 + 40) // 81


def test_gray_reference_uses_the_integer_bt601_weights():
    px = np.array([[[0, 0, 0], [255, 255, 255], [255, 0, 0], [0, 255, 0], [0, 0, 255],
                    [10, 200, 30]]], np.uint8)
    got = ref.gray_ref(px)[0].tolist()
    assert got == [0, 255, 77, 149, 29, (77 * 10 + 150 * 200 + 29 * 30 + 128) >> 8]
    assert sum(ref.WEIGHTS) == 256
    # within half a level of the float BT.601 luma everywhere it is exact
    rgb = np.random.default_rng().integers(0, 256, (64, 64, 3), dtype=np.uint8)
    f = rgb @ np.array([0.299, 0.587, 0.114])
    assert np.abs(ref.gray_ref(rgb) - f).max() < 1.0


def test_the_photograph_ships_with_matplotlib_and_tiles():
    img = ref.photo()
    assert img.dtype == np.uint8 and img.shape == (600, 512, 3) and img.flags.c_contiguous
    big = ref.tiled(img, 1000, 1100)
    assert big.shape == (1000, 1100, 3)
    assert np.array_equal(big[600:1000, 512:1024], img[:400])
    assert ref.digest(img) == ref.digest(img.copy()) != ref.digest(big)


def test_bytes_moved_are_what_each_kernel_must_move():
    assert ref.vecadd_bytes(10) == 120
    assert ref.gray_bytes(3, 5) == 60
    assert ref.blur_bytes(3, 5) == 30
    assert ref.ops_per_element("blur", 4) == 81


# ---- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize("bad, words", [
    (np.zeros((4, 5, 3), np.float32), "dtype float32"),
    (np.zeros((4, 5), np.uint8), "expected a height × width × 3"),
    (np.zeros((4, 5, 4), np.uint8), "4 channels"),
    (np.zeros((4, 5, 1), np.uint8), "1 channels"),
    (np.zeros((4, 10, 3), np.uint8)[:, ::2], "not C-contiguous"),
    (np.zeros((6, 4, 3), np.uint8).transpose(1, 0, 2), "not C-contiguous"),
    (np.zeros((0, 5, 3), np.uint8), "empty"),
])
def test_bad_rgb_images_are_refused_with_the_reason(bad, words):
    with pytest.raises(ConfigError, match=re.escape(words)):
        ops.check_layout(bad, "rgb", np.uint8, 3, channels=3)


def test_a_misaligned_view_is_refused_for_the_vector_kernels():
    buf = np.zeros(3 * 16 * 16 + 64, np.uint8)
    base = (-buf.ctypes.data) % 16
    view = buf[base + 3: base + 3 + 3 * 256].reshape(16, 16, 3)
    ops.check_layout(view, "rgb", np.uint8, 3, channels=3, align=1)
    with pytest.raises(ConfigError, match="multiple of 16 bytes"):
        ops.check_layout(view, "rgb", np.uint8, 3, channels=3, align=16)


@pytest.mark.parametrize("bad, words", [
    (np.zeros(8, np.float64), "dtype float64"),
    (np.zeros((2, 4), np.float32), "1-D"),
    (np.zeros(16, np.float32)[::2], "not C-contiguous"),
])
def test_bad_vectors_are_refused(bad, words):
    with pytest.raises(ConfigError, match=re.escape(words)):
        ops.check_layout(bad, "a", np.float32, 1)


def test_numpy_arrays_are_sent_to_the_gpu_first():
    a = np.zeros(8, np.float32)
    with pytest.raises(ConfigError, match="CuPy array"):
        ops.vecadd(a, a, a)
    with pytest.raises(ConfigError, match="CuPy array"):
        ops.box_blur(np.zeros((4, 4), np.uint8))


@pytest.mark.parametrize("variant, radius", [("sliding", 5), ("sliding", 0), ("naive", 9),
                                             ("tiled", 2.0), ("naive", True), ("box", 1)])
def test_radius_and_variant_are_checked(variant, radius):
    with pytest.raises(ConfigError):
        ops.blur_spec(variant, radius)


def test_unknown_variants_name_the_known_ones():
    with pytest.raises(ConfigError, match="per-element, grid-stride, vec4"):
        ops.vecadd_spec("vec8")
    with pytest.raises(ConfigError, match="per-pixel, vec4px, vec16px"):
        ops.gray_spec("simd")


@pytest.mark.parametrize("block", [(2048, 1), (64, 32), (0, 4), ("a", 1), (32,)])
def test_impossible_blocks_are_refused(block):
    with pytest.raises(ConfigError):
        ops.check_block(block)


def test_the_explorer_grid_and_its_reasons():
    shapes = blocks.block_shapes()
    assert (32, 8) in shapes and (1024, 1) in shapes and (8, 32) in shapes
    assert all(x * y <= 1024 for x, y in shapes)
    assert blocks.block_reason(32, 8) is None
    assert "at most 1024" in blocks.block_reason(1024, 2)
    assert len(shapes) + sum(blocks.block_reason(x, y) is not None
                             for x in blocks.BLOCK_X for y in blocks.BLOCK_Y) \
        == len(blocks.BLOCK_X) * len(blocks.BLOCK_Y)


def test_tall_grids_are_refused_before_launch():
    with pytest.raises(ConfigError, match="blocks in y"):
        ops.grid2d(4, 65536 * 8 + 1, (32, 8))
    assert ops.grid2d(1001, 37, (32, 8)) == ((32, 5), (32, 8))


def test_tiled_blur_shared_memory_is_tile_and_halo():
    assert ops.tile_bytes((32, 8), 4) == 40 * 16


# ---- the kernels, compiled offline -------------------------------------------------------

def _sass(spec, arch="sm_90"):
    from perflab import compile_report as cr
    return cr.sass(spec, arch)


def _ops(sass: str) -> list[str]:
    return re.findall(r"\b((?:LDG|STG|LDS|STS|SHFL|BAR)\.?[A-Z0-9.]*)", sass)


def test_every_kernel_compiles_for_turing_and_hopper_without_spills():
    from perflab import compile_report as cr
    specs = {(s.file, s.name_expression): s for e in registry.all_experiments().values()
             if e.chapter == "04-images" for s in e.kernels()}
    df = cr.report([s for s in specs.values() if s.file.startswith("04-images")],
                   ("sm_75", "sm_90"))
    assert len(df) >= 2 * 11
    assert (df["spill_store_bytes"] == 0).all() and (df["stack_frame_bytes"] == 0).all()


def test_vec16_gray_loads_and_stores_128_bits():
    ops_ = _ops(_sass(ops.gray_spec("vec16px")))
    assert ops_.count("LDG.E.128.CONSTANT") == 3 and ops_.count("STG.E.128") == 1


def test_vec4_gray_loads_32_bits_and_per_pixel_loads_bytes():
    wide = _ops(_sass(ops.gray_spec("vec4px")))
    assert wide.count("LDG.E.CONSTANT") == 3 and "STG.E" in wide
    narrow = _ops(_sass(ops.gray_spec("per-pixel")))
    assert narrow.count("LDG.E.U8.CONSTANT") == 3 and narrow.count("STG.E.U8") == 1


def test_vec4_vecadd_keeps_six_16_byte_loads_ahead_of_its_first_store():
    """The whole-trip path (every block but the last): at least 6 of its 8 LDG.128 before
    the first STG.128 (with a guard on each vector, the compiler paired each store with its
    two loads: 32 B in flight instead of about 100)."""
    seq = "".join("L" if o.startswith("LDG.E.128") else "S" if o.startswith("STG.E.128") else ""
                  for o in _ops(_sass(ops.vecadd_spec("vec4"))))
    assert max(len(r) for r in re.findall("L+", seq)) >= 6


def test_grid_stride_loop_batches_loads_the_per_element_kernel_cannot():
    """The prediction for the grid-stride VecAdd rests on this: the compiler unrolls the
    loop and issues 8 loads (4 iterations × a and b) before the first store."""
    seq = "".join("L" if o.startswith("LDG") else "S" if o.startswith("STG") else ""
                  for o in _ops(_sass(ops.vecadd_spec("grid-stride"))))
    assert "L" * 8 + "S" in seq
    one = "".join("L" if o.startswith("LDG") else "S" if o.startswith("STG") else ""
                  for o in _ops(_sass(ops.vecadd_spec("per-element"))))
    assert one == "LLS"


def test_naive_blur_loads_every_tap_and_tiled_reads_shared_memory():
    naive = _ops(_sass(ops.blur_spec("naive", 4)))
    assert naive.count("LDG.E.U8.CONSTANT") == 81
    tiled = _ops(_sass(ops.blur_spec("tiled", 4)))
    assert sum(o.startswith("LDS.U8") for o in tiled) == 81 and any(x.startswith("BAR.SYNC") for x in tiled)


def test_sliding_blur_uses_shuffles_and_no_shared_or_local_memory():
    sass = _sass(ops.blur_spec("sliding", 4))
    o = _ops(sass)
    assert any(x.startswith("SHFL.UP") for x in o) and any(x.startswith("SHFL.DOWN") for x in o)
    assert not any(x.startswith(("LDS", "STS")) for x in o)
    assert not re.search(r"\b(LDL|STL)\b", sass)


@pytest.mark.gpu
def test_every_kernel_passes_its_check(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")
    from perflab import lab
    rows = lab.check_all(chapter="04-images")
    assert rows and all(r["correct"] for r in rows)


# ---- the page and the recorded run --------------------------------------------------------

def test_the_photograph_shown_is_what_every_recorded_kernel_wrote():
    """The page shows reference images; that is honest only while each kernel's recorded
    output has the reference's sha256."""
    import perflab as lab
    from perflab.chapters.images import report
    hashes = report.photo_hashes(lab.replay("images.photo"), report.photo_images())
    kern = hashes[hashes["role"] == "kernel"]
    assert len(kern) == len(ops.GRAY) + len(ops.BLUR) and kern["same_bytes"].all()


# ---- the running-sums diagram --------------------------------------------------------------

def test_the_sliding_geometry_is_the_kernels():
    """Four columns a lane, lanes 1 … 30 write the strip's 120 columns, and a box of radius
    R ≤ 4 needs only the lane and its two neighbours (the kernel's static_assert); R = 5
    would need a lane further away."""
    from perflab.chapters.images import diagrams as d

    assert d.COLS_PER_LANE * d.WRITERS == ops.SLIDING_COLS
    written = [d.first_column(L) + j for L in range(32) if d.writes(L) for j in range(4)]
    assert written == list(range(ops.SLIDING_COLS))
    for r in range(1, ops.MAX_RADIUS["sliding"] + 1):
        for L in range(1, 31):
            for j in range(4):
                assert d.box_lanes(L, j, r) <= {L - 1, L, L + 1}
    assert not d.box_lanes(5, 0, 5) <= {4, 5, 6}


def test_the_sliding_diagram_draws():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from perflab.chapters.images import diagrams as d

    fig = d.draw_sliding()
    try:
        texts = [t for ax in fig.axes for t in ax.texts] + list(fig.texts)
        k = 2 * d.RADIUS + 1
        signs = [t.get_text() for t in texts]
        assert signs.count("−") == signs.count("+") == 3 * d.COLS_PER_LANE
        assert signs.count("Σ") == 3 * d.COLS_PER_LANE
        assert any(f"{k} × {k} box" in s for s in signs)
        assert any(f"{ops.SLIDING_COLS} output columns" in s for s in signs)
        assert fig.get_size_inches()[0] <= 7.5
        assert min(t.get_fontsize() for t in texts if t.get_text()) >= 9
    finally:
        plt.close(fig)


# ---- the races, without a GPU (perflab.race with a faked timing) ----------------------------

def test_a_race_is_checked_timed_and_rated_against_the_faster_copy_ceiling(monkeypatch):
    """The contestants and the three copies in one race: the baseline is the faster of
    cudaMemcpy and cupy copyto (chapter 0's copy kernel, faster still, is a contestant),
    compared by rate over the copies' own bytes (992 B: 500 rounded down to 16, read and
    written) against the contestants' 1000; the rows keep their roles, launches and check
    metrics, and the report reads the ceiling from the baseline's own row."""
    from perflab import lab
    from perflab.chapters.images import experiments as E, report

    from .race_helpers import OK, context, fake_cupy, value

    fake_cupy(monkeypatch)
    monkeypatch.setattr(E, "get_kernel", lambda spec: "copy_vec4")
    monkeypatch.setattr(E, "launch", lambda k, g, b, args: np.copyto(args[1], args[0]))
    ctx, log = context("images.vecadd", {
        "per-element": [2.0] * 9, "vec4": [1.0] * 8 + [2.0], "CuPy a + b": [1.25] * 9,
        "cudaMemcpy": [1.1] * 9, "cupy copyto": [1.0] * 9, "chapter 0 copy kernel": [0.9] * 9})
    ran = []

    def kernel(v):
        return E.contestant(v, lambda: ran.append(v), lambda: (OK, {"max_abs_diff": (0, "levels")}),
                            1000, "kernel", [ops.vecadd_spec(v)], {"grid": 8, "block": 256})
    entries = [kernel("per-element"), kernel("vec4"),
               E.contestant("CuPy a + b", lambda: None, lambda: (OK, {}), 1000, "library")]
    rows = E.run_race(ctx, entries, 500, {"n": 250}, budget_s=1.0)
    names = ["per-element", "vec4", "CuPy a + b", "cudaMemcpy", "cupy copyto",
             "chapter 0 copy kernel"]
    assert log == [("interleaved", names, 1.0)] and list(rows) == names
    assert {r["baseline"] for r in rows.values()} == {"cupy copyto"}
    assert [r["params"] for r in rows.values()] == [{"n": 250, "role": role} for role in
                                                    ("kernel", "kernel", "library", "copy",
                                                     "copy", "copy")]
    assert value(rows["vec4"], "of_copy") == pytest.approx(1000 / 992)
    assert value(rows["vec4"], "of_copy_min") == pytest.approx(0.5 * 1000 / 992)
    assert value(rows["per-element"], "of_copy") == pytest.approx(0.5 * 1000 / 992)
    assert value(rows["chapter 0 copy kernel"], "of_copy") == pytest.approx(1 / 0.9)
    assert value(rows["cudaMemcpy"], "of_copy") == pytest.approx(1 / 1.1)
    assert value(rows["cupy copyto"], "of_copy") == 1.0      # the ceiling itself, as recorded
    assert value(rows["vec4"], "TB/s") == pytest.approx(1000 / 1e-3 / 1e12)
    assert value(rows["vec4"], "rounds") == 9 and value(rows["vec4"], "max_abs_diff") == 0
    assert rows["vec4"]["launch"] == {"grid": 8, "block": 256}
    assert rows["CuPy a + b"]["launch"] == {} and rows["cudaMemcpy"]["launch"] == {}
    k = rows["chapter 0 copy kernel"]
    assert k["kernels"][0]["file"] == "00-machine/copy.cu" and k["launch"]["block"] == 256
    assert all(r["correct"] for r in rows.values())
    df = lab.frame(ctx.rows, source="live")
    assert report.race_ceiling_tbs(df) == pytest.approx(992 / 1e-3 / 1e12)
    assert report.race_rounds(df) == 9
    best = report.race_best(df, "vecadd")
    assert best["vecadd_best_x"] == pytest.approx(1000 / 992)


def test_a_block_shape_is_checked_then_timed_alone(monkeypatch):
    """images.blocks: each shape a race of one (Context.time under the shape's name), its
    row with TB/s, the median in µs and its rate over the kernel's best shape."""
    from .race_helpers import context, device, fake_cupy, value

    fake_cupy(monkeypatch)
    monkeypatch.setattr(blocks, "random_rgb", lambda h, w: device(
        np.random.default_rng(1).integers(0, 256, (h, w, 3), dtype=np.uint8)))
    monkeypatch.setattr(blocks, "random_gray", lambda h, w: device(
        np.random.default_rng(2).integers(0, 256, (h, w), dtype=np.uint8)))
    monkeypatch.setattr(blocks, "free_pool", lambda: None)

    def gray_call(rgb, out, v, block):
        return (lambda: out.__setitem__(Ellipsis, ref.gray_ref(rgb)),
                {"grid": [1, 1], "block": list(block)})
    monkeypatch.setattr(ops, "gray_call", gray_call)
    ctx, log = context("images.blocks", {"gray per-pixel/8x1": [2.0],
                                         "gray per-pixel/32x8": [1.0]})
    blocks.blocks(ctx, shape=(5, 9), blocks=((8, 1), (32, 8)), kernels=("gray per-pixel",))
    assert log == [("alone", "gray per-pixel/8x1", 0.05), ("alone", "gray per-pixel/32x8", 0.05)]
    slow, fast = ctx.rows
    assert slow["variant"] == "gray per-pixel"
    assert slow["launch"] == {"grid": [1, 1], "block": [8, 1]}
    assert slow["params"] == {"kernel": "gray per-pixel", "bx": 8, "by": 1, "height": 5,
                              "width": 9, "radius": 0}
    assert value(slow, "TB/s") == pytest.approx(ref.gray_bytes(5, 9) / 2e-3 / 1e12)
    assert value(slow, "median_us") == pytest.approx(2000) and value(slow, "max_abs_diff") == 0
    assert (value(slow, "of_best"), value(fast, "of_best")) == (pytest.approx(0.5), 1.0)
