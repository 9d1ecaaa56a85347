"""The chapter's races without a GPU: matmul.kernels and matmul.l2 run their own loops on
the synthetic device, only the kernels' calls, checks and timer replaced; the races and
their rows are what the recorded rows hold (recorded with these races, at 6a554a7): the
same variants, parameters, extras and metric names."""
from __future__ import annotations

import numpy as np
import pytest

import perflab.chapters.sgemm as sgemm
from perflab import race
from perflab.chapters.matmul import experiments as ex
from perflab.chapters.matmul.variants import VARIANTS
from perflab.correctness import Check
from tests.synthetic_gpu import synthetic_gpu  # noqa: F401

#: Each kernel's time in ms, the same in each of its 3 rounds but the second (twice as slow).
MS = {"cuBLAS FP32": 1.0, "naive": 10.0, "tiled": 5.0, "cm-plain": 8.0}


class _Problem:
    def __init__(self, M, N, K, *, timing, reference="gpu"):
        self.M, self.N, self.K = M, N, K
        self.A, self.B, self.C = np.zeros((M, K)), np.zeros((K, N)), np.zeros((M, N))
        self.ref, self.seed, self.flops = self.C, 99, 2.0 * M * N * K
        self.sets = [(self.A, self.B, self.C)]

    @property
    def params(self) -> dict:
        return {"M": self.M, "N": self.N, "K": self.K}


class FakeCtx:
    timing, rounds, budget_s = True, 9, 1.5

    def __init__(self):
        self.rows, self.races = [], []

    def time_interleaved(self, calls, budget_s=None, rounds=None):
        self.races.append((list(calls), budget_s, rounds))
        out = {}
        for k in calls:
            t = MS.get(k, 4.0)
            out[k] = {"median_ms": t, "p20_ms": t, "p80_ms": 2 * t, "min_ms": t,
                      "n_timed": 3, "round_ms": [t, 2 * t, t]}
        return out

    def row(self, **kw):
        kw["metrics"] = {k: {"value": v, "unit": u} for k, (v, u) in kw["metrics"].items()}
        self.rows.append(kw)
        return kw


@pytest.fixture
def fake_gpu(synthetic_gpu, monkeypatch):  # noqa: F811
    import cupy

    monkeypatch.setattr(sgemm, "Problem", _Problem)
    monkeypatch.setattr(ex, "warm", lambda specs: None)
    for name in ("poison", "checked"):
        monkeypatch.setattr(ex, name, lambda *a: None)
    monkeypatch.setattr(ex, "compare", lambda c, r, p: Check(True, 1e-6, 1e-4, 0))
    monkeypatch.setattr(race, "checked", lambda fn, what: fn())
    monkeypatch.setattr(cupy, "asfortranarray", np.asfortranarray)
    monkeypatch.setattr(cupy, "get_default_memory_pool",
                        lambda: type("P", (), {"free_all_blocks": lambda self: None})())
    return synthetic_gpu


def test_every_kernel_races_cublas_in_5_rounds_and_keeps_the_recorded_names(fake_gpu):
    ctx = FakeCtx()
    ex.kernels(ctx, sizes=((512, 512, 512),))
    names = ["cuBLAS FP32"] + [v.name for v in VARIANTS]
    assert ctx.races == [(names, 0.6, 5)]
    rec = {r["variant"]: r for r in fake_gpu.recorded_rows("matmul.kernels")
           if r["params"]["M"] == 512}
    assert [r["variant"] for r in ctx.rows] == names and set(rec) == set(names)
    for r in ctx.rows:
        want = rec[r["variant"]]
        assert r["params"] == want["params"]
        assert (r["precision"], r["b_layout"], r["seed"]) == \
            (want["precision"], want["b_layout"], 99)
        assert set(r["metrics"]) == set(want["metrics"]), r["variant"]
        for k, m in r["metrics"].items():
            if k in want["metrics"]:
                assert m["unit"] == want["metrics"][k]["unit"], (r["variant"], k)
    m = next(r for r in ctx.rows if r["variant"] == "tiled")["metrics"]
    assert m["vs_cublas"]["value"] == pytest.approx(0.2)       # cuBLAS's time / tiled's
    assert m["x_naive"]["value"] == pytest.approx(2.0) and m["x_cm_plain"]["value"] == 1.6
    assert m["GFLOP/s"]["value"] == pytest.approx(2 * 512 ** 3 / 5e-3 / 1e9)
    assert m["rounds"] == {"value": 3, "unit": "1"}
    naive = next(r for r in ctx.rows if r["variant"] == "naive")["metrics"]
    assert "x_naive" not in naive and "vs_cublas" in naive


class _Rng:
    def uniform(self, lo, hi, n, dtype):
        return np.random.default_rng(0).uniform(lo, hi, n).astype(dtype)


def test_the_l2_race_reads_its_bytes_and_keeps_the_recorded_names(fake_gpu, monkeypatch):
    import cupy

    monkeypatch.setattr(ex, "get_kernel", lambda spec: None)
    monkeypatch.setattr(ex, "blocks_per_sm", lambda k, t: 4)
    monkeypatch.setattr(cupy, "empty", np.empty)
    monkeypatch.setattr(cupy, "zeros", np.zeros)
    monkeypatch.setattr(cupy.random, "default_rng", lambda: _Rng())
    ctx = FakeCtx()
    ex.l2(ctx, cases=((1 << 20, 64), (64 << 20, 1)))
    assert len(ctx.races) == 1 and ctx.races[0][1:] == (0.4, 5)
    rec = {r["variant"]: r for r in fake_gpu.recorded_rows("matmul.l2")}
    assert [r["variant"] for r in ctx.rows] == ["L2", "DRAM"] == list(rec)
    for r in ctx.rows:
        want = rec[r["variant"]]
        assert set(r["params"]) == set(want["params"])
        assert set(r["metrics"]) == set(want["metrics"])
        assert set(r["launch"]) == set(want["launch"]) == {"grid", "block"}
        read = r["params"]["bytes"] * r["params"]["passes"]
        assert r["metrics"]["bytes_read"]["value"] == read
        assert r["metrics"]["TB/s"]["value"] == pytest.approx(read / 4e-3 / 1e12)
