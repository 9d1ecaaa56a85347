"""Chapter 8 (perflab.chapters.matmul): the correctness audit as tests.

Without a GPU (CI): the operand checks of every audited kernel (chapter 1's rungs and this
chapter's) on NumPy stand-ins — wrong dtype, aliasing, empty and mismatched shapes,
views, misalignment — with their messages; the arithmetic the audit judges by (the error
bound, the IEEE classes of special values, the verdicts); the parameter checks; and the
book's side-by-side view of GPUs, fed a second device in a temporary results folder.

On a GPU (`-m gpu`): one test per audit category, for every kernel."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from perflab import registry
from perflab.chapters.matmul import audit, bounds, report, variants
from perflab.errors import ConfigError

SUBJECTS = [s.name for s in audit.subjects()]
OURS = [v.name for v in variants.VARIANTS]


def test_experiments_are_registered_under_the_chapter():
    exps = {n: e for n, e in registry.all_experiments().items() if n.startswith("matmul.")}
    assert set(exps) == {"matmul.kernels", "matmul.l2", "matmul.audit", "matmul.profile",
                         "matmul.sanitize"}
    assert all(e.chapter == "08-matmul" for e in exps.values())


def test_every_rung_of_chapter_1_and_every_kernel_here_is_audited():
    from perflab.chapters import sgemm
    assert SUBJECTS == [v.name for v in sgemm.variants()] + OURS
    assert len(audit.CATEGORIES) == 13


# ---------------------------------------------------------------- operand checks (host)

def _host(cat, name):
    cases = audit.run_category(cat, audit.get_subject(name), audit.Env.host_only())
    bad = [f"{c.case}: {c.outcome} ({c.detail})" for c in cases if not c.ok]
    assert cases and not bad, f"{name} / {cat}:\n" + "\n".join(bad)
    return cases


@pytest.mark.parametrize("name", SUBJECTS)
def test_audit_dtype_host(name):
    """A float64, float16 or int32 operand is refused with a ConfigError naming the kernel
    and the operand, never converted."""
    for c in _host("dtype", name):
        assert c.outcome == "clear-error" and name in c.detail
        assert c.case.split()[0] + " is " in c.detail      # "A is float64, ..."


@pytest.mark.parametrize("name", SUBJECTS)
def test_audit_aliasing_host(name):
    """C is A, C is B's memory, C overlaps half of B: refused, naming the overlap."""
    for c in _host("aliasing", name):
        assert c.outcome == "clear-error" and "overlaps" in c.detail


@pytest.mark.parametrize("name", SUBJECTS)
def test_audit_shapes_host(name):
    """Empty dimensions, mismatched inner dimensions, a C of the wrong shape, a 1-D or
    3-D operand: each a clear error."""
    cases = _host("shapes", name)
    assert {c.outcome for c in cases} == {"clear-error"}


@pytest.mark.parametrize("name", SUBJECTS)
def test_audit_layout_host(name):
    """Strided and transposed views and a B in the other layout are refused with the fix
    named; operands 4 bytes past 16-byte alignment are let through (the GPU run checks
    the result); a float32 operand at a 2-byte offset is refused, naming the operand and
    the 4-byte boundary, by every kernel (chapter 1's once let it through to a fault)."""
    cases = {c.case: c for c in _host("layout", name)}
    for label, c in cases.items():
        if label.startswith(("A a strided", "A transposed", "C a strided")):
            assert c.outcome == "clear-error" and "C-contiguous" in c.detail
        if label.startswith("B "):
            assert c.outcome == "clear-error" and ("column-major" in c.detail
                                                   or "C-contiguous" in c.detail)
    assert cases["A, B, C 4 bytes past 16-byte alignment"].outcome == "accepted"
    mis = cases["A at a 2-byte offset (not float-aligned)"]
    assert mis.outcome == "clear-error" and "A starts 2 bytes past a 4-byte boundary" in mis.detail


