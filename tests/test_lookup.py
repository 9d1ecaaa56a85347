"""lookup: the one row lookup every report uses."""
from __future__ import annotations

import math

import pandas as pd
import pytest

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


def test_need_and_quote_name_what_is_missing():
    df = pd.DataFrame([{"variant": "a", "n": 1, "x": 2.0}, {"variant": "b", "n": 1, "x": 4.0}])
    assert lookup.need(df, "x", variant="b") == 4.0
    assert lookup.quote(df, {"ka": ("x", "a"), "kb": ("x", {"variant": "b"})}, 100, n=1) == \
        {"ka": 200.0, "kb": 400.0}
    with pytest.raises(ValueError, match="no 'x' in the rows where"):
        lookup.need(df, "x", variant="c")


def test_refusal_is_the_config_errors_text():
    from perflab.errors import ConfigError, refusal

    def check(k):
        if k > 1:
            raise ConfigError(f"k={k}: at most 1")
    assert refusal(check, 1) is None and refusal(check, 2) == "k=2: at most 1"
