"""Tables for the book: one look for every chapter.

    table(df, {"variant": Col("rung"), "median_ms": Col("median", "time"),
               "bytes": Col("copied", "bytes"), "TFLOP/s": Col("TFLOP/s", digits=1)})

Units go in the headers and values in human units (a time column in µs or ms, a byte
column in KiB, MiB or GiB, whichever reads best for the column), no index column, "—"
where nothing was measured; the table scrolls inside the text column when it is wider,
and with `fold="…"` it sits closed in a dropdown whose summary is that text.
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass

import pandas as pd

#: How a column is shown: "text", "num" (fixed digits), "exp" (scientific), "ratio" (×),
#: "pct" (%), "time" (values in ms, shown in µs or ms), "bytes" (shown in KiB/MiB/GiB),
#: "bool" (✓ / ✗).
KINDS = ("text", "num", "exp", "ratio", "pct", "time", "bytes", "bool")


@dataclass(frozen=True)
class Col:
    header: str
    kind: str = "num"
    digits: int = 2

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"column kind {self.kind!r}: use one of {KINDS}")


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA


def _scale(kind: str, values: pd.Series) -> tuple[float, str]:
    """(divisor, unit) for a time or byte column, from its largest value."""
    top = pd.to_numeric(values, errors="coerce").abs().max()
    top = 0 if pd.isna(top) else top
    if kind == "time":
        return (1e-3, "µs") if top < 1 else (1.0, "ms") if top < 1e4 else (1e3, "s")
    for div, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if top >= div:
            return float(div), unit
    return 1.0, "B"


def _formatter(col: Col, values: pd.Series):
    """(header, function value -> text) for one column."""
    if col.kind in ("time", "bytes"):
        div, unit = _scale(col.kind, values)
        return f"{col.header} ({unit})", lambda v: f"{v / div:,.{col.digits}f}"
    fmt = {
        "text": str,
        "num": lambda v: f"{v:,.{col.digits}f}",
        "exp": lambda v: f"{v:.{col.digits}e}",
        "ratio": lambda v: f"{v:.{col.digits}f}×",
        "pct": lambda v: f"{v:.{col.digits}f} %",
        "bool": lambda v: "✓" if v else "✗",
    }[col.kind]
    return col.header, fmt


class Html:
    """A block of HTML that the book and Jupyter display as it is (`_repr_html_`)."""

    def __init__(self, data: str):
        self.data = data

    def _repr_html_(self) -> str:
        return self.data


def table(df: pd.DataFrame, columns: dict[str, Col | str], *, fold: str | None = None,
          caption: str | None = None) -> Html:
    """`df` shown with `columns` (source column -> Col, or a header for a text column),
    in that order, as HTML for the book and for Jupyter."""
    missing = [name for name in columns if name not in df]
    if missing:
        raise KeyError(f"table: no column {missing} in the rows (they have {list(df.columns)})")
    heads, cells = [], []
    for name, col in columns.items():
        col = Col(col, "text") if isinstance(col, str) else col
        values = df[name]
        head, fmt = _formatter(col, values)
        heads.append((head, col.kind not in ("text", "bool")))
        cells.append(["—" if _missing(v) else fmt(v) for v in values])
    th = "".join(f'<th class="{"num" if num else ""}">{html.escape(h)}</th>' for h, num in heads)
    body = "".join(
        "<tr>" + "".join(f'<td class="{"num" if heads[j][1] else ""}">{html.escape(cells[j][i])}</td>'
                         for j in range(len(heads))) + "</tr>"
        for i in range(len(df)))
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    out = (f'<div class="perflab-table"><table>{cap}<thead><tr>{th}</tr></thead>'
           f"<tbody>{body}</tbody></table></div>")
    if fold:
        out = (f'<details class="perflab-fold"><summary>{html.escape(fold)}</summary>'
               f"{out}</details>")
    return Html(out)


def fold_text(summary: str, text: str) -> Html:
    """Preformatted text (SASS, a log) closed in a dropdown whose summary is `summary`."""
    return Html(f'<details class="perflab-fold"><summary>{html.escape(summary)}</summary>'
                f'<div class="perflab-table"><pre>{html.escape(text)}</pre></div></details>')
