"""A page's targets, as data: what is wanted of which fact, rendered and checked by one
function.

    TARGETS = (
        Target("best kernel × the copy, same rounds", "best_x", at_least=0.9,
               low="best_x_min", high="best_x_max"),
        Target("rows checked before timing ({n_checked}); failed", "n_failed", at_most=0,
               digits=0),
    )
    targets.table(TARGETS, facts)      # target, wanted, measured, met: one line a target

A target reads only the page's facts (the dict its facts functions return, computed from
the rows): its `fact`, the spread beside it (`low`, `high`), a bound given as another
fact's key, and the facts its wording names in braces. Its threshold lives here, in the
data, never in the code that renders it; a verdict that needs several numbers is a fact of
its own (a count, a boolean) computed in a facts function."""
from __future__ import annotations

import math
import numbers
import string
from dataclasses import dataclass

import numpy as np
import pandas as pd

Bound = float | int | str | None


@dataclass(frozen=True)
class Target:
    """What is wanted of the fact `fact` (a key of the page's facts), times `scale`:
    `at_least` and/or `at_most` (inclusive), `equal`, or one of `among`. A bound may be a
    number or the key of another fact (wanted: "≥ 9" where the fact `n_kernels` is 9).
    `low` and `high` name the facts of its spread over the rounds, shown beside it.
    `what` is its wording; it may name facts in braces, with a format
    ("rows checked ({n_checked}); failed"). Numbers are shown with `digits` decimals and
    `unit` after them. A target without a bound is shown, not judged (met: "—")."""
    what: str
    fact: str
    at_least: Bound = None
    at_most: Bound = None
    equal: object = None
    among: tuple | None = None
    scale: float = 1.0
    low: str | None = None
    high: str | None = None
    digits: int = 2
    unit: str = ""

    def keys(self) -> set[str]:
        """Every fact this target reads."""
        named = {f.split(".")[0].split("[")[0]
                 for _, f, _, _ in string.Formatter().parse(self.what) if f}
        bounds = {b for b in (self.at_least, self.at_most, self.equal) if isinstance(b, str)}
        return {self.fact} | named | bounds | {k for k in (self.low, self.high) if k}

    # -- the three cells ------------------------------------------------------------------
    def value(self, facts: dict):
        v = facts[self.fact]
        return v * self.scale if _number(v) else v

    def _bound(self, b, facts: dict):
        return facts[b] if isinstance(b, str) else b

    def wanted(self, facts: dict) -> str:
        lo, hi = self._bound(self.at_least, facts), self._bound(self.at_most, facts)
        eq = self._bound(self.equal, facts) if isinstance(self.equal, str) else self.equal
        if self.among is not None:
            return "one of " + ", ".join(_show(a) for a in self.among)
        u = self.unit
        if eq is not None:
            return f"= {_show(eq)}{u if _number(eq) else ''}"
        if lo is not None and hi is not None:
            return f"{lo:g}–{hi:g}{u}"
        if lo is not None:
            return f"≥ {lo:g}{u}"
        if hi is not None:
            return f"≤ {hi:g}{u}"
        return "—"

    def measured(self, facts: dict) -> str:
        v = self.value(facts)
        if _missing(v):
            return "—"
        shown = f"{v:.{self.digits}f}{self.unit}" if _number(v) else _show(v)
        if self.low and self.high and not _missing(facts[self.low]):
            lo, hi = facts[self.low] * self.scale, facts[self.high] * self.scale
            shown += f" ({lo:.{self.digits}f}–{hi:.{self.digits}f})"
        return shown

    def met(self, facts: dict) -> bool | None:
        """Whether the measured value meets the target; None where nothing was measured or
        nothing is wanted."""
        v = self.value(facts)
        if _missing(v):
            return None
        lo, hi = self._bound(self.at_least, facts), self._bound(self.at_most, facts)
        eq = self._bound(self.equal, facts) if isinstance(self.equal, str) else self.equal
        if self.among is not None:
            return v in self.among
        if eq is not None:
            return bool(v == eq)
        if lo is None and hi is None:
            return None
        return bool((lo is None or v >= lo) and (hi is None or v <= hi))


def _number(v) -> bool:
    return isinstance(v, numbers.Number) and not isinstance(v, bool)


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _show(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    return f"{v:g}" if _number(v) else str(v)


def keys(targets) -> set[str]:
    """Every fact a page's targets read."""
    return set().union(*(t.keys() for t in targets)) if targets else set()


def table(targets, facts: dict) -> pd.DataFrame:
    """One line a target: its wording (its named facts filled in), what is wanted, what
    was measured (with its spread) and whether it is met. A fact the page's facts lack is
    a KeyError naming it."""
    missing = sorted(keys(targets) - set(facts))
    if missing:
        raise KeyError(f"targets read facts the page does not have: {missing}")
    return pd.DataFrame([{"target": t.what.format_map(facts), "wanted": t.wanted(facts),
                          "measured": t.measured(facts), "met": t.met(facts)}
                         for t in targets], columns=["target", "wanted", "measured", "met"])


def columns() -> dict:
    """The table's columns for perflab.tables.table."""
    from .tables import Col
    return {"target": "target", "wanted": "wanted", "measured": "measured",
            "met": Col("met", "bool")}


FOLD = "Targets on this GPU: what was wanted, what was measured"


def show(targets, facts: dict, *, fold: str | None = FOLD):
    """The targets table as the pages show it: folded under `fold`, or open (`fold=None`,
    for a table the text sends the reader to)."""
    from .tables import table as html_table
    return html_table(table(targets, facts), columns(), fold=fold)
