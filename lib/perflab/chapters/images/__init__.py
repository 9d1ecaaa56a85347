"""Elementwise kernels and images (chapters/04-images.md): VecAdd, RGB to gray and a box
blur — PMPP's first kernels — checked exactly, then raced against CuPy and the copy
ceiling of the same bytes, with the profiler's counters beside them.

Modules: ops (the kernels' calls, their blocks checked), reference (the exact host
references), experiments (vecadd, gray, blur, photo), blocks (the blur's block-shape
sweep), profiling, sanitize, report, diagrams, explorer (block shapes)."""
from __future__ import annotations

CHAPTER = "04-images"
TITLE = "Elementwise kernels and images"

from . import experiments  # noqa: E402,F401  (registers images.vecadd, .gray, .blur, .photo)
from . import sanitize  # noqa: E402,F401  (registers images.sanitize)
from . import profiling  # noqa: E402,F401  (registers images.profile)
from . import blocks  # noqa: E402,F401  (registers images.blocks, last: the longest)

#: the package's own modules beyond the roles of perflab.chapters (module -> role)
PARTS = {
    "blocks": "the block-shape sweep of the blur",
}
