"""The transpose ladder's key figure live on a reader's GPU that is not the reference,
without a GPU (tests/synthetic_gpu.py): every entry against its own GPU's faster copy, this
GPU beside the recorded H200, an entry this GPU could not run shown from the recording with
the reason, both sources stamped. Replayed, the book's figure."""
from __future__ import annotations

import pytest

import perflab
from perflab import lab, plots
from perflab.chapters.transpose import report
from tests.synthetic_gpu import (REFERENCE, legend_labels, overlapping_texts,  # noqa: F401
                                 agg_figures, run_page, stamp_lines, synthetic_gpu, texts)


pytestmark = pytest.mark.usefixtures("agg_figures")


def _no_wide_tile(exp, row, dev):
    """A stand-in refusal: the wide rung's 64² tile, refused on this device."""
    if row["variant"] == "wide" and dev["compute_capability"] == "8.9":
        return "wide: a 64² tile needs more shared memory; this GPU gives a block 99 KB"
    return None


def test_the_ladder_shows_both_gpus_against_their_own_copy(synthetic_gpu):
    synthetic_gpu.measure_from_recorded(cannot_run=_no_wide_tile)
    ladder = perflab.run("transpose.ladder")
    fig = report.ladder_figure(ladder)
    lines = stamp_lines(fig)
    assert lines[0].startswith("measured live on NVIDIA Synthetic sm_89 · ")
    assert lines[1] == lab.caption(lab.replay("transpose.ladder", device_slug=REFERENCE))
    assert len(lines) == 2
    legend = legend_labels(fig)
    assert "NVIDIA Synthetic sm_89, measured live" in legend and "NVIDIA H200, recorded" in legend
    shown = texts(fig)
    note = "not run here: a 64² tile needs more shared memory"
    assert note in shown
    ref = report.ladder_table(lab.replay("transpose.ladder", device_slug=REFERENCE))
    wide = float(ref.loc[ref["entry"] == "wide", "of_copy"].iloc[0])
    assert f"{wide:.2f}" in shown                       # the recorded bar, as recorded
    ax = fig.axes[0]
    assert len([p for p in ax.patches if p.get_hatch()]) == len(ref)
    assert len([p for p in ax.patches if not p.get_hatch()]) == len(ref) - 1
    check = plots.text_check(fig)
    assert check["pt"] >= plots.MIN_TEXT_PT and check["width_px"] <= plots.COLUMN_PX, check
    assert not overlapping_texts(fig)


def test_replayed_the_ladder_is_the_book_s(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "replay")
    ladder = perflab.run("transpose.ladder")
    fig = report.ladder_figure(ladder)
    assert stamp_lines(fig) == [lab.caption(ladder)]
    assert tuple(fig.get_size_inches()) == (6.7, 4.0)
    assert not legend_labels(fig)


def test_the_page_runs_live_on_another_gpu(synthetic_gpu):
    synthetic_gpu.measure_from_recorded(cannot_run=_no_wide_tile)
    ns = run_page("05-transpose.md")
    assert lab.caption(ns["ladder"]).startswith("measured live on NVIDIA Synthetic sm_89")
