"""Chapter 0 (perflab.chapters.machine) without a GPU: the ceilings other chapters read,
from rows, and the closed form its FMA check uses."""
from __future__ import annotations

import pandas as pd
import pytest

from perflab.chapters import machine
from perflab.chapters.machine.experiments import fma_reference


def test_ceilings_from_rows():
    copy = pd.DataFrame({"TB/s": [3.9, 4.1]})
    copy.attrs["source"] = {"kind": "recorded", "device": "X", "date": "d", "commit": "c",
                            "run_ids": ["r"]}
    fma = pd.DataFrame({"TFLOP/s": [30.0, 61.0]})
    ten = pd.DataFrame({"variant": ["mma.sync acc=8", "cuBLAS TF32", "cuBLAS FP32"],
                        "TFLOP/s": [310.0, 400.0, 50.0]})
    c = machine.ceilings_from(copy, fma, ten)
    assert c.bandwidth_Bps == pytest.approx(4.1e12)
    assert c.peaks_flops == pytest.approx({"FP32 FMA": 61e12, "TF32 mma.sync": 310e12,
                                           "TF32 cuBLAS": 400e12})


def test_ceilings_of_the_recorded_run(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "replay")
    c = machine.ceilings()
    assert 3e12 < c.bandwidth_Bps < 6e12
    assert set(c.peaks_flops) == {"FP32 FMA", "TF32 mma.sync", "TF32 cuBLAS", "TF32 wgmma"}
    # on the H200 (Hopper): cuBLAS TF32 above the mma.sync ceiling, below the wgmma one
    p = c.peaks_flops
    assert p["FP32 FMA"] < p["TF32 mma.sync"] < p["TF32 cuBLAS"] < p["TF32 wgmma"]
    assert c.source.startswith("recorded on NVIDIA H200")


def testfma_reference_is_the_iterated_map():
    x, y, z, steps = 0.125, 0.5, 0.5, 37
    for _ in range(steps):
        x = x * y + z
    assert fma_reference(1, steps, y, z) == pytest.approx(x, rel=1e-15)
