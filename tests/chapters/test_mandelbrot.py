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
from perflab.chapters.mandelbrot import cpu, gpu, model, views
from perflab.compile_report import FP32, hot_loop, loop_lines, loops
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
    """The core's SASS reader finds the loop, its FSETPs (the steps) and FP32 family; the
    chapter reads them per step."""
    from perflab.chapters.mandelbrot.report import STEP, per_step

    (lp,) = loops(SNIPPET)
    assert (lp.start, lp.end, lp.instructions, lp.count(STEP), lp.count(*FP32)) == \
        (0x1e0, 0x240, 7, 1, 3)
    hot = hot_loop(SNIPPET, STEP)
    ps = per_step(hot)
    assert ps["fp32_per_step"] == 3 and ps["ffma_per_step"] == 1 and ps["instructions_per_step"] == 7
    lines = loop_lines(SNIPPET, hot)
    assert len(lines) == 7 and lines[0].startswith("/*01e0*/")
    assert lines[-1].endswith("BRA `(.L_x_2) ;")
    with pytest.raises(ValueError, match="no loop"):
        hot_loop("/*0000*/ EXIT ;", STEP)


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


@pytest.mark.skipif(not C_OK, reason="no C compiler or cffi here")
def test_the_cpu_race_runs_here_and_names_its_ratios():
    """mandelbrot.cpu live on this CPU through perflab.race (host entries, no GPU): every
    path checked, the correct ones timed in 5 rounds; scalar C on one core is the baseline
    and lists itself at 1×; a path this CPU cannot run is written with its reason, untimed."""
    exp = registry.get("mandelbrot.cpu")
    ctx = registry.Context(exp, {"run_id": "test"})
    exp.func(ctx, cases=(("full", 37, 11, 64),), budget_s=0.05)
    rows = {(r["variant"], r["params"]["threads"]): r for r in ctx.rows}
    assert len(rows) == len(ctx.rows) and all(r["params"]["view"] == "full" for r in ctx.rows)
    base = rows[("scalar", "1")]["metrics"]
    assert [base[k]["value"] for k in ("vs_scalar", "vs_scalar_min", "vs_scalar_max")] == [1, 1, 1]
    for r in ctx.rows:
        m = r["metrics"]
        assert m["iterations"]["unit"] == "1"
        if not r["runs_here"]:
            assert r["reason"] and r["correct"] is None and "median_ms" not in m
            continue
        assert r["correct"] and m["rounds"]["value"] == 5 and m["vs_scalar"]["unit"] == "1"
        assert m["Giter/s"]["value"] == pytest.approx(
            m["iterations"]["value"] / m["median_ms"]["value"] / 1e6)


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


# --------------------------------------------------------------------------- the GPU races, faked

class _FakeTimedCtx(registry.Context):
    """A Context whose interleaved timing is a fixed table (call i: 1 + i ms, a little
    slower each round) and keeps what it was asked to time."""

    def time_interleaved(self, calls, *, budget_s=None, rounds=None, host=()):
        self.timed.append({"calls": list(calls), "host": list(host), "rounds": rounds,
                           "budget_s": budget_s})
        out = {}
        for i, k in enumerate(calls):
            t = [1.0 + i + 0.01 * r for r in range(rounds)]
            out[k] = {"median_ms": float(np.median(t)), "p20_ms": t[0], "p80_ms": t[-1],
                      "min_ms": t[0], "n_timed": len(t), "round_ms": t}
        return out


