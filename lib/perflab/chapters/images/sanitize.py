"""compute-sanitizer on chapter 4's kernels, recorded like a measurement: memcheck
(out-of-bounds and misaligned accesses, with one allocation per array so that a stray
access leaves its allocation) and racecheck (shared-memory hazards), each over every
kernel of the chapter at the edge sizes (1 × 1, 1 × N, N × 1, smaller than the blur's
window, odd shapes; both radii).

The sanitized process runs this module's `drive()`: it launches only the lab's kernels, on
inputs made on the host, and checks each output on the host against the exact reference
(no library kernels, whose instrumentation would cost most of the time and test CuPy, not
these kernels). It prints the same tally as `python -m perflab check`."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from ...correctness import Check
from ...registry import experiment

TOOLS = ("memcheck", "racecheck")
#: The sanitized process (an import, not `-m`: run as __main__ the module would register
#: its experiment a second time, outside its package).
DRIVE = "import sys; from perflab.chapters.images.sanitize import drive; sys.exit(drive())"


def sanitizer_missing() -> str | None:
    return None if shutil.which("compute-sanitizer") else \
        "compute-sanitizer is not installed here (it ships with the CUDA toolkit)"


def _kernels():
    from . import ops
    return ([ops.vecadd_spec(v) for v in ops.VECADD] + [ops.gray_spec(v) for v in ops.GRAY]
            + [ops.blur_spec(v, r) for r in SAN_RADII for v in ops.BLUR])


def parse(text: str) -> dict:
    """The sanitizer's error count and the correctness pass's tally from their output."""
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


#: The sizes the sanitized pass runs (VecAdd lengths; image shapes; blur radii).
SAN_SIZES = (1, 3, 257, 100003)
SAN_SHAPES = ((1, 1), (1, 1001), (1001, 1), (5, 3), (37, 1001), (257, 255), (130, 250),
              (64, 121))
SAN_RADII = (1, 4)


def drive() -> int:
    """Every kernel at every edge size, checked on the host; prints `N passed, M failed`."""
    import cupy as cp
    import numpy as np

    from . import ops, reference as ref

    cp.cuda.set_allocator(None)          # one cudaMalloc per array: strays leave it
    rng = np.random.default_rng()
    passed = failed = 0

    def tally(what, fn, shape, want):
        """Run fn(out) with out filled with 0, then 255 (NaN for floats): exact both times."""
        nonlocal passed, failed
        ok = True
        for fill in ((np.nan,) if want.dtype == np.float32 else (0, 255)):
            out = cp.asarray(np.full(shape, fill, want.dtype))
            fn(out)
            ok &= bool(np.array_equal(cp.asnumpy(out), want))
        passed, failed = passed + ok, failed + (not ok)
        print(f"{'ok  ' if ok else 'FAIL'} {what}", flush=True)

    for n in SAN_SIZES:
        a, b = (rng.random(n, dtype=np.float32) for _ in range(2))
        da, db = cp.asarray(a), cp.asarray(b)
        for v in ops.VECADD:
            tally(f"vecadd {v} n={n}", lambda o, v=v: ops.vecadd_call(da, db, o, v)[0](), n,
                  a + b)
    for h, w in SAN_SHAPES:
        rgb = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        drgb = cp.asarray(rgb)
        want = ref.gray_ref(rgb)
        for v in ops.GRAY:
            tally(f"gray {v} {h}x{w}", lambda o, v=v: ops.gray_call(drgb, o, v)[0](), (h, w),
                  want)
        img = rng.integers(0, 256, (h, w), dtype=np.uint8)
        dimg = cp.asarray(img)
        for r in SAN_RADII:
            want = ref.blur_ref(img, r)
            for v in ops.BLUR:
                tally(f"blur {v} R={r} {h}x{w}",
                      lambda o, v=v, r=r: ops.blur_call(dimg, o, r, v)[0](), (h, w), want)
    cp.cuda.Device().synchronize()
    print(f"{passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


@experiment("images.sanitize", title="compute-sanitizer memcheck and racecheck, every kernel",
            small={}, requires=sanitizer_missing, kernels=_kernels,
            # reader={}: both tools over every kernel at small sizes, each a few seconds;
            # only where compute-sanitizer is installed
            reader={})
def sanitize(ctx, tools=TOOLS, timeout_s=240):
    """This module's `drive()` under each tool; one row per tool: its error count, the
    checks that passed under it, its summary line."""
    if not ctx.timing:                 # the correctness pass itself: nothing to do here
        return
    import cupy as cp
    cp.get_default_memory_pool().free_all_blocks()
    tool = shutil.which("compute-sanitizer")
    for t in tools:
        cmd = [tool, "--tool", t, "--error-exitcode", "3", "--print-limit", "20",
               sys.executable, "-c", DRIVE]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s,
                             env=dict(os.environ))
        text = run.stdout + "\n" + run.stderr
        print(f"--- {t} (exit {run.returncode})\n" + text[-3000:], flush=True)
        p = parse(text)
        if p["errors"] is None and run.returncode == 0:
            p["errors"] = 0            # --error-exitcode: any error would have set the exit code
        clean = (run.returncode == 0 and p["errors"] == 0 and p["failed"] == 0
                 and bool(p["passed"]))
        metrics = {"exit_code": (run.returncode, "1"), "hazards": (p["hazards"], "1")}
        for k in ("errors", "passed", "failed"):
            if p[k] is not None:
                metrics[k] = (p[k], "1")
        ctx.row(variant=t, params={"tool": t}, metrics=metrics,
                check=Check(clean, 0.0, 0.0, p["errors"] or 0), kernels=_kernels(),
                summary=p["summary"])