def test_host_array_stands_in_for_cupy_views():
    a = np.zeros((4, 6), np.float32)
    h = audit.HostArray(a[:, ::2])
    assert not h.flags.c_contiguous and h.shape == (4, 3)
    assert audit.HostArray(a).T.flags.f_contiguous
    assert audit.HostArray(a[1:]).data.ptr == audit.HostArray(a).data.ptr + 24
    off = audit.Env.host_only().at_offset(np.ones((3, 3), np.float32), 2)
    assert off.__array_interface__["data"][0] % 16 == 2 and float(off.sum()) == 9.0


# ------------------------------------------------------------------- parameter checks

@pytest.mark.parametrize("name,params,M,match", [
    ("tiled", {"TILE": 64}, 100, "TILE=64"),
    ("tiled", {"TILE": 32}, 65535 * 32 + 1, "grid.y"),
    ("naive", {}, 65535 * 32 + 1, "grid.y"),
    ("coarse-n2", {"COARSE": 3}, 100, "COARSE=3"),
    ("coarse-m2", {"COARSE": 16}, 100, "COARSE=16"),
    ("coarse-m4", {"ALONG": "K"}, 100, "ALONG"),
    ("cm-turned", {"PAD": 2}, 100, "PAD=2"),
])
def test_parameters_that_cannot_run_are_refused_with_the_reason(name, params, M, match):
    v = variants.get(name)
    with pytest.raises(ConfigError, match=match) as exc:
        v.check({**v.params(), **params}, M, 64, 64)
    assert name in str(exc.value)


def test_the_largest_index_cases_fit_every_grid_of_this_chapter():
    """The audit's past-2^31 sizes exceed 2^31 elements in one operand each and are
    within every kernel's grid limits here (so the GPU run tests indexing, not limits)."""
    for which, (M, N, K) in audit.LARGE_SIZES.items():
        n = {"large-A": M * K, "large-B": K * N, "large-C": M * N}[which]
        assert n > 2**31
        for v in variants.VARIANTS:
            v.check(v.params(), M, N, K)


def test_edge_sizes_are_multiples_of_no_tile():
    for size in audit.EDGE_SIZES:
        assert any(x % 32 for x in size)
    assert any(size[2] == 1 for size in audit.TINY_SIZES) and (1, 1, 1) in audit.TINY_SIZES


def test_unknown_names_are_refused():
    with pytest.raises(ConfigError, match="unknown chapter-8 kernel"):
        variants.get("tiled-64")
    with pytest.raises(ConfigError, match="unknown kernel"):
        audit.subjects(["nope"])


# ---------------------------------------------------------------- the bound arithmetic

def test_gamma():
    u = bounds.U_FP32
    assert bounds.gamma(0) == 0.0
    assert bounds.gamma(1) == pytest.approx(u / (1 - u))
    assert bounds.gamma(1000) == pytest.approx(1000 * u, rel=1e-4)
    with pytest.raises(ValueError):
        bounds.gamma(2**24)


def test_the_bound_grows_with_k_and_with_operand_rounding():
    f = bounds.relative_bound
    assert f(1, "fp32") == pytest.approx(bounds.gamma(1))
    assert f(257, "fp32") < f(4099, "fp32")
    assert f(257, "fp32") < f(257, "3xtf32") < f(257, "tf32")
    assert f(257, "tf32") == pytest.approx((1 + 2**-11) ** 2 * (1 + bounds.gamma(257, 2**-23)) - 1)
    with pytest.raises(ValueError):
        f(0, "fp32")
    with pytest.raises(ValueError):
        f(8, "fp16")


def _sequential_fp32(A, B):
    """The naive kernel's order, one rounding per product and per addition, in float32."""
    C = np.zeros((A.shape[0], B.shape[1]), np.float32)
    for k in range(A.shape[1]):
        C = (C + np.outer(A[:, k], B[k]).astype(np.float32)).astype(np.float32)
    return C


def _blocked_fp32(A, B, tile=32):
    """A tiled order: partial sums of `tile` products, then the partials added."""
    C = np.zeros((A.shape[0], B.shape[1]), np.float32)
    for k0 in range(0, A.shape[1], tile):
        C = (C + _sequential_fp32(A[:, k0:k0 + tile], B[k0:k0 + tile])).astype(np.float32)
    return C


