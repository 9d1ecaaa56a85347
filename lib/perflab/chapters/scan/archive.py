"""The tries the scan pages cite but the lab no longer runs: their code left the tree after
ARCHIVED_AT (17's diagnostics after PARTS_AT: scan.rle_bulk_parts); their recorded rows
replay everywhere, their kernels held against that commit (perflab.store.stale_kernels)."""
from __future__ import annotations

from ...registry import archived

#: the last commit with the retired tries' code, kernels and tests
ARCHIVED_AT = "3be946a"

#: name -> title, as the runs recorded them
TRIES = {
    "scan.staged": "The tile in shared memory (10): staged single pass, by shape and look-back",
    "scan.chunked": "Reduce from memory, scan from L2 (14): the chunked single pass by shape",
    "scan.targets": "The later scans (08, 12, 14, 16) and encoders (09, 13, 15, 17) at their "
                    "defaults, checked and raced",
    "scan.rle_lean": "The lean encoder (18) by shape, against 17, 15 and PyTorch",
    "scan.rle_masks": "The mask encoder (19) by shape, against 18, 17 and PyTorch",
    "scan.rle_rounds": "The rounds encoder (20) by shape, against 19, 18 and PyTorch",
    "scan.rle_reread": "The re-read encoder (21) by shape, against 20 and PyTorch",
    "scan.rle_walk": "The mask-walk encoder (22) by shape, against 21, 20 and PyTorch",
    "scan.walk_profile": "What 22 executes: instructions and issue under the profiler",
    "scan.rle_ballot": "The ballot encoder (23) by shape, against 22, 20 and PyTorch",
    "scan.ballot_profile": "What 23 executes: instructions and issue under the profiler",
    "scan.rle_graph": "23 launched as a CUDA graph (24), against 23 and PyTorch",
}

#: the last commit whose 17_rle_bulk.cu has its diagnostics (DIAG 1-4)
PARTS_AT = "422e8fc"

for _name, _title in TRIES.items():
    archived(_name, title=_title, commit=ARCHIVED_AT)
archived("scan.rle_bulk_parts", commit=PARTS_AT,
         title="17 with its parts taken away one at a time, in the rounds of scan.rle_bulk")
