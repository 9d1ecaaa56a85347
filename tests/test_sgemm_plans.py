"""The launch plans of rungs 06 and 07 (tile shape, untested/tested kernel form, last-wave
or full split), rebuilt without a GPU and compared with the launches the recorded H200
run captured: the same kernels and grids, so the decisions the chapter explains are the
ones the code makes. Rung 08's pre-passes (A rounded, B rounded and transposed) are
checked against the recorded launches the same way."""
from __future__ import annotations

import json
import re
import types

import pytest

from perflab import kernels, paths
from perflab.sgemm import fp32, get

LADDER = paths.ROOT / "results" / "nvidia-h200" / "01-sgemm" / "sgemm.ladder.json"


class _FakeKernel:
    def __init__(self, spec, launched):
        self.spec, self.name, self._launched = spec, spec.name, launched

    def __call__(self, grid, block, args, shared_mem=0):
        self._launched.append((self.spec, list(grid)))


class _FakeArray:
    def __init__(self, shape):
        self.shape = shape
        self.flags = types.SimpleNamespace(c_contiguous=True)
        self.data = types.SimpleNamespace(ptr=256)      # CuPy allocations: 256-byte aligned


def _rows():
    doc = json.loads(LADDER.read_text())
    return [r for r in doc["rows"]
            if r["variant"] in ("06-warptiling", "07-split-k") and r.get("launch")]


@pytest.mark.parametrize("row", _rows(), ids=lambda r: f"{r['variant']}-"
                         f"{r['params']['M']}x{r['params']['N']}x{r['params']['K']}")
def test_plan_matches_the_recorded_launches(row, monkeypatch):
    recorded = row["launch"]
    per_sm = {l["kernel"]: l["blocks_per_sm"] for l in recorded}
    sms = row["provenance"]["device"]["sms"]
    launched: list = []

    def blocks(kernel, threads, smem):
        # the driver's answer in the recorded run, found by the kernel's mangled name
        return next(n for name, n in per_sm.items() if kernel.spec.name in name)

    monkeypatch.setattr(fp32, "get_kernel", lambda spec: _FakeKernel(spec, launched))
    monkeypatch.setattr(kernels, "check_launch", lambda *a, **k: None)
    monkeypatch.setattr(kernels, "blocks_per_sm", blocks)
    monkeypatch.setattr("perflab.device.current", lambda: types.SimpleNamespace(sms=sms))
    monkeypatch.setattr(fp32, "_sk_workspace", lambda dev, n: None)
    monkeypatch.setattr("cupy.cuda.runtime.getDevice", lambda: 0)
    monkeypatch.setattr(fp32, "_WT_PLANS", {})
    monkeypatch.setattr(fp32, "_SK_PLANS", {})
    monkeypatch.setattr(fp32, "_slots", lambda key, aligned: sms * (
        1 if dict(key)["TM"] * dict(key)["TN"] > 64 else 2))

    M, N, K = (row["params"][k] for k in ("M", "N", "K"))
    v = get(row["variant"])
    v.run(_FakeArray((M, K)), _FakeArray((K, N)), _FakeArray((M, N)), v.params())

    assert [g for _, g in launched] == [l["grid"] for l in recorded]
    for (spec, _), rec in zip(launched, recorded):
        # mangled names carry the template arguments: <128, 256, 32, ..., true, false>
        args = [int(a) for a in re.findall(r"Li(\d+)E", rec["kernel"])]
        flags = [b == "1" for b in re.findall(r"Lb([01])E", rec["kernel"])]
        assert spec.name in rec["kernel"]
        assert list(spec.template) == args + flags


def _tf32_rows():
    doc = json.loads(LADDER.read_text())
    return [r for r in doc["rows"] if r["variant"] == "08-tf32-mma" and r.get("launch")]


@pytest.mark.parametrize("row", _tf32_rows(), ids=lambda r: f"{r['params']['M']}x"
                         f"{r['params']['N']}x{r['params']['K']}")
def test_tf32_launches_round_a_and_transpose_b_first(row):
    """Rung 08 reads A rounded and B rounded and transposed (N x K): the recorded run
    launched the two pre-passes before the GEMM, the transpose over 32 x 32 tiles of B."""
    M, N, K = (row["params"][k] for k in ("M", "N", "K"))
    names = [l["kernel"] for l in row["launch"]]
    assert "round_tf32" in names[0] and names[1] == "round_tf32_transpose"
    assert "sgemm_tf32_mma" in names[2]
    assert row["launch"][1]["grid"] == [-(-N // 32), -(-K // 32), 1]
    v = get("08-tf32-mma")
    specs = {(s.name, s.template) for s in v.kernels(v.params())}
    assert ("round_tf32_transpose", ()) in specs and ("round_tf32", (False,)) in specs
    assert "PRE_ROUND" not in v.params() and "PRE_ROUND" in get("09-3xtf32").params()


def test_tf32_refuses_a_k_the_transpose_grid_cannot_cover():
    from perflab.errors import ConfigError

    v = get("08-tf32-mma")
    v.check(v.params(), 128, 128, 32 * 65535)
    with pytest.raises(ConfigError, match="K <= 2097120"):
        v.check(v.params(), 128, 128, 32 * 65535 + 1)