@pytest.mark.parametrize("order", [_sequential_fp32, _blocked_fp32])
@pytest.mark.parametrize("lo", [-1.0, 0.0])
def test_float32_accumulation_stays_within_the_bound(order, lo):
    rng = np.random.default_rng(7)
    M, N, K = 24, 20, 257
    A = rng.uniform(lo, 1, (M, K)).astype(np.float32)
    B = rng.uniform(lo, 1, (K, N)).astype(np.float32)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    absprod = np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64)
    r = bounds.bound_ratio(order(A, B), ref, absprod, K, "fp32")
    assert 0 < r <= 1


def test_a_dropped_term_breaks_the_bound():
    """The test can fail: a kernel that loses one K step of 257 is far outside it."""
    rng = np.random.default_rng(8)
    A = rng.uniform(0, 1, (16, 257)).astype(np.float32)
    B = rng.uniform(0, 1, (257, 16)).astype(np.float32)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    absprod = ref.copy()
    bad = _sequential_fp32(A[:, :-1], B[:-1])
    assert bounds.bound_ratio(bad, ref, absprod, 257, "fp32") > 10
    nan = _sequential_fp32(A, B)
    nan[3, 3] = np.nan
    assert bounds.bound_ratio(nan, ref, absprod, 257, "fp32") == math.inf


# ----------------------------------------------------------------- special values

def test_expected_classes_of_the_planted_special_values():
    env = audit.Env.host_only()
    A, B = audit.special_inputs(env)
    want = bounds.expected_classes(A, B)
    assert (want[3] == 1).all()                          # NaN in A's row 3
    assert want[10, 20] == 1                             # Inf x 0
    assert want[20, 0] == 1                              # +Inf + -Inf
    assert (want[:, 44] == 1).all()                      # NaN in B's column 44
    col30 = [i for i in range(A.shape[0]) if i not in (3, 10, 20)]
    assert all(want[i, 30] == (3 if A[i, 9] > 0 else 2) for i in col30)   # -Inf * sign
    assert want[0, 0] == 0
    got = want.copy()
    got[0, 0] = 2
    assert "C[0,0] +Inf (want finite)" in bounds.class_mismatch(got, want)
    assert bounds.class_mismatch(want, want) is None


def test_classify():
    x = np.array([1.0, np.nan, np.inf, -np.inf], np.float32)
    assert bounds.classify(x).tolist() == [0, 1, 2, 3]


# ---------------------------------------------------------------------- verdicts

def test_verdicts():
    C = audit.Case
    assert audit.verdict([C("a", "pass"), C("b", "pass")]) == "pass"
    assert audit.verdict([C("a", "clear-error", allowed=audit.OK_ERR)]) == "clear-error"
    assert audit.verdict([C("a", "pass", allowed=audit.OK_EITHER),
                          C("b", "clear-error", allowed=audit.OK_EITHER)]) == "pass + clear-error"
    assert audit.verdict([C("a", "pass"), C("b", "clear-error")]) == "fail"   # not allowed
    assert audit.verdict([C("a", "fault", allowed=audit.OK_EITHER)]) == "fail"
    assert audit.verdict([]) == "not run"


def test_an_error_that_does_not_name_the_kernel_is_not_clear():
    s = audit.get_subject("tiled")
    assert audit.error_outcome(s, ConfigError("tiled: bad"))[0] == "clear-error"
    assert audit.error_outcome(s, ConfigError("bad"))[0] == "unclear-error"
    assert audit.error_outcome(s, OverflowError("int32"))[0] == "unclear-error"
    assert audit.names_kernel(s, "sgemm_smem<32>: too many threads")
    assert not audit.names_kernel(s, "something went wrong")


# ------------------------------------------------------------------ report pieces

def test_structural_intensities():
    assert report.structural_intensity("naive") == 0.25
    assert report.structural_intensity("tiled") == 8.0          # the seed's number
    assert report.structural_intensity("coarse-n2") == pytest.approx(32 / 3)
    assert report.structural_intensity("coarse-m4") == pytest.approx(12.8)
    assert report.structural_intensity("cm-turned-pad") == 8.0


