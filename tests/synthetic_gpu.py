"""A synthetic second GPU, for tests without one: the lab believes it measures live on
"NVIDIA Synthetic sm_89" (an Ada-class device: compute capability 8.9, 99 KB of shared
memory a block may opt in to), so that a page's live path (its reader's GPU beside the
recorded reference GPU) runs on any machine.

    from tests.synthetic_gpu import synthetic_gpu   # noqa: F401  (fixture)

    def test_x(synthetic_gpu):
        synthetic_gpu.measure_from_recorded()          # every experiment: scaled recorded rows
        df = lab.run("memory.latency")                 # "measured live on NVIDIA Synthetic sm_89"

`device.probe` answers with the synthetic device (so `device.mode()` is "live" and
`device.current()` is it, for the lab and for every experiment's own checks). What
measures is up to the test: `measure_from_recorded()` replaces `registry.execute` with rows
derived from the reference GPU's recorded ones (rates halved, times doubled, ratios kept,
the synthetic run's provenance), and a row that `cannot_run(exp, row, device)` refuses
comes back as the experiment would write it (no metrics, `invalid` saying why); or a test
keeps the experiment's own function and replaces only what touches the GPU, with
`scaled(metrics)` for the numbers (tests/chapters/test_sgemm_beside.py). `run_page` runs a
chapter's code cells in this process, live on whichever device the test set.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace

import pytest

from perflab import device, lab, registry, store
from perflab.device import DeviceInfo

#: The device the lab believes it runs on.
SYNTHETIC = DeviceInfo(
    name="NVIDIA Synthetic sm_89", slug="synthetic-sm89", compute_capability="8.9",
    arch="sm_89", sms=76, l2_bytes=64 << 20, smem_per_block=48 << 10,
    smem_per_block_optin=99 << 10, smem_per_sm=100 << 10, regs_per_sm=65536,
    regs_per_block=65536, max_threads_per_block=1024, max_threads_per_sm=1536, warp_size=32,
    sm_clock_max_mhz=2520.0, mem_clock_max_mhz=10501.0, mem_bus_bits=256,
    total_mem_bytes=16 << 30, driver_version="13.0", runtime_version="13.2",
    cupy_version="14.2.0", nvrtc_version="13.5")
#: The recordings the synthetic rows are derived from, and the GPU they are shown beside.
REFERENCE = "nvidia-h200"

_RATE = ("/s",)
_TIME = ("s", "ms", "us", "µs", "ns", "cycles")


def scaled(metrics: dict, scale: float = 0.5) -> dict:
    """Recorded metrics ({name: {"value", "unit"}}) as `ctx.row` takes them ({name: (value,
    unit)}), as a GPU `scale` times as fast would measure them: rates times `scale`, times
    and cycles divided by it, everything else (ratios, counts, bytes) as recorded."""
    out = {}
    for k, m in metrics.items():
        v, unit = m["value"], m["unit"]
        if v is not None:
            if unit.endswith(_RATE):
                v = v * scale
            elif unit in _TIME:
                v = v / scale
        out[k] = (v, unit)
    return out


@dataclass
class SyntheticGPU:
    monkeypatch: pytest.MonkeyPatch
    info: DeviceInfo = SYNTHETIC
    scale: float = 0.5
    calls: list = field(default_factory=list)

    def use(self, **changes) -> DeviceInfo:
        """Another synthetic device (`changes` to its fields), answering from now on."""
        self.info = replace(self.info, **changes)
        self.monkeypatch.setattr(device, "probe", lambda: (self.info, ""))
        return self.info

    def scaled(self, metrics: dict) -> dict:
        return scaled(metrics, self.scale)

    def recorded_rows(self, name: str) -> list[dict]:
        path = store.find(name, REFERENCE)
        assert path is not None, f"no recording of {name} under results/{REFERENCE}/"
        return store.load(path)["rows"]

    def rows(self, exp: registry.Experiment, run: dict, cannot_run=None) -> list[dict]:
        """The rows `exp` gives on this device: the reference GPU's recorded rows with this
        run's provenance and scaled metrics; those `cannot_run` refuses as an experiment
        writes them, with the reason in `invalid`."""
        out = []
        for r in self.recorded_rows(exp.name):
            row = copy.deepcopy(r)
            row["provenance"] = run
            why = cannot_run(exp, r, self.info.as_dict()) if cannot_run else None
            if why:
                row.update(metrics={}, correct=None, rel_err=None, tolerance=None, kernels=[],
                           launch={}, invalid=why)
            else:
                row["metrics"] = {k: {"value": v, "unit": u}
                                  for k, (v, u) in self.scaled(r["metrics"]).items()}
            out.append(row)
        return out

    def measure_from_recorded(self, cannot_run=None) -> None:
        """Every live experiment from now on gives `rows(exp, run, cannot_run)`."""
        def execute(exp, params, run, *, timing=True, progress=None):
            self.calls.append(exp.name)
            return self.rows(exp, run, cannot_run)
        self.monkeypatch.setattr(registry, "execute", execute)


@pytest.fixture
def synthetic_gpu(monkeypatch) -> SyntheticGPU:
    """The lab live on NVIDIA Synthetic sm_89 (see the module's docstring), the reference
    GPU's recordings beside it, nothing written to results/."""
    for var in ("PERFLAB_MODE", "PERFLAB_DEVICE", "PERFLAB_RECORD"):
        monkeypatch.delenv(var, raising=False)
    gpu = SyntheticGPU(monkeypatch)
    gpu.use()
    monkeypatch.setattr(device, "clocks_now", lambda: {"sm_clock_mhz": 2520,
                                                        "sm_clock_max_mhz": 2520})
    assert device.mode() == "live" and lab.replay_device() == REFERENCE
    return gpu


# ---- reading a figure ---------------------------------------------------------------------

@pytest.fixture
def agg_figures():
    """Figures drawn off screen (Matplotlib's Agg), all closed after the test."""
    import matplotlib
    matplotlib.use("Agg")
    yield
    import matplotlib.pyplot as plt
    plt.close("all")


def texts(fig) -> list[str]:
    """Every visible text of a figure (titles, labels, ticks, legend entries, notes, stamp)."""
    import matplotlib.text
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text)
            if t.get_visible() and t.get_text().strip()]


