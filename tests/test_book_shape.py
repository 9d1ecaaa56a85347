"""Every chapter reads like a chapter of a book: it ends with what we found (three to five
findings, each with a number glued from its rows), draws its key idea with a diagram
made by code in the repo, cites its sources, and links other chapters by name, never by
a number that the table of contents may change."""
from __future__ import annotations

import ast
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


# ---- a page measures section by section ---------------------------------------------------

#: The most experiments one code cell may run.
MAX_RUNS_PER_CELL = 3
#: Calls that run experiments besides `lab.run` / `perflab.run` (live on a GPU, replayed
#: elsewhere): (module alias, function). test_runners_are_known keeps this list complete.
RUNNERS = {("machine", "ceilings"), ("report", "cpu_frames")}
TEMPLATE = ROOT / "lib" / "perflab" / "templates" / "chapter" / "chapter.md"


def page_cells(text: str) -> list[tuple[str, str]]:
    """(section, code) of every code cell of a MyST page, in order; the section is the
    text of the last heading (## or deeper) above the cell, "" before the first one."""
    text = text.split("---\n", 2)[2] if text.startswith("---\n") else text
    token = re.compile(r"^(`{3,}|:{3,})\{code-cell\}[^\n]*\n(.*?)^\1\s*$|^(#{2,6}) (.+?)\s*$",
                       re.M | re.S)
    section, out = "", []
    for m in token.finditer(text):
        if m.group(4) is not None:
            section = m.group(4)
        else:
            body = re.sub(r"\A(?::\w[\w-]*:.*\n)+", "", m.group(2))   # the cell's options
            out.append((section, body))
    return out


def _is_run(call: ast.Call) -> bool:
    f = call.func
    if not isinstance(f, ast.Attribute) or not isinstance(f.value, ast.Name):
        return False
    return (f.value.id in ("lab", "perflab") and f.attr == "run") or (f.value.id, f.attr) in RUNNERS


def cell_runs(code: str) -> tuple[int, list[str]]:
    """How many experiments a cell runs (a run inside a loop or comprehension counts as
    more than any limit), and what it assigns each run's result to."""
    tree = ast.parse(code)
    n, targets = 0, []
    loops = (ast.For, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

    def visit(node, in_loop):
        nonlocal n
        if isinstance(node, ast.Call) and _is_run(node):
            n += 10 ** 6 if in_loop else 1
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _is_run(node.value):
            targets.extend(ast.unparse(t) for t in node.targets)
        for child in ast.iter_child_nodes(node):
            visit(child, in_loop or isinstance(node, loops))
    visit(tree, False)
    return n, targets


def _reads(code: str) -> set[str]:
    """Every name and subscript (R["conv2d"]) a cell reads, as its source text."""
    return {ast.unparse(node) for node in ast.walk(ast.parse(code))
            if isinstance(node, (ast.Name, ast.Subscript, ast.Attribute))
            and isinstance(node.ctx, ast.Load)}


def shape_problems(text: str) -> list[str]:
    """Why a page does not measure section by section (nothing when it does)."""
    cells = page_cells(text)
    problems = []
    for i, (section, code) in enumerate(cells):
        n, targets = cell_runs(code)
        runs = "experiments in a loop" if n >= 10 ** 6 else f"{n} experiments"
        if n and (i == 0 or not section):
            problems.append(f"code cell {i + 1}, before the first section, runs {runs}")
        if n > MAX_RUNS_PER_CELL:
            problems.append(f"code cell {i + 1} ({section!r}) runs {runs} "
                            f"(at most {MAX_RUNS_PER_CELL})")
        if n and "TARGETS[" in code:
            problems.append(f"code cell {i + 1} builds the targets and runs experiments")
        read = set().union(*(_reads(c) for s, c in cells if s == section))
        for t in targets:
            if t not in read:
                problems.append(f"code cell {i + 1} runs {t} for a later section: its section "
                                f"{section!r} never reads it")
    return problems


@pytest.mark.parametrize("page", CHAPTERS)
def test_each_section_measures_what_it_cites(page):
    """A page measures section by section, so that live on a GPU its output appears as the
    sections are reached, not after every experiment of the chapter has run: the first code
    cell (and any cell above the first section heading) runs no experiment; each section's
    cells run the experiments that section needs, the result of each read by a code cell of
    the section that ran it (an experiment several sections use runs once, in the first of
    them, and later sections reuse its rows); no code cell runs more than
    MAX_RUNS_PER_CELL experiments or runs them in a loop; the targets fold runs none. An
    experiment run is `lab.run(...)`, `perflab.run(...)` or a call of RUNNERS
    (`machine.ceilings()` runs the machine chapter's three)."""
    problems = shape_problems((ROOT / f"{page}.md").read_text())
    assert not problems, f"{page}: " + "; ".join(problems)


def test_the_chapter_template_measures_section_by_section():
    """`python -m perflab new-chapter` starts a chapter in the shape the test above wants."""
    assert not shape_problems(TEMPLATE.read_text().replace("@SLUG@", "demo"))


def test_runners_are_known():
    """Every function of a chapter package that runs an experiment through `lab.run` is one
    the page checks count (RUNNERS); experiments' own modules and explorers aside."""
    found = set()
    for path in (ROOT / "lib" / "perflab" / "chapters").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            if any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                   and isinstance(c.func.value, ast.Name) and c.func.value.id == "lab"
                   and c.func.attr == "run" for c in ast.walk(fn)):
                module = path.parent.name if path.name == "__init__.py" else path.stem
                found.add((path.parent.name, module, fn.name))
    alias = {("machine", "machine"): "machine", ("mandelbrot", "report"): "report"}
    assert {(alias.get((pkg, mod), f"{pkg}.{mod}"), fn) for pkg, mod, fn in found} == RUNNERS, found


def test_page_cells_and_runs():
    page = ("---\na: 1\n---\n```{code-cell} ipython3\n:tags: [remove-cell]\n\nimport x\n```\n"
            "## One\n\n```{code-cell} ipython3\nr = lab.run('a')\nR['b'] = lab.run('b')\n"
            "f(R['b'])\n```\n### Two\n```{code-cell} ipython3\ng(r)\n```\n")
    cells = page_cells(page)
    assert [s for s, _ in cells] == ["", "One", "Two"] and cells[0][1].strip() == "import x"
    assert cell_runs(cells[1][1]) == (2, ["r", "R['b']"])
    assert cell_runs("x = {n: lab.run(n) for n in names}")[0] > MAX_RUNS_PER_CELL
    assert cell_runs("c = machine.ceilings()\nd = lab.replay('x')") == (1, ["c"])
    assert shape_problems(page) == ["code cell 2 runs r for a later section: its section "
                                    "'One' never reads it"]
