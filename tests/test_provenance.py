"""Provenance a reader can trust: every recorded row names a commit of this history whose
kernels hash to the row's kernel hashes (perflab.store.provenance_problems).

Rows recorded before the recorder refused uncommitted trees name a commit that does not
hold the code that ran. Such files were listed in PENDING (empty since every one was
re-recorded): each is re-recorded on a machine with an NVIDIA GPU, from a committed tree
(`python -m perflab provenance` prints the commands), and then leaves the list. The test fails for any other file with such a
row, and for a listed file that no longer has one (so the list only shrinks). An archived
try's file (perflab.chapters.scan.archive) is re-recorded from the commit that holds its
code, in a worktree of that commit.
"""
from __future__ import annotations

from perflab import store

PENDING: frozenset[str] = frozenset()


def test_every_recorded_row_names_a_commit_that_holds_its_kernels():
    bad = {store.relative(path) for path, *_ in store.provenance_problems()}
    new = sorted(bad - PENDING)
    fixed = sorted(PENDING - bad)
    assert not new, "rows whose commit does not hold their kernels:\n" + "\n".join(new)
    assert not fixed, ("these files are re-recorded with good provenance: take them off "
                       "PENDING:\n" + "\n".join(fixed))
