"""Cutting ncu's per-kernel table into the plan's segments at the marker launches."""
from __future__ import annotations

import pytest

from perflab import profile
from perflab.errors import PerflabError


def _row(name, us):
    return {"Kernel Name": (name, ""), "gpu__time_duration.sum": (str(us), "usecond")}


WANTED = {"duration_us": ("gpu__time_duration.sum", "us", None)}


def test_segments_follow_markers_and_the_compile_launch_is_dropped():
    rows = [_row(profile.MARKER, 1),                       # the marker's first (compile) launch
            _row(profile.MARKER, 1), _row("a", 5), _row("fill", 1),
            _row(profile.MARKER, 1), _row("b", 7)]
    out = profile.segment_rows(rows, [{"s": 1}, {"s": 2}], WANTED)
    assert [o["kernels"] for o in out] == [["a", "fill"], ["b"]]
    assert out[0]["metrics"]["duration_us"] == (6.0, "us")


def test_a_segment_count_that_does_not_match_is_an_error():
    rows = [_row(profile.MARKER, 1), _row("a", 5), _row(profile.MARKER, 1), _row("b", 7)]
    with pytest.raises(PerflabError, match="ncu saw 2 segments, the plan had 3"):
        profile.segment_rows(rows, [{}, {}, {}], WANTED)


def test_chapters_name_their_counters_from_one_catalogue():
    got = profile.counters(["inst_executed", ("warp_inst", "inst_executed")])
    assert list(got) == ["inst_executed", "warp_inst"]
    assert got["warp_inst"] == profile.COUNTERS["inst_executed"] == \
        ("smsp__inst_executed.sum", "1", None)
    assert list(profile.METRICS)[0] == "duration_us" and set(profile.METRICS) <= set(profile.COUNTERS)
    with pytest.raises(PerflabError, match="no counter 'warp_instructions'"):
        profile.counters(["warp_instructions"])


def test_the_catalogue_names_each_ncu_metric_once():
    metrics = [m for m, _, _ in profile.COUNTERS.values()]
    assert len(metrics) == len(set(metrics))


def test_a_profile_experiment_profiles_nothing_in_the_correctness_pass():
    class Ctx:
        timing = False
    assert profile.profiled(Ctx(), None, lambda: [{"s": 1}], "some.child") == []
    Ctx.timing = True
    assert profile.profiled(Ctx(), (), lambda: [{"s": 1}], "some.child") == []
