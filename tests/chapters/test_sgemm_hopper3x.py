"""Chapter 1's rung 12 (perflab.chapters.sgemm.hopper3x: 3xTF32 on wgmma) without a GPU.

Its parameter checks and messages, the refusal of any GPU that is not a Hopper, the tensor
maps it asks the driver for (the driver faked: fp32 element type, no rounding by the copy
engine), and the offline compile for sm_90a: no spills, no wait that ptxas had to add, 12
wgmma m64n128k8 a k-tile, and the fresh partial of each chunk (a wgmma that ignores the
accumulator) exactly where the chunk starts."""
from __future__ import annotations

import numpy as np
import pytest

from perflab import compile_report as cr
from perflab.chapters.sgemm import experiments, hopper, hopper3x, report, variants
from perflab.errors import ConfigError

V = hopper3x.VARIANT
H200 = {"name": "NVIDIA H200", "compute_capability": "9.0", "smem_per_block_optin": 232448}


@pytest.fixture(autouse=True)
def compile_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFLAB_CACHE_DIR", str(tmp_path / "cache"))


def test_it_is_the_last_rung_and_compared_with_both_cublas_modes():
    assert variants()[-1] is V and V.name == "12-3xtf32-wgmma"
    assert experiments.COMPARED[V.precision] == ("fp32", "tf32")
    assert V.params() == {"stages": 4, "chunk": 2}


def test_defaults_are_valid_on_an_h200_at_every_ladder_size():
    for M, N, K in experiments.SIZES + experiments.SMALL_SIZES + ((1, 1, 1),):
        V.check(V.params(), M, N, K, H200)


@pytest.mark.parametrize("cc, name", [("8.9", "NVIDIA L4"), ("8.0", "NVIDIA A100"),
                                      ("10.0", "NVIDIA B200")])
def test_other_gpus_are_refused_with_the_reason(cc, name):
    dev = {"name": name, "compute_capability": cc, "smem_per_block_optin": 232448}
    with pytest.raises(ConfigError) as e:
        V.check(V.params(), 256, 256, 256, dev)
    msg = str(e.value)
    assert msg.startswith("12-3xtf32-wgmma:") and f"compute capability {cc}" in msg
    assert name in msg and "08-tf32-mma" in msg


@pytest.mark.parametrize("over, words", [
    ({"stages": 1}, "2 to 8"), ({"stages": 5}, "246784 B of shared memory"),
    ({"chunk": -1}, "chunk=-1"), ({"chunk": 2.0}, "must be an integer"),
    ({"stages": True}, "must be an integer")])
def test_bad_parameters_say_why(over, words):
    with pytest.raises(ConfigError, match="^12-3xtf32-wgmma: ") as e:
        V.check({**V.params(), **over}, 256, 256, 256, H200)
    assert words in str(e.value)


def test_huge_problems_and_unknown_parameters():
    with pytest.raises(ConfigError, match="unknown parameter"):
        V.params(BN=64)
    with pytest.raises(ConfigError, match="too large for the tensor maps"):
        V.check(V.params(), 2**31, 64, 64, H200)


def test_smem_and_kernels():
    assert hopper3x.smem_bytes(V.params()) == 4 * (2 * 128 + 128) * 32 * 4 + 1024 == 197632
    names = [s.name_expression for s in V.kernels(V.params())]
    assert names == ["sgemm_3xtf32_wgmma<4, 2>", "split_a<true>", "split_a<false>",
                     "pad_copy<true>", "pad_copy<false>", "fix_not_finite"]
    # rung 09's fallback for non-finite elements, compiled from its own file
    assert V.kernels(V.params())[-1].file == "01-sgemm/09_3xtf32.cu"


def test_the_maps_are_fp32_boxes_of_128_and_32_rows(monkeypatch):
    calls = []

    def fake(addr, dtype, rank, ptr, dims, strides, box, estr, inter, swz, l2, oob):
        calls.append((dtype, (dims[0], dims[1]), strides[0], (box[0], box[1]), swz))
        return 0

    monkeypatch.setattr(hopper, "encode_tiled", lambda: fake)
    hopper.tensor_map(0x1000, 300, 301, 304, hopper3x.BM, hopper3x.FLOAT32)
    hopper.tensor_map(0x1000, 301, 77, 80, 32, hopper3x.FLOAT32)
    assert calls == [(7, (301, 300), 304 * 4, (32, 128), 3), (7, (77, 301), 80 * 4, (32, 32), 3)]
    assert hopper3x.MAPS_DTYPE.itemsize == 3 * 128


