"""The correctness audit: one category per way a GEMM can go wrong, run against every
kernel of chapter 1 (its rungs 01-09) and of this chapter.

    from perflab.chapters.matmul import audit
    s = audit.get_subject("tiled")
    audit.run_category("nonfinite", s, audit.Env.gpu())    # -> list of Case

A category is a list of cases; each case ends in an outcome:

    pass           the kernel ran and its result is right (checked against float64, or
                   against cuBLAS where the category says so)
    clear-error    refused before launch with a PerflabError that names the kernel
    reported       (launch failure only) the fault became a KernelRuntimeError naming
                   the kernel and the CUDA functions it launched
    accepted       (host run only) the operand checks let the input through: what it
                   computes is for the GPU run to say
    fail           a wrong result, or a refusal that does not name the kernel
    unclear-error  an exception that is not the lab's (OverflowError, a CuPy error, ...)
    fault          a CUDA fault (the context is lost) where none was expected

and each case lists the outcomes it allows ("clear error or correct result", "clear error"
only, ...). Most categories run in this process; three kinds of case can lose the CUDA
context (an index past 2^31 elements, a float32 operand at a 2-byte offset, a launch that
faults on purpose) and run in a child process each (`run_isolated`,
perflab.chapters.matmul.isolated).

The operand-checking categories also run without a GPU (`Env.host()`): NumPy arrays stand
in for CuPy's, and a case ends at the operand checks (clear-error or accepted). That is
the part of the audit CI runs.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from ...correctness import TOLERANCE, Check, compare
from ...errors import KernelRuntimeError, PerflabError
from . import bounds

FLT_MAX = float(np.finfo(np.float32).max)

# ------------------------------------------------------------------------------ subjects


@dataclass(frozen=True)
class Subject:
    """One audited kernel: a chapter 1 rung or a chapter 8 kernel, called through the
    lab's own entry point (`Variant.run`: operand checks, parameter checks, launch)."""
    name: str
    chapter: str
    precision: str
    variant: object
    b_layout: str = "row"           # "col": B is read column-major (Fortran order)

    @property
    def params(self) -> dict:
        return self.variant.params()

    def specs(self) -> list:
        return list(self.variant.kernels(self.params))

    def function_names(self) -> list[str]:
        return sorted({s.name for s in self.specs()})

    @property
    def baseline(self) -> str:
        """The cuBLAS mode its special values are compared with: TF32 for the TF32 rung,
        FP32 for the rest (3xTF32 aims at FP32 results)."""
        return "tf32" if self.precision == "tf32" else "fp32"

    def validate(self, A, B, C) -> None:
        """The operand and parameter checks `run` makes, without launching."""
        v = self.variant
        v.check(self.params, *v.operands(A, B, C))

    def call(self, A, B, C) -> None:
        self.variant.run(A, B, C, self.params)


def subjects(names=None) -> list[Subject]:
    """Chapter 1's rungs, then this chapter's kernels (those named in `names`, if given)."""
    from .. import sgemm
    from . import variants as ours

    out = [Subject(v.name, sgemm.CHAPTER, v.precision, v) for v in sgemm.variants()]
    out += [Subject(v.name, ours.CHAPTER, v.precision, v, v.b_layout) for v in ours.VARIANTS]
    if names is not None:
        known = {s.name for s in out}
        unknown = [n for n in names if n not in known]
        if unknown:
            from ...errors import ConfigError
            raise ConfigError(f"unknown kernel(s) {unknown}; known: {', '.join(sorted(known))}")
        out = [s for s in out if s.name in names]
    return out


def get_subject(name: str) -> Subject:
    return subjects([name])[0]


# --------------------------------------------------------------------------- environment

class HostArray:
    """What the operand checks read of a CuPy array (dtype, shape, ndim, flags, data.ptr,
    nbytes, .T), taken from a NumPy array: the audit's operand cases run without a GPU,
    with real host addresses standing in for device ones (overlaps are the same)."""

    class _Ptr:
        def __init__(self, ptr: int):
            self.ptr = ptr

    def __init__(self, a: np.ndarray):
        self._a = a
        self.dtype, self.ndim, self.shape = a.dtype, a.ndim, a.shape
        self.nbytes, self.flags = a.nbytes, a.flags
        self.data = self._Ptr(a.__array_interface__["data"][0])

    @property
    def T(self):
        return HostArray(self._a.T)


