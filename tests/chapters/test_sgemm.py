"""Chapter 1 (perflab.chapters.sgemm) without a GPU.

The launch plans of rungs 06 and 07 (tile shape, untested/tested kernel form, last-wave
or full split), rebuilt and compared with the launches the recorded H200 run captured:
the same kernels and grids, so the decisions the chapter explains are the ones the code
makes. Rung 08's pre-passes (A rounded, B rounded and transposed) are checked against the
recorded launches the same way. Then bad input to a rung, and the tile explorer."""
from __future__ import annotations

import dataclasses
import json
import re
import types

import numpy as np
import pytest

from perflab import kernels, paths
from perflab.chapters.sgemm import get, splitk, variants, warptile
from perflab.errors import ConfigError

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

    for mod in (warptile, splitk):
        monkeypatch.setattr(mod, "get_kernel", lambda spec: _FakeKernel(spec, launched))
        monkeypatch.setattr(mod, "check_launch", lambda *a, **k: None)
        monkeypatch.setattr(mod, "PLANS", kernels.Plans())
    monkeypatch.setattr(splitk, "blocks_per_sm", blocks)
    monkeypatch.setattr("perflab.device.current", lambda: types.SimpleNamespace(sms=sms))
    monkeypatch.setattr(splitk, "workspace", lambda dev, n: None)
    monkeypatch.setattr("cupy.cuda.runtime.getDevice", lambda: 0)
    monkeypatch.setattr(warptile, "gpu_slots", lambda key, aligned: sms * (
        1 if dict(key)["TM"] * dict(key)["TN"] > 64 else 2))

    M, N, K = (row["params"][k] for k in ("M", "N", "K"))
    v = get(row["variant"])
    v.enqueue(_FakeArray((M, K)), _FakeArray((K, N)), _FakeArray((M, N)), v.params())

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
    assert ("round_tf32_transpose", ()) in specs and ("round_tf32", ()) in specs
    assert "PRE_ROUND" not in v.params() and "PRE_ROUND" in get("09-3xtf32").params()
    assert row["params"]["stages"] == v.params()["stages"]        # one spelling, 06 to 09


def test_tf32_refuses_a_k_the_transpose_grid_cannot_cover():
    v = get("08-tf32-mma")
    v.check(v.params(), 128, 128, 32 * 65535)
    with pytest.raises(ConfigError, match="K <= 2097120"):
        v.check(v.params(), 128, 128, 32 * 65535 + 1)


# ------------------------------------------------------------------ bad input, one place

class _Operand(_FakeArray):
    def __init__(self, shape, dtype=np.float32, contiguous=True, ptr=256):
        super().__init__(shape)
        self.dtype, self.ndim = np.dtype(dtype), len(shape)
        self.flags = types.SimpleNamespace(c_contiguous=contiguous)
        self.data = types.SimpleNamespace(ptr=ptr)
        self.nbytes = int(np.prod(shape)) * self.dtype.itemsize


def _abc(M=64, N=48, K=32, **bad):
    arrays = {"A": _Operand((M, K), ptr=1 << 20), "B": _Operand((K, N), ptr=2 << 20),
              "C": _Operand((M, N), ptr=3 << 20)}
    for name, arr in bad.items():
        arrays[name] = arr
    return arrays["A"], arrays["B"], arrays["C"]


def _never(*args):
    raise AssertionError("a refused call must enqueue nothing")


@pytest.mark.parametrize("v", variants(), ids=lambda v: v.name)
def test_float64_operands_are_refused_by_every_rung(v):
    A, B, C = _abc(A=_Operand((64, 32), np.float64, ptr=1 << 20))
    with pytest.raises(ConfigError, match=f"{v.name}: A is float64, not float32"):
        dataclasses.replace(v, enqueue=_never).run(A, B, C, v.params())


@pytest.mark.parametrize("bad, message", [
    ({"B": _Operand((32, 48), contiguous=False, ptr=2 << 20)}, "B must be C-contiguous"),
    ({"B": _Operand((33, 48), ptr=2 << 20)}, "inner dimensions differ"),
    ({"C": _Operand((64, 47), ptr=3 << 20)}, "C is 64x47, A @ B is 64x48"),
    ({"C": _Operand((64, 48), ptr=(1 << 20) + 64)}, "C overlaps A"),
    ({"A": _Operand((64,), ptr=1 << 20)}, "A must be a 2-D matrix"),
])
def test_bad_operands_get_the_reason(bad, message):
    v = dataclasses.replace(get("06-warptiling"), enqueue=_never)
    with pytest.raises(ConfigError, match=re.escape(message)):
        v.run(*_abc(**bad), v.params())


