"""Transpose and shared-memory banks (chapters/05-transpose.md): a transpose climbed from
the naive kernel through a shared-memory tile, its bank conflicts and the two ways out
(padding, an XOR swizzle), more elements per thread and 16-byte accesses, each checked bit
for bit and raced against the copy of the same bytes.

Modules: ops (the rungs' calls), banks (the bank maps the page draws), experiments (check,
ladder, tiles), profiling, report, diagrams, explorer (TILE × rows of threads)."""
from __future__ import annotations

CHAPTER = "05-transpose"
TITLE = "Transpose and shared-memory banks"

from . import experiments  # noqa: E402,F401  (registers transpose.check, .ladder, .tiles)
from . import profiling  # noqa: E402,F401  (registers transpose.profile)

#: the package's own modules beyond the roles of perflab.chapters (module -> role)
PARTS = {
    "banks": "the shared-memory bank maps",
}
