"""Chapter 8, an SGEMM case study (chapters/08-matmul.md): the two simplest kernels of the
SGEMM ladder, the case study's naive and 32x32 tiled ones, with PMPP's thread coarsening and
corner turning (kernels/08-matmul/), audited: a correctness audit of every kernel here and
every rung of chapter 1, category by category; a roofline redone from the bytes the
profiler counted; and the case study's GPUs compared with this one as fractions of each
device's own FP32 ceiling.

Modules: variants (the kernels as chapter 1 `GemmVariant`s), audit and bounds (the audit's
categories and the arithmetic it judges by; isolated, its child process), experiments
(matmul.kernels, matmul.l2, matmul.profile, matmul.audit), profiling (the ncu child),
report (tables, figures and the numbers the page quotes)."""
from __future__ import annotations

CHAPTER = "08-matmul"
TITLE = "An SGEMM case study: the simplest kernels, audited"

from . import experiments  # noqa: E402,F401  (registers matmul.*)
from . import sanitize  # noqa: E402,F401  (registers matmul.sanitize)

#: the package's own modules beyond the roles of perflab.chapters (module -> role)
PARTS = {
    "audit": "the correctness audit's categories",
    "bounds": "the arithmetic the audit judges by",
    "isolated": "the audit's child process",
}