def test_sass_counts_give_the_predicted_shared_loads_per_fma():
    got = {n: report.smem_loads_per_fma(n) for n in ("tiled", "coarse-n4", "coarse-m4")}
    assert got["tiled"] == pytest.approx(1.25)
    assert got["coarse-m4"] == pytest.approx(0.5)
    assert got["coarse-m4"] < got["coarse-n4"] < got["tiled"]


# ------------------------------------------------------- a reader's GPU, side by side

def _synthetic_device(root, slug, name, gflops_scale, chapter="08-matmul"):
    """A results file of matmul.kernels for a made-up device, in a temporary results root:
    the same rows a recording writes (kernel hashes of today's sources, so not stale)."""
    from perflab import store
    from perflab.kernels import source_sha256

    dev = {"name": name, "slug": slug, "compute_capability": "8.9", "arch": "sm_89",
           "sms": 128, "sm_clock_max_mhz": 2520.0}
    prov = {"run_id": f"synthetic-{slug}", "date": "2026-12-01T00:00:00+00:00",
            "git_commit": "0" * 40, "device": dev}
    rows = []
    for name_k, g in (("naive", 3000.0), ("tiled", 4000.0), (report.BASELINE, 40000.0)):
        for n in (1024, 2048):
            spec = [] if name_k == report.BASELINE else variants.get(name_k).kernels({"TILE": 32})
            rows.append({"experiment": "matmul.kernels", "chapter": chapter, "variant": name_k,
                         "params": {"M": n, "N": n, "K": n},
                         "metrics": {"GFLOP/s": {"value": g * gflops_scale, "unit": "GFLOP/s"}},
                         "correct": True, "rel_err": 1e-7,
                         "kernels": [{"file": s.file, "name": s.name_expression, "options": [],
                                      "sha256": source_sha256(s.file)} for s in spec],
                         "launch": [], "provenance": prov})
    store.write(root / slug / chapter / "matmul.kernels.json", "matmul.kernels", chapter,
                {}, rows)


def test_a_second_devices_results_are_shown_beside_the_first(tmp_path, monkeypatch):
    """A reader's `make record` writes results/<their-device>/: the side-by-side view
    picks it up with no code change — every device with results is a column, each as a
    fraction of its own FP32 ceiling (its attributes' where chapter 0 was not recorded)."""
    from perflab import paths, store

    monkeypatch.setattr(paths, "RESULTS", tmp_path)
    _synthetic_device(tmp_path, "lab-gpu", "Lab GPU", 1.0)
    assert store.devices_with("matmul.kernels") == ["lab-gpu"]
    before = report.side_by_side("tiled", report.device_runs())
    _synthetic_device(tmp_path, "readers-gpu", "Reader's GPU", 2.0)
    runs = report.device_runs()
    assert [r[0] for r in runs] == ["Lab GPU (recorded)", "Reader's GPU (recorded)"]
    t = report.side_by_side("tiled", runs)
    assert "Reader's GPU (recorded)" in t and "Reader's GPU (recorded)" not in before
    peak = 128 * 128 * 2 * 2520e6           # the device dict's own attributes
    row = t[t["size"] == "2048³"].iloc[0]
    assert row["Reader's GPU (recorded)"] == pytest.approx(100 * 8000e9 / peak)
    assert row["Lab GPU (recorded)"] == pytest.approx(100 * 4000e9 / peak)
    assert row["T4 (published)"] == pytest.approx(100 * 393.86e9 / 8.1e12)
    g = report.side_by_side("naive", runs, value="gflops")
    assert g[g["size"] == "1024³"].iloc[0]["Reader's GPU (recorded)"] == 6000.0
    src = report.ceilings_table(runs)
    assert src[src["device"] == "Reader's GPU (recorded)"].iloc[0]["source"].startswith("SMs")


# ------------------------------------------------------------------------- GPU part

