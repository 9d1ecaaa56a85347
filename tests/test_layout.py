"""The lab's layout rules, checked on the code: shared modules name no chapter, and no
module reaches into another's private names."""
from __future__ import annotations

import ast
import re

import pytest

import perflab.chapters
from perflab import paths

LIB = paths.ROOT / "lib" / "perflab"
SHARED = sorted(p for p in LIB.rglob("*.py") if "chapters" not in p.relative_to(LIB).parts)
MODULES = sorted(LIB.rglob("*.py")) + sorted((paths.ROOT / "tests").rglob("*.py"))


def test_shared_modules_name_no_chapter():
    chapters = {slug: pkg.CHAPTER for slug, pkg in perflab.chapters.discover().items()}
    words = [re.escape(ch) for ch in chapters.values()]
    words += [rf"chapters\.{slug}\b" for slug in chapters] + [rf"[\"']{slug}\." for slug in chapters]
    pattern = re.compile("|".join(words))
    found = [f"{p.relative_to(paths.ROOT)}:{i}: {line.strip()}"
             for p in SHARED for i, line in enumerate(p.read_text().splitlines(), 1)
             if pattern.search(line)]
    assert not found, "shared code names a chapter:\n" + "\n".join(found)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(paths.ROOT)))
def test_no_private_name_of_another_module(path):
    tree = ast.parse(path.read_text())
    modules = set()                      # names bound to imported modules
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                if _private(a.name):
                    bad.append(f"line {node.lineno}: from {node.module or '.'} import {a.name}")
                modules.add(a.asname or a.name)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _private(node.attr)
                and isinstance(node.value, ast.Name) and node.value.id in modules):
            bad.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
        if (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "setattr"
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str) and _private(node.args[1].value)):
            bad.append(f"line {node.lineno}: patches {node.args[1].value}")
    assert not bad, "\n".join(bad)