def stamp_lines(fig) -> list[str]:
    """The provenance lines under a figure (plots.stamp), one per source."""
    stamp = [t for t in texts(fig) if t.startswith(("measured live on", "recorded on"))]
    assert len(stamp) == 1, f"one stamp expected under the figure, found {stamp}"
    return stamp[0].split("\n")


def legend_labels(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes if ax.get_legend() is not None
            for t in ax.get_legend().get_texts()]


def overlapping_texts(fig) -> list[tuple[str, str]]:
    """Pairs of texts of a figure whose boxes overlap (none, in a readable figure). Tick
    labels an axis does not draw (their tick lies outside its view) are left out."""
    import matplotlib.axis
    import matplotlib.text
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    hidden = set()
    for axis in fig.findobj(matplotlib.axis.Axis):
        lo, hi = sorted(axis.get_view_interval())
        slack = (hi - lo) * 1e-9
        hidden |= {id(lab) for t in axis.get_major_ticks() + axis.get_minor_ticks()
                   if not lo - slack <= t.get_loc() <= hi + slack for lab in (t.label1, t.label2)}
    boxes = [(t.get_text(), t.get_window_extent(r)) for t in fig.findobj(matplotlib.text.Text)
             if t.get_visible() and t.get_text().strip() and id(t) not in hidden]
    return [(a, b) for i, (a, ba) in enumerate(boxes) for b, bb in boxes[i + 1:]
            if ba.overlaps(bb)]


# ---- a page, live -------------------------------------------------------------------------

def run_page(page: str) -> dict:
    """Every code cell of chapters/`page` (a MyST notebook) run in this process, in order,
    from chapters/ as the book build runs them, with whatever device the test made the lab
    see; figures drawn with Agg and closed after each cell. Returns the cells' namespace.
    A cell that raises fails the test, naming the cell."""
    import os

    import jupytext
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from perflab import paths

    nb = jupytext.read(paths.ROOT / "chapters" / page)
    ns: dict = {}
    here = os.getcwd()
    os.chdir(paths.ROOT / "chapters")
    try:
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            try:
                exec(compile(cell.source, f"{page} cell {i}", "exec"), ns)
            except Exception as exc:
                raise AssertionError(f"{page}, cell {i} failed live on "
                                     f"{device.current().name}: {exc!r}\n{cell.source}") from exc
            finally:
                plt.close("all")
    finally:
        os.chdir(here)
    return ns
