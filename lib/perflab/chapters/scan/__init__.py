"""Parallel scan (chapters/03-scan.md) and run-length encoding (chapters/03-rle.md): the
portfolio's serial-in-block scan, the three-kernel fix, a single-pass decoupled look-back scan, and
run-length encoding built on the scan, each checked before it is timed next to CUB
(through CuPy and PyTorch) and the copy of the same bytes, in the same run.

    from perflab.chapters.scan import ops, rle
    y = ops.scan(x, inclusive=True)                 # x: 1-D int32, int64 or float32
    values, lengths, count = rle.Encoder(x.size).encode(x)

Modules: ops (the scans and their checks), rle (encoders, decoder, inputs with runs),
experiments (check, float_order, sizes, dtypes, tune, rle, large, profile, stress, and
the later tries' lookback, pipeline, staged, targets, chunked, rle_chunked,
chunked_profile), bulk (the sixth try's bulk, rle_bulk, bulk_profile), lean (the seventh try's rle_lean,
lean_profile), masks (the eighth try's rle_masks, masks_profile), rounds (the ninth
try's rle_rounds, rounds_profile), reread (the tenth and eleventh tries' rle_reread, reread_profile, rle_walk,
walk_profile), ballot (the twelfth try's rle_ballot, ballot_profile), graph (the
fifteenth try's rle_graph), room (the seventeenth try's rle_room),
calltime (call_time: what a call costs), report (the page's numbers, tables and figures), explorer (block size ×
ITEMS_PER_THREAD), profiling (the ncu child). Kernels: kernels/03-scan/; tests:
tests/chapters/test_scan.py, test_scan_lookahead.py, test_scan_chunked.py and
test_scan_bulk.py (and test_scan_lean.py, test_scan_masks.py, test_scan_rounds.py, test_scan_reread.py,
test_scan_ballot.py, test_scan_graph.py, test_scan_room.py).
"""
from __future__ import annotations

CHAPTER = "03-scan"
TITLE = "Parallel scan"
#: the pages this package serves: chapters/03-scan.md and chapters/03-rle.md (Run-length
#: encoding), both built on these experiments, kernels and results
PAGES = (CHAPTER, "03-rle")

from . import experiments  # noqa: E402,F401  (registers scan.*)
from . import bulk  # noqa: E402,F401  (registers scan.bulk, scan.rle_bulk, scan.bulk_profile)
from . import lean  # noqa: E402,F401  (registers scan.rle_lean, scan.lean_profile)
from . import masks  # noqa: E402,F401  (registers scan.rle_masks, scan.masks_profile)
from . import rounds  # noqa: E402,F401  (registers scan.rle_rounds, scan.rounds_profile)
from . import reread  # noqa: E402,F401  (registers scan.rle_reread, scan.reread_profile,
#                                   scan.rle_walk, scan.walk_profile)
from . import ballot  # noqa: E402,F401  (registers scan.rle_ballot, scan.ballot_profile)
from . import calltime  # noqa: E402,F401  (registers scan.call_time)
from . import graph  # noqa: E402,F401  (registers scan.rle_graph)
from . import room  # noqa: E402,F401  (registers scan.rle_room)
