"""Facts, not glue dictionaries: every page quotes exactly the facts its report's facts
functions give (PAGE_FACTS, replayed here without a GPU), and its targets read only those
facts. A fact no page quotes is a dead number; a quote of a fact nobody makes is a hole
in the book; a number glued by a page's own cell escapes both checks, so pages glue only
through their facts functions (and figures, by name)."""
from __future__ import annotations

import importlib
import re

import pytest

import perflab.chapters
from perflab import book, lab, paths, targets
from tests.test_book_shape import CHAPTERS, page_cells

PAGES = [c.removeprefix("chapters/") for c in CHAPTERS]


def _reports() -> dict:
    """page -> the report module whose PAGE_FACTS names it."""
    out = {}
    for slug in perflab.chapters.discover():
        report = importlib.import_module(f"perflab.chapters.{slug}.report")
        for page in getattr(report, "PAGE_FACTS", {}):
            assert page not in out, f"{page} has facts in two reports"
            out[page] = report
    return out


REPORTS = _reports()


def _replay(name):
    return lab.replay(name)


def test_every_page_has_its_facts_and_targets():
    assert set(REPORTS) == set(PAGES)
    for page, report in REPORTS.items():
        assert page in report.TARGETS, f"{page}: no TARGETS"


@pytest.mark.parametrize("page", PAGES)
def test_each_page_cites_exactly_the_facts_its_report_gives(page, monkeypatch):
    """set(produced) == set(cited): the keys the page's glue roles quote, and the facts its
    targets table reads."""
    monkeypatch.setenv("PERFLAB_MODE", "replay")
    report = REPORTS[page]
    facts = book.page_facts(report.PAGE_FACTS[page], _replay)
    cited = book.cited(page) | targets.keys(report.TARGETS[page])
    assert not sorted(cited - set(facts)), f"{page} cites facts nobody makes"
    assert not sorted(set(facts) - cited), f"{page}: facts no page cites"
    assert not [k for k, v in facts.items() if isinstance(v, float) and v != v], \
        f"{page}: a fact is NaN"
    table = targets.table(report.TARGETS[page], facts)
    assert len(table) == len(report.TARGETS[page])


@pytest.mark.parametrize("page", PAGES)
def test_a_page_glues_only_through_its_facts_functions(page):
    """Each function of the page's PAGE_FACTS is called by the page, every facts function
    the page calls is in its PAGE_FACTS, and no cell glues a number of its own (a figure,
    glued by name for a {glue:figure} directive, is not a fact)."""
    text = (paths.ROOT / "chapters" / f"{page}.md").read_text()
    code = "\n".join(c for _, c in page_cells(text))
    names = {fn.__name__ for fn, _ in REPORTS[page].PAGE_FACTS[page]}
    called = set(re.findall(r"\b(\w+_facts)\(", code))
    assert names <= called, f"{page} never calls {sorted(names - called)}"
    assert called <= names, f"{page} calls facts functions its PAGE_FACTS lacks: " \
                            f"{sorted(called - names)}"
    assert "glue_all(" not in code, f"{page} glues a dictionary of its own"
    figures = set(re.findall(r"^```\{glue:figure\}\s+(\S+)", text, re.M))
    glued = set(re.findall(r"\bglue\(\s*[\"'](\w+)[\"']", code))
    assert glued <= figures, f"{page} glues numbers in its cells: {sorted(glued - figures)}"
