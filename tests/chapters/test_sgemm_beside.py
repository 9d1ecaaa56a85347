"""The SGEMM ladder live on a reader's GPU that is not the reference, without a GPU: the
lab believes it runs on a synthetic sm_89 device (tests/synthetic_gpu.py) and the ladder
experiment runs as it would there, every rung's own check deciding what runs, only the
measuring replaced (rows derived from the H200's recorded ones, at half the speed). The
Hopper rungs are refused by their check and come back, in the key figure and the table,
as the H200's recorded rows with the reason; the figure shows both GPUs, each rung against
its own GPU's cuBLAS, and its stamp names both."""
from __future__ import annotations

import pytest

import perflab
from perflab import lab, plots, sidebyside
from perflab.chapters.sgemm import experiments as ex
from perflab.chapters.sgemm import report, variants
from perflab.correctness import Check
from tests.synthetic_gpu import (REFERENCE, legend_labels, overlapping_texts,  # noqa: F401
                                 agg_figures, run_page, stamp_lines, synthetic_gpu, texts)

HOPPER = ("10-wgmma-tma", "12-3xtf32-wgmma")
LABELS = {v.name: v.label for v in variants()}


class _Problem:
    """What the ladder reads of a problem, without arrays."""

    def __init__(self, M, N, K, *, timing, reference="gpu"):
        self.M, self.N, self.K = M, N, K
        self.flops = 2.0 * M * N * K

    @property
    def params(self) -> dict:
        return {"M": self.M, "N": self.N, "K": self.K}


class _Pool:
    def free_all_blocks(self):
        pass


@pytest.fixture
def sgemm_measured(synthetic_gpu, monkeypatch):
    """The chapter's experiments run as they would on the synthetic device: their own
    loops, configurations and checks (ex.run_variant, ex.configs against the device),
    each checked-and-timed call answered from the H200's recorded row of the same rung,
    size and parameters (of the same rung and size where the parameters were not
    recorded); every other experiment (the machine chapter's ceilings) from its scaled
    recorded rows."""
    import cupy

    from perflab import registry

    recorded = {}
    for name in ("sgemm.ladder", "sgemm.splitk", "sgemm.sweep", "sgemm.chunks"):
        for r in synthetic_gpu.recorded_rows(name):
            p = r["params"]
            recorded[(r["variant"], tuple(sorted(p.items())))] = r
            if "M" in p:
                recorded.setdefault((r["variant"], p["M"], p["N"], p["K"]), r)

    def measure(ctx, prob, name, precision, fn, *, params, specs=(), baseline=None,
                fast=None):
        full = {**prob.params, **params}
        r = recorded.get((name, tuple(sorted(full.items())))) or \
            recorded[(name, prob.M, prob.N, prob.K)]
        return ctx.row(variant=name, params=full, metrics=synthetic_gpu.scaled(r["metrics"]),
                       check=Check(r["correct"], r["rel_err"], r["tolerance"], 0),
                       kernels=list(specs), launch=r["launch"], precision=precision,
                       seed=r.get("seed"))

    def empty_launches(ctx, n=2):
        return ctx.row(variant=f"{n} empty launches", params={"launches": n},
                       metrics={"median_ms": (0.012, "ms")}, kernels=[])

    real = registry.execute
    synthetic_gpu.measure_from_recorded()
    others = registry.execute
    monkeypatch.setattr(registry, "execute", lambda exp, *a, **kw: (
        real if exp.chapter == "01-sgemm" and exp.name != "sgemm.profile" else others)(
            exp, *a, **kw))
    monkeypatch.setattr(ex, "Problem", _Problem)
    monkeypatch.setattr(ex, "measure", measure)
    monkeypatch.setattr(ex, "empty_launches", empty_launches)
    monkeypatch.setattr(ex, "warm", lambda specs: None)   # nothing to compile ahead
    monkeypatch.setattr(cupy, "get_default_memory_pool", _Pool)
    return synthetic_gpu


