"""perflab.targets: a target is data (a fact, what is wanted of it), and one function
renders and checks every page's targets from the page's facts."""
from __future__ import annotations

import math

import pytest

from perflab import targets
from perflab.targets import Target

FACTS = {"a": 91.0, "lo": 88.0, "hi": 93.0, "b": 0, "c": 3, "n": 6, "m": 6, "ok": True,
         "name": "tiled", "gone": math.nan, "cpu": "Xeon"}


def _row(t, facts=FACTS):
    return targets.table((t,), facts).iloc[0].to_dict()


def test_at_least_with_a_scale_and_its_spread():
    t = Target("x", "a", at_least=0.9, scale=0.01, low="lo", high="hi")
    assert _row(t) == {"target": "x", "wanted": "≥ 0.9", "measured": "0.91 (0.88–0.93)",
                       "met": True}
    assert _row(t, {**FACTS, "a": 89.0})["met"] is False


def test_at_most_is_inclusive_and_counts_keep_the_digits_asked_for():
    assert _row(Target("y", "b", at_most=0)) == {"target": "y", "wanted": "≤ 0",
                                                  "measured": "0.00", "met": True}
    r = _row(Target("y", "c", at_most=0, digits=0))
    assert (r["measured"], r["met"]) == ("3", False)
    assert _row(Target("z", "c", at_least=2, at_most=4, digits=0))["wanted"] == "2–4"


def test_a_bound_may_be_another_fact():
    t = Target("all kernels right", "n", at_least="m", digits=0)
    assert _row(t) == {"target": "all kernels right", "wanted": "≥ 6", "measured": "6",
                       "met": True}
    assert _row(t, {**FACTS, "n": 5})["met"] is False
    assert t.keys() == {"n", "m"}


def test_equal_among_booleans_and_strings():
    assert _row(Target("clean", "ok", equal=True)) == {"target": "clean", "wanted": "= yes",
                                                        "measured": "yes", "met": True}
    assert _row(Target("same", "n", equal="m", digits=0))["met"] is True
    r = _row(Target("kernel", "name", among=("tiled", "padded")))
    assert (r["wanted"], r["measured"], r["met"]) == ("one of tiled, padded", "tiled", True)
    assert _row(Target("kernel", "name", among=("padded",)))["met"] is False


def test_the_wording_names_facts_and_those_are_read_too():
    t = Target("rows checked ({n}); failed, on {cpu} (up to {a:.0f} %)", "b", at_most=0,
               digits=0)
    assert _row(t)["target"] == "rows checked (6); failed, on Xeon (up to 91 %)"
    assert t.keys() == {"b", "n", "cpu", "a"}
    assert targets.keys((t, Target("x", "c", low="lo", high="hi"))) == {
        "b", "n", "cpu", "a", "c", "lo", "hi"}


def test_nothing_measured_or_nothing_wanted_is_not_judged():
    assert _row(Target("gone", "gone", at_least=1)) == {"target": "gone", "wanted": "≥ 1",
                                                         "measured": "—", "met": None}
    assert _row(Target("shown", "c", digits=0)) == {"target": "shown", "wanted": "—",
                                                     "measured": "3", "met": None}


def test_a_fact_the_page_lacks_is_named():
    with pytest.raises(KeyError, match="'nope'"):
        targets.table((Target("x", "a", at_least="nope"),), FACTS)


def test_the_table_is_shown_folded_with_its_columns():
    html = targets.show((Target("x", "a", at_least=90),), FACTS).data
    assert targets.FOLD in html and "≥ 90" in html and "✓" in html
    assert list(targets.table((), FACTS).columns) == ["target", "wanted", "measured", "met"]


def test_a_table_the_text_points_to_can_be_shown_open():
    html = targets.show((Target("x", "a", at_least=90),), FACTS, fold=None).data
    assert "<details" not in html and "≥ 90" in html and "✓" in html