def test_a_tile_that_auto_shape_would_replace_is_refused():
    v = get("06-warptiling")
    with pytest.raises(ConfigError, match=r"auto_shape=True .* BM=96, BK=7 would be ignored"):
        v.params(BM=96, BK=7)
    p = {**v.params(), "BM": 96, "BK": 7}          # built by hand: refused by run too
    with pytest.raises(ConfigError, match="would be ignored"):
        dataclasses.replace(v, enqueue=_never).run(*_abc(), p)


def test_a_tile_given_without_auto_shape_is_checked_not_replaced():
    v = get("06-warptiling")
    p = v.params(BM=96, BK=7, auto_shape=False)
    with pytest.raises(ConfigError, match=r"BM not divisible by WM \(96 % 64 != 0\)"):
        v.check(p, 4096, 4096, 4096)
    ok = v.params(BM=128, BN=128, WN=32, TN=8, stages=2, auto_shape=False)
    v.check(ok, 4096, 4096, 4096)
    assert v.kernels(ok)[0].template[:8] == (128, 128, 32, 64, 32, 8, 8, 2)


def test_missing_parameters_are_named():
    v = get("08-tf32-mma")
    with pytest.raises(ConfigError, match=r"parameter\(s\) \['slices'\] missing"):
        v.check({k: x for k, x in v.params().items() if k != "slices"}, 128, 128, 128)


# --------------------------------------------------------------------- the tile explorer

@pytest.fixture
def sweep(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "replay")
    from perflab import lab
    return lab.replay("sgemm.sweep")


