"""lookup: the one row lookup every report uses."""
from __future__ import annotations

import math

import pandas as pd

from perflab import lookup

ROWS = pd.DataFrame({"variant": ["a", "b", "b"], "n": [1, 1, 2], "TB/s": [1.5, None, 3.0]})


def test_first_row_of_a_selection():
    assert lookup.first(ROWS, variant="b")["n"] == 1
    assert lookup.first(ROWS, variant="b", n=2)["TB/s"] == 3.0
    assert lookup.first(ROWS, variant="c") is None
    assert lookup.first(ROWS, kind="x") is None          # a column the rows lack


def test_values_and_their_defaults():
    assert lookup.value(ROWS, "TB/s", variant="a") == 1.5
    assert math.isnan(lookup.value(ROWS, "TB/s", variant="b"))      # no value in the row
    assert lookup.value(ROWS, "TB/s", None, variant="c") is None    # no row
    assert math.isnan(lookup.value(ROWS, "GB/s", variant="a"))      # no column
    assert lookup.cell(None, "TB/s", 0.0) == 0.0
