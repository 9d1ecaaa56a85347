"""compute-sanitizer on a chapter's kernels, recorded like a measurement: one experiment
a chapter, one row per tool (memcheck: out-of-bounds and misaligned accesses; racecheck:
shared-memory hazards), each row its error count, the checks that passed under the tool,
its summary line and its wall time.

    sanitize.experiment("<slug>.sanitize", drive="perflab.chapters.<slug>.sanitize:drive",
                        kernels=kernels, title="compute-sanitizer memcheck and racecheck")

A recorded check: a notebook's live run (the reader plan) shows the recorded rows;
`lab.run("<slug>.sanitize", plan="full")`, `python -m perflab record` and `make sanitize`
run the tools.

The sanitized process imports `drive` (module:function) and calls it: the chapter's own
function that launches only the lab's kernels, on inputs made on the host, checks each
output on the host and prints `N passed, M failed` (no library kernels, whose
instrumentation would cost most of the time and test CuPy, not these kernels). It exits 1
when a check failed.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time

from .correctness import Check

TOOLS = ("memcheck", "racecheck")
#: Why a reader's run shows the recorded verdicts (registry: replay_reader).
REPLAYED = "a recorded check, compute-sanitizer on a child process for seconds to minutes"


def missing() -> str | None:
    """Why the sanitizers cannot run here, or None."""
    return None if shutil.which("compute-sanitizer") else \
        "compute-sanitizer is not installed here (it ships with the CUDA toolkit)"


def parse(text: str) -> dict:
    """The sanitizer's error count and the driver's tally from their output."""
    errs = [int(m) for m in re.findall(r"ERROR SUMMARY:\s*(\d+)\s+error", text)]
    if not errs:                       # racecheck: "RACECHECK SUMMARY: 0 hazards displayed (0 errors, …"
        errs = [int(m) for m in re.findall(r"RACECHECK SUMMARY:.*?\((\d+) error", text)]
    tally = re.findall(r"^(\d+) passed, (\d+) failed", text, re.MULTILINE)
    hazards = re.findall(r"RACECHECK SUMMARY:\s*(\d+) hazard", text)
    return {"errors": sum(errs) if errs else None,
            "passed": int(tally[-1][0]) if tally else None,
            "failed": int(tally[-1][1]) if tally else None,
            "hazards": int(hazards[-1]) if hazards else 0,
            "summary": "; ".join(ln.strip(" =") for ln in text.splitlines()
                                 if "SUMMARY" in ln)[:300]}


class Tally:
    """A driver's checks as `parse` reads them: `tally(ok, what)` prints each ("ok  " or
    "FAIL", then what was checked), `tally.done()` prints `N passed, M failed` and returns
    the driver's exit code, 1 when a check failed."""

    def __init__(self):
        self.passed = self.failed = 0

    def __call__(self, ok: bool, what: str) -> None:
        self.passed, self.failed = self.passed + bool(ok), self.failed + (not ok)
        print(f"{'ok  ' if ok else 'FAIL'} {what}", flush=True)

    def done(self) -> int:
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 1 if self.failed else 0


def command(tool: str, drive: str) -> list[str]:
    """The sanitized command: `drive` ("module:function") imported and called in a fresh
    interpreter (an import, not `python -m`: run as __main__ a chapter module would register
    its experiments a second time, outside its package)."""
    module, func = drive.split(":")
    code = f"import sys; from {module} import {func}; sys.exit({func}())"
    return [shutil.which("compute-sanitizer") or "compute-sanitizer", "--tool", tool,
            "--error-exitcode", "3", "--print-limit", "20", sys.executable, "-c", code]


def row_of(tool: str, rc: int | None, text: str, wall_s: float, timeout_s: float) -> dict:
    """A tool's run as a row's fields: metrics, its check (clean: exit 0, no error, every
    check passed) and its summary."""
    p = parse(text)
    if p["errors"] is None and rc == 0:
        p["errors"] = 0                # --error-exitcode: any error would have set the exit code
    clean = rc == 0 and p["errors"] == 0 and p["failed"] == 0 and bool(p["passed"])
    metrics = {"exit_code": (-1 if rc is None else rc, "1"), "hazards": (p["hazards"], "1"),
               "wall_s": (wall_s, "s")}
    for k in ("errors", "passed", "failed"):
        if p[k] is not None:
            metrics[k] = (p[k], "1")
    return {"metrics": metrics, "check": Check(clean, 0.0, 0.0, p["errors"] or 0),
            "summary": p["summary"] or (f"timed out after {timeout_s} s" if rc is None else "")}


def run(tool: str, drive: str, timeout_s: float) -> tuple[int | None, str, float]:
    """(exit code or None on a timeout, output, wall seconds) of `drive` under `tool`."""
    t0 = time.time()
    try:
        done = subprocess.run(command(tool, drive), capture_output=True, text=True,
                              timeout=timeout_s, env=dict(os.environ))
        rc, text = done.returncode, done.stdout + "\n" + done.stderr
    except subprocess.TimeoutExpired as exc:
        rc = None
        text = "\n".join(x.decode() if isinstance(x, bytes) else (x or "")
                         for x in (exc.stdout, exc.stderr)) + f"\ntimed out after {timeout_s} s"
    return rc, text, time.time() - t0


def experiment(name: str, *, drive: str, kernels, title: str, prepare=None,
               timeout_s: float = 240):
    """Register experiment `name` (in the calling chapter package): `drive` under each tool,
    one row per tool, its `kernels()` named in each row. `prepare()` runs first (compile
    the kernels, so that the sanitized process loads them from the disk cache). Nothing
    runs in the correctness pass, which is what `drive` checks."""
    import inspect

    from .chapters import chapter_of
    from .registry import experiment as register

    slug, chapter = chapter_of(inspect.currentframe().f_back.f_globals["__name__"])

    def sanitize(ctx, tools=TOOLS, timeout_s=timeout_s):
        """`drive` under each tool; one row per tool: its error count, the checks that
        passed under it, its summary line and its wall time."""
        if not ctx.timing:
            return
        import cupy as cp
        if prepare is not None:
            prepare()
        cp.get_default_memory_pool().free_all_blocks()
        for t in tools:
            rc, text, wall = run(t, drive, timeout_s)
            print(f"--- {t} (exit {rc}, {wall:.0f} s)\n" + text[-3000:], flush=True)
            r = row_of(t, rc, text, wall, timeout_s)
            ctx.row(variant=t, params={"tool": t}, metrics=r["metrics"], check=r["check"],
                    kernels=kernels(), summary=r["summary"])
    # A recorded check: a reader's run shows its recorded verdicts (the tools take from
    # seconds to minutes, in a child process under the tool); plan="full" runs both tools
    # over the driver's small sizes, where compute-sanitizer is installed.
    return register(name, title=title, small={}, requires=missing, kernels=kernels,
                    chapter=chapter, reader={}, replay_reader=REPLAYED)(sanitize)