def _no_gpu(monkeypatch):
    """What the GPU races launch, replaced: CuPy by NumPy, a kernel's launch by a copy of
    the reference into its output (the FMA build: one pixel off), its launch record and the
    FFMA peak by fixed ones."""
    import sys
    import types

    from perflab import race
    from perflab.chapters.mandelbrot import experiments as ex
    from perflab.correctness import Check

    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(
        empty=np.empty, int32=np.int32, nan=np.nan, iinfo=np.iinfo))
    monkeypatch.setattr(race, "checked", lambda fn, what: fn())

    def caller(k, grid, max_iter, out, block=gpu.DEFAULT_BLOCK):
        ref = cpu.cached_reference(grid, max_iter).copy()
        if k.tolerance:
            ref[0, 0] += 1
        return lambda: np.copyto(out, ref)
    monkeypatch.setattr(gpu, "caller", caller)
    monkeypatch.setattr(ex, "launch_info", lambda k, grid, block: {
        "grid": [1, 1], "block": list(block), "registers": 32, "blocks_per_sm": 16,
        "occupancy": 1.0})
    monkeypatch.setattr(ex, "fma_peak", lambda n: (
        lambda: None, lambda: Check(True, 0.0, 0.0, 0), 1e12,
        {"grid": 132, "block": [256], "blocks_per_sm": 8, "registers": 20}))
    monkeypatch.setattr(ex, "clocks_now", lambda: {"sm_clock_mhz": 1980.0})


@pytest.mark.skipif(not C_OK, reason="no C compiler or cffi here")
@pytest.mark.parametrize("name", ["gpu", "rate", "versus"])
def test_the_gpu_races_write_the_recorded_rows_names(monkeypatch, name):
    """Each GPU race (kernels faked, the C paths real) writes the rows of its recorded
    run: the same variants, params, row fields and metric names, the race adding only
    n_timed and the ratios' rounds; its calls timed in the rounds of before (host calls
    named as such)."""
    import json

    _no_gpu(monkeypatch)
    exp = registry.get(f"mandelbrot.{name}")
    ctx = _FakeTimedCtx(exp, {"run_id": "test"})
    ctx.timed = []
    exp.func(ctx, **exp.small)
    path = paths.RESULTS / "nvidia-h200" / "07-mandelbrot" / f"mandelbrot.{name}.json"
    recorded = {}
    for r in json.loads(path.read_text())["rows"]:
        recorded.setdefault((r["variant"], r["params"].get("side")), r)
    assert ctx.rows and len(ctx.timed) == len({r["params"]["view"] for r in ctx.rows} - {"-"})
    for r in ctx.rows:
        side = r["params"].get("side")
        old = recorded.get((r["variant"], side)) or next(  # another CPU's widest paths
            v for (_, s), v in recorded.items() if s == side)
        assert set(r) == set(old), r["variant"]
        assert list(r["params"]) == list(old["params"]), r["variant"]
        new = set(r["metrics"]) - set(old["metrics"])
        assert set(old["metrics"]) <= set(r["metrics"]) and new <= {"n_timed", "rounds"}, \
            (r["variant"], set(old["metrics"]) ^ set(r["metrics"]))
        assert all(r["metrics"][k]["unit"] == old["metrics"][k]["unit"] for k in old["metrics"])
        assert r["launch"] if side != "cpu" else r["launch"] == {}
    rounds = {"gpu": 9, "rate": 9, "versus": 5}[name]
    budget = exp.small.get("budget_s", exp.defaults["budget_s"])
    assert all(t["rounds"] == rounds and t["budget_s"] == budget for t in ctx.timed)
    hosts = [t["host"] for t in ctx.timed]
    assert all(h and all(n.endswith("/ all cores") for n in h) for h in hosts) if name == "versus" \
        else hosts == [[]] * len(hosts)
    if name == "rate":
        peak = next(r for r in ctx.rows if r["variant"] == "FFMA peak")
        assert list(peak["round_ms"]) == ctx.timed[0]["calls"]
        assert peak["metrics"]["FFMA/s"]["value"] == pytest.approx(1e12 / (
            peak["metrics"]["median_ms"]["value"] * 1e-3))
    if name == "gpu":
        fma = next(r for r in ctx.rows if r["variant"] == "pixel FMA")
        assert fma["mismatch_where"] and fma["base"] == "pixel"
        m = fma["metrics"]            # its time over the one-pixel kernel's, round by round
        assert [m[f"slower_than_base{s}"]["value"] for s in ("", "_min", "_max")] == \
            pytest.approx([2.04 / 1.04, 2.08 / 1.08, 2.0])
    if name == "versus":
        best = {r["best_cpu"] for r in ctx.rows}
        assert len(best) == 1 and best.pop().endswith("/ all cores")
