"""Chapter 6 (perflab.chapters.convolution) without a GPU: the float64 reference against a
direct sum, every reason a configuration or an operand is refused, the correctness cases
every kernel gets, and the SASS facts the page explains (branches, predicated loads, the
shared-memory loads and FFMAs of the register tiles); on a GPU, the correctness pass."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from perflab import compile_report as cr
from perflab import registry
from perflab.chapters.convolution import experiments as ex
from perflab.chapters.convolution import reference as refm
from perflab.chapters.convolution import variants as V
from perflab.errors import ConfigError


def test_experiments_are_registered_under_the_chapter():
    exps = {n: e for n, e in registry.all_experiments().items() if n.startswith("convolution.")}
    assert {"convolution.check", "convolution.conv1d", "convolution.conv2d", "convolution.conv3d",
            "convolution.radius", "convolution.tiles2d", "convolution.tiles3d",
            "convolution.profile", "convolution.check_wide", "convolution.wide2d",
            "convolution.wide3d", "convolution.radius_wide",
            "convolution.profile_wide"} <= set(exps)
    assert all(e.chapter == "06-convolution" for e in exps.values())


def _direct(x, f, op):
    """The definition, one output at a time, in float64."""
    x, f = x.astype(np.float64), f.astype(np.float64)
    r = (f.shape[-1] - 1) // 2
    out = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        s = 0.0
        taps = np.ndindex(f.shape[1:]) if op == "depthwise" else np.ndindex(f.shape)
        for j in taps:
            if op == "depthwise":
                k = (i[0], i[1] + j[0] - r, i[2] + j[1] - r)
                w = f[(i[0],) + j]
            else:
                k = tuple(a + b - r for a, b in zip(i, j))
                w = f[j]
            if all(0 <= kk < n for kk, n in zip(k, x.shape)):
                s += w * x[k]
        out[i] = s
    return out


@pytest.mark.parametrize("shape,r,op", [((13,), 2, "conv"), ((7, 9), 1, "conv"), ((5, 4), 3, "conv"),
                                        ((3, 5, 6), 1, "conv"), ((4, 5, 6), 2, "depthwise"),
                                        ((7, 9), 0, "conv"), ((3, 4), 5, "conv")])
def test_reference_is_the_zero_boundary_correlation(shape, r, op):
    rng = np.random.default_rng(1)
    x = refm.fresh(shape, rng)
    f = refm.filter_for(len(shape), r, rng, op, depth=shape[0])
    np.testing.assert_allclose(refm.reference(x, f, op), _direct(x, f, op), rtol=1e-12, atol=1e-12)


def test_reference_is_convolve_with_the_flipped_filter():
    """scipy's convolve flips the filter: correlating with f is convolving with f flipped
    (the identity the library comparison relies on), checked on the definition."""
    rng = np.random.default_rng(2)
    x, f = refm.fresh((6, 7), rng), refm.filter_for(2, 1, rng)
    conv = np.zeros((6, 7))
    for (y, xx), (i, j) in itertools.product(np.ndindex(6, 7), np.ndindex(3, 3)):
        yy, x2 = y - (i - 1), xx - (j - 1)              # convolution: the filter reversed
        if 0 <= yy < 6 and 0 <= x2 < 7:
            conv[y, xx] += float(f[::-1, ::-1][i, j]) * float(x[yy, x2])
    np.testing.assert_allclose(refm.reference(x, f), conv, rtol=1e-12, atol=1e-12)


# ---- reasons -----------------------------------------------------------------------------

def test_input_tile_needs_a_tile_wider_than_the_halo():
    v = V.get("2d-tiled")
    assert v.reason(v.params(), (100, 100), 15) is None
    assert "T > 2R" in v.reason(v.params(), (100, 100), 16)
    assert "T > 2R" in V.get("3d-tiled").reason(V.get("3d-tiled").params(), (50, 50, 50), 4)


def test_a_block_over_1024_threads_is_refused():
    v = V.get("2d-regtile")
    assert "at most 1024" in v.reason(v.params(BX=128, BY=16), (64, 64), 2)
    assert v.reason(v.params(BX=64, BY=16), (64, 64), 2) is None


def test_shared_memory_over_the_device_limit_is_refused():
    v = V.get("3d-regtile")
    dev = {"smem_per_block_optin": 48 * 1024}
    p = v.params(BX=128, BY=16, PZ=16)
    assert "KiB of shared memory" in v.reason(v.params(BX=64, BY=16, PZ=16), (64, 64, 64), 1,
                                              device=dev)
    assert v.reason(v.params(), (64, 64, 64), 1, device=dev) is None
    assert "at most 1024" in v.reason(p, (64, 64, 64), 1, device=dev)


def test_a_filter_too_large_for_constant_memory_is_refused():
    big = V.get("2d-const")
    assert big.reason(big.params(), (100, 100), 63) is None         # 127^2 = 16129 taps fit
    assert "constant memory" in big.reason(big.params(), (100, 100), 64)
    assert "constant memory" in V.get("3d-naive").reason(V.get("3d-naive").params(), (9, 9, 9), 13)
    dw = V.get("3d-dw-tiled")
    assert dw.reason(dw.params(), (455, 9, 9), 2) is None           # 455 slices x 25 taps
    assert "constant memory" in dw.reason(dw.params(), (656, 9, 9), 2)
    assert V.get("2d-naive").reason(V.get("2d-naive").params(), (100, 100), 64) is None


def test_unknown_parameters_and_variants_are_refused():
    with pytest.raises(ConfigError, match="unknown parameter"):
        V.get("2d-regtile").params(PZ=4)
    with pytest.raises(ConfigError, match="unknown convolution variant"):
        V.get("2d-fft")


F5 = np.zeros((5, 5), np.float32)
X8 = np.zeros((8, 8), np.float32)


@pytest.mark.parametrize("x,f,out,match", [
    (X8.astype(np.float64), F5, X8, "x has dtype float64"),
    (np.zeros((8, 16), np.float32)[:, ::2], F5, X8, "x is not C-contiguous"),
    (np.zeros(8, np.float32), F5, X8, "x has 1 dimension"),
    (X8, np.zeros((4, 4), np.float32), X8, "even width"),
    (X8, np.zeros((5, 3), np.float32), X8, r"needs \(k,\) \* 2"),
    (X8, F5.astype(np.float16), X8, "f has dtype float16"),
    (X8, np.asfortranarray(np.ones((5, 5), np.float32)), X8, "f is not C-contiguous"),
    (X8, F5, np.zeros((8, 9), np.float32), "out has shape"),
    (X8, F5, X8.copy(), "not a CuPy array"),
])
def test_bad_operands_get_the_reason(x, f, out, match):
    with pytest.raises(ConfigError, match=match):
        V.check_operands(V.get("2d-regtile"), x, f, out)


def test_run_checks_before_it_launches():
    """`run` (the lab's Variant.run) makes prepare's checks before anything is compiled."""
    v = V.get("2d-regtile")
    with pytest.raises(ConfigError, match="not a CuPy array"):
        v.run(X8, F5, X8.copy(), v.params())
    with pytest.raises(ConfigError, match="even width"):
        v.run(X8, np.zeros((4, 4), np.float32), X8.copy(), v.params())
    assert v.kernels(v.params(), 2) == [v.spec(2, v.params())]


def test_depthwise_filters_have_one_slice_per_depth():
    v = V.get("3d-dw-cached")
    x = np.zeros((6, 8, 8), np.float32)
    assert V.radius_of(v, x.shape, (6, 3, 3)) == 1
    with pytest.raises(ConfigError, match="D = x.shape"):
        V.radius_of(v, x.shape, (5, 3, 3))


# ---- the correctness cases ---------------------------------------------------------------

def test_every_variant_is_checked_at_radius_0_and_a_large_radius():
    assert set(ex.CHECKS) == set(V.VARIANTS)
    for name, cases in ex.CHECKS.items():
        v = V.get(name)
        radii = [r for r, _ in cases]
        assert 0 in radii and ex.RACE_R[v.dims] in radii and max(radii) >= 3, name
        for r, given in cases:
            assert v.reason(v.params(**given), (45, 37, 61)[-v.dims:], r) is None, (name, r)


def test_the_halo_outgrows_the_tile_where_the_kernel_allows_it():
    """A loader or cache kernel is checked with a radius larger than its tile."""
    def tile(v, p):
        if "T" in p:
            return p["T"]
        if "B" in p:
            return p["B"]
        wide = 4 if v.name.endswith("-wide") else 1
        return min(wide * p["BX"], p["BY"] * p.get("PY", 1), p.get("PZ", p["BY"] * p.get("PY", 1)))
    for name in ("1d-tiled", "2d-cached", "2d-regtile", "3d-regtile", "3d-dw-cached", "3d-dw-tiled",
                 "2d-wide", "3d-wide"):
        v = V.get(name)
        assert any(r > tile(v, v.params(**g)) for r, g in ex.CHECKS[name]), name


def test_check_shapes_are_no_multiple_of_any_block():
    shapes = registry.get("convolution.check").defaults["shapes"]
    for s in shapes:
        assert all(d % 2 == 1 for d in s), s


def test_the_wide_tiles_are_checked_on_both_paths():
    """An odd width takes the scalar loads and stores, a width that is a multiple of 4 (and
    of no tile) the 16-byte ones; both in every dimension, at full size and small."""
    exp = registry.get("convolution.check_wide")
    for shapes in (exp.defaults["shapes"], exp.small["shapes"]):
        for dims in (2, 3):
            widths = [s[-1] for s in shapes if len(s) == dims]
            assert any(w % 4 for w in widths) and any(w % 4 == 0 and w % 128 for w in widths)
    assert set(ex.FIRST) | set(ex.WIDE) == set(V.VARIANTS)


# ---- what the compiler made ----------------------------------------------------------------

def _count(name, r, **p):
    v = V.get(name)
    return cr.count_instructions(cr.sass(v.spec(r, v.params(**p)), "sm_90"), base=True)


def test_cached_tile_branches_per_tap_and_the_naive_3d_kernel_predicates():
    """The if/else of the cached kernels stays a branch per halo tap; the unrolled bounds
    tests of the volumetric kernel become predicates (one branch in the whole kernel)."""
    assert _count("2d-cached", 2)["BRA"] >= 25
    assert _count("3d-dw-cached", 1)["BRA"] >= 9
    assert _count("3d-naive", 1).get("BRA", 0) <= 2
    assert _count("3d-dw-tiled", 1)["BRA"] < _count("3d-dw-cached", 1)["BRA"]


@pytest.mark.parametrize("r,py", [(1, 8), (2, 8), (4, 4)])
def test_register_tile_loads_each_input_row_once(r, py):
    k = 2 * r + 1
    c = _count("2d-regtile", r, PY=py)
    assert c["FFMA"] == py * k * k
    assert c["LDS"] == (py + 2 * r) * k


def test_3d_register_tile_loads_each_plane_once():
    c = _count("3d-regtile", 1, PZ=8)
    assert c["FFMA"] == 8 * 27 and c["LDS"] == (8 + 2) * 9


@pytest.mark.parametrize("r", [0, 2, 8])
def test_wide_tile_is_ffma_and_few_vector_loads(r):
    """4 x PY outputs per thread: PY·4·K² FFMA, and each input row read as at most
    ceil((RP + R + 4) / 4) shared loads (16-byte vectors, or the pieces of one)."""
    k, rp = 2 * r + 1, (r + 3) // 4 * 4
    c = cr.count_instructions(cr.sass(V.get("2d-wide").spec(r, V.get("2d-wide").params()), "sm_90"))
    assert c["FFMA"] == 4 * 4 * k * k
    lds = sum(n for name, n in c.items() if name.startswith("LDS"))
    assert lds <= (4 + 2 * r) * ((rp + r + 4 + 3) // 4) and c["LDS.128"] >= 4 + 2 * r
    assert c["LDG.E.128.CONSTANT"] >= 1 and c["STG.E.128"] == 4


def test_3d_wide_tile():
    c = cr.count_instructions(cr.sass(V.get("3d-wide").spec(1, V.get("3d-wide").params()), "sm_90"),
                              base=True)
    assert c["FFMA"] == 4 * 2 * 8 * 27


def test_constant_filter_kernels_have_no_filter_loads():
    c = _count("2d-const", 2)
    assert c["FFMA"] == 25 and c["LDG"] == 25          # the inputs only
    n = cr.count_instructions(cr.sass(V.get("2d-naive").spec(2, {}), "sm_90"), base=True)
    assert n["LDG"] >= 2                                # filter and input, each a load


def test_explorer_reasons_are_the_variants():
    from perflab.chapters.convolution.explorer import reason_for
    why = reason_for("2d-regtile", (8192, 8192), 2, None)
    assert "at most 1024" in why({"BX": 128, "BY": 16, "PY": 4})
    assert why({"BX": 32, "BY": 8, "PY": 8}) is None


def test_turn_radius_and_the_roofline_turn():
    import pandas as pd
    from perflab.chapters.convolution import report
    from perflab.roofline import Ceilings
    d = pd.DataFrame({"variant": ["k"] * 5 + ["cudaMemcpy"], "r": [0, 1, 2, 3, 4, 0],
                      "median_ms": [1.0, 1.05, 1.09, 1.3, 2.0, 0.9]})
    assert report.turn_radius(d) == 3
    assert report.turn_radius(d.assign(median_ms=[1.0] * 6)) is None
    ceil = Ceilings(4.28e12, {"FP32 FMA": 65.2e12})
    assert report.roofline_turn(ceil) == 4            # 81 · 2 / 8 = 20.25 > 15.2 > 12.25


def test_bad_input_table_gives_every_reason():
    from perflab.chapters.convolution import report
    t = report.bad_inputs()
    assert (t["message"] != "(accepted)").all() and t["message"].str.len().min() > 20


@pytest.mark.gpu
def test_every_kernel_passes_its_check(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")
    from perflab import lab
    rows = lab.check_all(chapter="06-convolution")
    assert rows and all(r["correct"] for r in rows if r["correct"] is not None)
    assert sum(r["correct"] is True for r in rows) >= 40


@pytest.mark.gpu
def test_bad_operands_on_the_gpu(monkeypatch):
    import cupy as cp
    x = cp.zeros((64, 64), cp.float32)
    v = V.get("2d-regtile")
    with pytest.raises(ConfigError, match="overlaps"):
        V.prepare(v, x, F5, x)
    with pytest.raises(ConfigError, match="not C-contiguous"):
        V.prepare(v, cp.zeros((64, 128), cp.float32)[:, ::2], F5, x)
    with pytest.raises(ConfigError, match="constant memory"):
        V.prepare(v, x, np.zeros((129, 129), np.float32), cp.empty_like(x))
    with pytest.raises(ConfigError, match="constant memory"):
        v.run(x, np.zeros((129, 129), np.float32), cp.empty_like(x), v.params())
    out = cp.full_like(x, 7)
    v.run(x, cp.asarray(F5), out, v.params())        # zeros in, zeros out
    assert float(abs(out).max()) == 0.0



# ---- the halo diagram ----------------------------------------------------------------------

def test_the_halo_diagram_loads_every_element_once():
    """The register tile's window, by tile.cuh's loops: every element loaded exactly once;
    the bulk one per thread per output row, the halo columns by lanes 0 … 2R − 1 only; the
    input tile computes (T − 2R)² outputs."""
    from perflab.chapters.convolution import diagrams as d

    for r in (1, 2, 4):
        ot = d.output_tile(r)
        p = ot["params"]
        assert (ot["count"] == 1).all()
        assert ot["phase"].shape == (p["BY"] * p["PY"] + 2 * r, p["BX"] + 2 * r)
        assert (ot["phase"] == d.BULK).sum() == p["BX"] * p["BY"] * p["PY"]
        assert (ot["phase"] == d.HALO_COLS).sum() == 2 * r * p["BY"] * p["PY"]
        assert ot["halo_col_lanes"] == list(range(2 * r))
        it = d.input_tile(r)
        assert it["outputs"] == (it["T"] - 2 * r) ** 2
    assert d.R == ex.RACE_R[2]


def test_the_halo_diagram_draws():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from perflab.chapters.convolution import diagrams as d

    fig = d.draw_halo()
    try:
        shapes = sorted(im.get_array().shape for ax in fig.axes for im in ax.images)
        ot, it = d.output_tile(), d.input_tile()
        assert shapes == sorted([(it["T"], it["T"]), (ot["rows"], ot["cols"])])
        texts = [t for ax in fig.axes for t in ax.texts + [ax.title] + ax.get_xticklabels()
                 + ax.get_yticklabels()] + list(fig.texts)
        assert any(f"{it['outputs']} of {it['loads']}" in t.get_text() for t in texts)
        assert fig.get_size_inches()[0] <= 7.5
        assert min(t.get_fontsize() for t in texts if t.get_text()) >= 9
    finally:
        plt.close(fig)


# ---- the races, without a GPU (perflab.race with a faked timing) ----------------------------

def _fake_prepare(monkeypatch):
    """variants.prepare without compiling: the launch writes the float64 reference (as a
    correct kernel would), and cupyx convolve likewise."""
    def prepare(v, x, f, out, device=None, **given):
        p = v.params(**given)
        r = (f.shape[-1] - 1) // 2
        call = lambda: out.__setitem__(Ellipsis, refm.reference(x, f, v.op))   # noqa: E731
        return V.Prepared(v, r, p, v.spec(r, p), (4, 2), (32, 8), 96, call)
    monkeypatch.setattr(ex, "prepare", prepare)
    monkeypatch.setattr(refm, "library", lambda x, f, out: lambda: out.__setitem__(
        Ellipsis, refm.reference(x, f)))


def test_a_race_compares_each_kernel_with_the_copy_and_the_library_it_computes(monkeypatch):
    """conv3d's race: the volumetric kernel against the faster copy and cupyx convolve,
    the depthwise kernel (another function) against the copy alone, the copies against
    each other; params, kinds, launches, intensity and rates as the recorded rows have
    them."""
    from .race_helpers import context, device, fake_cupy, value

    fake_cupy(monkeypatch)
    _fake_prepare(monkeypatch)
    ctx, log = context("convolution.conv3d", {
        "3d-naive": [2.0] * 9, "cupyx convolve": [8.0] * 9, "3d-dw-cached": [1.6] * 9,
        "cudaMemcpy": [1.0] * 8 + [2.0], "cupy copyto": [1.25] * 9})
    rng = np.random.default_rng(3)
    x = device(refm.fresh((13, 11, 19), rng))
    out = device(np.empty_like(x))
    f = refm.filter_for(3, 1, rng)
    fdw = refm.filter_for(3, 1, rng, "depthwise", depth=13)
    ents = ex.contestants(x, out, ["3d-naive"], f, refm.reference(x, f), None, library=True)
    ents += ex.contestants(x, out, ["3d-dw-cached"], fdw, refm.reference(x, fdw, "depthwise"),
                        None, library=False)
    rows = ex.run_race(ctx, ents, x, budget_s=2.0)
    names = ["3d-naive", "cupyx convolve", "3d-dw-cached", "cudaMemcpy", "cupy copyto"]
    assert log == [("interleaved", names, 2.0)] and list(rows) == names
    assert all(r["correct"] for r in rows.values())
    assert {r["baseline"] for r in rows.values()} == {"cudaMemcpy"}
    assert [r["kind"] for r in rows.values()] == ["kernel", "library", "kernel", "copy", "copy"]
    naive, lib, dw, memcpy, copyto = rows.values()
    assert naive["params"] == {"dims": 3, "shape": [13, 11, 19], "r": 1, "op": "conv",
                               "config": ex.config_label(V.get("3d-naive").params())}
    assert memcpy["params"] == {"dims": 3, "shape": [13, 11, 19], "r": 0, "op": "copy",
                                "config": "-"}
    assert lib["params"]["config"] == "mode=constant" and dw["params"]["op"] == "depthwise"
    n = x.size
    assert value(naive, "of_copy") == pytest.approx(0.5)
    assert (value(naive, "of_copy_min"), value(naive, "of_copy_max")) == (
        pytest.approx(0.5), pytest.approx(1.0))
    assert value(naive, "vs_library") == pytest.approx(4.0) and value(naive, "rounds") == 9
    assert "vs_library" not in dw["metrics"] and value(dw, "of_copy") == pytest.approx(1 / 1.6)
    assert "vs_library" not in lib["metrics"] and value(lib, "of_copy") == pytest.approx(1 / 8)
    assert value(copyto, "of_copy") == pytest.approx(1 / 1.25)
    assert value(memcpy, "of_copy") == 1.0                 # the faster copy itself, as recorded
    assert not {"vs_library", "flops", "intensity", "TFLOP/s"} & set(memcpy["metrics"])
    assert value(naive, "bytes_moved") == 8 * n == value(memcpy, "bytes_moved")
    assert value(naive, "flops") == 54 * n and value(naive, "intensity") == pytest.approx(54 / 8)
    assert value(naive, "TFLOP/s") == pytest.approx(54 * n / 2e-3 / 1e12)
    assert value(naive, "TB/s") == pytest.approx(8 * n / 2e-3 / 1e12)
    assert naive["launch"] == {"grid": [4, 2], "block": [32, 8], "dynamic_smem": 96}
    assert lib["launch"] == {} == memcpy["launch"] and lib["kernels"] == []


def test_a_tile_of_the_sweep_is_checked_then_timed_alone(monkeypatch):
    """convolution.tiles2d: a combination that cannot run is a row with its reason; one
    that can is a race of one (Context.time under its name) with TB/s and TFLOP/s."""
    from types import SimpleNamespace

    from .race_helpers import context, device, fake_cupy, value

    fake_cupy(monkeypatch)
    _fake_prepare(monkeypatch)
    monkeypatch.setattr(ex, "current", lambda: SimpleNamespace(as_dict=lambda: None))
    monkeypatch.setattr(ex, "warm", lambda specs: None)
    monkeypatch.setattr(ex, "checked", lambda fn, what: fn())
    monkeypatch.setattr(refm, "fresh_device", lambda shape: device(
        refm.fresh(shape, np.random.default_rng(4))))
    ctx, log = context("convolution.tiles2d", {"2d-regtile/BX=16 BY=2 PY=1": [0.5]})
    ex.sweep(ctx, "2d-regtile", (67, 45), 2, {"BX": (16, 128), "BY": (2, 64), "PY": (1,)},
             budget_s=0.03)
    assert ("alone", "2d-regtile/BX=16 BY=2 PY=1", 0.03) in log
    rows = {(r["params"]["BX"], r["params"]["BY"]): r for r in ctx.rows}
    assert "invalid" in rows[(128, 64)] and rows[(128, 64)]["metrics"] == {}
    r = rows[(16, 2)]
    assert r["variant"] == "2d-regtile" and r["correct"]
    assert r["params"] == {"shape": [67, 45], "r": 2, "BX": 16, "BY": 2, "PY": 1}
    n = 67 * 45
    assert value(r, "smem_bytes") == 96 and value(r, "bytes_moved") == 8 * n
    assert value(r, "TB/s") == pytest.approx(8 * n / 0.5e-3 / 1e12)
    assert value(r, "TFLOP/s") == pytest.approx(50 * n / 0.5e-3 / 1e12)
    assert r["launch"] == {"grid": [4, 2], "block": [32, 8], "dynamic_smem": 96}
