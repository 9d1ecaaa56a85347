"""Rung 11 (tensor-core split-K, operands as stored) without a GPU: its slice choice, its
launch plan (two kernels, the workspace, no pre-pass), its refusals, and its kernels
compiled offline for sm_90 with no spills; then the timing method every ratio of the
chapter uses (interleaved rounds, the spread kept)."""
from __future__ import annotations

import types

import pytest

from perflab import compile_report
from perflab.chapters.sgemm import experiments, get, tcsplitk
from perflab.errors import ConfigError

H200 = {"name": "NVIDIA H200", "smem_per_block_optin": 232448}


def test_slices_fill_the_gpu_and_keep_a_few_k_tiles_each():
    p = tcsplitk.DEFAULTS
    # one 128 x 128 tile, 1024 k-tiles of 32: one block on each of 132 SMs -> 8 k-tiles a
    # slice -> 128 slices (no slice empty)
    assert tcsplitk.slices(p, 128, 128, 32768, 132, 1) == 128
    assert tcsplitk.slices(p, 128, 128, 32768, 132, 2) == 256
    # a short K: at least MIN_KTILES k-tiles in every automatic slice
    assert tcsplitk.slices(p, 128, 128, 512, 132, 1) == 512 // 32 // tcsplitk.MIN_KTILES
    # enough output tiles: no split
    assert tcsplitk.slices(p, 4096, 4096, 4096, 132, 1) == 1
    # an explicit count is kept, trimmed to the k-tiles there are
    assert tcsplitk.slices({**p, "slices": 7}, 128, 128, 32768, 132, 1) == 7
    assert tcsplitk.slices({**p, "slices": 64}, 64, 64, 100, 132, 1) == 4


class _Kernel:
    def __init__(self, spec):
        self.spec, self.name = spec, spec.name


class _Array:
    def __init__(self, shape, ptr=256):
        self.shape = shape
        self.data = types.SimpleNamespace(ptr=ptr)


def test_the_skinny_plan_is_two_launches_and_no_pre_pass(monkeypatch):
    import cupy

    made = {}
    monkeypatch.setattr(tcsplitk, "get_kernel", _Kernel)
    monkeypatch.setattr(tcsplitk, "check_launch", lambda *a, **k: None)
    monkeypatch.setattr(tcsplitk, "blocks_per_sm", lambda k, t, s: 1)
    monkeypatch.setattr("perflab.device.current", lambda: types.SimpleNamespace(sms=132))
    monkeypatch.setattr(cupy, "empty", lambda shape, dtype=None: made.setdefault("w", shape))
    monkeypatch.setattr(tcsplitk, "PLANS", tcsplitk.Plans())
    ran = []
    monkeypatch.setattr(tcsplitk, "run_steps", lambda steps, arrays: ran.extend(steps))
    A, B, C = _Array((128, 32768)), _Array((32768, 128)), _Array((128, 128))
    tcsplitk.enqueue(A, B, C, tcsplitk.DEFAULTS)
    gemm, red = ran
    assert gemm.kernel.spec.name == "sgemm_tf32_splitk" and gemm.grid == (1, 1, 128)
    assert gemm.kernel.spec.template[-1] is True          # 16-byte aligned path
    assert red.kernel.spec.name == "splitk_sum" and red.kernel.spec.template == (True, 8)
    assert red.grid == (128 * 128 // 4 // 32, 1, 1) and made["w"] == (128, 128, 128)
    ran.clear()
    tcsplitk.enqueue(_Array((4096, 4096)), _Array((4096, 4096)), _Array((4096, 4096)),
                     tcsplitk.DEFAULTS)
    assert len(ran) == 1 and ran[0].arrays == "ABC"       # one slice: straight into C


@pytest.mark.parametrize("bad, message", [
    ({"BK": 8}, "BK=8"), ({"WN": 48}, "multiple of 32"), ({"stages": 9}, "2 to 8 stages"),
    ({"slices": -1}, "slices=-1"), ({"BM": 96}, "does not divide"),
    ({"stages": 8, "BK": 32}, "shared memory"), ({"BK": 32.0}, "must be an integer")])
def test_bad_parameters_are_refused_with_the_reason(bad, message):
    v = get("11-tf32-split-k")
    with pytest.raises(ConfigError, match=message):
        v.check({**v.params(), **bad}, 128, 128, 32768, H200)


def test_its_kernels_compile_for_sm_90_without_spills():
    v = get("11-tf32-split-k")
    rep = compile_report.report(v.kernels(v.params()), archs=("sm_90",))
    assert len(rep) == 4
    assert (rep["spill_store_bytes"] == 0).all() and (rep["spill_load_bytes"] == 0).all()
    gemm = rep[rep["kernel"].str.startswith("sgemm_tf32_splitk")]
    # two blocks of 128 threads fit an SM's registers at the automatic slice choice
    assert (gemm["registers"] * 128 * 2 <= 65536).all()


def test_every_rung_is_compared_with_the_cublas_mode_of_its_arithmetic():
    assert experiments.COMPARED["fp32"] == ("fp32",)
    assert experiments.COMPARED["tf32"] == ("tf32",)
    assert set(experiments.COMPARED["3xtf32"]) == {"fp32", "tf32"}


def test_a_ratio_row_keeps_the_median_round_and_the_spread(monkeypatch):
    """measure() times the kernel and its cuBLAS calls interleaved (one race,
    perflab.race) and writes the median of the per-round ratios with the lowest and
    highest round, and cuBLAS's time in the same rounds."""
    from perflab import correctness, race

    times = {"k": [1.0, 1.1, 0.9], "cuBLAS TF32": [2.0, 2.0, 2.0]}

    class Ctx:
        timing = True

        def time_interleaved(self, calls, budget_s=None, rounds=None):
            assert set(calls) == {"k", "cuBLAS TF32"}
            assert (budget_s, rounds) == (None, None)       # the context's sizing
            return {n: {"median_ms": sorted(r)[1], "p20_ms": min(r), "p80_ms": max(r),
                        "min_ms": min(r), "n_timed": 3, "round_ms": r}
                    for n, r in times.items()}

        def row(self, **kw):
            return kw

    prob = types.SimpleNamespace(C=None, A=None, B=None, ref=None, flops=2e9, M=1, N=1, K=1,
                                 sets=[()], seed=0, params={"M": 1, "N": 1, "K": 1})
    monkeypatch.setattr(experiments, "poison", lambda c: None)
    monkeypatch.setattr(experiments, "checked", lambda fn, what: None)
    monkeypatch.setattr(race, "checked", lambda fn, what: fn())
    monkeypatch.setattr(experiments, "compare", lambda c, r, p: correctness.Check(
        correct=True, rel_err=1e-4, tolerance=5e-3, unwritten=0))
    row = experiments.measure(Ctx(), prob, "k", "tf32", lambda A, B, C: None, params={},
                              baseline={"tf32": ("cuBLAS TF32", lambda A, B, C: None)})
    m = row["metrics"]
    assert m["vs_cublas_tf32"] == (pytest.approx(2.0), "1")
    assert m["vs_cublas_tf32_min"][0] == pytest.approx(2.0 / 1.1)
    assert m["vs_cublas_tf32_max"][0] == pytest.approx(2.0 / 0.9)
    assert m["cublas_tf32_ms"] == (2.0, "ms") and m["rounds"] == (3, "1")
    assert m["TFLOP/s"][0] == pytest.approx(2e9 / 1e-3 / 1e12) and m["flops"] == (2e9, "FLOP")
    assert row["variant"] == "k" and (row["precision"], row["seed"]) == ("tf32", 0)