@pytest.fixture
def sm89_ladder(sgemm_measured):
    """`lab.run("sgemm.ladder")` on the synthetic sm_89 device."""
    return lab.run("sgemm.ladder")


pytestmark = pytest.mark.usefixtures("agg_figures")


def test_the_hopper_rungs_are_refused_by_their_own_check(sm89_ladder):
    ladder = sm89_ladder
    assert lab.caption(ladder).startswith("measured live on NVIDIA Synthetic sm_89")
    for name in HOPPER:
        rows = ladder[ladder["variant"] == name]
        assert len(rows) == 6 and rows["TFLOP/s"].isna().all()       # one per size
        assert rows["invalid"].str.contains("need a Hopper GPU").all()
        assert rows["invalid"].str.contains("NVIDIA Synthetic sm_89 has compute capability 8.9").all()
        assert set(rows["invalid_short"]) == {"needs sm_90 (wgmma and TMA)"}
    ran = ladder[ladder["variant"].isin(["04-register-tiling", "cuBLAS FP32"])]
    assert ran["TFLOP/s"].notna().all() and ran["invalid"].isna().all()


def test_they_come_back_as_the_recorded_rows_with_the_reason(sm89_ladder):
    shown = perflab.fill_not_run(sm89_ladder)
    recorded = lab.replay("sgemm.ladder", device_slug=REFERENCE)
    for name in HOPPER:
        got = shown[shown["variant"] == name]
        want = recorded[recorded["variant"] == name]
        assert len(got) == len(want) == 6
        assert got["TFLOP/s"].tolist() == want["TFLOP/s"].tolist()      # the H200's, unscaled
        assert set(got["measured_on"]) == {REFERENCE}
        assert got["not_run_reason"].str.contains("need a Hopper GPU").all()
        assert set(got["not_run_short"]) == {"needs sm_90 (wgmma and TMA)"}
    assert set(sidebyside.measured_here(shown)["measured_on"]) == {"synthetic-sm89"}
    assert shown.attrs["borrowed"][0]["caption"] == lab.caption(recorded)


def test_the_key_figure_shows_both_gpus_with_both_stamps(sm89_ladder):
    fig = report.ladder_figure(sm89_ladder, LABELS)
    lines = stamp_lines(fig)
    assert len(lines) == 2
    assert lines[0].startswith("measured live on NVIDIA Synthetic sm_89 · ")
    assert lines[1] == lab.caption(lab.replay("sgemm.ladder", device_slug=REFERENCE))
    assert lines[1].startswith("recorded on NVIDIA H200 · ")
    legend = legend_labels(fig)
    assert "NVIDIA Synthetic sm_89, measured live" in legend
    assert "NVIDIA H200, recorded" in legend
    shown = texts(fig)
    # a Hopper rung keeps its place: the recorded bar, and why it did not run here
    assert shown.count("not run here: needs sm_90 (wgmma and TMA)") == 2
    assert any(t.startswith("12  ") for t in shown) and any(t.startswith("10  ") for t in shown)
    # an sm_89 block may opt in to 99 KB of shared memory: the rungs whose default tiles
    # need more are refused by the same check, and shown the same way
    notes = [t for t in shown if t.startswith("not run here")]
    assert "not run here: needs 146 KB of shared memory (99 KB here)" in notes
    ax = fig.axes[0]
    hatched = [p for p in ax.patches if p.get_hatch()]
    solid = [p for p in ax.patches if not p.get_hatch()]
    assert len(hatched) == 12               # every rung recorded on the H200
    d = sm89_ladder
    here = d[(d["M"] == 3072) & ~d["variant"].isin(report.BASELINES) & d["TFLOP/s"].notna()]
    assert len(solid) == len(here) == 12 - len(notes)      # the rest measured here
    # each against its own GPU's cuBLAS: the recorded ratios, as recorded
    rec = lab.replay("sgemm.ladder", device_slug=REFERENCE)
    r10 = rec[(rec["variant"] == "10-wgmma-tma") & (rec["M"] == 3072)].iloc[0]
    assert f"{r10['vs_cublas_tf32']:.2f}×" in shown
    _readable(fig)