@dataclass
class Env:
    """Where the cases run: on the GPU (CuPy arrays, kernels launched) or on the host
    (NumPy arrays, operand checks only)."""
    host: bool
    xp: object
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng())

    @classmethod
    def gpu(cls) -> "Env":
        import cupy as cp
        return cls(False, cp)

    @classmethod
    def host_only(cls) -> "Env":
        return cls(True, np)

    def wrap(self, x):
        return HostArray(x) if self.host and isinstance(x, np.ndarray) else x

    def uniform(self, shape, lo=-1.0, hi=1.0, dtype=np.float32):
        """Fresh random values (host NumPy, then on the device in a GPU run)."""
        return self.put(self.rng.uniform(lo, hi, shape).astype(dtype))

    def put(self, a: np.ndarray):
        return a if self.host else self.xp.asarray(a)

    def at_offset(self, a: np.ndarray, offset: int):
        """A copy of `a` (float32, C order) starting `offset` bytes into a fresh buffer:
        4 bytes past 16-byte alignment, or 2 (not even float-aligned)."""
        raw = np.ascontiguousarray(a).view(np.uint8).reshape(-1)
        if self.host:
            buf = np.zeros(raw.size + 16, dtype=np.uint8)
            base = (-buf.__array_interface__["data"][0]) % 16      # 16-byte aligned start
            buf = buf[base:]
            buf[offset:offset + raw.size] = raw
            return np.ndarray(a.shape, a.dtype, buffer=buf, offset=offset)
        cp = self.xp
        buf = cp.zeros(raw.size + 16, dtype=cp.uint8)               # 256-byte aligned
        buf[offset:offset + raw.size] = cp.asarray(raw)
        return cp.ndarray(a.shape, a.dtype, memptr=buf.data + offset)

    def free(self) -> None:
        if not self.host:
            self.xp.get_default_memory_pool().free_all_blocks()


# ------------------------------------------------------------------------------- outcomes

OK_ERR = ("clear-error",)
OK_RUN = ("pass",)
OK_EITHER = ("pass", "clear-error")


@dataclass
class Case:
    case: str
    outcome: str
    detail: str = ""
    allowed: tuple = OK_RUN
    rel_err: float | None = None
    bound_ratio: float | None = None

    @property
    def ok(self) -> bool:
        return self.outcome in self.allowed

    def as_dict(self) -> dict:
        d = asdict(self)
        d["allowed"] = list(self.allowed)
        return d


def names_kernel(s: Subject, message: str) -> bool:
    return s.name in message or any(f in message for f in s.function_names())


def error_outcome(s: Subject, exc: BaseException) -> tuple[str, str]:
    msg = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, KernelRuntimeError):
        return "fault", msg
    if isinstance(exc, PerflabError):
        return ("clear-error" if names_kernel(s, str(exc)) else "unclear-error"), msg
    return "unclear-error", msg


def run_checked(s: Subject, A, B, C) -> None:
    """Run `s` on (A, B, C) and wait for it; a CUDA fault becomes KernelRuntimeError
    naming the kernel and the CUDA functions it had launched."""
    from ...kernels import capture_launches, checked

    with capture_launches() as launched:
        try:
            checked(lambda: s.call(A, B, C), f"{s.name} ({s.chapter})")
        except KernelRuntimeError as exc:
            fns = sorted({entry["kernel"] for entry in launched})
            raise KernelRuntimeError(f"{exc} Kernels launched: "
                                     f"{', '.join(fns) or 'none recorded'}.") from None


def attempt(s: Subject, env: Env, A, B, C) -> tuple[str, str]:
    """("ran" | "accepted" | an error outcome, message)."""
    try:
        if env.host:
            s.validate(env.wrap(A), env.wrap(B), env.wrap(C))
            return "accepted", "the operand checks let it through"
        run_checked(s, A, B, C)
    except Exception as exc:       # noqa: BLE001 - every kind is an outcome here
        return error_outcome(s, exc)
    return "ran", ""


def host_allowed(allowed: tuple) -> tuple:
    """What a host run may end in: a case that may pass on the GPU may be accepted here."""
    return allowed + ("accepted",) if "pass" in allowed else allowed


def reference(env: Env, A, B):
    """C = A @ B in float64 (cuBLAS DGEMM on the GPU)."""
    xp = env.xp
    return A.astype(xp.float64) @ B.astype(xp.float64)


def numeric(s: Subject, env: Env, label: str, A, B, *, C=None, allowed=OK_RUN,
            check: Callable | None = None) -> Case:
    """Run `s` on A @ B (B given row-major; handed over in the kernel's layout), the
    output poisoned first; pass when the result is within the precision's tolerance of
    the float64 reference (or when `check(C)` says so: it returns (ok, detail, rel_err))."""
    return run_case(s, env, label, A, _lay(s, env, B), C=C, allowed=allowed, check=check,
                    ref=(A, B))


def run_case(s: Subject, env: Env, label: str, A, B, *, C=None, allowed=OK_RUN,
             check: Callable | None = None, ref=None) -> Case:
    """Run `s` on (A, B, C) exactly as given, C poisoned first; judge the result by
    `check(C)`, or against the float64 product of `ref` = (A, B) (views that CuPy
    arithmetic should not read can be replaced there by plain copies)."""
    from ...correctness import poison

    xp = env.xp
    M, N = A.shape[0], B.shape[1]
    if C is None:
        C = xp.empty((M, N), dtype=xp.float32)
    if not env.host:
        poison(C)
    outcome, msg = attempt(s, env, A, B, C)
    if env.host:
        return Case(label, outcome, msg, host_allowed(allowed))
    if outcome != "ran":
        return Case(label, outcome, msg, allowed)
    if check is not None:
        ok, detail, rel = check(C)
    else:
        chk = compare(xp.ascontiguousarray(C), reference(env, *(ref or (A, B))), s.precision)
        ok, rel, detail = chk.correct, chk.rel_err, _check_detail(chk)
    return Case(label, "pass" if ok else "fail", detail, allowed, rel_err=_finite(rel))