@pytest.mark.gpu
def test_every_kernel_passes_its_check(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")
    from perflab import lab
    rows = lab.check_all(chapter="08-matmul")
    assert rows and all(r["correct"] for r in rows)


#: What the recorded audit (results/nvidia-h200/08-matmul/matmul.audit.json) found wrong and
#: is not fixed: (category, kernel) -> the reason; those GPU tests are expected to fail
#: (strict: a fix makes them fail as "unexpectedly passing", and this list must shrink).
#: Empty since run 8e187baefeb4's failures were fixed: chapter 1's operand check now
#: refuses a float32 that does not start on 4 bytes, and rung 09 gives NaN, ±Inf and
#: values near FLT_MAX as cuBLAS FP32 does.
KNOWN: dict[tuple[str, str], str] = {}


def _subjects(cat):
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN[(cat, n)]))
            if (cat, n) in KNOWN else n for n in SUBJECTS]


def test_the_known_failures_are_the_recorded_ones():
    """The expected GPU failures above are exactly the failed rows of the recorded audit."""
    from perflab import store
    path = store.find("matmul.audit", "nvidia-h200")
    assert path is not None
    rows = json.loads(path.read_text())["rows"]
    failed = {(r["params"]["category"], r["variant"]) for r in rows if not r["correct"]}
    assert failed == set(KNOWN)


def _gpu(cat, name):
    cases = audit.run_category(cat, audit.get_subject(name), audit.Env.gpu())
    bad = [f"{c.case}: {c.outcome} ({c.detail})" for c in cases if not c.ok]
    assert cases and not bad, f"{name} / {cat}:\n" + "\n".join(bad)


@pytest.mark.gpu
@pytest.mark.parametrize("name", _subjects("sizes"))
def test_audit_sizes(name):
    _gpu("sizes", name)


@pytest.mark.gpu
@pytest.mark.parametrize("name", _subjects("tiny"))
def test_audit_tiny(name):
    _gpu("tiny", name)


@pytest.mark.gpu
@pytest.mark.parametrize("name", _subjects("skinny"))
def test_audit_skinny(name):
    _gpu("skinny", name)


@pytest.mark.gpu
@pytest.mark.parametrize("name", _subjects("layout"))
def test_audit_layout(name):
    _gpu("layout", name)


@pytest.mark.gpu
@pytest.mark.parametrize("name", _subjects("dtype"))
def test_audit_dtype(name):
    _gpu("dtype", name)


@pytest.mark.gpu
@pytest.mark.parametrize("name", _subjects("aliasing"))
def test_audit_aliasing(name):
    _gpu("aliasing", name)


@pytest.mark.gpu
@pytest.mark.parametrize("name", _subjects("shapes"))
def test_audit_shapes(name):
    _gpu("shapes", name)


@pytest.mark.gpu
@pytest.mark.parametrize("name", _subjects("nonfinite"))
def test_audit_nonfinite(name):
    _gpu("nonfinite", name)


@pytest.mark.gpu
@pytest.mark.parametrize("name", _subjects("overflow"))
def test_audit_overflow(name):
    _gpu("overflow", name)


@pytest.mark.gpu
@pytest.mark.parametrize("name", _subjects("large_index"))
def test_audit_large_index(name):
    _gpu("large_index", name)


@pytest.mark.gpu
@pytest.mark.parametrize("name", _subjects("bound"))
def test_audit_bound(name):
    _gpu("bound", name)


@pytest.mark.gpu
@pytest.mark.parametrize("name", _subjects("determinism"))
def test_audit_determinism(name):
    _gpu("determinism", name)


@pytest.mark.gpu
@pytest.mark.parametrize("name", _subjects("launch_failure"))
def test_audit_launch_failure(name):
    _gpu("launch_failure", name)


def test_there_is_one_gpu_test_per_category():
    names = {n for n in globals() if n.startswith("test_audit_") and not n.endswith("_host")}
    assert names == {f"test_audit_{c}" for c in audit.CATEGORIES}


