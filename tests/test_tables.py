"""The book's one table helper: units in headers, human units, "—" for not measured, no
index column, folding, and a clear error for a column the rows do not have."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from perflab.tables import Col, fold_text, table


def _html(df, cols, **kw):
    return table(df, cols, **kw).data


def test_units_in_headers_and_human_units():
    df = pd.DataFrame({"v": ["a", "b"], "median_ms": [0.0123, 0.5], "bytes": [268435456, 1 << 30],
                       "x": [1.234, math.nan]}, index=[59, 37])
    html = _html(df, {"v": "rung", "median_ms": Col("median", "time", 1),
                      "bytes": Col("copied", "bytes", 2), "x": Col("× cuBLAS", "ratio", 2)})
    assert "<th>rung</th>" in html.replace(' class=""', "")
    assert "median (µs)" in html and ">12.3<" in html and ">500.0<" in html
    assert "copied (GiB)" in html and ">0.25<" in html and ">1.00<" in html
    assert ">1.23×<" in html and ">—<" in html
    assert ">59<" not in html and ">37<" not in html           # no index column
    assert html.startswith('<div class="perflab-table">')       # scrolls inside the column


def test_times_move_to_ms_and_bytes_to_smaller_units():
    df = pd.DataFrame({"t": [3.2, 12.0], "b": [4096, 65536]})
    html = _html(df, {"t": Col("time", "time", 1), "b": Col("size", "bytes", 0)})
    assert "time (ms)" in html and "size (KiB)" in html and ">64<" in html


def test_folded_and_missing_column():
    df = pd.DataFrame({"a": [1.0]})
    assert _html(df, {"a": Col("a")}, fold="All rows").startswith(
        '<details class="perflab-fold"><summary>All rows</summary>')
    with pytest.raises(KeyError, match=r"no column \['b'\]"):
        table(df, {"b": Col("b")})
    with pytest.raises(ValueError, match="column kind"):
        Col("x", "furlongs")
    assert "&lt;LDS&gt;" in fold_text("SASS", "<LDS>").data
