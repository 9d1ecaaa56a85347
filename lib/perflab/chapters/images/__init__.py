"""Elementwise kernels and images (chapters/04-images.md): VecAdd, RGB to gray and a box
blur — PMPP's first kernels — checked exactly, then raced against CuPy and the copy
ceiling of the same bytes, with the profiler's counters beside them.

Its kernels are in kernels/04-images/, its recorded results in results/<device>/04-images/,
its tests in tests/chapters/test_images.py; CONTRIBUTING.md says what goes where."""
from __future__ import annotations

CHAPTER = "04-images"
TITLE = "Elementwise kernels and images"
#: the package's own modules beyond the roles of perflab.chapters (module -> role)
PARTS = {
    "blocks": "the block-shape sweep of the blur",
}

from . import experiments  # noqa: E402,F401  (registers images.vecadd, .gray, .blur, .photo)
from . import sanitize  # noqa: E402,F401  (registers images.sanitize)
from . import profiling  # noqa: E402,F401  (registers images.profile)
from . import blocks  # noqa: E402,F401  (registers images.blocks, last: the longest)
