"""Every chapter reads like a chapter of a book: it ends with what we found (three to five
findings, each with a number glued from its rows), draws its key idea with a diagram
made by code in the repo, cites its sources, and links other chapters by name, never by
a number that the table of contents may change."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [c["file"] for part in toc["parts"] for c in part["chapters"]]


CHAPTERS = [f for f in _toc_files() if f.startswith("chapters/") and not f.endswith("99-execution")]


def prose(text: str) -> str:
    """The page's Markdown without front matter, code cells, fenced blocks and inline code."""
    text = text.split("---\n", 2)[2] if text.startswith("---\n") else text
    text = re.sub(r"^(`{3,}|:{3,})\{code-cell\}.*?^\1\s*$", "", text, flags=re.M | re.S)
    text = re.sub(r"^(`{3,}).*?^\1\s*$", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "``", text)


def test_the_book_has_its_chapters():
    assert len(CHAPTERS) >= 10, CHAPTERS


@pytest.mark.parametrize("page", CHAPTERS)
def test_a_chapter_ends_with_what_we_found(page):
    text = (ROOT / f"{page}.md").read_text()
    heads = re.findall(r"^## (.+?)\s*$", text, re.M)
    assert heads and heads[-1] == "What we found", f"{page}: its last section is {heads[-1:]}"
    section = text.split("\n## What we found", 1)[1]
    items = re.split(r"^[-*] |^\d+\. ", section, flags=re.M)[1:]
    assert 3 <= len(items) <= 5, f"{page}: {len(items)} findings (3 to 5 wanted)"
    for item in items:
        assert "{glue" in item, f"{page}: a finding without a glued number: {item[:80]!r}"


@pytest.mark.parametrize("page", CHAPTERS)
def test_a_chapter_draws_its_key_idea(page):
    text = (ROOT / f"{page}.md").read_text()
    calls = re.findall(r"\bdiagrams\.\w+\(", text)
    assert calls, f"{page}: no diagram (a function of its package's diagrams.py)"
    assert re.search(r"^(from|import) .*diagrams", text, re.M), f"{page}: diagrams not imported"


@pytest.mark.parametrize("page", CHAPTERS)
def test_a_chapter_cites_its_sources(page):
    assert "{cite}" in prose((ROOT / f"{page}.md").read_text()), f"{page} cites nothing"


@pytest.mark.parametrize("page", ["intro"] + CHAPTERS)
def test_chapters_are_linked_by_name_not_number(page):
    text = prose((ROOT / f"{page}.md").read_text())
    found = re.findall(r"[^\n]{0,30}\b[Cc]hapters? \d+[^\n]{0,30}", text)
    assert not found, f"{page}: chapter numbers in the prose (link by name): {found[:5]}"


def test_prose_filter():
    page = "---\na: 1\n---\ntext chapter 2\n```{code-cell} ipython3\nchapter 3\n```\n`chapter 4`\n"
    assert prose(page) == "text chapter 2\n\n``\n"
