"""kernels/common/ptx.cuh, the PTX wrappers every chapter shares, compiles for both
report architectures, and each wrapper becomes the instruction it names."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from perflab import compile_report as cr
from perflab import paths
from perflab.kernels import KernelSpec

HERE = Path(__file__).parent


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_every_wrapper_compiles_to_its_instruction(tmp_path, monkeypatch, arch):
    kdir = tmp_path / "kernels"
    (kdir / "common").mkdir(parents=True)
    (kdir / "t").mkdir()
    shutil.copy(paths.KERNELS / "common" / "ptx.cuh", kdir / "common" / "ptx.cuh")
    shutil.copy(HERE / "kernels_fixture" / "uses_ptx.cu", kdir / "t" / "uses_ptx.cu")
    monkeypatch.setattr(paths, "KERNELS", kdir)
    monkeypatch.setenv("PERFLAB_CACHE_DIR", str(tmp_path / "cache"))
    spec = KernelSpec("t/uses_ptx.cu", "uses_ptx")
    ops = cr.count_instructions(cr.sass(spec, arch))
    assert any(op.startswith("LDGSTS") for op in ops)          # cp.async
    assert any(op.startswith("LDSM") for op in ops)            # ldmatrix
    assert sum(n for op, n in ops.items() if op.startswith("LDG")) >= 5
    assert any(op.startswith("CS2R") or op.startswith("S2UR") for op in ops)   # clocks
