"""The reader's GPU beside the reference GPU (perflab.sidebyside), without a GPU: replayed,
a page has one frame and the book's figures; live on a synthetic sm_89 device
(tests/synthetic_gpu.py), the reference GPU's recording comes beside it, and a row this GPU
could not run is the recorded row with the reason."""
from __future__ import annotations

import pytest

import perflab
from perflab import errors, lab, sidebyside
from tests.synthetic_gpu import REFERENCE, SYNTHETIC, synthetic_gpu  # noqa: F401  (fixture)


def test_replayed_a_frame_stands_alone(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "replay")
    lat = perflab.run("memory.latency")
    assert perflab.reference(lat) is None
    assert perflab.beside(lat) == [lat]
    assert perflab.fill_not_run(lat) is lat
    assert "replayed" in sidebyside.why_alone(lat)
    assert lab.captions(*perflab.beside(lat)) == lab.caption(lat)
    assert lat.attrs["params"] == ["bytes", "slot_bytes", "op", "repeat"]


def test_live_on_another_gpu_the_recording_comes_beside(synthetic_gpu):
    synthetic_gpu.measure_from_recorded()
    lat = perflab.run("memory.latency")
    assert synthetic_gpu.calls == ["memory.latency"]
    assert lab.caption(lat).startswith("measured live on NVIDIA Synthetic sm_89 · ")
    live, ref = perflab.beside(lat)
    assert live is lat and sidebyside.why_alone(lat) is None
    assert ref.attrs["source"]["kind"] == "recorded" and ref.attrs["source"]["slug"] == REFERENCE
    assert len(ref) == len(lab.replay("memory.latency", device_slug=REFERENCE))
    lines = lab.captions(live, ref).split("\n")
    assert lines[0].startswith("measured live on NVIDIA Synthetic sm_89")
    assert lines[1].startswith("recorded on NVIDIA H200") and len(lines) == 2
    assert sidebyside.label(live) == "NVIDIA Synthetic sm_89, measured live"
    assert sidebyside.label(ref) == "NVIDIA H200, recorded"
    assert sidebyside.short_name(ref) == "H200"
    # read once: a figure and a table of one page ask for the same recording
    again = perflab.reference(lat)
    assert again is not ref and again.equals(ref)


def test_live_on_the_reference_gpu_itself_stands_alone(synthetic_gpu):
    synthetic_gpu.use(name="NVIDIA H200", slug=REFERENCE, compute_capability="9.0",
                      arch="sm_90")
    synthetic_gpu.measure_from_recorded()
    lat = perflab.run("memory.latency")
    assert perflab.beside(lat) == [lat]
    assert "reference GPU (nvidia-h200)" in sidebyside.why_alone(lat)


def test_no_recording_of_the_experiment_on_the_reference(synthetic_gpu, monkeypatch):
    synthetic_gpu.measure_from_recorded()
    lat = perflab.run("memory.latency")
    monkeypatch.setenv("PERFLAB_DEVICE", "intel-xeon")      # it holds no memory chapter
    assert perflab.beside(lat) == [lat]
    assert "no recording of memory.latency on intel-xeon" in sidebyside.why_alone(lat)


def _refuse_shared(exp, row, dev):
    """A generic 'cannot run here': the shared-memory chase, refused on compute 8.x."""
    if row["variant"] == "shared" and dev["compute_capability"].startswith("8."):
        return f"the shared chase needs compute capability 9.x; {dev['name']} has 8.9"
    return None


def test_a_row_that_cannot_run_here_is_the_recorded_row_and_the_reason(synthetic_gpu):
    synthetic_gpu.measure_from_recorded(cannot_run=_refuse_shared)
    lat = perflab.run("memory.latency")
    refused = lat[lat["invalid"].notna()]
    assert set(refused["variant"]) == {"shared"} and refused["cycles"].isna().all()
    shown = perflab.fill_not_run(lat)
    assert len(shown) == len(lat)                       # one recorded row for each refused one
    borrowed = sidebyside.not_run(shown)
    recorded = lab.replay("memory.latency", device_slug=REFERENCE)
    rec = recorded[recorded["variant"] == "shared"]
    assert list(borrowed["cycles"]) == list(rec["cycles"])      # the recorded numbers, as such
    assert set(borrowed["measured_on"]) == {REFERENCE}
    assert borrowed["not_run_reason"].str.contains("has 8.9").all()
    # no short form given: the reason's first clause, short enough for a label
    assert set(borrowed["not_run_short"]) == {"the shared chase needs compute capability 9.x"}
    here = sidebyside.measured_here(shown)
    assert set(here["measured_on"]) == {SYNTHETIC.slug} and len(here) == len(lat) - len(refused)
    assert here["cycles"].fillna(-1).tolist() == \
        lat[lat["invalid"].isna()]["cycles"].fillna(-1).tolist()
    # its stamp names the recording after this GPU's line
    lines = lab.captions(shown).split("\n")
    assert lines[0] == lab.caption(lat) and lines[1] == lab.caption(recorded)
    assert shown.attrs["borrowed"][0]["variants"] == ["shared"]
    # the live frame itself is never mixed: lab.run keeps what this GPU measured
    assert "measured_on" not in lat


def test_a_row_refused_everywhere_stays_refused(synthetic_gpu):
    """A configuration the reference could not run either (bad parameters) keeps its own
    reason and is not replaced."""
    synthetic_gpu.measure_from_recorded(cannot_run=_refuse_shared)
    lat = perflab.run("memory.latency")
    ref = perflab.reference(lat)
    ref = ref[ref["variant"] != "shared"]
    assert perflab.fill_not_run(lat, ref) is lat


def test_a_config_error_says_why_in_full_and_in_a_few_words():
    exc = errors.ConfigError("10-wgmma-tma: wgmma needs a Hopper GPU ...", short="needs sm_90")
    assert str(exc).startswith("10-wgmma-tma: wgmma") and exc.short == "needs sm_90"
    assert errors.ConfigError("x").short is None
    assert errors.LaunchConfigError("y", short="z").short == "z"


def test_a_reason_in_a_few_words():
    short = sidebyside.short_reason
    assert short("long text", "needs sm_90") == "needs sm_90"
    assert short("06-warptiling: needs 146 KB; more", variant="06-warptiling") == "needs 146 KB"
    assert short("tile 64 over the limit. Use 32", variant="x") == "tile 64 over the limit"
    assert short("x" * 80) == sidebyside.NOT_RUN


def test_the_synthetic_metrics_keep_ratios():
    from tests.synthetic_gpu import scaled
    m = scaled({"TFLOP/s": {"value": 10.0, "unit": "TFLOP/s"},
                "median_ms": {"value": 2.0, "unit": "ms"},
                "vs_cublas_fp32": {"value": 0.9, "unit": "x"},
                "cycles": {"value": 30.0, "unit": "cycles"},
                "bytes": {"value": None, "unit": "B"}})
    assert m == {"TFLOP/s": (5.0, "TFLOP/s"), "median_ms": (4.0, "ms"),
                 "vs_cublas_fp32": (0.9, "x"), "cycles": (60.0, "cycles"), "bytes": (None, "B")}


@pytest.mark.parametrize("name", ["sgemm.ladder", "memory.latency", "memory.inflight"])
def test_every_recorded_frame_names_its_parameters(monkeypatch, name):
    monkeypatch.setenv("PERFLAB_MODE", "replay")
    df = perflab.run(name)
    assert df.attrs["params"] and all(p in df for p in df.attrs["params"])
    assert "TFLOP/s" not in df.attrs["params"] and "variant" not in df.attrs["params"]
