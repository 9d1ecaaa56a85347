"""An experiment on host code (target "host") through the lab's one code path: measured
live wherever C builds (here, without a GPU), recorded under the CPU's slug with the CPU
in the provenance, replayed, and stale once its C source changes."""
from __future__ import annotations

import numpy as np
import pytest

from perflab import host, lab, registry, store
from perflab.correctness import compare
from perflab.timing import as_metrics
from tests.test_store import tmp_lab  # noqa: F401  (fixture)



@pytest.fixture
def axpy_experiment(tmp_lab, monkeypatch, tmp_path):  # noqa: F811
    (tmp_lab / "kernels" / "demo" / "axpy.c").write_text(
        "#include <stdint.h>\n"
        "void axpy(const float *x, float *y, float a, int64_t n) {\n"
        "    for (int64_t i = 0; i < n; i++) y[i] = a * x[i];\n}\n")
    monkeypatch.setenv("PERFLAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PERFLAB_MODE", raising=False)
    monkeypatch.delenv("CI", raising=False)
    src = host.HostSource("demo/axpy.c", cdef="void axpy(const float *x, float *y, float a, "
                                               "int64_t n);")
    with registry.isolated():
        @registry.experiment("demo.axpy", chapter="00-demo", target="host")
        def axpy(ctx, n=4099):
            lib = host.load(src)
            x = np.random.default_rng().random(n, dtype=np.float32)
            y = np.full(n, np.nan, dtype=np.float32)
            call = lambda: lib.axpy(host.pointer(x), host.pointer(y), 2.0, n)  # noqa: E731
            call()
            check = compare(y, 2.0 * x.astype(np.float64), "fp32")
            ctx.row(variant="axpy", params={"n": n}, check=check,
                    metrics=as_metrics(ctx.time_host(call, budget_s=0.05)),
                    kernels=[src.kernel_entry("axpy")])
        yield src


def test_live_recorded_replayed_then_stale(axpy_experiment, monkeypatch):
    cpu = host.cpu_info()
    live = lab.run("demo.axpy", record=True)
    assert live["correct"].all() and live["median_ms"].iloc[0] > 0
    assert lab.caption(live).startswith(f"measured live on {cpu['model']}")
    path = store.file_for(cpu["slug"], "00-demo", "demo.axpy")
    row = store.load(path)["rows"][0]
    assert row["provenance"]["host"]["flags"] == cpu["flags"]
    assert row["provenance"]["device"]["kind"] == "cpu"
    assert row["kernels"][0]["file"] == "demo/axpy.c"

    monkeypatch.setenv("PERFLAB_MODE", "replay")
    monkeypatch.setenv("PERFLAB_DEVICE", cpu["slug"])
    replayed = lab.run("demo.axpy")
    assert replayed["median_ms"].iloc[0] == live["median_ms"].iloc[0]
    assert not replayed["stale"].any()

    src = axpy_experiment.path
    src.write_text(src.read_text().replace("a * x[i]", "x[i] * a"))
    with pytest.warns(UserWarning, match="kernels/demo/axpy.c"):
        assert lab.run("demo.axpy")["stale"].all()


def test_no_compiler_replays_instead(axpy_experiment, monkeypatch):
    monkeypatch.setenv("CC", "no-such-compiler")
    monkeypatch.setenv("PATH", "/nonexistent")
    exp = registry.get("demo.axpy")
    assert not lab.live_here(exp)
    assert "no C compiler found" in host.unavailable()


def test_a_live_run_counts_its_rows_on_a_bar(axpy_experiment, monkeypatch):
    made = []

    class Bar(lab.RowBar):
        def __init__(self, name):
            super().__init__(name)
            self.disabled_at_start = self.bar.disable     # close() disables every bar
            made.append(self)
    monkeypatch.delenv("PERFLAB_BUILD", raising=False)
    monkeypatch.setattr(lab, "RowBar", Bar)
    lab.run("demo.axpy")
    (bar,) = made
    assert bar.bar.n == 1 and bar.bar.desc == "demo.axpy" and bar.disabled_at_start is False
    monkeypatch.setenv("PERFLAB_BUILD", "1")      # the book shows no bar
    lab.run("demo.axpy")
    assert made[1].disabled_at_start is True
