"""Execute the chapters as a reader does, and record how long each took.

    python -m perflab execute [--chapter NN-name ...] [--record] [--timeout 1800]

Each chapter (chapters/NN-name.md, a MyST notebook) is read with jupytext and executed
in a fresh Jupyter kernel with nbclient, from chapters/ as the book build does: live
where a GPU answers, replaying results/ elsewhere. One row per chapter: the seconds from
the kernel's start to the last cell, the seconds until the first output a reader sees
(a figure, a table or text), the cells executed, the figures drawn, and whether it
finished without an error (an error is kept with the row, with the cell it came from).
With --record the rows are written to results/<slug>/99-execution/book.execute.json with
the provenance every recorded row has, so the execution page can show them like any
other measurement.
"""
from __future__ import annotations

import time
from pathlib import Path

from . import paths, store

EXPERIMENT = "book.execute"
CHAPTER = "99-execution"
#: Outputs a reader sees (stream output, a warning printed to stderr, is not one).
SHOWN = ("image/png", "image/svg+xml", "text/html", "text/markdown", "text/latex")


def chapter_files(names: list[str] | None = None) -> list[Path]:
    """The chapters' notebooks in file order, or those `names` names (file stems, NN-name)."""
    found = sorted(p for p in (paths.ROOT / "chapters").glob("[0-9][0-9]-*.md")
                   if p.stem != CHAPTER)
    if not names:
        return found
    by = {p.stem: p for p in found}
    missing = [n for n in names if n not in by]
    if missing:
        raise ValueError(f"no chapter {missing}; chapters: {', '.join(by)}")
    return [by[n] for n in names]


def _shown(outputs: list) -> tuple[bool, int]:
    """(whether any output is one a reader sees, how many of them are figures)."""
    seen, figures = False, 0
    for out in outputs:
        data = out.get("data", {}) if out.get("output_type") in ("display_data", "execute_result") else {}
        if any(k in data for k in SHOWN):
            seen = True
        if "image/png" in data or "image/svg+xml" in data:
            figures += 1
    return seen, figures


def execute_one(path: Path, timeout: int = 1800, kernel: str = "python3") -> dict:
    """Execute one chapter; its measures: seconds, first_output_s, cells, figures, error."""
    import jupytext
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = jupytext.read(path)
    measures = {"cells": 0, "figures": 0, "first_output_s": None, "error": None}
    start = [0.0]

    def started(**_):
        start[0] = time.perf_counter()

    def executed(cell, cell_index, **_):
        if cell.get("cell_type") != "code":
            return
        measures["cells"] += 1
        tags = set(cell.get("metadata", {}).get("tags", []))
        if tags & {"remove-cell", "remove-output"}:     # the book shows none of its output
            return
        seen, figures = _shown(cell.get("outputs", []))
        measures["figures"] += figures
        if seen and measures["first_output_s"] is None:
            measures["first_output_s"] = time.perf_counter() - start[0]

    client = NotebookClient(nb, timeout=timeout, kernel_name=kernel,
                            resources={"metadata": {"path": str(path.parent)}},
                            on_notebook_start=started, on_cell_executed=executed)
    t0 = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as exc:
        measures["error"] = str(exc).strip().splitlines()[-1][:500]
    except Exception as exc:   # a dead kernel, a timeout: the chapter did not finish
        measures["error"] = f"{type(exc).__name__}: {exc}"[:500]
    measures["seconds"] = time.perf_counter() - (start[0] or t0)
    return measures


def row(chapter: str, m: dict, provenance: dict) -> dict:
    """A recorded row of one chapter's execution."""
    def metric(value, unit):
        return {"value": value, "unit": unit}
    return {"experiment": EXPERIMENT, "chapter": CHAPTER, "variant": chapter,
            "params": {"kernel": "python3"},
            "metrics": {"seconds": metric(round(m["seconds"], 2), "s"),
                        "first_output_s": metric(None if m["first_output_s"] is None
                                                 else round(m["first_output_s"], 2), "s"),
                        "cells": metric(m["cells"], "1"),
                        "figures": metric(m["figures"], "1")},
            "correct": m["error"] is None, "rel_err": None, "error": m["error"],
            "kernels": [], "launch": [], "provenance": provenance}


def execute(names: list[str] | None = None, timeout: int = 1800, record: bool = False,
            progress=print) -> list[dict]:
    """Execute the chapters (all, or `names`) and return one row each; with `record`,
    write them under results/ (a chapter executed alone replaces its own row only)."""
    from . import device
    from .host import cpu_info

    if device.mode() == "live":
        info = device.current()
        dev, slug, mode = info.as_dict(), info.slug, "live"
    else:
        cpu = cpu_info()
        dev, slug, mode = {"name": cpu["model"], "slug": cpu["slug"], "kind": "cpu"}, cpu["slug"], "replay"
    prov = store.new_run(dev, {"mode": mode})
    rows = []
    for path in chapter_files(names):
        progress(f"{path.stem}: executing ({mode}) ...")
        m = execute_one(path, timeout)
        rows.append(row(path.stem, m, prov))
        first = "—" if m["first_output_s"] is None else f"{m['first_output_s']:.1f} s"
        progress(f"{path.stem}: {m['seconds']:.1f} s, first output after {first}, "
                 f"{m['cells']} cells, {m['figures']} figures"
                 + (f", ERROR: {m['error']}" if m["error"] else ""))
    if record:
        out = store.file_for(slug, CHAPTER, EXPERIMENT)
        kept = []
        if out.exists() and names:
            done = {r["variant"] for r in rows}
            kept = [r for r in store.load(out)["rows"] if r["variant"] not in done]
        store.write(out, EXPERIMENT, CHAPTER, {"chapters": names or "all"}, kept + rows)
        progress(f"wrote {store.relative(out)}")
    return rows
