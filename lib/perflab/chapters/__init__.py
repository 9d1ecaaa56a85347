"""The chapters' code: one package per chapter, `perflab.chapters.<slug>`, found by
discovery (nothing lists them).

A chapter package is the Python side of `chapters/NN-slug.md`: its `__init__.py` sets
`CHAPTER = "NN-slug"` and `TITLE`, and imports the modules that register its experiments
(names `slug.*`). Its kernels live in `kernels/NN-slug/`, its recorded results in
`results/<device>/NN-slug/`, its tests in `tests/chapters/test_slug.py`. CONTRIBUTING.md
has the whole recipe.

Every package has the same shape: the modules of REQUIRED, any of ROLES, and the parts of
its own that its `PARTS` names (module -> its role in a few words). `new-chapter` writes
the required ones; tests/test_layout.py holds every package to this.
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
from types import ModuleType


#: the modules every chapter package has
REQUIRED = {
    "__init__": "CHAPTER, TITLE, the modules named, the imports that register experiments",
    "experiments": "the experiments: checks and races (perflab.race), registered by name",
    "report": "the page's facts, tables and figures, computed from the rows",
    "diagrams": "the page's explanatory figures, drawn from the kernels' own parameters",
}
#: the other roles a module may play, by its name
ROLES = {
    "ops": "the library: the calls a reader makes, their arguments checked before launch",
    "variant": "what a rung of the chapter's ladder is (its kernel, parameters, checks)",
    "variants": "the chapter's kernels as rungs",
    "reference": "the references (NumPy, float64) the checks hold the kernels against",
    "explorer": "the page's explorer of a parameter space",
    "profiling": "the profiler's experiment and the child process it watches",
    "sanitize": "the sanitizers' runs, written as rows",
}


def module_roles(pkg: ModuleType) -> dict[str, str]:
    """module -> role for every module of chapter package `pkg`: REQUIRED, ROLES, and its
    own PARTS."""
    from pathlib import Path
    names = sorted(p.stem for p in Path(pkg.__file__).parent.glob("*.py"))
    parts = getattr(pkg, "PARTS", {})
    return {m: REQUIRED.get(m) or ROLES.get(m) or parts.get(m) for m in names}


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