def test_the_sanitizer_rows_cover_every_kernel_here_and_rung_09():
    """matmul.sanitize runs each of this chapter's kernels and rung 09 (both of its split
    modes, its pre-pass and its split-K reduction); the recorded rows say each tool's
    result, and a tool that did not finish is not clean."""
    from perflab import store
    from perflab.chapters.matmul import sanitize
    names = {s.name for s in sanitize.sanitized_kernels()}
    assert {"matmul_naive", "sgemm_smem", "matmul_coarsened", "matmul_colmajor_b",
            "sgemm_3xtf32", "round_3xtf32", "splitk_reduce"} <= names
    pre = {s.template[-2] for s in sanitize.sanitized_kernels() if s.name == "sgemm_3xtf32"}
    assert pre == {True, False}
    path = store.find("matmul.sanitize", "nvidia-h200")
    assert path is not None, "results/nvidia-h200/08-matmul/matmul.sanitize.json is missing"
    rows = json.loads(path.read_text())["rows"]
    from perflab import sanitize as sanitizers
    assert {r["variant"] for r in rows} == set(sanitizers.TOOLS)
    for r in rows:
        m = {k: v["value"] for k, v in r["metrics"].items()}
        clean = m["exit_code"] == 0 and m.get("errors") == 0 and m.get("failed") == 0 \
            and m.get("passed", 0) > 0
        assert r["correct"] == clean


def test_sanitize_facts_read_the_rows():
    import pandas as pd
    san = pd.DataFrame([
        {"variant": "memcheck", "errors": 0.0, "hazards": 0.0, "passed": 14.0, "failed": 0.0,
         "wall_s": 20.0, "correct": True},
        {"variant": "racecheck", "errors": 0.0, "hazards": 2.0, "passed": 14.0, "failed": 0.0,
         "wall_s": 35.0, "correct": False}])
    g = report.sanitize_facts(san)
    assert g["racecheck_hazards"] == 2 and g["san_wall_max"] == 35.0 and g["san_problems"] == 2
    assert g["memcheck_clean"] and not g["racecheck_clean"]
    assert g["san_size"] == "130×67×93"


def test_recorded_audit_rows_carry_every_case(tmp_path):
    """A recorded audit row keeps each case's outcome (the page's detail table reads it)."""
    from perflab import store
    path = store.find("matmul.audit", "nvidia-h200")
    assert path is not None, "results/nvidia-h200/08-matmul/matmul.audit.json is missing"
    doc = json.loads(path.read_text())
    for r in doc["rows"]:
        assert r["cases"] and r["verdict"] and isinstance(r["correct"], bool)


def test_tiling_diagram_draws_the_tiled_kernels_tile():
    """The diagram's tile is the tiled kernel's default TILE, and the reuse it states is
    computed from it: 2 global loads per FMA naive, 2/TILE tiled."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from perflab.chapters.matmul import diagrams

    T = diagrams.tile_size()
    assert T == variants.get("tiled").params()["TILE"]
    r = diagrams.reuse(T)
    assert r["naive"] / r["tiled"] == T == r["uses_per_load"]
    fig = diagrams.tiling()
    try:
        texts = [t.get_text() for ax in fig.axes for t in ax.texts]
        assert {"As", "Bs", "A", "B", "C"} <= set(texts)
        assert any(f"{T}×{T} tile of A" in t and f"2/{T}" in t for t in texts)
        sizes = [t.get_fontsize() for ax in fig.axes for t in ax.texts + [ax.title]]
        assert min(sizes) >= 9 and fig.get_figwidth() <= 7.5
    finally:
        plt.close(fig)


def test_the_512_sentence_counts_the_kernels_that_beat_cublas_from_the_rows():
    """At 512³ the page quotes cuBLAS's time, the best kernel's ratio to it and how many
    kernels beat it, all from the rows: here tiled beats it (1.25×), naive does not."""
    import pandas as pd
    from perflab.chapters.matmul import report
    rows = pd.DataFrame([
        {"variant": report.BASELINE, "M": 512, "N": 512, "K": 512, "median_ms": 0.05},
        {"variant": "naive", "M": 512, "N": 512, "K": 512, "median_ms": 0.1, "vs_cublas": 0.5},
        {"variant": "tiled", "M": 512, "N": 512, "K": 512, "median_ms": 0.04, "vs_cublas": 1.25},
        {"variant": "tiled", "M": 1024, "N": 1024, "K": 1024, "median_ms": 0.1, "vs_cublas": 3.0}])
    g = report.speed_facts(rows)
    assert g["cb_512_ms"] == 0.05 and g["cb_512_best_vs"] == 1.25
    assert g["cb_512_n"] == 2 and g["cb_512_beaten"] == 1
