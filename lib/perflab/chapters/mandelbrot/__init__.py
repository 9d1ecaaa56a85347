"""Mandelbrot: CPU SIMD masks against GPU SIMT (chapters/07-mandelbrot.md): one float32
iteration, written as scalar C, AVX2 and AVX-512 (mask registers) on the CPU, NumPy and
Numba in Python, and CUDA kernels that use one lane, every lane, or two pixels per lane —
every one of them checked count for count against the scalar reference.

Its kernels are in kernels/07-mandelbrot/, its recorded results in results/<device>/07-mandelbrot/
(the CPU rows under the CPU's slug), its tests in tests/chapters/test_mandelbrot.py;
CONTRIBUTING.md says what goes where."""
from __future__ import annotations

CHAPTER = "07-mandelbrot"
TITLE = "Mandelbrot: CPU SIMD masks against GPU SIMT"

from . import experiments  # noqa: E402,F401  (registers mandelbrot.*)
from . import profiling  # noqa: E402,F401  (registers mandelbrot.profile)

#: the package's own modules beyond the roles of perflab.chapters (module -> role)
PARTS = {
    "cpu": "the C and Python implementations on the CPU (perflab.host)",
    "gpu": "the CUDA kernels' calls",
    "model": "the iteration-count model of the work",
    "views": "the views of the set the pages draw",
}
