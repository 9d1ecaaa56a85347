"""Chapter 7 (perflab.chapters.mandelbrot) without a GPU: the grid and its bad input, every
C path this CPU runs and NumPy (and Numba where installed) count for count against scalar
C, the CUDA kernels' logic run thread by thread on the CPU (compiled as C++), the SASS
facts the page reads, the cost model, the check, the interleaved host timing, the explorer
and the report on the recorded rows; and on a GPU the correctness pass."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from perflab import host, paths, registry
from perflab.chapters.mandelbrot import cpu, gpu, model, race, views
from perflab.chapters.mandelbrot.sass import Loop, hot_loop, loops
from perflab.errors import ConfigError, UnsupportedISAError

C_OK = host.unavailable() is None

GRIDS = [("full", 37, 11, 100), ("seahorse", 45, 31, 300), ("cardioid", 17, 3, 50),
         ("full", 1, 1, 10), ("full", 70, 9, 1)]


def test_experiments_are_registered_under_the_chapter():
    exps = {n: e for n, e in registry.all_experiments().items() if n.startswith("mandelbrot.")}
    assert {"mandelbrot.cpu", "mandelbrot.gpu", "mandelbrot.rate", "mandelbrot.versus",
            "mandelbrot.sweep", "mandelbrot.profile"} <= set(exps)
    assert all(e.chapter == "07-mandelbrot" for e in exps.values())
    assert exps["mandelbrot.cpu"].target == "host" and exps["mandelbrot.sweep"].sweep


# --------------------------------------------------------------------------- the grid

def test_grid_is_float32_pixel_centres():
    g = views.view("full").grid(640, 480)
    assert all(isinstance(a, np.float32) for a in g.args())
    assert g.dx == g.dy == np.float32(3.0 / 640)
    assert g.x0 == np.float32(-0.75 - 1.5 + 3.0 / 1280)


@pytest.mark.parametrize("w, h, match", [(0, 10, "width 0 is not positive"),
                                         (10, -3, "height -3 is not positive"),
                                         ((1 << 24) + 1, 4, "exceeds 2\\^24"),
                                         (10.5, 4, "whole number"), (True, 4, "whole number")])
def test_bad_sizes_are_refused(w, h, match):
    with pytest.raises(ConfigError, match=match):
        views.view("full").grid(w, h)


@pytest.mark.parametrize("max_iter", [0, -1, 1 << 31, 2.5])
def test_bad_iteration_limits_are_refused(max_iter):
    g = views.view("full").grid(8, 8)
    with pytest.raises(ConfigError, match="iteration limit"):
        cpu.numpy_render(g, max_iter)
    with pytest.raises(ConfigError, match="iteration limit"):
        gpu.caller(gpu.kernel("pixel"), g, max_iter, np.empty((8, 8), np.int32))


def test_unknown_names_are_refused():
    with pytest.raises(ConfigError, match="the views are full, cardioid, seahorse"):
        views.view("elephant")
    with pytest.raises(ConfigError, match="the kernels are pixel"):
        gpu.kernel("three pixels")
    with pytest.raises(ConfigError, match="U in"):
        gpu.chunked_spec(3)


@pytest.mark.parametrize("block, match", [((0, 4), "at least 1"), ((64, 32), "at most 1024"),
                                          ((8, 1), "not a whole number of 32-thread warps"),
                                          (("a", 1), "two whole numbers")])
def test_bad_blocks_are_refused(block, match):
    with pytest.raises(ConfigError, match=match):
        gpu.check_block(block)


def test_a_grid_too_tall_for_the_launch_is_refused():
    g = views.view("full").grid(64, 70000)
    assert gpu.launch_dims(gpu.kernel("pixel"), g, (32, 4)) == ((2, 17500), (32, 4))
    assert gpu.launch_dims(gpu.kernel("two pixels"), g, (32, 4))[0] == (1, 17500)
    assert gpu.launch_dims(gpu.kernel("one lane"), g, (32, 4)) == ((17500,), (256,))
    with pytest.raises(ConfigError, match="at most 65535"):
        gpu.launch_dims(gpu.kernel("pixel"), g, (32, 1))


# --------------------------------------------------------------------------- the CPU

def _reference(vname, w, h, mi):
    return cpu.c_render(cpu.C_PATHS["scalar"], views.view(vname).grid(w, h), mi, threads=1)


@pytest.mark.skipif(not C_OK, reason="no C compiler or cffi here")
@pytest.mark.parametrize("vname, w, h, mi", GRIDS)
def test_every_c_path_this_cpu_runs_matches_scalar(vname, w, h, mi):
    ref = _reference(vname, w, h, mi)
    assert ref.min() >= 0 and ref.max() <= mi
    ran = []
    for p in cpu.runnable():
        for threads in (1, 0, 3):
            out = np.full((h, w), np.iinfo(np.int32).min, np.int32)
            cpu.c_render(p, views.view(vname).grid(w, h), mi, threads, out)
            assert np.array_equal(out, ref), (p.name, threads)
        ran.append(p.name)
    assert {"scalar", "scalar ×2"} <= set(ran)
    assert ("AVX2" in ran) == host.supports("avx2")
    assert ("AVX-512" in ran) == host.supports("avx512f")


@pytest.mark.skipif(not C_OK, reason="no C compiler or cffi here")
def test_numpy_and_numba_match_scalar():
    for vname, w, h, mi in GRIDS[:3]:
        ref = _reference(vname, w, h, mi)
        g = views.view(vname).grid(w, h)
        assert np.array_equal(cpu.numpy_render(g, mi), ref)
        if cpu.numba_missing() is None:
            for par in (False, True):
                assert np.array_equal(cpu.numba_render(g, mi, par), ref)
        else:
            with pytest.raises(ConfigError, match="Numba is not installed"):
                cpu.numba_render(g, mi)


def test_a_cpu_without_avx512_refuses_the_path(monkeypatch):
    monkeypatch.setattr(host, "cpu_flags", lambda: frozenset({"sse4_2", "avx", "avx2", "fma"}))
    p = cpu.C_PATHS["AVX-512"]
    assert "has no avx512f" in p.runs_here()
    assert [q.name for q in cpu.widest()] == ["AVX2", "AVX2 ×2"] or not C_OK
    with pytest.raises(UnsupportedISAError, match="needs avx512f"):
        cpu.c_render(p, views.view("full").grid(8, 8), 10)


@pytest.mark.skipif(not C_OK, reason="no C compiler or cffi here")
def test_bad_calls_are_refused_in_python_and_in_c():
    g = views.view("full").grid(8, 8)
    with pytest.raises(ConfigError, match="threads must be"):
        cpu.c_render(cpu.C_PATHS["scalar"], g, 10, threads=-2)
    with pytest.raises(ConfigError, match="C-contiguous int32"):
        cpu.c_render(cpu.C_PATHS["scalar"], g, 10, out=np.empty((8, 8), np.int64))
    lib = host.load(cpu.SCALAR)                 # the C guard itself: -1, nothing written
    out = np.full(4, 7, np.int32)
    assert lib.mandel_scalar(host.pointer(out), 0, 4, 0.0, 0.0, 0.1, 0.1, 10, 1) == -1
    assert lib.mandel_scalar_x2(host.pointer(out), 2, 2, 0.0, 0.0, 0.1, 0.1, 0, 1) == -1
    assert (out == 7).all()


def test_the_c_files_are_compiled_without_contraction():
    for src in (cpu.SCALAR, cpu.AVX2, cpu.AVX512):
        assert "-ffp-contract=off" in src.flags
    assert "-fno-tree-vectorize" in cpu.SCALAR.flags


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc to compile the AVX-512 file")
def test_the_avx512_file_compiles(tmp_path):
    """Where the CPU cannot run it, it must still compile (a CPU with AVX-512 runs it in
    test_every_c_path_this_cpu_runs_matches_scalar)."""
    src = paths.KERNELS / cpu.AVX512.file
    p = subprocess.run(["gcc", "-O3", "-mavx512f", "-ffp-contract=off", "-fopenmp", "-fPIC",
                        "-shared", "-Wall", "-Werror", f"-I{paths.KERNELS}", "-o",
                        str(tmp_path / "a.so"), str(src)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


# --------------------------------------------------------------------------- the CUDA kernels' logic on the CPU

EMU = r"""
#include <cstdint>
#include <algorithm>
struct D3 { unsigned x, y, z; };
static D3 threadIdx, blockIdx, blockDim;
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
using std::min;
#include "07-mandelbrot/pixel.cu"
#include "07-mandelbrot/one_lane.cu"
#include "07-mandelbrot/two_pixels.cu"
#include "07-mandelbrot/chunked.cu"
typedef void (*K)(int*, int, int, float, float, float, float, int);
static void run(K k, long gx, long gy, unsigned bx, unsigned by, int* o, int w, int h,
                float x0, float y0, float dx, float dy, int mi) {
    blockDim = {bx, by, 1};
    for (long b2 = 0; b2 < gy; b2++) for (long b1 = 0; b1 < gx; b1++)
        for (unsigned t2 = 0; t2 < by; t2++) for (unsigned t1 = 0; t1 < bx; t1++) {
            blockIdx = {(unsigned)b1, (unsigned)b2, 0}; threadIdx = {t1, t2, 0};
            k(o, w, h, x0, y0, dx, dy, mi);
        }
}
extern "C" int emu(int which, int* o, int w, int h, float x0, float y0, float dx, float dy,
                   int mi, int bx, int by) {
    auto cdiv = [](long a, long b) { return (a + b - 1) / b; };
    switch (which) {
    case 0: run(mandel_pixel, cdiv(w, bx), cdiv(h, by), bx, by, o, w, h, x0, y0, dx, dy, mi); return 0;
    case 1: run(mandel_one_lane, cdiv((long)w * h, 256), 1, 256, 1, o, w, h, x0, y0, dx, dy, mi); return 0;
    case 2: run(mandel_two_pixels, cdiv(w, 2 * bx), cdiv(h, by), bx, by, o, w, h, x0, y0, dx, dy, mi); return 0;
    case 4: run(mandel_chunked<4>, cdiv(w, bx), cdiv(h, by), bx, by, o, w, h, x0, y0, dx, dy, mi); return 0;
    case 8: run(mandel_chunked<8>, cdiv(w, bx), cdiv(h, by), bx, by, o, w, h, x0, y0, dx, dy, mi); return 0;
    case 16: run(mandel_chunked<16>, cdiv(w, bx), cdiv(h, by), bx, by, o, w, h, x0, y0, dx, dy, mi); return 0;
    case 32: run(mandel_chunked<32>, cdiv(w, bx), cdiv(h, by), bx, by, o, w, h, x0, y0, dx, dy, mi); return 0;
    }
    return -1;
}
"""


@pytest.fixture(scope="module")
def emulated(tmp_path_factory):
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None or not C_OK:
        pytest.skip("no C++ compiler here to run the kernels' logic on the CPU")
    d = tmp_path_factory.mktemp("cuemu")
    (d / "emu.cpp").write_text(EMU)
    p = subprocess.run([cxx, "-O2", "-ffp-contract=off", "-fPIC", "-shared", f"-I{paths.KERNELS}",
                        "-o", str(d / "emu.so"), str(d / "emu.cpp")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    import cffi

    ffi = cffi.FFI()
    ffi.cdef("int emu(int which, int* o, int w, int h, float x0, float y0, float dx, float dy, "
             "int mi, int bx, int by);")
    return ffi, ffi.dlopen(str(d / "emu.so"))


@pytest.mark.parametrize("vname, w, h, mi", GRIDS + [("seahorse", 70, 9, 37)])
def test_the_cuda_kernels_logic_matches_scalar(emulated, vname, w, h, mi):
    """Every .cu kernel, run thread by thread on the CPU (float32, nothing fused, as
    --fmad=false compiles it), gives scalar C's count at every pixel, for block shapes
    whose warps cover rows, patches and strips, and limits that are not multiples of U."""
    ffi, lib = emulated
    g = views.view(vname).grid(w, h)
    ref = _reference(vname, w, h, mi)
    for which in (0, 1, 2, 4, 8, 16, 32):
        for bx, by in ((32, 4), (8, 8), (256, 1)):
            out = np.full((h, w), np.iinfo(np.int32).min, np.int32)
            assert lib.emu(which, ffi.from_buffer("int[]", out), w, h, *map(float, g.args()),
                           mi, bx, by) == 0
            assert np.array_equal(out, ref), (which, bx, by)


# --------------------------------------------------------------------------- the SASS

SNIPPET = """
.L_x_2:
        /*01e0*/                   FMUL R8, R6, R6 ;
        /*01f0*/                   FADD R10, R8, R11 ;
        /*0200*/                   FSETP.GT.AND P0, PT, R10, 4, PT ;
        /*0210*/               @P0 BRA `(.L_x_1) ;
        /*0220*/                   FFMA R6, R4, R11, R9 ;
        /*0230*/                   ISETP.GE.AND P0, PT, R7, UR8, PT ;
        /*0240*/              @!P0 BRA `(.L_x_2) ;