def _check_detail(chk: Check) -> str:
    if chk.unwritten:
        return f"{chk.unwritten} elements not finite (never written, or wrong)"
    ok = "≤" if chk.correct else ">"
    return f"relative error {chk.rel_err:.1e} {ok} {chk.tolerance:.0e}"


def _finite(x):
    return None if x is None or not math.isfinite(x) else float(x)


# ----------------------------------------------------------------------------- categories

def _sizes_case(s, env, sizes, allowed=OK_RUN, lo=-1.0):
    out = []
    for M, N, K in sizes:
        A, B = env.uniform((M, K), lo), env.uniform((K, N), lo)
        out.append(numeric(s, env, f"{M}×{N}×{K}", A, B, allowed=allowed))
        env.free()
    return out


#: Sizes that are multiples of no tile (32, 128, 256) in one or more of M, N, K.
EDGE_SIZES = ((33, 31, 37), (127, 129, 65), (1000, 999, 1001), (31, 257, 33))
TINY_SIZES = ((1, 1, 1), (1, 1, 2), (64, 96, 1), (33, 17, 1), (1, 513, 1), (1, 1, 4097))
SKINNY_SIZES = ((10007, 3, 29), (4099, 1, 64), (3, 10007, 29), (1, 4099, 64), (5, 7, 65537))


def cat_sizes(s, env):
    return _sizes_case(s, env, EDGE_SIZES)


def cat_tiny(s, env):
    """Inputs in [0, 1): with one or a few outputs, a signed sum of K random terms can
    cancel to near 0, where a relative error of 1e-4 is rounding, not a bug (1×1×4097 of
    uniform(-1, 1) did so in a recorded run: 1.1e-4 for the tiled kernel, within the
    float64 bound). Signed inputs are judged by the elementwise bound (category bound)."""
    return _sizes_case(s, env, TINY_SIZES, lo=0.0)


def cat_skinny(s, env):
    return _sizes_case(s, env, SKINNY_SIZES)


def cat_layout(s, env):
    """Views the operand check must refuse or the kernel must get right: a strided A, a
    transposed A, B in the other layout, a strided C (and the bytes between its elements
    must stay untouched), every operand 4 bytes past 16-byte alignment."""
    xp = env.xp
    M, N, K = 45, 67, 93
    out = []
    A, B = env.uniform((M, K)), env.uniform((K, N))
    wide = env.uniform((M, 2 * K))
    out.append(numeric(s, env, "A a strided view (every other column)", wide[:, ::2],
                       B, allowed=OK_EITHER))
    At = env.uniform((K, M))
    out.append(numeric(s, env, "A transposed (a Fortran-ordered view)", At.T, B,
                       allowed=OK_EITHER))
    # B in the layout the kernel does not read: row-major kernels get a Fortran-ordered B,
    # column-major ones a row-major B.
    other = xp.asfortranarray(B) if s.b_layout == "row" else B
    label = "B column-major" if s.b_layout == "row" else "B row-major"
    out.append(run_case(s, env, label, A, other, allowed=OK_EITHER, ref=(A, B)))
    out.append(_strided_c(s, env, A, B))
    host = lambda x: x if env.host else xp.asnumpy(x)   # noqa: E731
    A4 = env.at_offset(host(A), 4)
    B4 = env.at_offset(host(B), 4) if s.b_layout == "row" else \
        _fortran_at_offset(env, host(B), 4)
    C4 = env.at_offset(np.zeros((M, N), np.float32), 4)
    out.append(run_case(s, env, "A, B, C 4 bytes past 16-byte alignment", A4, B4, C=C4,
                        allowed=OK_EITHER, ref=(A, B)))
    env.free()
    return out


def _fortran_at_offset(env, B: np.ndarray, offset: int):
    """A Fortran-ordered copy of B at `offset` bytes: the transpose of B^T's offset copy."""
    return env.at_offset(np.ascontiguousarray(B.T), offset).T


def _strided_c(s, env, A, B) -> Case:
    from ...correctness import poison

    xp = env.xp
    M, N = A.shape[0], B.shape[1]
    big = xp.empty((M, 2 * N), dtype=xp.float32)
    C = big[:, ::2]
    label = "C a strided view (every other column)"
    if env.host:
        outcome, msg = attempt(s, env, A, _lay(s, env, B), C)
        return Case(label, outcome, msg, host_allowed(OK_EITHER))
    poison(big)
    outcome, msg = attempt(s, env, A, _lay(s, env, B), C)
    if outcome != "ran":
        return Case(label, outcome, msg, OK_EITHER)
    chk = compare(xp.ascontiguousarray(C), reference(env, A, B), s.precision)
    gaps_touched = int((~xp.isnan(big[:, 1::2])).sum())
    ok = chk.correct and gaps_touched == 0
    detail = _check_detail(chk) + (f"; {gaps_touched} elements between C's were overwritten"
                                   if gaps_touched else "")
    return Case(label, "pass" if ok else "fail", detail, OK_EITHER, rel_err=_finite(chk.rel_err))


