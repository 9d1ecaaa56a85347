"""The book's figure style: text at least 9 pt at the size a figure is displayed, PNGs at
twice their displayed resolution, and provenance stamps never cut short."""
from __future__ import annotations

import io
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from perflab import lab, plots  # noqa: E402


def drawn(monkeypatch, tmp_path, width_in, fontsize):
    """Draw a figure `width_in` wide with one text of `fontsize` as the inline backend
    does (retina: twice the dpi, tight box) and return what the build's log says."""
    log = tmp_path / "figure-text.jsonl"
    monkeypatch.setenv(plots.FIGURE_LOG_ENV, str(log))
    fig, ax = plt.subplots(figsize=(width_in, 2))
    ax.set_xlabel("size (KiB)", fontsize=10)
    ax.tick_params(labelsize=10)
    ax.text(0.5, 0.5, "small label", fontsize=fontsize)
    fig.savefig(io.BytesIO(), format="png", dpi=2 * fig.dpi, bbox_inches="tight")
    plt.close(fig)
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_the_figure_hook_is_installed():
    assert "perflab.plots:figure_hook" in matplotlib.rcParams["figure.hooks"]


def test_small_text_is_logged_at_its_displayed_size(monkeypatch, tmp_path):
    recs = drawn(monkeypatch, tmp_path, 6.0, 7)
    assert recs and all(r["text"] == "small label" for r in recs)
    assert recs[0]["pt"] == pytest.approx(7 * 100 / 96, abs=0.01)  # not scaled: 600 px
    assert recs[0]["pt"] < plots.MIN_TEXT_PT
    assert recs[0]["labels"] == ["size (KiB)"]


def test_a_figure_wider_than_the_column_shrinks_its_text(monkeypatch, tmp_path):
    rec = drawn(monkeypatch, tmp_path, 14.0, 10)[0]
    assert rec["width_px"] > plots.COLUMN_PX
    scale = plots.COLUMN_PX / rec["width_px"]
    assert rec["pt"] == pytest.approx(10 * 100 / 96 * scale, rel=0.02)
    assert rec["pt"] < plots.MIN_TEXT_PT


def test_nine_points_in_the_column_pass(monkeypatch, tmp_path):
    rec = drawn(monkeypatch, tmp_path, 7.0, 9)[0]
    assert rec["pt"] >= plots.MIN_TEXT_PT


def test_displayed_scale():
    assert plots.displayed_scale(7.0, 100) == 1.0
    assert plots.displayed_scale(plots.COLUMN_PX / 50, 100) == pytest.approx(0.5)


def recorded(commit, dirty=None, device="NVIDIA H200"):
    df = pd.DataFrame({"x": [1]})
    df.attrs["source"] = {"kind": "recorded", "device": device, "date": "2026-11-29T10:00",
                          "commits": [lab.commit_text(commit, dirty)], "run_ids": ["abc123"]}
    return df


@pytest.mark.parametrize("commit, dirty, shown", [
    ("4d9039a+wip", None, "commit 4d9039a with uncommitted changes"),
    ("a923e1a-dirty", None, "commit a923e1a with uncommitted changes"),
    ("64a0d2080d6b8795750a959b626789720974a5ef", None, "commit 64a0d20 ·"),
    ("4d9039a38e2f9b9199214e08cb0ddae7cddc575f", True, "commit 4d9039a with uncommitted changes"),
    ("0ee2cb1", False, "commit 0ee2cb1 ·"),
])
def test_stamps_are_never_cut_short(commit, dirty, shown):
    assert shown in lab.caption(recorded(commit, dirty))


def test_a_figure_of_two_sources_names_both():
    live = pd.DataFrame({"x": [1]})
    live.attrs["source"] = {"kind": "live", "device": "AMD EPYC", "date": "2026-12-04",
                            "run_ids": ["live1"]}
    rec = recorded("0ee2cb1", device="Intel Xeon")
    text = lab.captions(live, rec, rec)
    assert text.splitlines() == [lab.caption(live), lab.caption(rec)]
    fig = plt.figure(figsize=(6, 2))
    plots.stamp(fig, live, rec)
    assert fig.texts[-1].get_text() == text and fig.texts[-1].get_fontsize() >= plots.MIN_TEXT_PT
    plt.close(fig)


def test_a_long_stamp_wraps_inside_its_figure():
    df = recorded("a923e1a-dirty")
    df.attrs["source"]["run_ids"] = ["0c3b4ee5ab03", "abcdef123456", "0123456789ab"]
    fig, ax = plt.subplots(figsize=(4, 2))
    plots.stamp(fig, df)
    fig.canvas.draw()
    bbox = fig.get_tightbbox(fig.canvas.get_renderer())
    assert bbox.x1 <= 4.0, "the stamp widened the figure"
    plt.close(fig)
