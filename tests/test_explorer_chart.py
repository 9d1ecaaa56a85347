"""The explorer's chart reads like the book's figures: axis text at 9 pt (12 CSS px), a
metric's axis titled in words, and the bars' order said."""
from __future__ import annotations

import pandas as pd

from perflab import explorer
from perflab.explorer import Explorer, Field


def test_chart_text_and_titles():
    rows = pd.DataFrame({"variant": ["v"] * 3, "tile": [16, 32, 64],
                         "median_ms": [1.0, 0.5, 0.7], "correct": [True] * 3})
    rows.attrs["source"] = {"kind": "recorded", "device": "Demo GPU", "date": "2026-12-04",
                            "commits": ["abc1234"], "run_ids": ["r1"]}
    ex = Explorer("demo", rows, experiment="demo.exp", match={"variant": "v"},
                  params={"tile": [16, 32, 64]}, fields=[Field("median_ms")],
                  reason=lambda p: None)
    spec = ex.chart().to_dict()
    axis = spec["config"]["axis"]
    assert axis["labelFontSize"] >= 12 and axis["titleFontSize"] >= 12
    enc = spec["encoding"]
    assert enc["y"]["title"] == explorer.AXIS_TITLES["median_ms"] == "median (ms)"
    assert enc["x"]["title"] == "every recorded configuration, highest first"


def test_a_missing_vl_convert_leaves_the_default_renderer_with_a_note(monkeypatch, capsys):
    """Live in Jupyter without vl-convert-python, the explorer's widget loads Vega from the
    network and says so in one line (once), rather than stopping the notebook."""
    import altair as alt

    def refuse(cls=None, offline=True):
        raise ImportError("The vl-convert-python package is required")
    monkeypatch.setattr(alt.JupyterChart, "enable_offline", classmethod(refuse))
    monkeypatch.setitem(explorer.ONLINE_NOTE, "shown", False)
    assert explorer.offline(alt) is False
    assert explorer.offline(alt) is False
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "vl-convert-python" in out