def test_explorer_shows_the_recorded_row(sweep):
    from perflab.chapters.sgemm.explorer import tile_explorer

    ex = tile_explorer("06-warptiling", sweep)
    rec = sweep[(sweep["variant"] == "06-warptiling") & (sweep["auto_shape"] == False)  # noqa: E712
                & sweep["TFLOP/s"].notna()]
    row = rec.iloc[len(rec) // 2]
    chosen = {k: row[k] for k in ex.params}
    got = ex.lookup(chosen)
    assert got["status"] == "recorded"
    assert got["values"]["TFLOP/s"] == pytest.approx(row["TFLOP/s"], rel=1e-12)
    assert got["values"]["vs_cublas_fp32"] == pytest.approx(row["vs_cublas_fp32"], rel=1e-12)
    assert "recorded on NVIDIA H200" in got["source"]
    html = ex.readout_html(chosen)
    assert 'data-status="recorded"' in html and f'{row["TFLOP/s"]:.1f} TFLOP/s' in html


def test_explorer_gives_the_reason_the_python_check_gives(sweep):
    from perflab.chapters.sgemm.explorer import tile_explorer

    v = get("06-warptiling")
    ex = tile_explorer("06-warptiling", sweep)
    chosen = {**{k: v.default_params[k] for k in ex.params}, "WN": 32, "TN": 16}
    got = ex.lookup(chosen)
    assert got["status"] == "invalid"
    with pytest.raises(ConfigError) as exc:
        v.check({**v.params(auto_shape=False), **chosen}, 4096, 4096, 4096)
    assert got["reason"] == str(exc.value)
    data = ex.payload()
    assert data["experiment"] == "sgemm.sweep" and data["chapter"] == "01-sgemm"
    assert any(i["params"] == chosen and i["reason"] == str(exc.value) for i in data["invalid"])
    assert len(data["rows"]) + len(data["invalid"]) >= 1 and data["vega"]["params"]


def test_explorer_page_block_is_self_contained(sweep):
    from perflab.chapters.sgemm.explorer import tile_explorer

    block = tile_explorer("08-tf32-mma", sweep).html()
    assert block.startswith('<div class="perflab-explorer" data-explorer="sgemm-08-tf32-mma">')
    assert "https://" not in block.replace('"$schema": "https://vega.github.io', "")
    payload = block.split('class="perflab-explorer-data">', 1)[1].split("</script>", 1)[0]
    data = json.loads(payload)
    assert [p["name"] for p in data["params"]] == ["BM", "BN", "BK", "stages"]
    assert data["match"] == {"variant": "08-tf32-mma", "M": 4096, "N": 4096, "K": 4096,
                             "WM": 64, "WN": 64}


@pytest.mark.gpu
def test_explorer_measures_the_chosen_configuration_live(monkeypatch):
    """Live, the explorer's button path compiles, checks and times the configuration the
    reader picked, and the readout then shows that live row."""
    from perflab import lab
    from perflab.chapters.sgemm.explorer import tile_explorer

    monkeypatch.setenv("PERFLAB_MODE", "replay")
    ex = tile_explorer("06-warptiling", lab.replay("sgemm.sweep"), size=(515, 384, 257))
    monkeypatch.setenv("PERFLAB_MODE", "live")
    chosen = {**{k: ex.defaults[k] for k in ex.params}, "BM": 128, "BN": 128, "WN": 32,
              "TN": 8, "stages": 2}
    rows = ex.measure(chosen)
    assert rows["correct"].all() and rows["TFLOP/s"].iloc[0] > 0
    ex.add(rows)
    shown = ex.lookup(chosen)
    assert shown["status"] == "recorded" and shown["source"].startswith("measured live on ")
    assert shown["values"]["TFLOP/s"] == pytest.approx(rows["TFLOP/s"].iloc[0])


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_a_rung_given_the_wrong_dtype_refuses_and_writes_nothing(dtype):
    import cupy as cp

    A = cp.ones((64, 32), dtype=dtype)
    B = cp.ones((32, 48), dtype=cp.float32)
    C = cp.full((64, 48), 7.0, dtype=cp.float32)
    for v in variants():
        with pytest.raises(ConfigError, match=f"A is {dtype}, not float32"):
            v.run(A, B, C, v.params())
    assert bool((C == 7.0).all())


def test_explorer_reads_a_failed_check_as_failed(sweep):
    from perflab.chapters.sgemm.explorer import tile_explorer

    bad = sweep.copy()
    i = bad.index[(bad["variant"] == "06-warptiling") & (bad["auto_shape"] == False)][3]  # noqa: E712
    bad.loc[i, "correct"] = False
    ex = tile_explorer("06-warptiling", bad)
    chosen = {k: bad.loc[i, k] for k in ex.params}
    assert ex.lookup(chosen)["status"] == "failed"
    assert 'data-status="failed"' in ex.readout_html(chosen)


def test_jupyter_explorer_answers_a_change_of_its_controls(sweep):
    """In Jupyter the same explorer is a JupyterChart: moving one of its controls updates
    the readout from the recorded rows (no GPU here, so no measure button)."""
    from perflab.chapters.sgemm.explorer import tile_explorer

    ex = tile_explorer("06-warptiling", sweep)
    box = ex.widget()
    chart, readout = box.children[0], box.children[-1]
    assert type(chart).__name__ == "JupyterChart" and len(box.children) == 2
    chart.params.BN = 128
    chart.params.TN = 8
    chart.params.WN = 32
    chosen = {**ex.defaults, "BN": 128, "TN": 8, "WN": 32}
    assert readout.value == ex.readout_html(chosen)
    assert "BN=128 " in readout.value and ex.lookup(chosen)["status"] == "recorded"


# ------------------------------------------------------------- the tiling diagram

def test_tiling_diagram_follows_rung_06s_defaults():
    """The diagram's sizes are rung 06's default parameters, and the lanes' microtiles,
    placed by the kernel's own indexing, cover a warp tile exactly once."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from perflab.chapters.sgemm import diagrams

    d = get("06-warptiling").params()
    p = diagrams.tiling_params()
    assert all(p[k] == int(d[k]) for k in diagrams.KEYS)
    assert p["warps"] * 32 == warptile.threads(d) == p["threads"]
    covered = set()
    for lane in range(32):
        pieces = diagrams.lane_pieces(p, lane)
        assert len(pieces) * 16 == p["TM"] * p["TN"]
        for r, c in pieces:
            covered |= {(r + i, c + j) for i in range(4) for j in range(4)}
    assert covered == {(r, c) for r in range(p["WM"]) for c in range(p["WN"])}
    warps = {diagrams.warp_origin(p, w) for w in range(p["warps"])}
    assert warps == {(r, c) for r in range(0, p["BM"], p["WM"]) for c in range(0, p["BN"], p["WN"])}

    fig = diagrams.tiling_levels()
    try:
        texts = [t.get_text() for ax in fig.axes for t in ax.texts]
        assert f"block tile\n{p['BM']}×{p['BN']}" in texts
        assert sum(t.startswith("warp ") for t in texts) == p["warps"]
        assert any(f"{p['TM']}×{p['TN']} microtile" in t for t in texts)
        sizes = [t.get_fontsize() for ax in fig.axes for t in ax.texts + [ax.title]]
        assert min(sizes) >= 9
        assert fig.get_figwidth() <= 7.5
    finally:
        plt.close(fig)


def test_sweep_heatmap_rows_in_numeric_order_and_text_readable():
    """Rows sort as numbers (64 before 128), and a cell's number is black on a light
    cell and white on a dark one."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from perflab.chapters.sgemm import report

    rows = [(bm, bn, st, float(bm + bn + st)) for bm in (256, 64, 128) for bn in (128, 64)
            for st in (2, 3)]
    df = pd.DataFrame(rows, columns=["BM", "BN", "stages", "TFLOP/s"]).assign(variant="v")
    fig, ax = plt.subplots()
    try:
        t = report.sweep_heatmap(fig, ax, df, "v", ["BM", "BN"], ["stages"])
        assert list(t.index) == ["64×64", "64×128", "128×64", "128×128", "256×64", "256×128"]
        texts = {tx.get_text(): tx.get_color() for tx in ax.texts}
        assert texts["130"] == "white" and texts["387"] == "black"       # darkest, lightest
        assert min(tx.get_fontsize() for tx in ax.texts) >= 9
    finally:
        plt.close(fig)
