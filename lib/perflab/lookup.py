"""One way for a report to find the number it quotes in a run's rows.

    row = lookup.first(df, variant="tiled", n=1 << 28)     # the first matching row, or None
    x = lookup.cell(row, "TB/s")                            # its value, NaN when it has none
    x = lookup.value(df, "TB/s", variant="tiled")           # both at once

A selection that matches nothing, a column the rows lack and a missing value all give the
default (NaN unless given), so that a page states "—" instead of failing on a run that
measured less; a report that must have the number checks it."""
from __future__ import annotations

import math

import pandas as pd


def first(df: pd.DataFrame, **where) -> pd.Series | None:
    """The first row of `df` whose columns equal `where` (None if none does, or if `df`
    lacks one of the columns)."""
    d = df
    for k, v in where.items():
        if k not in d:
            return None
        d = d[d[k] == v]
    return d.iloc[0] if len(d) else None


def cell(row: pd.Series | None, col: str, default=math.nan):
    """`row[col]` as a float, or `default` when there is no row, no such column or no
    value."""
    if row is None or col not in row or row[col] is None or pd.isna(row[col]):
        return default
    return float(row[col])


def value(df: pd.DataFrame, col: str, default=math.nan, **where):
    """`cell(first(df, **where), col, default)`."""
    return cell(first(df, **where), col, default)
