"""The memory chapter's key figures live on a reader's GPU that is not the reference,
without a GPU (tests/synthetic_gpu.py: a synthetic sm_89 device whose rows are the H200's
recorded ones at half the speed): the latency staircase draws both GPUs' curves (cycles per
load compare as they stand), the Little's-law figure each GPU against its own cudaMemcpy;
both stamped with both sources. Replayed, each is the book's figure."""
from __future__ import annotations

import pytest

import perflab
from perflab import lab, plots
from perflab.chapters.memory import report
from tests.synthetic_gpu import (REFERENCE, legend_labels, overlapping_texts,  # noqa: F401
                                 agg_figures, run_page, stamp_lines, synthetic_gpu, texts)


pytestmark = pytest.mark.usefixtures("agg_figures")


@pytest.fixture
def live(synthetic_gpu):
    synthetic_gpu.measure_from_recorded()
    return synthetic_gpu


def _two_stamps(fig, name):
    lines = stamp_lines(fig)
    assert len(lines) == 2
    assert lines[0].startswith("measured live on NVIDIA Synthetic sm_89 · ")
    assert lines[1] == lab.caption(lab.replay(name, device_slug=REFERENCE))
    assert lines[1].startswith("recorded on NVIDIA H200 · ")


def _readable(fig):
    check = plots.text_check(fig)
    assert check["pt"] >= plots.MIN_TEXT_PT and check["width_px"] <= plots.COLUMN_PX, check
    assert not overlapping_texts(fig)


def test_the_staircase_shows_both_gpus_with_both_stamps(live):
    lat = perflab.run("memory.latency")
    dev = plots.device_of(lat)
    assert dev["name"] == "NVIDIA Synthetic sm_89"
    fig = report.staircase_figure(lat, dev)
    _two_stamps(fig, "memory.latency")
    legend = legend_labels(fig)
    assert "Synthetic sm_89, measured live: median" in legend
    assert "H200, recorded: median" in legend
    ax = fig.axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    ref = report.staircase(lab.replay("memory.latency", device_slug=REFERENCE))
    mine = report.staircase(lat)
    assert list(lines["H200, recorded: median"].get_ydata()) == list(ref["cycles"])
    assert list(lines["Synthetic sm_89, measured live: median"].get_ydata()) == list(mine["cycles"])
    # the levels are this GPU's: its L2 of 64 MiB, not the H200's 60
    assert "L2\n64 MiB, two halves" in texts(fig)
    top = ax.get_ylim()[1]
    assert top > mine["cycles"].max() * 1.2          # room above the slower curve's labels
    _readable(fig)


def test_the_inflight_figure_shows_each_gpu_against_its_own_copy(live):
    inf = perflab.run("memory.inflight")
    fig = report.inflight_figure(inf, perflab.run("memory.latency"))
    _two_stamps(fig, "memory.inflight")
    legend = legend_labels(fig)
    for who in ("Synthetic sm_89, live", "H200, recorded"):
        assert f"{who}: grid-strided" in legend and f"{who}: blocked" in legend
    assert fig.axes[0].get_ylabel() == "× cudaMemcpy (best K)"
    _readable(fig)


def test_replayed_they_are_the_book_s(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "replay")
    lat, inf = perflab.run("memory.latency"), perflab.run("memory.inflight")
    dev = plots.device_of(lat)
    fig = report.staircase_figure(lat, dev)
    assert stamp_lines(fig) == [lab.caption(lat)]
    assert legend_labels(fig) == ["published (GH200)", "each repeat", "median"]
    assert fig.axes[0].get_ylim() == (0, 900)
    fig = report.inflight_figure(inf, lat)
    assert stamp_lines(fig) == [lab.caption(inf)]
    assert "cudaMemcpy, same rounds" in legend_labels(fig)


def test_the_page_runs_live_on_another_gpu(live):
    ns = run_page("02-memory.md")
    assert lab.caption(ns["lat"]).startswith("measured live on NVIDIA Synthetic sm_89")
    assert "memory.latency" in live.calls and "memory.inflight" in live.calls
