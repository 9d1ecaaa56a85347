"""The scan page's key figure live on a reader's GPU that is not the reference, without a
GPU (tests/synthetic_gpu.py): each GPU's scans as fractions of its own copy, the recorded
H200's beside this GPU's, both sources stamped; 16 (bulk copies, compute capability 9.0)
cannot run on the synthetic sm_89, so its points come from its recording, stamped too.
Replayed, the book's figure."""
from __future__ import annotations

import pytest

import perflab
from perflab import lab
from perflab.chapters.scan import report
from tests.synthetic_gpu import agg_figures, REFERENCE, stamp_lines, synthetic_gpu  # noqa: F401


pytestmark = pytest.mark.usefixtures("agg_figures")


def test_the_sizes_figure_shows_both_gpus_against_their_own_copy(synthetic_gpu):
    import matplotlib.pyplot as plt

    from perflab import plots
    synthetic_gpu.measure_from_recorded()
    sizes, bulk = perflab.run("scan.sizes"), perflab.run("scan.bulk")
    assert bulk.attrs["source"]["kind"] == "recorded"          # 16 needs sm_90: recorded
    assert "compute capability 9.0" in bulk.attrs["source"]["note"]
    fig = plt.figure(figsize=(7.5, 4.2))
    plots.stamp(fig, *report.sizes_figure(fig, sizes, bulk))
    lines = stamp_lines(fig)
    assert lines[0].startswith("measured live on NVIDIA Synthetic sm_89 · ")
    assert lab.caption(lab.replay("scan.sizes", device_slug=REFERENCE)) in lines
    assert any(line.startswith(lab.caption(lab.replay("scan.bulk", device_slug=REFERENCE)))
               for line in lines)
    assert "H200, recorded" in [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    dashed = [ln for ln in fig.axes[1].get_lines()
              if ln.get_linestyle() == ":" and ln.get_linewidth() == 1.2 and len(ln.get_xdata())]
    assert len(dashed) == 3                                   # 02, 03 and torch, recorded


def test_replayed_the_sizes_figure_is_the_book_s(monkeypatch):
    import matplotlib.pyplot as plt
    monkeypatch.setenv("PERFLAB_MODE", "replay")
    sizes, bulk = perflab.run("scan.sizes"), perflab.run("scan.bulk")
    fig = plt.figure(figsize=(7.5, 4.2))
    assert report.sizes_figure(fig, sizes, bulk) == [sizes, bulk]
    assert "H200, recorded" not in [t.get_text() for leg in fig.legends for t in leg.get_texts()]
