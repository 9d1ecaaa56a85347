"""One way for a report to find the number it quotes in a run's rows.

    row = lookup.first(df, variant="tiled", n=1 << 28)     # the first matching row, or None
    x = lookup.cell(row, "TB/s")                            # its value, NaN when it has none
    x = lookup.value(df, "TB/s", variant="tiled")           # both at once
    x = lookup.need(df, "TB/s", variant="tiled")            # ValueError if it is missing
    f = lookup.quote(df, {"tiled_tbs": ("TB/s", "tiled")}, n=1 << 28)   # facts at once

A selection that matches nothing, a column the rows lack and a missing value all give the
default (NaN unless given), so that a page states "—" instead of failing on a run that
measured less; a report that must have the number checks it (`need`, `quote`)."""
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


def need(df: pd.DataFrame, col: str, **where) -> float:
    """The value a page quotes: `value(df, col, **where)`, or ValueError naming the
    selection when the rows have none."""
    v = value(df, col, **where)
    if math.isnan(v):
        raise ValueError(f"no {col!r} in the rows where {where}")
    return v


def quote(df: pd.DataFrame, spec: dict, scale=1, **where) -> dict:
    """Facts at once: key -> `need(df, col, ...) * scale` for each key: (col, sel) of
    `spec`, `sel` a variant or a dict of columns, every selection also matching `where`."""
    return {k: need(df, col, **where, **(sel if isinstance(sel, dict) else {"variant": sel}))
            * scale for k, (col, sel) in spec.items()}
