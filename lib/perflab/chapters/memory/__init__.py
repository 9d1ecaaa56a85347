"""The memory hierarchy, measured (chapters/02-memory.md): latency by working set, what
the load cache operators really do, shared-memory banks, coalescing and Little's law.

Modules: experiments (latency, operators, banks, coalescing, inflight, stride_chase),
latency (the chains the pointer chase walks), profiling (memory.profile and its ncu
child), report (the page's facts, tables and figures), diagrams, explorer (the strided
chase by working set and stride)."""
from __future__ import annotations

CHAPTER = "02-memory"
TITLE = "The memory hierarchy, measured"

from . import experiments  # noqa: E402,F401  (registers memory.*)
from . import profiling  # noqa: E402,F401  (registers memory.profile)

#: the package's own modules beyond the roles of perflab.chapters (module -> role)
PARTS = {
    "latency": "the pointer chase's chains",
}
