"""Execute the chapters as a reader does, and record how long each took.

    python -m perflab execute [--chapter NN-name ...] [--record] [--timeout 1800]
                              [--plan reader|full]

Each chapter (chapters/NN-name.md, a MyST notebook) is read with jupytext and executed
in a fresh Jupyter kernel with nbclient, from chapters/ as the book build does: live
where a GPU answers (the reader plans, unless --plan full), replaying results/ elsewhere.
One row per chapter, with the plan among its parameters: the seconds from
the kernel's start to the last cell, the seconds until the first output a reader sees
(a figure, a table or text), the cells executed, the figures drawn, its three slowest
cells (seconds and first line of code), and whether it
finished without an error (an error is kept with the row, with the cell it came from).
A SIGTERM or SIGINT to this process (a time limit, a ^C) while a chapter runs is caught by
nbclient, which shuts that chapter's kernel down under the running cell (its cleanup then
fails with a bare AssertionError): the row says "interrupted" and the run stops there.
With --record the rows are written to results/<slug>/99-execution/book.execute.json with
the provenance every recorded row has, so the execution page can show them like any
other measurement.
"""
from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from . import paths, store
from .targets import Target

EXPERIMENT = "book.execute"
CHAPTER = "99-execution"

#: What a reader's run of the chapters is held to, on the reference GPU: every chapter in
#: about a minute and a half, something on the page within 20 s, the whole book within a
#: quarter of an hour, no chapter stopped by an error (perflab.targets renders and checks).
TARGETS = (
    Target("the slowest chapter ({slowest}), seconds", "max_seconds", at_most=90, digits=1),
    Target("the latest first output ({latest}), seconds", "max_first_output_s", at_most=20,
           digits=1),
    Target("the {n_chapters} chapters one after another, minutes", "total_min", at_most=15,
           digits=1),
    Target("chapters stopped by an error", "n_failed", at_most=0, digits=0),
)
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

    running = [None]

    timed = []      # (seconds, cell index, its first line of code)

    def starting(cell, cell_index, **_):
        running[0] = (cell_index, next((ln for ln in cell.get("source", "").splitlines()
                                        if ln.strip() and not ln.startswith(("#", ":"))), ""),
                      time.perf_counter())

    def executed(cell, cell_index, **_):
        if cell.get("cell_type") != "code":
            return
        measures["cells"] += 1
        if running[0] is not None and running[0][0] == cell_index:
            timed.append((time.perf_counter() - running[0][2], cell_index, running[0][1]))
        tags = set(cell.get("metadata", {}).get("tags", []))
        if tags & {"remove-cell", "remove-output"}:     # the book shows none of its output
            return
        seen, figures = _shown(cell.get("outputs", []))
        measures["figures"] += figures
        if seen and measures["first_output_s"] is None:
            measures["first_output_s"] = time.perf_counter() - start[0]

    client = NotebookClient(nb, timeout=timeout, kernel_name=kernel,
                            resources={"metadata": {"path": str(path.parent)}},
                            on_notebook_start=started, on_cell_start=starting,
                            on_cell_executed=executed)
    t0 = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as exc:
        # the error's last line, and the lines of the traceback just above it
        measures["error"] = " | ".join(ln.strip() for ln in str(exc).strip().splitlines()[-6:]
                                       if ln.strip())[:800]
    except Exception as exc:   # a dead kernel, a timeout: the chapter did not finish
        where = "" if running[0] is None else f" (in cell {running[0][0]}: {running[0][1][:80]})"
        if _stopped_by_signal(exc):
            # nbclient's own SIGINT/SIGTERM handler shut the kernel down under the running
            # cell (a bare AssertionError): this process was told to stop; the chapter did
            # not fail
            measures["interrupted"] = True
            measures["error"] = (f"interrupted: this process got SIGTERM or SIGINT{where}; "
                                 f"nbclient shut the kernel down ({type(exc).__name__})")
        else:
            measures["error"] = f"{type(exc).__name__}: {exc}{where}"[:500]
    measures["seconds"] = time.perf_counter() - (start[0] or t0)
    # where the seconds went: the three slowest cells, each with its first line of code
    measures["slowest"] = "; ".join(f"cell {i} {sec:.1f} s ({line.strip()[:60]})"
                                    for sec, i, line in sorted(timed, reverse=True)[:3])
    return measures


def _stopped_by_signal(exc: BaseException) -> bool:
    """Whether `exc` is what nbclient leaves when its SIGINT/SIGTERM handler shut the
    kernel down under a running cell: the cell sees a dead kernel (DeadKernelError), and
    the cleanup after it finds the kernel manager already gone, an AssertionError that
    takes the DeadKernelError's place. A kernel that died on its own gives the
    DeadKernelError itself."""
    from nbclient.exceptions import DeadKernelError
    return isinstance(exc, AssertionError) and isinstance(exc.__context__, DeadKernelError)


