"""The memory hierarchy, measured (chapters/02-memory.md): latency by working set, what
the load cache operators really do, shared-memory banks, coalescing and Little's law.

Its kernels are in kernels/02-memory/, its recorded results in results/<device>/02-memory/,
its tests in tests/chapters/test_memory.py; CONTRIBUTING.md says what goes where."""
from __future__ import annotations

CHAPTER = "02-memory"
TITLE = "The memory hierarchy, measured"
#: the package's own modules beyond the roles of perflab.chapters (module -> role)
PARTS = {
    "latency": "the pointer chase's chains",
}

from . import experiments  # noqa: E402,F401  (registers memory.*)
from . import profiling  # noqa: E402,F401  (registers memory.profile)