.L_x_1:
        /*0250*/                   EXIT ;
"""


def test_the_sass_reader_finds_the_loop_and_its_steps():
    (lp,) = loops(SNIPPET)
    assert (lp.start, lp.end, lp.instructions, lp.steps, lp.fp32) == (0x1e0, 0x240, 7, 1, 3)
    ps = hot_loop(SNIPPET).per_step()
    assert ps["fp32_per_step"] == 3 and ps["ffma_per_step"] == 1 and ps["instructions_per_step"] == 7
    with pytest.raises(ValueError, match="no loop"):
        hot_loop("/*0000*/ EXIT ;")
    assert isinstance(lp, Loop)


def test_what_the_page_reads_in_the_sass():
    """The exact builds fuse nothing (no FFMA in the loop), the FMA build does; every step
    is 8 FP32 instructions; chunks shorten the step, and the two-pixel loop is longer per
    step than the one-pixel loop."""
    from perflab.chapters.mandelbrot.report import loop_costs

    c = loop_costs("sm_90").set_index("variant")
    exact = [k for k in gpu.KERNELS if k != "pixel FMA"]
    assert (c.loc[exact, "ffma_per_step"] == 0).all()
    assert c.loc["pixel FMA", "ffma_per_step"] >= 1
    assert (c["fp32_per_step"] == 8).all()
    assert c.loc["two pixels", "steps_per_trip"] == 2
    per = [c.loc[f"chunked U={u}", "instructions_per_step"] for u in gpu.CHUNKS]
    assert per == sorted(per, reverse=True) and per[0] < c.loc["pixel", "instructions_per_step"]
    assert c.loc["two pixels", "instructions_per_step"] > c.loc["pixel", "instructions_per_step"]
    assert (c["spills"] == 0).all()


# --------------------------------------------------------------------------- the model and the check

def test_the_model_counts_each_warps_slowest_lane():
    counts = np.ones((4, 64), np.int32)         # 4 rows of 64: 8 warps of 32 pixels
    counts[:, 5] = 9                            # a slow column, one pixel in every row
    # steps = count + 1 (all escaped). Blocks 32×4: a warp is 32 pixels of one row, so the
    # column slows 4 warps (10 trips) and leaves 4 (2 trips).
    p = model.predict(gpu.kernel("pixel"), counts, 10, (32, 4))
    assert p["trips"] == 4 * 10 + 4 * 2
    assert p["useful_frac"] == pytest.approx(float((counts + 1).sum()) / (32 * 48))
    # Blocks 8×8: a warp is an 8×4 patch, so the column slows one warp.
    q = model.predict(gpu.kernel("pixel"), counts, 10, (8, 8))
    assert q["trips"] == 10 + 7 * 2
    # Two pixels per thread, blocks 32×4: a warp covers 64 pixels of a row, 4 warps.
    two = model.predict(gpu.kernel("two pixels"), counts, 10, (32, 4))
    assert two["trips"] == 4 * 10
    lane = model.predict(gpu.kernel("one lane"), counts, 10)
    assert lane["trips"] == float((counts + 1).sum()) and lane["useful_frac"] == 1 / 32


def test_the_chunked_model_counts_chunks_and_the_replay():
    counts = np.full((1, 32), 20, np.int32)     # every pixel escapes at step 20
    p = model.predict(gpu.kernel("chunked U=8"), counts, 64, (32, 1), chunk=8)
    assert p["trips"] == 3                      # chunks 0-7, 8-15 pass, 16-23 escapes
    assert p["replay_trips"] == 20 - 16 + 1     # replayed steps 16..20
    limit = model.predict(gpu.kernel("chunked U=8"), np.full((1, 32), 64, np.int32), 64,
                          (32, 1), chunk=8)
    assert (limit["trips"], limit["replay_trips"]) == (8, 0)


def test_the_check_finds_unwritten_and_differing_pixels():
    ref = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert gpu.compare_counts(ref.copy(), ref, 0.0).check.correct
    got = ref.copy()
    got[1, 2] = np.iinfo(np.int32).min
    c = gpu.compare_counts(got, ref, 0.5)
    assert not c.check.correct and c.unwritten == 1 and c.mismatches == 1
    got = ref.copy()
    got[2, 3] += 5
    c = gpu.compare_counts(got, ref, 0.0)
    assert not c.check.correct and c.where == [[3, 2, 11, 16]] and c.max_diff == 5
    assert gpu.compare_counts(got, ref, 0.1).check.correct       # 1 of 12 within 10 %


def test_interleaved_host_timing_has_rounds():
    res = race.interleaved({"a": ("host", lambda: None), "b": ("host", lambda: sum(range(100)))},
                           "test", budget_s=0.05, rounds=3)
    assert set(res) == {"a", "b"} and len(res["a"]["round_ms"]) == 3
    assert res["a"]["n_timed"] >= 3 and res["b"]["median_ms"] > 0


# --------------------------------------------------------------------------- recorded rows

def test_the_explorer_and_the_report_read_the_recorded_rows():
    from perflab import lab, targets
    from perflab.chapters.mandelbrot import report
    from perflab.chapters.mandelbrot.explorer import block_explorer

    sweep = lab.replay("mandelbrot.sweep")
    ex = block_explorer(sweep)
    assert ex.lookup({"view": "seahorse", "max_iter": 1024, "bx": 32, "by": 4})["status"] == "recorded"
    assert "at most 1024" in ex.lookup({"view": "full", "max_iter": 256, "bx": 256, "by": 8})["reason"]
    g, rate, vs = (lab.replay(f"mandelbrot.{e}") for e in ("gpu", "rate", "versus"))
    prof = lab.replay("mandelbrot.profile")
    src = report.CpuSources(lab.replay("mandelbrot.cpu", device_slug="intel-xeon"), None,
                            "not measured here")
    s = {**report.exact_facts(g, src), **report.cpu_facts(src), **report.gpu_facts(g, prof),
         **report.rate_facts(rate), **report.versus_facts(vs),
         **report.run_facts(g, rate, vs, prof, sweep, src)}
    assert s["gpu_exact_mismatches"] == 0 and s["n_failed"] == 0
    share = s["rate_pixel"] / s["rate_pixel_of_share"]      # its SASS's FP32 share
    assert 0 < s["rate_pixel"] <= share * 1.02              # issue-bound: under that share
    t = targets.table(report.TARGETS["07-mandelbrot"], s)
    assert t["met"].notna().sum() >= 5


def _texts(fig) -> list:
    """Every text artist of a figure (titles, labels, ticks, legends, annotations)."""
    import matplotlib.text
    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip()]


def _as_live(df):
    """A recorded frame presented as one measured live on this machine (for the figure)."""
    import copy
    d = df.copy()
    d.attrs = copy.deepcopy(df.attrs)
    d.attrs["source"].update(kind="live", run_ids=["livetest"])
    return d


def test_the_cpu_figure_mixing_sources_carries_both_captions():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from perflab import lab
    from perflab.chapters.mandelbrot import report

    assert report.host_slug() == "intel-xeon"          # the recorded GPU machine's host
    host_df = lab.replay("mandelbrot.cpu", device_slug="intel-xeon")
    live = _as_live(lab.replay("mandelbrot.cpu", device_slug="amd-epyc"))
    both = report.CpuSources(host_df, live, None)
    fig = report.cpu_figure(both)
    texts = [t.get_text() for t in _texts(fig)]
    stamp = " ".join(next(t for t in texts if "recorded on" in t).split())   # lines wrapped
    assert lab.caption(host_df) in stamp and lab.caption(live) in stamp
    assert "measured live on AMD EPYC" in stamp and "recorded on Intel(R) Xeon(R)" in stamp
    legend = " ".join(texts)
    assert "the GPU machine's host" in legend and "this machine" in legend
    assert all(t.get_fontsize() >= 9 for t in _texts(fig))
    _no_text_overlaps(fig)
    plt.close(fig)
    alone = report.cpu_figure(report.CpuSources(host_df, None, "no C compiler"))
    stamp = [t.get_text() for t in _texts(alone) if "recorded on" in t.get_text()]
    assert stamp and "measured live" not in stamp[0]
    plt.close(alone)


def test_the_cpu_findings_do_not_change_with_the_build_machine():
    from perflab import lab
    from perflab.chapters.mandelbrot import report

    host_df = lab.replay("mandelbrot.cpu", device_slug="intel-xeon")
    live = _as_live(lab.replay("mandelbrot.cpu", device_slug="amd-epyc"))
    a = report.cpu_facts(report.CpuSources(host_df, live, None))
    b = report.cpu_facts(report.CpuSources(host_df, None, "no C compiler"))
    assert {k: v for k, v in a.items() if k != "cpu_live_note"} == \
        {k: v for k, v in b.items() if k != "cpu_live_note"}
    assert "Intel(R) Xeon(R)" in a["host_cpu"] and "AMD EPYC" in a["cpu_live_note"]
    assert "no C compiler" in b["cpu_live_note"]
    rows = report.cpu_rows(report.CpuSources(host_df, live, None))
    assert list(dict.fromkeys(rows["role"])) == ["host", "live"]


def test_the_lanes_diagram_shows_the_reference_counts():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from perflab.chapters.mandelbrot import diagrams

    r = diagrams.ROW
    lanes = diagrams.row_lanes()
    g = views.view(r["view"]).grid(r["w"], r["h"])
    # the counts are the reference's (NumPy's here, which equals scalar C at every pixel)
    ref = cpu.numpy_render(g, r["max_iter"])[r["row"], r["col"]:r["col"] + 32]
    assert lanes.counts.tolist() == ref.tolist()
    trips = model.steps(ref, r["max_iter"])
    assert lanes.group_trips["simd"] == [trips[:16].max(), trips[16:].max()]
    assert lanes.group_trips["simt"] == [trips.max()]
    # the row is one that makes the point: the vectors stop at different trips, and the
    # warp wastes more of its lane-trips than the two vectors do
    assert lanes.group_trips["simd"][0] < lanes.group_trips["simd"][1]
    assert 0 < lanes.useful_pct("simt") < lanes.useful_pct("simd") < 100
    assert lanes.lane_trips("simt") == 32 * trips.max() and lanes.useful() == trips.sum()
    s = diagrams.lanes_summary(lanes)
    assert s["dg_warp_trips"] == trips.max() and s["dg_vec1_trips"] == trips[16:].max()
    fig = diagrams.draw_lanes(lanes)
    strip, ax_simd, ax_simt = fig.axes
    # one useful and one wasted bar per lane; the wasted bars end at their group's trips
    for ax, groups in ((ax_simd, [trips[:16].max()] * 16 + [trips[16:].max()] * 16),
                       (ax_simt, [trips.max()] * 32)):
        bars = ax.patches
        assert len(bars) == 64
        assert [b.get_height() for b in bars[:32]] == trips.tolist()
        assert [b.get_y() + b.get_height() for b in bars[32:]] == groups
    titles = ax_simd.get_title("left") + ax_simt.get_title("left")
    assert f"{lanes.useful_pct('simd'):.0f} %" in titles and f"{lanes.useful_pct('simt'):.0f} %" in titles
    assert all(t.get_fontsize() >= 9 for t in _texts(fig))
    assert fig.get_size_inches()[0] <= 7.5
    _no_text_overlaps(fig)
    plt.close(fig)


def _no_text_overlaps(fig):
    """No two texts of a figure (titles, labels, ticks, legend entries) overlap."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(r)) for t in _texts(fig) if t.get_visible()]
    for i, (a, ba) in enumerate(boxes):
        for b, bb in boxes[i + 1:]:
            assert not ba.overlaps(bb), f"{a!r} overlaps {b!r}"


@pytest.mark.gpu
def test_every_kernel_passes_its_check(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")
    from perflab import lab
    rows = lab.check_all(chapter="07-mandelbrot")
    assert rows and all(r["correct"] for r in rows)


def test_versus_is_refused_where_the_host_cannot_race(monkeypatch):
    """Without cffi or a C compiler the race would hold the GPU's rows alone and no ratio:
    it is refused with the reason (the recorded rows replay), never written half."""
    from perflab.errors import HostUnavailableError
    reason = "cffi is not installed"
    monkeypatch.setattr(host, "unavailable", lambda: reason)
    func = registry.all_experiments()["mandelbrot.versus"].func
    with pytest.raises(HostUnavailableError, match=reason):
        func(None)
