"""Convolution in 1D, 2D and 3D (chapters/06-convolution.md): naive kernels, the filter in
constant memory, tiles with halo cells (loaded, or left to the caches), register tiles,
the depthwise 3D variant, against cupyx.scipy.ndimage.convolve and the copy ceiling.

Its kernels are in kernels/06-convolution/, its recorded results in results/<device>/06-convolution/,
its tests in tests/chapters/test_convolution.py; CONTRIBUTING.md says what goes where."""
from __future__ import annotations

CHAPTER = "06-convolution"
TITLE = "Convolution in 1D, 2D and 3D"

from . import experiments  # noqa: E402,F401  (registers convolution.*)
from . import profiling  # noqa: E402,F401  (registers convolution.profile)