def _lay(s: Subject, env: Env, B):
    """B in the layout the kernel reads (a Fortran-ordered copy for the column-major
    kernels), so that the check a case aims at is the one that fires."""
    if s.b_layout == "col" and getattr(B, "ndim", 0) == 2:
        return env.xp.asfortranarray(B)
    return B


def cat_dtype(s, env):
    """A, B or C of a dtype the kernel does not compute in: refused, never converted or
    reinterpreted silently."""
    xp = env.xp
    M, N, K = 33, 35, 37
    f32 = lambda *shape: xp.zeros(shape, dtype=xp.float32)   # noqa: E731
    B = _lay(s, env, f32(K, N))
    cases = [("A float64", xp.zeros((M, K), xp.float64), B, f32(M, N)),
             ("A float16", xp.zeros((M, K), xp.float16), B, f32(M, N)),
             ("A int32", xp.zeros((M, K), xp.int32), B, f32(M, N)),
             ("B float64", f32(M, K), _lay(s, env, xp.zeros((K, N), xp.float64)), f32(M, N)),
             ("C float64", f32(M, K), B, xp.zeros((M, N), xp.float64))]
    return [_refusal(s, env, label, A, B_, C, OK_ERR) for label, A, B_, C in cases]


def cat_aliasing(s, env):
    """C is A, C is B's memory, C overlaps half of B: the kernels read A and B while
    writing C, so the result would depend on the order of the blocks; refused, or right."""
    xp = env.xp
    n = 67
    A = env.uniform((n, n))
    buf = xp.zeros(2 * n * n, dtype=xp.float32)
    if s.b_layout == "row":
        B = env.uniform((n, n))
        B_mem = B                                        # C-contiguous: C can be B itself
        Bv = buf[: n * n].reshape(n, n)
    else:
        B = xp.asfortranarray(env.uniform((n, n)))
        B_mem = B.T                                      # B's bytes as a row-major n x n
        Bv = buf[: n * n].reshape(n, n).T
    Cv = buf[n * n // 2: n * n // 2 + n * n].reshape(n, n)
    return [_refusal(s, env, "C is A", A, B, A, OK_EITHER),
            _refusal(s, env, "C is B's memory", A, B, B_mem, OK_EITHER),
            _refusal(s, env, "C overlaps half of B", A, Bv, Cv, OK_EITHER)]


def cat_shapes(s, env):
    """Empty and mismatched operands: a clear error (K = 0 may also give C = 0)."""
    xp = env.xp
    f32 = lambda *shape: xp.zeros(shape, dtype=xp.float32)   # noqa: E731
    b = lambda *shape: _lay(s, env, f32(*shape))             # noqa: E731
    return [_refusal(s, env, "M = 0", f32(0, 8), b(8, 5), f32(0, 5), OK_ERR),
            _refusal(s, env, "N = 0", f32(4, 8), b(8, 0), f32(4, 0), OK_ERR),
            _refusal(s, env, "K = 0", f32(4, 0), b(0, 5), f32(4, 5), OK_EITHER,
                     expect_zero=True),
            _refusal(s, env, "inner dimensions differ (4×5 @ 6×7)", f32(4, 5), b(6, 7),
                     f32(4, 7), OK_ERR),
            _refusal(s, env, "C of the wrong shape", f32(4, 5), b(5, 7), f32(7, 4), OK_ERR),
            _refusal(s, env, "A one-dimensional", f32(5), b(5, 7), f32(1, 7), OK_ERR),
            _refusal(s, env, "A three-dimensional", f32(2, 4, 5), b(5, 7), f32(4, 7), OK_ERR)]


def _refusal(s, env, label, A, B, C, allowed, expect_zero=False) -> Case:
    """A case whose input the operand checks should stop (B already in the layout to
    pass); if the kernel runs anyway, its result is checked against the float64 product
    of the inputs as they were before it ran (or zeros, where K = 0)."""
    if env.host:
        outcome, msg = attempt(s, env, A, B, C)
        return Case(label, outcome, msg, host_allowed(allowed))
    from ...correctness import poison
    try:
        ref = None if expect_zero else reference(env, A, B)
    except Exception:               # noqa: BLE001 - operands no product is defined for
        ref = None
    if C.dtype.kind == "f" and C.size and not _overlaps(C, A, B):
        poison(C)
    outcome, msg = attempt(s, env, A, B, C)
    if outcome != "ran":
        return Case(label, outcome, msg, allowed)
    if expect_zero:
        ok = bool((C == 0).all())
        return Case(label, "pass" if ok else "fail", "C = 0" if ok else "K = 0 left C not zero",
                    allowed)
    if ref is None:
        return Case(label, "fail", "ran on operands that define no product", allowed)
    chk = compare(C, ref, s.precision)
    return Case(label, "pass" if chk.correct else "fail", "ran: " + _check_detail(chk),
                allowed, rel_err=_finite(chk.rel_err))


def _overlaps(C, *others) -> bool:
    lo, hi = C.data.ptr, C.data.ptr + C.nbytes
    return any(x.data.ptr < hi and lo < x.data.ptr + x.nbytes for x in others)


def special_inputs(env, M=67, N=45, K=93):
    """A, B with NaN, ±Inf, an Inf × 0 and an Inf − Inf planted in known places."""
    A = env.rng.uniform(-1, 1, (M, K)).astype(np.float32)
    B = env.rng.uniform(-1, 1, (K, N)).astype(np.float32)
    A[3, 5] = np.nan                     # row 3: NaN everywhere
    A[10, 7] = np.inf                    # row 10: ±Inf by the sign of B[7, j] ...
    B[7, 20] = 0.0                       # ... and NaN in column 20 (Inf × 0)
    B[9, 30] = -np.inf                   # column 30: ∓Inf by the sign of A[i, 9]
    A[20, 11], A[20, 12] = np.inf, -np.inf
    B[11] = np.abs(B[11]) + 0.5          # row 20: +Inf + (-Inf) = NaN
    B[12] = np.abs(B[12]) + 0.5
    B[40, 44] = np.nan                   # column 44: NaN
    return A, B


def cat_nonfinite(s, env):
    """NaN and ±Inf planted in A and B: every element of C must have the class (finite,
    NaN, +Inf, -Inf) cuBLAS gives it in the same mode, and the finite ones must be
    right."""
    from ...blas import gemm

    A, B = special_inputs(env)
    want = bounds.expected_classes(A, B)
    if env.host:
        return [numeric(s, env, "NaN, ±Inf, Inf×0, Inf−Inf", A, B)]
    cp = env.xp
    Ad, Bd = cp.asarray(A), cp.asarray(B)
    Cb = cp.empty((A.shape[0], B.shape[1]), dtype=cp.float32)
    gemm(Ad, Bd, Cb, s.baseline)
    base = cp.asnumpy(bounds.classify(Cb))
    base_ieee = bounds.class_mismatch(base, want)
    ref = reference(env, Ad, Bd)

    def check(C):
        got = cp.asnumpy(bounds.classify(C))
        miss = bounds.class_mismatch(got, base)
        fin = cp.asarray(got == 0) & cp.asarray(base == 0)
        chk = compare(C[fin], ref[fin], s.precision)
        note = (f"cuBLAS {s.baseline.upper()} "
                + ("agrees with IEEE" if base_ieee is None else f"differs from IEEE: {base_ieee}"))
        if miss:
            return False, f"classes differ from cuBLAS {s.baseline.upper()}: {miss}; {note}", None
        return chk.correct, f"classes match cuBLAS ({note}); finite part: {_check_detail(chk)}", \
            chk.rel_err

    return [numeric(s, env, "NaN, ±Inf, Inf×0, Inf−Inf", Ad, Bd, check=check)]


def cat_overflow(s, env):
    """Values near the top of float32: a finite result made of terms near FLT_MAX stays
    finite and right; an operand equal to ±FLT_MAX times 0.25 is finite; a product past
    FLT_MAX is +Inf, as in cuBLAS."""
    M, N = 33, 35
    big = 2.0 ** 126
    A1 = (env.rng.uniform(0.5, 1.0, (M, 3)) * big).astype(np.float32)
    B1 = env.rng.uniform(0.5, 1.0, (3, N)).astype(np.float32)
    A2 = np.ones((M, 4), np.float32)
    A2[:, 0] = np.where(np.arange(M) % 2, FLT_MAX, -FLT_MAX)
    B2 = np.full((4, N), 0.25, np.float32)
    A3 = (env.rng.uniform(1.0, 2.0, (M, 5)) * 2.0 ** 100).astype(np.float32)
    B3 = (env.rng.uniform(1.0, 2.0, (5, N)) * 2.0 ** 100).astype(np.float32)
    if env.host:
        return [numeric(s, env, "terms near FLT_MAX, finite sum", A1, B1)]
    cp = env.xp
    from ...blas import gemm

    def baseline(A, B):
        Cb = cp.empty((A.shape[0], B.shape[1]), dtype=cp.float32)
        gemm(A, B, Cb, s.baseline)
        return Cb

    out = [numeric(s, env, "terms up to 2^126, sum < FLT_MAX", cp.asarray(A1), cp.asarray(B1))]
    A2d, B2d = cp.asarray(A2), cp.asarray(B2)
    base2 = baseline(A2d, B2d)
    ref2 = reference(env, A2d, B2d)

    def check2(C):
        chk = compare(C, ref2, s.precision)
        b_fin = bool(cp.isfinite(base2).all())
        note = f"cuBLAS {s.baseline.upper()}: " + ("finite" if b_fin else "not finite")
        if chk.correct:
            return True, f"{_check_detail(chk)}; {note}", chk.rel_err
        same = bounds.class_mismatch(cp.asnumpy(bounds.classify(C)),
                                     cp.asnumpy(bounds.classify(base2))) is None
        if s.precision == "tf32" and not b_fin and same:
            return True, "not finite, as cuBLAS TF32 (FLT_MAX rounds up to Inf in TF32)", None
        return False, f"{_check_detail(chk)}; {note}", chk.rel_err

    out.append(numeric(s, env, "an operand ±FLT_MAX, times 0.25", A2d, B2d, check=check2))
    A3d, B3d = cp.asarray(A3), cp.asarray(B3)
    base = cp.asnumpy(bounds.classify(baseline(A3d, B3d)))
    want = np.full((M, N), 2, np.int8)        # every product is past FLT_MAX: +Inf

    def check(C):
        got = cp.asnumpy(bounds.classify(C))
        miss = bounds.class_mismatch(got, base) or bounds.class_mismatch(got, want)
        return miss is None, ("+Inf everywhere, as cuBLAS" if miss is None else miss), None

    out.append(numeric(s, env, "products past FLT_MAX (2^200): +Inf", A3d, B3d, check=check))
    return out


BOUND_SIZES = ((97, 131, 257, -1.0), (64, 80, 1031, 0.0))


def cat_bound(s, env):
    """|C − C_exact| ≤ θ_K · |A|·|B| elementwise (bounds.relative_bound), C_exact in
    float64: the error every summation order of K rounded products stays within."""
    out = []
    for M, N, K, lo in BOUND_SIZES:
        A, B = env.uniform((M, K), lo), env.uniform((K, N), lo)
        label = f"{M}×{N}×{K}, inputs in [{lo:g}, 1)"
        if env.host:
            out.append(numeric(s, env, label, A, B))
            continue
        xp = env.xp
        ref = reference(env, A, B)
        absprod = xp.abs(A).astype(xp.float64) @ xp.abs(B).astype(xp.float64)

        seen = {}

        def check(C, ref=ref, absprod=absprod, K=K, seen=seen):
            r = seen["ratio"] = bounds.bound_ratio(C, ref, absprod, K, s.precision)
            theta = bounds.relative_bound(K, s.precision)
            return r <= 1.0, f"max |error| / bound = {r:.3g} (θ_K = {theta:.2e})", None

        case = numeric(s, env, label, A, B, check=check)
        case.bound_ratio = _finite(seen.get("ratio"))
        out.append(case)
        env.free()
    return out


DETERMINISM_SIZES = ((517, 1031, 2053), (128, 128, 16384))


def cat_determinism(s, env):
    """Three runs on the same inputs, into three poisoned buffers: the same bits each
    time, and right."""
    out = []
    for M, N, K in DETERMINISM_SIZES:
        label = f"{M}×{N}×{K}, 3 runs"
        A, B = env.uniform((M, K)), env.uniform((K, N))
        if env.host:
            out.append(numeric(s, env, label, A, B))
            continue
        xp = env.xp
        runs = []

        def check(C, runs=runs, A=A, B=B):
            from ...correctness import poison
            runs.append(C.copy())
            Bk = _lay(s, env, B)
            for _ in range(2):
                C2 = xp.empty_like(C)
                poison(C2)
                run_checked(s, A, Bk, C2)
                runs.append(C2)
            same = all(bool((r.view(xp.uint32) == runs[0].view(xp.uint32)).all())
                       for r in runs[1:])
            chk = compare(runs[0], reference(env, A, B), s.precision)
            ndiff = [int((r.view(xp.uint32) != runs[0].view(xp.uint32)).sum()) for r in runs[1:]]
            detail = ("bitwise identical" if same else f"elements differing from run 1: {ndiff}")
            return same and chk.correct, f"{detail}; {_check_detail(chk)}", chk.rel_err

        out.append(numeric(s, env, label, A, B, check=check))
        env.free()
    return out


# ------------------------------------------------------------------------ isolated cases
# Each may lose the CUDA context: they run in a child process (run_isolated).

LARGE_SIZES = {"large-A": (2097120, 3, 1025), "large-B": (3, 2097120, 1025),
               "large-C": (46341, 46341, 2)}


def chunked_check(C, A, B, precision: str, budget: int = 1 << 28) -> Check:
    """compare(C, A @ B in float64) without holding the float64 product: blocks of rows
    and columns of at most `budget` float64 elements of operands and result."""
    import cupy as cp

    M, K = A.shape
    N = B.shape[1]
    cn = min(N, max(1, budget // (2 * K)))               # B block: <= budget / 2
    rm = min(M, max(1, (budget // 2) // (K + cn)))       # A and C blocks: <= budget / 2
    num2 = den2 = 0.0
    bad = 0
    for r0 in range(0, M, rm):
        a = A[r0:r0 + rm].astype(cp.float64)
        for c0 in range(0, N, cn):
            ref = a @ B[:, c0:c0 + cn].astype(cp.float64)
            out = C[r0:r0 + rm, c0:c0 + cn].astype(cp.float64)
            bad += int((~cp.isfinite(out)).sum())
            num2 += float(((out - ref) ** 2).sum())
            den2 += float((ref ** 2).sum())
            del ref, out
        del a
    rel = math.sqrt(num2 / den2) if den2 > 0 else (0.0 if num2 == 0 else math.inf)
    if bad:
        rel = math.nan
    tol = TOLERANCE[precision]
    return Check(bad == 0 and math.isfinite(rel) and rel <= tol, rel, tol, bad)


def _uniform_large(rng, shape, step: int = 1 << 26):
    """A float32 array of uniform [-1, 1) values, drawn 2^26 at a time: the generator's
    temporaries stay small (drawn whole, an 8.6 GB operand needed 17 GB more)."""
    import cupy as cp
    out = cp.empty(shape, dtype=cp.float32)
    flat = out.reshape(-1)
    for i in range(0, flat.size, step):
        n = min(step, flat.size - i)
        flat[i:i + n] = rng.uniform(-1, 1, n, dtype=cp.float32)
    return out


def case_large(s: Subject, env: Env, which: str) -> Case:
    """One operand (or C) of more than 2^31 elements: an element index past 2^31 must be
    addressed with 64-bit arithmetic; correct, or a clear error."""
    import cupy as cp
    from ...correctness import poison

    M, N, K = LARGE_SIZES[which]
    label = f"{which.split('-')[1]} past 2^31 elements ({M}×{N}×{K})"
    rng = cp.random.default_rng(int(env.rng.integers(1 << 31)))
    A, B = _uniform_large(rng, (M, K)), _uniform_large(rng, (K, N))
    C = cp.empty((M, N), dtype=cp.float32)
    poison(C)
    Bk = _lay(s, env, B)
    if Bk is not B:
        del B
    outcome, msg = attempt(s, env, A, Bk, C)
    if outcome != "ran":
        return Case(label, outcome, msg, OK_EITHER)
    chk = chunked_check(C, A, Bk, s.precision)      # the same values in either layout
    return Case(label, "pass" if chk.correct else "fail", _check_detail(chk), OK_EITHER,
                rel_err=_finite(chk.rel_err))


def case_misaligned(s: Subject, env: Env) -> Case:
    """A float32 operand 2 bytes into its buffer (a float32 view of a byte buffer): the
    check must refuse it, or the kernel must get it right; a misaligned-address fault
    that loses the CUDA context is neither."""
    M, N, K = 33, 35, 37
    A = env.rng.uniform(-1, 1, (M, K)).astype(np.float32)
    B = env.rng.uniform(-1, 1, (K, N)).astype(np.float32)
    A2 = env.at_offset(A, 2)
    label = "A at a 2-byte offset (not float-aligned)"
    if env.host:
        outcome, msg = attempt(s, env, A2, _lay(s, env, B), np.zeros((M, N), np.float32))
        return Case(label, outcome, msg, host_allowed(OK_EITHER))
    return run_case(s, env, label, A2, _lay(s, env, env.xp.asarray(B)), allowed=OK_EITHER,
                    ref=(env.xp.asarray(A), env.xp.asarray(B)))


#: A device address nothing is mapped at.
BOGUS_PTR = 0x10


def case_fault(s: Subject, env: Env) -> Case:
    """A launches with A pointing where nothing is mapped: the fault must surface as a
    KernelRuntimeError that names the kernel and the CUDA functions it launched (after
    it the CUDA context is unusable: this case runs last in its process)."""
    import cupy as cp

    M, N, K = 64, 64, 64
    mem = cp.cuda.UnownedMemory(BOGUS_PTR, M * K * 4, None, device_id=cp.cuda.Device().id)
    A = cp.ndarray((M, K), cp.float32, memptr=cp.cuda.MemoryPointer(mem, 0))
    B = _lay(s, env, cp.ones((K, N), cp.float32))
    C = cp.empty((M, N), cp.float32)
    label = "A points at unmapped memory"
    try:
        run_checked(s, A, B, C)
    except KernelRuntimeError as exc:
        msg = str(exc)
        named = s.name in msg and any(f in msg for f in s.function_names())
        return Case(label, "reported" if named else "fail",
                    msg if named else f"the error does not name the kernel: {msg}", ("reported",))
    except Exception as exc:        # noqa: BLE001
        outcome, msg = error_outcome(s, exc)
        return Case(label, "fail", f"{outcome}: {msg}", ("reported",))
    return Case(label, "fail", "the launch on an unmapped pointer raised nothing",
                ("reported",))


ISOLATED: dict[str, tuple[str, Callable]] = {
    "large-A": ("large_index", lambda s, env: case_large(s, env, "large-A")),
    "large-B": ("large_index", lambda s, env: case_large(s, env, "large-B")),
    "large-C": ("large_index", lambda s, env: case_large(s, env, "large-C")),
    "misaligned": ("layout", case_misaligned),
    "fault": ("launch_failure", case_fault),          # always last: it loses the context
}


def run_isolated(subs: list[Subject], cases=tuple(ISOLATED), *, parallel: int = 4,
                 timeout: float = 240.0) -> dict[tuple[str, str], Case]:
    """(subject, case) -> Case for every isolated case, each subject's cases in one child
    process (`python -m perflab.chapters.matmul.isolated`), a new one after any case that
    lost the context; `parallel` children at once (the index cases hold up to ~20 GB
    each: two 8.6 GB operands for the TF32 rungs, which round a copy)."""
    from ... import paths

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(paths.ROOT / "lib")] + [p for p in [os.environ.get("PYTHONPATH")] if p])}

    def one(s: Subject) -> dict:
        got, todo = {}, list(cases)
        while todo:
            cmd = [sys.executable, "-m", "perflab.chapters.matmul.isolated", s.name, *todo]
            t0 = time.time()
            try:
                run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                     env=env)
                out, err, rc = run.stdout, run.stderr, run.returncode
            except subprocess.TimeoutExpired as exc:
                out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
                err, rc = f"timed out after {timeout:.0f} s", None
            done = [Case(**{**d, "allowed": tuple(d["allowed"])}) for d in
                    (json.loads(ln[7:]) for ln in out.splitlines() if ln.startswith("RESULT "))]
            for c in done:
                got[todo.pop(0)] = c
            if not todo or _lost(done):
                continue          # all done, or a new process for what follows a lost context
            # The process ended inside todo[0] without reporting it.
            name = todo.pop(0)
            tail = " | ".join(err.strip().splitlines()[-3:])[:600]
            got[name] = Case(name, "fail", f"the process died (exit {rc}, after "
                             f"{time.time() - t0:.0f} s): {tail}",
                             ("reported",) if name == "fault" else OK_EITHER)
        return got

    out: dict[tuple[str, str], Case] = {}
    with ThreadPoolExecutor(max_workers=parallel) as ex:
        for s, got in zip(subs, ex.map(one, subs)):
            for case, c in got.items():
                out[(s.name, case)] = c
    return out


def _lost(done: list[Case]) -> bool:
    return bool(done) and done[-1].outcome in ("fault", "reported")


# ------------------------------------------------------------------------------ registry

@dataclass(frozen=True)
class Category:
    title: str
    run: Callable | None            # in-process cases (subject, env) -> [Case]
    host: bool = False              # its operand cases also run without a GPU
    isolated: tuple = ()            # isolated cases (ISOLATED keys) that belong to it


CATEGORIES: dict[str, Category] = {
    "sizes": Category("sizes not multiples of the tile", cat_sizes),
    "tiny": Category("1×1×1 and K = 1", cat_tiny),
    "skinny": Category("tall-skinny, short-wide, long K", cat_skinny),
    "layout": Category("non-contiguous, transposed, misaligned inputs", cat_layout,
                       host=True, isolated=("misaligned",)),
    "dtype": Category("wrong dtype", cat_dtype, host=True),
    "aliasing": Category("output aliasing an input", cat_aliasing, host=True),
    "shapes": Category("empty and mismatched shapes", cat_shapes, host=True),
    "nonfinite": Category("NaN and ±Inf propagation, as cuBLAS", cat_nonfinite),
    "overflow": Category("values near overflow", cat_overflow),
    "large_index": Category("an index past 2^31 elements", None,
                            isolated=("large-A", "large-B", "large-C")),
    "bound": Category("within the float64 error bound of the accumulation", cat_bound),
    "determinism": Category("the same bits across runs", cat_determinism),
    "launch_failure": Category("a failed launch reported with the kernel's name", None,
                               isolated=("fault",)),
}

#: What the correctness pass (`perflab check`, also under compute-sanitizer) audits: the
#: edges, the views and the special values, nothing that spawns a process or loses the
#: context (the full audit is its own experiment).
SMALL_CATEGORIES = ("sizes", "tiny", "layout", "nonfinite", "overflow")


def run_inprocess(cat: str, s: Subject, env: Env) -> list[Case]:
    """The in-process cases of category `cat` for kernel `s` (a case the audit itself
    could not run is a failed case, with the exception)."""
    c = CATEGORIES[cat]
    if c.run is None:
        return []
    if env.host and not c.host:
        raise ValueError(f"category {cat!r} needs a GPU; its host-side parts are tested "
                         "on their own")
    try:
        return c.run(s, env)
    except Exception as exc:       # noqa: BLE001 - a broken case is a failed case
        return [Case(cat, "fail", f"the audit itself raised {type(exc).__name__}: {exc}")]
    finally:
        env.free()


def run_category(cat: str, s: Subject, env: Env) -> list[Case]:
    """Every case of category `cat` for kernel `s`: in this process, and (on a GPU) the
    isolated ones in a child process; on the host, the operand cases only."""
    c = CATEGORIES[cat]
    out = run_inprocess(cat, s, env)
    if "misaligned" in c.isolated and env.host:
        out.append(case_misaligned(s, env))
    elif c.isolated and not env.host:
        got = run_isolated([s], c.isolated, parallel=1)
        out += [got[(s.name, k)] for k in c.isolated]
    return out


def verdict(cases: list[Case]) -> str:
    """A category's verdict from its cases: fail if any case ended outside what it
    allows; else pass, clear-error, reported (all alike) or "pass + clear-error"."""
    if not cases:
        return "not run"
    if not all(c.ok for c in cases):
        return "fail"
    kinds = sorted({c.outcome for c in cases})
    if kinds == ["accepted"] or set(kinds) <= {"accepted", "pass"}:
        return "accepted" if "accepted" in kinds else "pass"
    if len(kinds) == 1:
        return kinds[0]
    return " + ".join(k for k in ("pass", "accepted", "clear-error", "reported") if k in kinds)


def summary_detail(cases: list[Case]) -> str:
    """One line per case: its name, outcome and detail."""
    return " | ".join(f"{c.case}: {c.outcome}" + (f" ({c.detail})" if c.detail else "")
                      for c in cases)
