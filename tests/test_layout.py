"""The lab's layout rules, checked on the code: shared modules name no chapter, and no
module reaches into another's private names: its functions, or the private attributes of
its objects."""
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


def _own_private_names(tree) -> set[str]:
    """The private names a module defines itself: functions, classes, and attributes it
    assigns (self._x = ..., a class's _x = ...)."""
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            own.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
    return {n for n in own if _private(n)}


def _reach_ins(tree) -> list[str]:
    """`obj._x` where this module does not define `_x` itself (its own classes' state),
    and getattr(obj, "_x") or getattr(obj, "_" + name): reading another module's object's
    private state."""
    own = _own_private_names(tree)
    bad = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in own
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
            bad.append(f"line {node.lineno}: .{node.attr}")
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("getattr", "hasattr")
                and len(node.args) >= 2):
            name = node.args[1]
            if isinstance(name, ast.BinOp) and isinstance(name.left, ast.Constant):
                name = name.left
            if (isinstance(name, ast.Constant) and isinstance(name.value, str)
                    and _private(name.value) and (name.value == "_" or name.value not in own)):
                bad.append(f"line {node.lineno}: getattr(..., {name.value!r}...)")
    return bad


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(paths.ROOT)))
def test_no_private_attribute_of_another_modules_objects(path):
    bad = _reach_ins(ast.parse(path.read_text()))
    assert not bad, "\n".join(bad)


def test_the_attribute_rule_catches_a_reach_in():
    src = ("class A:\n    def __init__(self):\n        self._mine = 1\n"
           "def f(enc, m):\n    enc._mine\n    enc._theirs\n    getattr(enc, '_' + m)\n")
    tree = ast.parse(src)
    assert _own_private_names(tree) == {"_mine"}
    assert _reach_ins(tree) == ["line 6: ._theirs", "line 7: getattr(..., '_'...)"]


def _package_imports(pkg_dir) -> dict[str, set[str]]:
    """module -> the modules of the same package it imports (at any depth in its code)."""
    mods = {p.stem for p in pkg_dir.glob("*.py")}
    graph = {}
    for p in pkg_dir.glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    deps.add(node.module.split(".")[0])
                else:
                    deps |= {a.name for a in node.names}
        graph[p.stem] = (deps & mods) - {p.stem, "__init__"}
    return graph


def _cycle(graph) -> list[str] | None:
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state and (found := visit(d)):
                return found
        state[m] = 2
        stack.pop()
        return None
    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


@pytest.mark.parametrize("pkg", sorted(p.parent for p in LIB.rglob("__init__.py")),
                         ids=lambda p: str(p.relative_to(LIB)))
def test_no_import_cycle_inside_a_package(pkg):
    """An older module never imports a newer one that imports it back: a package's modules
    import each other in one direction."""
    cycle = _cycle(_package_imports(pkg))
    assert cycle is None, " -> ".join(cycle)


def test_the_cycle_rule_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("slug", sorted(perflab.chapters.discover()))
def test_every_chapter_package_has_the_same_shape(slug):
    """Each chapter package has the required modules (perflab.chapters.REQUIRED), and each
    other module plays a named role (ROLES) or is listed in the package's PARTS with its
    role; PARTS names no module that does not exist, and no module of a named role."""
    pkg = perflab.chapters.discover()[slug]
    roles = perflab.chapters.module_roles(pkg)
    missing = sorted(set(perflab.chapters.REQUIRED) - set(roles))
    assert not missing, f"{slug} lacks {missing}"
    unnamed = sorted(m for m, role in roles.items() if not role)
    assert not unnamed, f"{slug}: give these modules a role in PARTS: {unnamed}"
    parts = set(getattr(pkg, "PARTS", {}))
    assert parts <= set(roles), f"{slug}: PARTS names missing modules {sorted(parts - set(roles))}"
    named = set(perflab.chapters.REQUIRED) | set(perflab.chapters.ROLES)
    assert not parts & named, f"{slug}: PARTS re-names {sorted(parts & named)}"
