"""@TITLE@ (perflab.chapters.@SLUG@): what can be checked without a GPU, and the
correctness pass on one."""
from __future__ import annotations

import pytest

from perflab import registry


def test_experiments_are_registered_under_the_chapter():
    exps = {n: e for n, e in registry.all_experiments().items() if n.startswith("@SLUG@.")}
    assert exps and all(e.chapter == "@CHAPTER@" for e in exps.values())


@pytest.mark.gpu
def test_every_kernel_passes_its_check(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")
    from perflab import lab
    rows = lab.check_all(chapter="@CHAPTER@")
    assert rows and all(r["correct"] for r in rows)