@contextlib.contextmanager
def _environ(name: str, value: str):
    """`name`=`value` in os.environ (which the chapters' kernels inherit) for the block."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def row(chapter: str, m: dict, provenance: dict, plan: str = "reader") -> dict:
    """A recorded row of one chapter's execution, under plan `plan` (measured live, or the
    rows it replayed)."""
    def metric(value, unit):
        return {"value": value, "unit": unit}
    return {"experiment": EXPERIMENT, "chapter": CHAPTER, "variant": chapter,
            "params": {"kernel": "python3", "plan": plan},
            "metrics": {"seconds": metric(round(m["seconds"], 2), "s"),
                        "first_output_s": metric(None if m["first_output_s"] is None
                                                 else round(m["first_output_s"], 2), "s"),
                        "cells": metric(m["cells"], "1"),
                        "figures": metric(m["figures"], "1")},
            "correct": m["error"] is None, "rel_err": None, "error": m["error"],
            "slowest": m.get("slowest", ""),
            "kernels": [], "launch": [], "provenance": provenance}


def execute(names: list[str] | None = None, timeout: int = 1800, record: bool = False,
            progress=print, plan: str | None = None) -> list[dict]:
    """Execute the chapters (all, or `names`) and return one row each; with `record`,
    write them under results/ (a chapter executed alone replaces its own row only).
    `plan` ("reader" or "full") goes to the chapters' kernels as PERFLAB_PLAN; by default
    they run as a reader's do: the reader plans live, the full plan's rows replayed."""
    from . import device, lab, registry
    from .host import cpu_info

    if device.mode() == "live":
        info = device.current()
        dev, slug, mode = info.as_dict(), info.slug, "live"
    else:
        cpu = cpu_info()
        dev, slug, mode = {"name": cpu["model"], "slug": cpu["slug"], "kind": "cpu"}, cpu["slug"], "replay"
    shown = lab.plan_for(None if plan is None else registry.check_plan(plan), live=mode == "live")
    prov = store.new_run(dev, {"mode": mode})
    rows = []
    files = chapter_files(names)
    out = store.file_for(slug, CHAPTER, EXPERIMENT)
    kept = []
    if record and out.exists() and names:       # a chapter executed alone replaces its own row
        kept = [r for r in store.load(out)["rows"] if r["variant"] not in {p.stem for p in files}]
    with contextlib.ExitStack() as stack:
        if plan is not None:
            stack.enter_context(_environ(lab.PLAN_ENV, plan))
        for path in files:
            progress(f"{path.stem}: executing ({mode}, {shown} plan) ...")
            m = execute_one(path, timeout)
            rows.append(row(path.stem, m, prov, shown))
            first = "—" if m["first_output_s"] is None else f"{m['first_output_s']:.1f} s"
            progress(f"{path.stem}: {m['seconds']:.1f} s, first output after {first}, "
                     f"{m['cells']} cells, {m['figures']} figures"
                     + (f"; slowest: {m['slowest']}" if m.get("slowest") else "")
                     + (f", ERROR: {m['error']}" if m["error"] else ""))
            if record:      # after every chapter: a run stopped midway keeps what it measured
                store.write(out, EXPERIMENT, CHAPTER, {"chapters": names or "all"}, kept + rows)
                progress(f"wrote {store.relative(out)}")
            if m.get("interrupted"):    # told to stop (a time limit's SIGTERM, a ^C): stop
                raise KeyboardInterrupt(f"{path.stem}: {m['error']}")
    return rows


def facts(runs) -> dict:
    """The targets' facts from one recorded run's rows (a frame, as `lab.frame` gives):
    the slowest chapter and its seconds, the latest first output, the sum of the
    chapters' seconds in minutes, how many chapters ran and how many stopped on an error."""
    if runs.empty:
        raise ValueError("no executed chapter in these rows")
    slow = runs.loc[runs["seconds"].idxmax()]
    first = runs["first_output_s"].astype(float)
    late = runs.loc[first.idxmax()] if first.notna().any() else None
    return {"slowest": str(slow["variant"]), "max_seconds": float(slow["seconds"]),
            "latest": "none shown" if late is None else str(late["variant"]),
            "max_first_output_s": float("nan") if late is None else float(late["first_output_s"]),
            "total_min": float(runs["seconds"].sum()) / 60, "n_chapters": int(len(runs)),
            "n_failed": int((~runs["correct"].astype(bool)).sum())}

