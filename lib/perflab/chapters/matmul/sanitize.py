"""compute-sanitizer on this chapter's kernels and on rungs 09-12 of chapter 1 (3xTF32 on
mma.sync, wgmma + TMA, TF32 split-K, 3xTF32 on wgmma; 10 and 12 on Hopper only),
recorded like a measurement: memcheck (out-of-bounds and misaligned accesses, one
allocation per array so that a stray access leaves its allocation) and racecheck
(shared-memory hazards), one row per tool.

The sanitized process runs this module's `drive()`: one launch of each kernel on a small
problem that is a multiple of no tile (130 × 67 × 93: partial tiles in M, N and K, a few
blocks), inputs made on the host and each output checked on the host against float64;
rungs 09 and 12 also once with NaN and ±Inf planted (their fp32 fallback for non-finite elements),
once with its split in the main loop and once split along K. No library kernels run in it (their
instrumentation would cost most of the time and test CuPy, not these kernels), so each
tool finishes in seconds; the correctness pass under the sanitizers (`make sanitize`),
with cuBLAS references and every audit category, did not finish within its cap."""
from __future__ import annotations

from ... import sanitize as sanitizers
#: The problem every kernel runs once: a multiple of no tile in M, N or K.
SAN_SIZE = (130, 67, 93)
#: Rung 09's extra launches: its split in the main loop (PRE_ROUND=0).
R09 = "09-3xtf32"
#: Chapter 1's rungs after 09 (10 and 12 run on Hopper only).
LATER_RUNGS = ("10-wgmma-tma", "11-tf32-split-k", "12-3xtf32-wgmma")
#: The rungs with an fp32 fallback for non-finite elements, run once with them planted.
SPECIAL = (R09, "12-3xtf32-wgmma")


def _subjects(runnable: bool = False):
    """This chapter's kernels and rungs 09-12; `runnable`: only those the current GPU runs."""
    from ..sgemm import get as get_rung
    from .variants import VARIANTS
    out = list(VARIANTS) + [get_rung(n) for n in (R09,) + LATER_RUNGS]
    if runnable:
        from ...device import current
        from ...errors import ConfigError
        dev, ok = current().as_dict(), []
        for v in out:
            try:
                v.check(v.params(), *SAN_SIZE, dev)
            except ConfigError:
                continue
            ok.append(v)
        out = ok
    return out


def sanitized_kernels(runnable: bool = False):
    """Every kernel `drive` launches: this chapter's at default parameters, rungs 09-12's
    (09 in both split modes, its pre-pass and split-K reduction among them)."""
    out = []
    for v in _subjects(runnable):
        out += v.kernels(v.params())
        if v.name == R09:
            out += v.kernels(v.params(PRE_ROUND=0))
    return list({(s.file, s.name_expression): s for s in out}.values())


def drive() -> int:
    """Every kernel once, checked on the host; prints `N passed, M failed`."""
    import cupy as cp
    import numpy as np

    from ...correctness import compare
    from . import audit, bounds

    cp.cuda.set_allocator(None)          # one cudaMalloc per array: strays leave it
    rng = np.random.default_rng()
    M, N, K = SAN_SIZE
    A = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    B = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    passed = failed = 0

    def one(what, v, params, A, B, check):
        nonlocal passed, failed
        Bd = cp.asarray(np.asfortranarray(B) if getattr(v, "b_layout", "row") == "col" else B)
        C = cp.asarray(np.full((A.shape[0], B.shape[1]), np.nan, np.float32))
        v.run(cp.asarray(A), Bd, C, params)
        cp.cuda.Device().synchronize()
        ok, detail = check(cp.asnumpy(C))
        passed, failed = passed + ok, failed + (not ok)
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {detail}", flush=True)

    def right(C, ref=ref, prec="fp32"):
        chk = compare(C, ref, prec)
        return chk.correct, f"relative error {chk.rel_err:.1e}"

    subjects = _subjects(runnable=True)
    for v in subjects:      # each against its own precision's tolerance (10 and 11: TF32)
        one(f"{v.name} {M}x{N}x{K}", v, v.params(), A, B,
            lambda C, p=v.precision: right(C, prec=p))
    r09 = next(v for v in subjects if v.name == R09)
    one(f"{R09} PRE_ROUND=0 {M}x{N}x{K}", r09, r09.params(PRE_ROUND=0), A, B, right)
    # Split-K (few output tiles, long K: 31 slices of 4 k-tiles) and its reduction.
    Ak = rng.uniform(-1, 1, (67, 2000)).astype(np.float32)
    Bk = rng.uniform(-1, 1, (2000, 45)).astype(np.float32)
    refk = Ak.astype(np.float64) @ Bk.astype(np.float64)
    one(f"{R09} split-K 67x45x2000", r09, r09.params(), Ak, Bk,
        lambda C: right(C, ref=refk))
    As, Bs = audit.special_inputs(audit.Env.host_only())
    want = bounds.expected_classes(As, Bs)
    fin = want == 0
    ref_s = np.where(np.isfinite(As), As, 0).astype(np.float64) @ \
        np.where(np.isfinite(Bs), Bs, 0).astype(np.float64)

    def classes(C):
        miss = bounds.class_mismatch(bounds.classify(C), want)
        if miss:
            return False, f"classes differ from IEEE: {miss}"
        chk = compare(C[fin], ref_s[fin], "fp32")
        return chk.correct, f"IEEE classes; finite part: relative error {chk.rel_err:.1e}"

    for p in (r09.params(), r09.params(PRE_ROUND=0)):
        one(f"{R09} PRE_ROUND={p['PRE_ROUND']} NaN and ±Inf planted", r09, p, As, Bs, classes)
    for v in subjects:
        if v.name in SPECIAL and v.name != R09:
            one(f"{v.name} NaN and ±Inf planted", v, v.params(), As, Bs, classes)
    print(f"{passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


def _compiled():
    """Every kernel the sanitized process launches, compiled (or loaded from the disk
    cache) before it starts."""
    from ...kernels import warm
    warm(sanitized_kernels(runnable=True))


sanitize = sanitizers.experiment(
    "matmul.sanitize", drive="perflab.chapters.matmul.sanitize:drive",
    kernels=sanitized_kernels, prepare=_compiled,
    title="compute-sanitizer memcheck and racecheck, one launch of each kernel")