def test_the_ratio_table_marks_the_recorded_cells_and_says_why(sm89_ladder):
    t = report.ratio_table(sm89_ladder)
    sizes = [c for c in t.columns if c != report.NOT_RUN_COLUMN]
    for name in HOPPER:
        cells = [t.loc[name, c] for c in sizes]
        assert len(cells) == 6 and all(c.endswith(", recorded on H200") for c in cells)
        assert "need a Hopper GPU" in t.loc[name, report.NOT_RUN_COLUMN]
    assert t.loc["04-register-tiling", report.NOT_RUN_COLUMN] == "—"
    assert "recorded on" not in t.loc["04-register-tiling", "3072³"]


def test_on_a_hopper_gpu_that_is_not_the_reference_nothing_is_borrowed(synthetic_gpu,
                                                                       monkeypatch):
    """A synthetic H100 (compute capability 9.0, 227 KB a block) runs every rung: the
    figure shows it beside the H200 with no rung taken from the recording."""
    synthetic_gpu.use(name="NVIDIA Synthetic H100", slug="synthetic-h100",
                      compute_capability="9.0", arch="sm_90", smem_per_block_optin=232448)
    synthetic_gpu.measure_from_recorded()
    ladder = lab.run("sgemm.ladder")
    assert perflab.fill_not_run(ladder) is ladder
    fig = report.ladder_figure(ladder, LABELS)
    assert not [t for t in texts(fig) if t.startswith("not run here")]
    assert "NVIDIA Synthetic H100, measured live" in legend_labels(fig)
    assert len(stamp_lines(fig)) == 2
    assert "not run on this GPU" not in report.ratio_table(ladder)


def test_replayed_the_key_figure_is_the_book_s(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "replay")
    ladder = perflab.run("sgemm.ladder")
    fig = report.ladder_figure(ladder, LABELS)
    assert stamp_lines(fig) == [lab.caption(ladder)]
    assert tuple(fig.get_size_inches()) == (7.5, 3.4)
    assert not [t for t in texts(fig) if "measured live" in t or "not run" in t]
    assert report.NOT_RUN_COLUMN not in report.ratio_table(ladder)


def _readable(fig):
    """The book's rules for a figure: no text under 9 pt, no wider than the column, no two
    texts overlapping."""
    check = plots.text_check(fig)
    assert check["pt"] >= plots.MIN_TEXT_PT, check
    assert check["width_px"] <= plots.COLUMN_PX, check
    assert not overlapping_texts(fig)


#: An Ampere-class GPU (compute capability 8.0, 163 KB a block): only the Hopper rungs are
#: refused there.
SM80 = dict(name="NVIDIA Synthetic sm_80", slug="synthetic-sm80", compute_capability="8.0",
            arch="sm_80", smem_per_block_optin=163 << 10)


def test_the_page_runs_live_where_only_the_hopper_rungs_cannot_run(sgemm_measured):
    sgemm_measured.use(**SM80)
    ns = run_page("01-sgemm.md")
    ladder = ns["ladder"]
    assert lab.caption(ladder).startswith("measured live on NVIDIA Synthetic sm_80")
    refused = ladder[ladder["invalid"].notna()]
    assert set(refused["variant"]) == set(HOPPER)
    fig = report.ladder_figure(ladder, ns["labels"])
    assert [t for t in texts(fig) if t.startswith("not run here")] == \
        ["not run here: needs sm_90 (wgmma and TMA)"] * 2
    assert len(stamp_lines(fig)) == 2


def test_the_page_runs_live_on_an_sm89_gpu(sgemm_measured):
    """On a GPU whose blocks may have 99 KB of shared memory (sm_89), rung 06's default
    tile, every split-K configuration of rung 07 and the Hopper rungs are refused: every
    cell still runs, the facts of what did not run here are not numbers (the figures show
    those rungs from the recording, with the reason)."""
    run_page("01-sgemm.md")
