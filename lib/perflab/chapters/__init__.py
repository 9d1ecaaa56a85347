"""The chapters' code: one package per chapter, `perflab.chapters.<slug>`, found by
discovery (nothing lists them).

A chapter package is the Python side of `chapters/NN-slug.md`: its `__init__.py` sets
`CHAPTER = "NN-slug"` and `TITLE`, and imports the modules that register its experiments
(names `slug.*`). Its kernels live in `kernels/NN-slug/`, its recorded results in
`results/<device>/NN-slug/`, its tests in `tests/chapters/test_slug.py`. CONTRIBUTING.md
has the whole recipe.
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
from types import ModuleType


def discover() -> dict[str, ModuleType]:
    """Import every chapter package on `__path__` (slug -> module); importing one
    registers its experiments."""
    found = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.ispkg:
            found[info.name] = importlib.import_module(f"{__name__}.{info.name}")
    return found


def chapter_of(module_name: str) -> tuple[str, str]:
    """(slug, CHAPTER) of the chapter package a module belongs to."""
    prefix = __name__ + "."
    if not module_name.startswith(prefix):
        raise ValueError(f"{module_name} is not inside {__name__}")
    slug = module_name[len(prefix):].split(".")[0]
    pkg = sys.modules.get(prefix + slug) or importlib.import_module(prefix + slug)
    chapter = getattr(pkg, "CHAPTER", None)
    if not chapter or chapter.split("-", 1)[-1] != slug:
        raise ValueError(f"chapter package {prefix + slug} must set CHAPTER = 'NN-{slug}' "
                         f"in its __init__.py (found {chapter!r})")
    return slug, chapter
