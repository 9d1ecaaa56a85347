"""The book's own files agree with each other: every page in _toc.yml exists and is a
MyST notebook that executes with the python3 kernel, and the build settings that make
CI meaningful (forced execution, errors fail the build) are in place."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [c["file"] for c in part["chapters"]]
    files += [c["file"] for c in toc.get("chapters", [])]
    return files


def _front_matter(path: Path) -> dict:
    text = path.read_text()
    assert text.startswith("---\n"), f"{path} has no front matter"
    return yaml.safe_load(text.split("---\n", 2)[1])


def test_toc_pages_exist():
    for f in _toc_files():
        assert (ROOT / f"{f}.md").is_file(), f"_toc.yml lists {f}, but {f}.md is missing"


@pytest.mark.parametrize("page", [f for f in _toc_files() if f.startswith("chapters/")])
def test_chapter_is_a_myst_notebook(page):
    meta = _front_matter(ROOT / f"{page}.md")
    assert meta["jupytext"]["text_representation"]["format_name"] == "myst"
    assert meta["kernelspec"]["name"] == "python3"
    assert "```{code-cell}" in (ROOT / f"{page}.md").read_text()


def test_execution_settings():
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    ex = cfg["execute"]
    assert ex["execute_notebooks"] == "force"
    assert ex["raise_on_error"] is True and ex["allow_errors"] is False
    assert ex["timeout"] >= 600


def test_execution_page_has_the_table():
    assert "{nb-exec-table}" in (ROOT / "chapters/99-execution.md").read_text()
