"""@TITLE@ (chapters/@CHAPTER@.md): the chapter's Python side.

Its kernels are in kernels/@CHAPTER@/, its recorded results in results/<device>/@CHAPTER@/,
its tests in tests/chapters/test_@SLUG@.py; CONTRIBUTING.md says what goes where."""
from __future__ import annotations

CHAPTER = "@CHAPTER@"
TITLE = "@TITLE@"

from . import experiments  # noqa: E402,F401  (registers @SLUG@.*)
