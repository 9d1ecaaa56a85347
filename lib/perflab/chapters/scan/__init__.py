"""Parallel scan (chapters/03-scan.md) and run-length encoding (chapters/03-rle.md), each
scan and encoder checked before it is timed next to CUB and the copy, in the same run.

    from perflab.chapters.scan import ops, rle
    y = ops.scan(x, inclusive=True)                 # x: 1-D int32, int64 or float32
    values, lengths, count = rle.Encoder(x.size).encode(x)
"""
from __future__ import annotations

CHAPTER = "03-scan"
TITLE = "Parallel scan"
#: the pages this package serves: chapters/03-scan.md and chapters/03-rle.md
PAGES = (CHAPTER, "03-rle")

# each registers its experiments (archive: the retired tries, replay only)
from . import experiments, bulk, encoders, archive, sanitize  # noqa: E402,F401

#: the package's own modules beyond the roles of perflab.chapters (module -> role)
PARTS = {"rle": "the encoders, the decoder and inputs with runs (the library's second half)",
         "bulk": "the bulk-copy scan's experiments", "encoders": "the one-pass encoders' experiments",
         "archive": "the retired tries the pages cite, replayed from their rows"}
