"""The ladder's races without a GPU: the experiment's own loops (ladder, baselines,
run_variant, measure) on a synthetic Hopper device, only the kernels' calls, checks and
timer replaced; each rung's race and its rows are what the recorded rows hold: the same
variants, parameters, extras and metric names (the core adds n_timed and GFLOP/s)."""
from __future__ import annotations

import numpy as np
import pytest

from perflab import race
from perflab.chapters.sgemm import experiments as ex
from perflab.correctness import Check
from tests.synthetic_gpu import synthetic_gpu  # noqa: F401

H100 = dict(name="NVIDIA Synthetic H100", slug="synthetic-h100", compute_capability="9.0",
            arch="sm_90", smem_per_block_optin=232448)

class _Problem:
    def __init__(self, M, N, K, *, timing, reference="gpu"):
        self.M, self.N, self.K = M, N, K
        self.A, self.B, self.C = np.zeros((M, K)), np.zeros((K, N)), np.zeros((M, N))
        self.ref, self.seed, self.flops = self.C, 1234, 2.0 * M * N * K
        self.sets = [(self.A, self.B, self.C)] * 2

    @property
    def params(self) -> dict:
        return {"M": self.M, "N": self.N, "K": self.K}


class FakeCtx:
    """A Context whose interleaved timing answers each name by a fixed time per round."""
    timing = True

    def __init__(self):
        self.rows, self.races, self.rounds, self.budget_s = [], [], 9, 1.5

    def time_interleaved(self, calls, budget_s=None, rounds=None):
        self.races.append((list(calls), budget_s, rounds))
        out = {}
        for i, k in enumerate(calls):
            r = [1.0 + i, 1.5 + i, 0.5 + i]
            out[k] = {"median_ms": 1.0 + i, "p20_ms": 0.5 + i, "p80_ms": 1.5 + i,
                      "min_ms": 0.5 + i, "n_timed": 27, "round_ms": r}
        return out

    def row(self, **kw):
        kw["metrics"] = {k: {"value": v, "unit": u} for k, (v, u) in kw["metrics"].items()}
        self.rows.append(kw)
        return {**kw, "correct": kw["check"].correct if kw.get("check") else None}


@pytest.fixture
def ladder_rows(synthetic_gpu, monkeypatch):  # noqa: F811
    import cupy

    synthetic_gpu.use(**H100)
    monkeypatch.setattr(ex, "Problem", _Problem)
    monkeypatch.setattr(ex, "warm", lambda specs: None)   # nothing to compile ahead
    monkeypatch.setattr(ex, "poison", lambda c: None)
    monkeypatch.setattr(ex, "checked", lambda fn, what: None)
    monkeypatch.setattr(ex, "compare", lambda c, r, p: Check(True, 1e-6, 1e-4, 0))
    monkeypatch.setattr(race, "checked", lambda fn, what: fn())
    monkeypatch.setattr(cupy, "get_default_memory_pool",
                        lambda: type("P", (), {"free_all_blocks": lambda self: None})())
    ctx = FakeCtx()
    ex.ladder(ctx, sizes=((3072, 3072, 3072),))
    return ctx, synthetic_gpu.recorded_rows("sgemm.ladder")


def test_every_rung_races_its_cublas_modes_in_the_context_s_rounds(ladder_rows):
    ctx, _ = ladder_rows
    # the context's budget and rounds (None: the ladder's, set on the context)
    assert ctx.races[0] == (["cuBLAS FP32", "cuBLAS TF32"], None, None)
    assert ctx.races[1] == (["cuBLAS TF32", "cuBLAS FP32"], None, None)
    by = {names[0]: names[1:] for names, _, _ in ctx.races}
    assert by["01-naive"] == ["cuBLAS FP32"] and by["08-tf32-mma"] == ["cuBLAS TF32"]
    assert by["09-3xtf32"] == ["cuBLAS FP32", "cuBLAS TF32"]
    assert len(ctx.rows) == len(ctx.races) == 2 + len(ex.variants())   # one row a race


def test_the_rows_are_the_recorded_rows_names(ladder_rows):
    ctx, recorded = ladder_rows
    rec = {r["variant"]: r for r in recorded if r["params"]["M"] == 3072}
    assert {r["variant"] for r in ctx.rows} == set(rec)
    for r in ctx.rows:
        want = rec[r["variant"]]
        assert r["params"] == want["params"]
        assert (r["precision"], r["seed"]) == (want["precision"], 1234)
        # the recorded rows are the race's own (recorded since it moved to perflab.race)
        assert set(r["metrics"]) == set(want["metrics"]), r["variant"]
        for k, m in r["metrics"].items():
            assert m["unit"] == want["metrics"][k]["unit"], (r["variant"], k)
    m = next(r for r in ctx.rows if r["variant"] == "09-3xtf32")["metrics"]
    # rounds 1, 1.5, 0.5 ms against cuBLAS FP32 2, 2.5, 1.5 and TF32 3, 3.5, 2.5
    assert m["vs_cublas_fp32"]["value"] == pytest.approx(2.0)
    assert m["vs_cublas_fp32_min"]["value"] == pytest.approx(2.5 / 1.5)
    assert m["vs_cublas_tf32_max"]["value"] == pytest.approx(5.0)
    assert m["cublas_fp32_ms"]["value"] == 2.0 and m["cublas_tf32_ms"]["value"] == 3.0
    assert m["TFLOP/s"]["value"] == pytest.approx(2 * 3072 ** 3 / 1e-3 / 1e12)


def test_a_rung_without_a_cublas_baseline_is_timed_alone(monkeypatch):
    """Where neither cuBLAS mode passed its check, the rung is timed on its own
    (Context.time, the context's budget), with its times and TFLOP/s and no ratio."""
    monkeypatch.setattr(ex, "poison", lambda c: None)
    monkeypatch.setattr(ex, "checked", lambda fn, what: None)
    monkeypatch.setattr(ex, "compare", lambda c, r, p: Check(True, 1e-6, 1e-4, 0))
    monkeypatch.setattr(race, "checked", lambda fn, what: fn())

    class Ctx(FakeCtx):
        def time(self, fn, sets, variant, *, budget_s=None):
            self.races.append((variant, budget_s))
            return {"median_ms": 2.0, "p20_ms": 2.0, "p80_ms": 2.0, "min_ms": 2.0,
                    "n_timed": 50}

    ctx = Ctx()
    row = ex.measure(ctx, _Problem(64, 64, 64, timing=True), "06-warptiling", "fp32",
                     lambda A, B, C: None, params={"BM": 64}, baseline={})
    assert ctx.races == [("06-warptiling", None)]
    m = row["metrics"]
    assert m["median_ms"]["value"] == 2.0 and "rounds" not in m and "vs_cublas_fp32" not in m
    assert m["TFLOP/s"]["value"] == pytest.approx(2 * 64 ** 3 / 2e-3 / 1e12)
    assert row["params"] == {"M": 64, "N": 64, "K": 64, "BM": 64}
