"""Every figure the book build drew, read at the size the book shows it: no text under
9 pt (make book logs each figure's smallest text through perflab.plots; see
tests/test_figure_style.py for how the size is measured)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from perflab import plots

pytestmark = pytest.mark.browser

LOG = Path(__file__).resolve().parents[2] / "_build" / "figure-text.jsonl"


def test_no_figure_text_under_nine_points():
    if not LOG.is_file():
        pytest.fail(f"{LOG} is missing: build the book with `make book` (it logs every "
                    "figure's smallest text)", pytrace=False)
    recs = [json.loads(line) for line in LOG.read_text().splitlines() if line.strip()]
    assert recs, "the book build drew no figure"
    small = {}
    for r in recs:
        if r["pt"] < plots.MIN_TEXT_PT:
            small[(r["figure"], r["text"])] = r
    if small:
        lines = [f"  - {r['pt']:.1f} pt: “{r['text']}” in a {r['width_px']} px figure "
                 f"({' / '.join(r['labels']) or 'no axis labels'})" for r in small.values()]
        pytest.fail(f"{len(small)} figure(s) with text under {plots.MIN_TEXT_PT} pt as "
                    "displayed:\n" + "\n".join(lines), pytrace=False)