def test_every_kernel_compiles_for_sm_90a_without_spills_or_added_waits():
    specs = [s for c in hopper3x.PARAM_SPACE["chunk"] for s in V.kernels(V.params(chunk=c))]
    specs = list({s.name_expression: s for s in specs}.values())
    df = cr.report(specs, archs=("sm_90",))
    assert (df.spill_store_bytes == 0).all() and (df.stack_frame_bytes == 0).all()
    for c in hopper3x.PARAM_SPACE["chunk"]:
        ck = cr.compile_cubin(hopper3x.gemm_spec(V.params(chunk=c)), "sm_90")
        assert ck.arch == "sm_90a"
        # C7508: setmaxnreg ignored; C7517: a wgmma wait inserted by ptxas (serialising)
        assert "C7508" not in ck.log and "C7517" not in ck.log, ck.log


@pytest.mark.parametrize("chunk, firsts", [
    (1, ["fresh", "fresh", "fresh"]), (2, ["fresh", "acc", "fresh"]),
    (0, ["pred", "acc", "pred"]), (4, ["pred", "acc", "pred"]), (32, ["pred", "acc", "pred"])])
def test_three_products_per_k8_step_and_a_fresh_partial_per_chunk(chunk, firsts):
    """The k loop is unrolled twice (an even and an odd k-tile) plus an odd tail: 3 x 12
    wgmma. Only the first of a k-tile's 12 may start a fresh partial: "fresh" (accumulator
    input RZ: always, as with chunk 1, or on every even k-tile, chunk 2), "pred" (a runtime
    predicate: kt % chunk == 0, or kt == 0 for chunk 0) or "acc" (never: an odd k-tile
    starts no chunk of an even length). Every other wgmma accumulates."""
    text = cr.sass(hopper3x.gemm_spec(V.params(chunk=chunk)), "sm_90")
    counts = cr.count_instructions(text, base=True)
    assert counts["UTMALDG"] == 6               # A's two parts, 4 boxes of B
    assert counts["LDL"] == counts["STL"] == 0
    mma = [line.split(";")[0].rstrip() for line in text.splitlines() if "HGMMA" in line]
    assert len(mma) == 36 and all("HGMMA.64x128x8.F32.TF32" in m for m in mma)

    def kind(m):
        if m.endswith("RZ, !UPT"):
            return "fresh"
        return "pred" if m.rstrip().endswith("UP0") else "acc"
    assert [kind(m) for m in mma[::12]] == firsts
    assert all(kind(m) == "acc" for i, m in enumerate(mma) if i % 12)


def test_chunk_table_from_rows():
    import pandas as pd
    rows = [{"variant": "cuBLAS FP32", "M": 64, "N": 64, "K": 4096, "rel_err": 1e-6,
             "correct": True}]
    for c, e, tf in ((0, 3.5e-5, 130.0), (2, 5e-7, 118.0), (8, 1.8e-6, 122.0)):
        rows.append({"variant": V.name, "M": 64, "N": 64, "K": 4096, "chunk": c, "rel_err": e,
                     "correct": True, "TFLOP/s": tf, "vs_cublas_fp32": tf / 50,
                     "vs_cublas_fp32_min": tf / 52, "vs_cublas_fp32_max": tf / 48})
    t = report.chunk_table(pd.DataFrame(rows))
    assert t["k_per_partial"].tolist() == [64, 256, 4096]
    assert np.allclose(t["err_x"], [0.5, 1.8, 35.0])
    g = report.chunk_facts(pd.DataFrame(rows), 2)
    assert g["ch_default_k"] == 64 and g["ch_longest_ok_k"] == 256
    assert np.isclose(g["ch0_err_x"], 35.0) and np.isclose(g["ch_fresh_cost"], (1 - 118 / 130) * 100)
