"""A new chapter from the template: `python -m perflab new-chapter NN slug "Title"`.

It writes the files a chapter has, each where CONTRIBUTING.md says it goes, from
lib/perflab/templates/chapter/: the page, a first kernel, the chapter package (discovered,
nothing lists it), its tests and its notes. The one line for _toc.yml is printed, not
written: where the page sits in the book is the author's choice.
"""
from __future__ import annotations

import re
from pathlib import Path

from . import paths
from .errors import ConfigError

TEMPLATES = Path(__file__).parent / "templates" / "chapter"

#: template file -> where it goes, relative to the repository root.
LAYOUT = {
    "chapter.md": "chapters/@CHAPTER@.md",
    "kernel.cu": "kernels/@CHAPTER@/scale.cu",
    "package_init.py": "lib/perflab/chapters/@SLUG@/__init__.py",
    "experiments.py": "lib/perflab/chapters/@SLUG@/experiments.py",
    "report.py": "lib/perflab/chapters/@SLUG@/report.py",
    "diagrams.py": "lib/perflab/chapters/@SLUG@/diagrams.py",
    "test.py": "tests/chapters/test_@SLUG@.py",
    "notes.md": "chapters/notes/@CHAPTER@.md",
}


def chapter_id(number: int, slug: str) -> str:
    """'NN-slug', after checking both: the slug is also a Python package name."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", slug):
        raise ConfigError(f"slug {slug!r}: use lower-case letters, digits and _ (it names "
                          "the Python package perflab.chapters.<slug>)")
    if not 0 <= number <= 98:
        raise ConfigError(f"chapter number {number}: use 0 to 98 (99 is the execution page)")
    return f"{number:02d}-{slug}"


def new_chapter(number: int, slug: str, title: str, root: Path | None = None) -> list[Path]:
    """Write a chapter's files under `root` (the repository); refuse to overwrite any, or
    to reuse a chapter number or a slug."""
    root = Path(root or paths.ROOT)
    chapter = chapter_id(number, slug)
    taken = [p.name for p in (root / "chapters").glob(f"{number:02d}-*.md")]
    taken += [p.name for p in (root / "chapters").glob(f"[0-9][0-9]-{slug}.md")]
    if (root / "lib/perflab/chapters" / slug).exists():
        taken.append(f"lib/perflab/chapters/{slug}")
    if taken:
        raise ConfigError(f"chapter {chapter}: already taken by {', '.join(sorted(set(taken)))}")
    fill = {"@CHAPTER@": chapter, "@SLUG@": slug, "@TITLE@": title}
    written = []
    for template, dest in LAYOUT.items():
        path = root / _fill(dest, fill)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_fill((TEMPLATES / template).read_text(), fill))
        written.append(path)
    return written


def toc_line(number: int, slug: str) -> str:
    return f"      - file: chapters/{chapter_id(number, slug)}"


def _fill(text: str, fill: dict) -> str:
    for key, value in fill.items():
        text = text.replace(key, value)
    return text
