"""perflab.race without a GPU: entries checked in order, failures never timed, the rows'
times, rates and ratios to every baseline named one way, from a fake interleaved timing."""
from __future__ import annotations

import pytest

from perflab import race
from perflab.correctness import Check

OK, BAD = Check(True, 0.0, 0.0, 0), Check(False, 1.0, 0.0, 0)


class FakeCtx:
    """A Context that times each call by a fixed per-round list and keeps the rows."""

    def __init__(self, times: dict, timing: bool = True):
        self.times, self.timing, self.rows, self.timed = times, timing, [], None

    def time_interleaved(self, calls, budget_s=None, rounds=9):
        self.timed = list(calls)
        return {k: {"median_ms": sorted(self.times[k])[len(self.times[k]) // 2],
                    "p20_ms": min(self.times[k]), "p80_ms": max(self.times[k]),
                    "min_ms": min(self.times[k]), "n_timed": len(self.times[k]),
                    "round_ms": self.times[k]} for k in calls}

    def row(self, **kw):
        self.rows.append(kw)
        return kw


@pytest.fixture(autouse=True)
def no_gpu(monkeypatch):
    monkeypatch.setattr(race, "checked", lambda fn, what: fn())


def test_a_race_checks_times_and_names_its_ratios():
    ctx = FakeCtx({"mine": [1.0, 2.0, 1.0], "copy": [0.8, 1.0, 0.9],
                   "vendor": [2.0, 2.0, 3.0]})
    entries = [race.Entry("mine", lambda: None, check=lambda: OK, bytes=2e9, flops=4e12,
                          params={"tile": 32}, kernels=["k"]),
               race.Entry("copy", lambda: None, check=lambda: OK, bytes=2e9,
                          baseline="of_copy"),
               race.Entry("vendor", lambda: None, check=lambda: OK, baseline="x_vendor")]
    rows = race.run(ctx, entries, params={"n": 10}, seed=7)
    m = rows["mine"]["metrics"]
    assert m["median_ms"] == (1.0, "ms") and m["n_timed"] == (3, "1")
    assert m["GB/s"][0] == pytest.approx(2000) and m["TB/s"][0] == pytest.approx(2)
    assert m["TFLOP/s"][0] == pytest.approx(4000)
    # round by round: copy/mine = 0.8, 0.5, 0.9; vendor/mine = 2, 1, 3
    assert m["of_copy"] == (pytest.approx(0.8), "1")
    assert (m["of_copy_min"][0], m["of_copy_max"][0]) == (pytest.approx(0.5), pytest.approx(0.9))
    assert m["x_vendor"][0] == pytest.approx(2.0) and m["x_vendor_min"][0] == pytest.approx(1)
    assert "of_copy" not in rows["copy"]["metrics"] and "x_vendor" in rows["copy"]["metrics"]
    assert rows["mine"]["params"] == {"n": 10, "tile": 32} and rows["mine"]["seed"] == 7
    assert rows["mine"]["kernels"] == ["k"] and rows["mine"]["check"] is OK


def test_a_failed_check_is_written_and_never_timed():
    ctx = FakeCtx({"good": [1.0], "copy": [1.0]})
    entries = [race.Entry("bad", lambda: None, check=lambda: BAD),
               race.Entry("good", lambda: None, check=lambda: OK),
               race.Entry("copy", lambda: None, baseline="of_copy", row=False)]
    rows = race.run(ctx, entries)
    assert ctx.timed == ["good", "copy"]
    assert rows["bad"]["check"] is BAD and rows["bad"]["metrics"] == {}
    assert set(rows) == {"bad", "good"}                     # the copy timed, not written
    assert rows["good"]["metrics"]["of_copy"][0] == pytest.approx(1.0)


def test_checks_run_in_order_and_fixed_metrics_are_read_after_them():
    state = {}
    entries = [race.Entry("first", lambda: None, check=lambda: state.setdefault("runs", 5) and OK),
               race.Entry("second", lambda: None,
                          check=lambda: OK if state["runs"] == 5 else BAD,
                          metrics=lambda: {"runs": (state["runs"], "1")})]
    rows = race.run(FakeCtx({}, timing=False), entries)
    assert rows["second"]["check"] is OK and rows["second"]["metrics"] == {"runs": (5, "1")}


def test_the_correctness_pass_times_nothing_and_names_must_differ():
    ctx = FakeCtx({}, timing=False)
    race.run(ctx, [race.Entry("a", lambda: None, check=lambda: OK)])
    assert ctx.timed is None and ctx.rows[0]["metrics"] == {}
    with pytest.raises(ValueError, match="distinct names"):
        race.run(ctx, [race.Entry("a", lambda: None), race.Entry("a", lambda: None)])


def test_every_recorded_ratio_is_named_the_race_s_way():
    """A ratio with its spread over the rounds is recorded as `<key>`, `<key>_min`,
    `<key>_max`, unit "1" (perflab.race's scheme), in every results file."""
    import glob
    import json

    from perflab import paths
    bad = set()
    for path in glob.glob(str(paths.RESULTS / "*" / "*" / "*.json")):
        for r in json.load(open(path))["rows"]:
            m = r["metrics"]
            for k in m:
                if k.endswith("_min") and k[:-4] in m:
                    family = (k[:-4], k, k[:-4] + "_max")
                    if any(f not in m or m[f]["unit"] != "1" for f in family):
                        bad.add((path.rsplit("/", 1)[-1], k[:-4]))
    assert not bad, sorted(bad)[:20]


def test_the_fastest_baseline_of_a_key_is_the_baseline_and_the_row_names_it():
    """Two copies share the key of_copy: each round's ratio is taken against the one with
    the lower median (here the kernel), and every row names it; the declared bytes and
    FLOPs are metrics of their own, and the ratio's rounds are counted."""
    ctx = FakeCtx({"mine": [2.0, 2.0, 4.0], "cudaMemcpy": [1.5, 1.5, 1.5],
                   "copy kernel": [1.0, 1.0, 3.0]})
    entries = [race.Entry("mine", lambda: None, check=lambda: OK, bytes=100, flops=7),
               race.Entry("cudaMemcpy", lambda: None, check=lambda: OK, bytes=100,
                          baseline="of_copy"),
               race.Entry("copy kernel", lambda: None, check=lambda: OK, bytes=100,
                          baseline="of_copy")]
    rows = race.run(ctx, entries)
    m = rows["mine"]["metrics"]
    assert rows["mine"]["baseline"] == "copy kernel" == rows["cudaMemcpy"]["baseline"]
    assert m["of_copy"][0] == pytest.approx(0.5)                # 1/2, 1/2, 3/4
    assert (m["of_copy_min"][0], m["of_copy_max"][0]) == (pytest.approx(0.5),
                                                          pytest.approx(0.75))
    assert m["rounds"] == (3, "1") and m["bytes_moved"] == (100, "B")
    assert m["flops"] == (7, "FLOP")
    assert rows["cudaMemcpy"]["metrics"]["of_copy"][0] == pytest.approx(2 / 3)
    assert "of_copy" not in rows["copy kernel"]["metrics"]


def test_a_baseline_by_rate_compares_bytes_per_second():
    """A copy ceiling timed over 4x the bytes the contender moves: by rate, a contender
    that takes a quarter of the copy's time runs at the copy's speed."""
    ctx = FakeCtx({"mine": [1.0, 1.0, 1.0], "copy": [4.0, 2.0, 4.0]})
    entries = [race.Entry("mine", lambda: None, check=lambda: OK, bytes=100),
               race.Entry("copy", lambda: None, check=lambda: OK, bytes=400,
                          baseline="of_copy", by_rate=True)]
    m = race.run(ctx, entries)["mine"]["metrics"]
    assert m["of_copy"][0] == pytest.approx(1.0)
    assert (m["of_copy_min"][0], m["of_copy_max"][0]) == (pytest.approx(0.5), pytest.approx(1))
    bad = [race.Entry("mine", lambda: None, check=lambda: OK),
           race.Entry("copy", lambda: None, check=lambda: OK, bytes=400,
                      baseline="of_copy", by_rate=True)]
    with pytest.raises(ValueError, match="by rate"):
        race.run(FakeCtx({"mine": [1.0], "copy": [1.0]}), bad)


def test_an_entry_s_row_may_name_another_variant():
    ctx = FakeCtx({}, timing=False)
    rows = race.run(ctx, [race.Entry("05 32x8", lambda: None, check=lambda: OK, variant="05"),
                          race.Entry("05 16x4", lambda: None, check=lambda: OK, variant="05")])
    assert [r["variant"] for r in rows.values()] == ["05", "05"]


def test_an_entry_is_compared_with_the_baselines_it_names_and_keeps_its_own_launch():
    """A kernel of another function than the vendor's is compared with the copy alone
    (`against`); a row records the chapter's launch where the entry gives one, the
    launches captured during its check otherwise."""
    ctx = FakeCtx({"conv": [1.0, 1.0, 1.0], "depthwise": [2.0, 2.0, 2.0],
                   "copy": [0.5, 0.5, 0.5], "vendor": [4.0, 4.0, 4.0]})
    entries = [race.Entry("conv", lambda: None, check=lambda: OK, launch={"grid": [8]}),
               race.Entry("depthwise", lambda: None, check=lambda: OK,
                          against=(race.COPY_KEY,)),
               race.Entry("copy", lambda: None, check=lambda: OK, baseline=race.COPY_KEY,
                          against=(race.COPY_KEY,)),
               race.Entry("vendor", lambda: None, check=lambda: OK, baseline="vs_vendor")]
    rows = race.run(ctx, entries)
    assert rows["conv"]["metrics"]["vs_vendor"][0] == pytest.approx(4.0)
    assert rows["depthwise"]["metrics"]["of_copy"][0] == pytest.approx(0.25)
    assert "vs_vendor" not in rows["depthwise"]["metrics"]
    assert set(rows["copy"]["metrics"]) & {"of_copy", "vs_vendor", "rounds"} == set()
    assert rows["vendor"]["metrics"]["of_copy"][0] == pytest.approx(0.125)
    assert rows["conv"]["launch"] == {"grid": [8]} and rows["depthwise"]["launch"] == []


class AloneCtx(FakeCtx):
    """A FakeCtx that also times one call on its own (Context.time)."""

    def time(self, fn, args_sets, variant, *, budget_s=None):
        self.timed = (self.timed or []) + [(variant, budget_s)]
        t = self.times[variant]
        return {"median_ms": t, "p20_ms": t, "p80_ms": t, "min_ms": t, "n_timed": 5}


def test_entries_timed_alone_have_times_and_rates_and_no_baseline():
    ctx = AloneCtx({"tile 8x4": 2.0})
    entry = race.Entry("tile 8x4", lambda: None, check=lambda: OK, bytes=4e9, flops=2e9,
                       variant="tile", metrics={"smem_bytes": (96, "B")})
    rows = race.run(ctx, [entry, race.Entry("bad", lambda: None, check=lambda: BAD)],
                    params={"bx": 8}, budget_s=0.05, alone=True)
    m = rows["tile 8x4"]["metrics"]
    assert ctx.timed == [("tile 8x4", 0.05)] and rows["tile 8x4"]["variant"] == "tile"
    assert m["median_ms"] == (2.0, "ms") and m["n_timed"] == (5, "1")
    assert m["TB/s"][0] == pytest.approx(2.0) and m["TFLOP/s"][0] == pytest.approx(1.0)
    assert m["smem_bytes"] == (96, "B") and "rounds" not in m
    assert rows["bad"]["metrics"] == {}
    with pytest.raises(ValueError, match="alone"):
        race.run(ctx, [entry, race.Entry("copy", lambda: None, baseline=race.COPY_KEY)],
                 alone=True)
    for timed_otherwise in ({"host": True}, {"keep_rounds": True}):   # host clock, rounds
        with pytest.raises(ValueError, match="alone"):
            race.run(ctx, [race.Entry("cpu", lambda: None, **timed_otherwise)], alone=True)


def test_an_entry_may_declare_its_launch_and_metrics_derived_from_the_timed_ones():
    """A launch record declared by hand replaces the captured one ({} for a library call);
    `derived` sees the row's metrics after the timing (here the core's TFLOP/s)."""
    ctx = FakeCtx({"fma": [2.0, 2.0, 2.0], "lib": [1.0, 1.0, 1.0]})
    seen = {}

    def derived(m):
        seen.update(m)
        return {"frac": (m["TFLOP/s"][0] / 4, "1")} if "TFLOP/s" in m else {}
    rows = race.run(ctx, [race.Entry("fma", lambda: None, check=lambda: OK, flops=4e9,
                                     launch={"grid": 132, "block": 128}, derived=derived),
                          race.Entry("lib", lambda: None, check=lambda: OK, launch={})])
    assert rows["fma"]["launch"] == {"grid": 132, "block": 128} and rows["lib"]["launch"] == {}
    assert rows["fma"]["metrics"]["frac"] == (pytest.approx(0.5), "1")
    assert seen["median_ms"] == (2.0, "ms") and seen["flops"] == (4e9, "FLOP")
    untimed = race.run(FakeCtx({}, timing=False), [race.Entry("fma", lambda: None, check=lambda: OK,
                                                              flops=1, derived=derived)])
    assert "frac" not in untimed["fma"]["metrics"]


def test_a_race_may_take_the_context_s_rounds_and_a_rate_its_whiskers():
    class Rounds(FakeCtx):
        def time_interleaved(self, calls, budget_s=None, rounds=9):
            self.rounds_asked = rounds
            return super().time_interleaved(calls, budget_s, rounds)
    ctx = Rounds({"a": [1.0]})
    race.run(ctx, [race.Entry("a", lambda: None)], rounds=None)
    assert ctx.rounds_asked is None
    assert race.rate_at(2.0, 1.0, 2.0) == pytest.approx(1.0)     # twice the time: half the rate


def test_a_baseline_timed_only_for_others_is_not_timed_alone():
    ctx = FakeCtx({"copy": [1.0]})
    rows = race.run(ctx, [race.Entry("mine", lambda: None, check=lambda: BAD),
                          race.Entry("copy", lambda: None, baseline="of_copy", row=False)])
    assert ctx.timed is None and rows["mine"]["metrics"] == {} and "baseline" not in rows["mine"]


def test_a_baseline_s_median_may_be_kept_in_the_other_rows():
    """A baseline declared with `median_as` leaves its median time of the same rounds in
    every other timed row under that name (the vendor's own time beside the ratio to it);
    declared FLOPs give the rate in GFLOP/s and TFLOP/s."""
    ctx = FakeCtx({"mine": [1.0, 1.0, 1.0], "vendor": [2.0, 3.0, 4.0], "other": [1.0] * 3})
    entries = [race.Entry("mine", lambda: None, check=lambda: OK, flops=2e9),
               race.Entry("vendor", lambda: None, baseline="x_vendor",
                          median_as="vendor_ms", row=False),
               race.Entry("other", lambda: None, baseline="x_other")]
    rows = race.run(ctx, entries)
    m = rows["mine"]["metrics"]
    assert m["vendor_ms"] == (3.0, "ms") and m["x_vendor"][0] == pytest.approx(3.0)
    assert m["GFLOP/s"][0] == pytest.approx(2000) and m["TFLOP/s"][0] == pytest.approx(2)
    assert "vendor_ms" in rows["other"]["metrics"] and "other_ms" not in m


class HostCtx(FakeCtx):
    """A FakeCtx that also takes the names of host calls."""

    def time_interleaved(self, calls, budget_s=None, rounds=9, host=()):
        self.host = list(host)
        return super().time_interleaved(calls, budget_s, rounds)


def test_host_entries_are_checked_without_the_device_and_named_to_the_timer(monkeypatch):
    """A host entry's check runs as it is (no device synchronize); the timer is told which
    calls are host calls. A race of GPU calls only calls the timer as before (no `host`:
    FakeCtx would refuse one)."""
    monkeypatch.setattr(race, "checked", lambda fn, what: pytest.fail("synchronized"))
    ctx = HostCtx({"c": [3.0, 3.0, 3.0], "numpy": [9.0, 6.0, 12.0]})
    rows = race.run(ctx, [race.Entry("c", lambda: None, check=lambda: OK, host=True,
                                     baseline="vs_c", self_ratio=True),
                          race.Entry("numpy", lambda: None, check=lambda: OK, host=True)],
                    rounds=3)
    assert ctx.host == ["c", "numpy"]
    m = rows["numpy"]["metrics"]
    assert (m["vs_c"][0], m["vs_c_min"][0], m["vs_c_max"][0]) == (pytest.approx(1 / 3),
                                                                  pytest.approx(0.25),
                                                                  pytest.approx(0.5))
    # the baseline lists itself at 1x, as a table of speed-ups does
    assert [rows["c"]["metrics"][k][0] for k in ("vs_c", "vs_c_min", "vs_c_max")] == [1, 1, 1]
    monkeypatch.setattr(race, "checked", lambda fn, what: fn())
    gpu = FakeCtx({"k": [1.0]})
    race.run(gpu, [race.Entry("k", lambda: None, check=lambda: OK)])   # no `host` passed
    assert gpu.timed == ["k"]


def test_an_entry_that_cannot_run_here_is_written_unchecked_and_untimed():
    ctx = FakeCtx({"ok": [1.0]})
    rows = race.run(ctx, [race.Entry("ok", lambda: None, check=lambda: OK),
                          race.Entry("avx512", None, check=lambda: pytest.fail("checked"),
                                     extra={"reason": "no AVX-512 here"})])
    assert ctx.timed == ["ok"] and rows["avx512"]["check"] is None
    assert rows["avx512"]["metrics"] == {} and rows["avx512"]["reason"] == "no AVX-512 here"


def test_declared_rates_and_the_slower_ratio():
    """`rates` give other rates than bytes and FLOPs (count / seconds / scale); a baseline
    declared `slower` gives this entry's time over its own, round by round."""
    ctx = FakeCtx({"base": [1.0, 2.0, 1.0], "two": [2.0, 3.0, 4.0]})
    rows = race.run(ctx, [
        race.Entry("base", lambda: None, check=lambda: OK, baseline="slower_than_base",
                   slower=True, rates={"Giter/s": (5e9, "Giter/s", 1e9)}),
        race.Entry("two", lambda: None, check=lambda: OK, rates={"FFMA/s": (4, "1/s", 1)})])
    m = rows["two"]["metrics"]
    assert rows["base"]["metrics"]["Giter/s"] == (pytest.approx(5000.0), "Giter/s")
    assert m["FFMA/s"] == (pytest.approx(4 / 3e-3), "1/s")          # median 3 ms
    assert [m[f"slower_than_base{s}"][0] for s in ("", "_min", "_max")] == \
        [pytest.approx(2.0), pytest.approx(1.5), pytest.approx(4.0)]     # 2, 1.5, 4
    assert "slower_than_base" not in rows["base"]["metrics"]


def test_a_reference_without_ratios_keeps_the_rounds_and_its_launch():
    """`against=()`: a reference timed in the same rounds carries no ratio (the peak
    beside the kernels; a slower baseline beside the fastest of its key); `keep_rounds`:
    its row keeps every timed entry's per-round times, which by_rate_rounds compares by
    rate; `launch` and a callable `extra` go into its row as they are."""
    ctx = FakeCtx({"kernel": [2.0, 4.0], "peak": [1.0, 1.0], "cpu a": [8.0, 8.0],
                   "cpu b": [9.0, 9.0]})
    rows = race.run(ctx, [
        race.Entry("kernel", lambda: None, check=lambda: OK),
        race.Entry("peak", lambda: None, check=lambda: OK, against=(), keep_rounds=True,
                   launch={"grid": 132}, extra=lambda: {"note": "after the checks"}),
        race.Entry("cpu a", lambda: None, check=lambda: OK, baseline="vs_best_cpu", against=()),
        race.Entry("cpu b", lambda: None, check=lambda: OK, baseline="vs_best_cpu", against=())],
        name_fastest={"vs_best_cpu": "best_cpu"})
    peak = rows["peak"]
    assert peak["round_ms"] == {k: ctx.times[k] for k in ctx.times}
    assert peak["launch"] == {"grid": 132} and peak["note"] == "after the checks"
    assert not any(k.startswith("vs_") for r in ("peak", "cpu a", "cpu b")
                   for k in rows[r]["metrics"])
    assert rows["kernel"]["metrics"]["vs_best_cpu"][0] == pytest.approx(3.0)   # 4, 2
    assert {r["best_cpu"] for r in rows.values()} == {"cpu a"}
    # 10 units of work a call against the peak's 20: 10/2 over 20/1, then 10/4 over 20/1
    assert race.by_rate_rounds(peak["round_ms"], "kernel", 10, "peak", 20) == \
        [pytest.approx(0.25), pytest.approx(0.125)]
    untimed = race.run(FakeCtx({}, timing=False), [
        race.Entry("cpu", lambda: None, check=lambda: OK, baseline="vs_best_cpu")],
        name_fastest={"vs_best_cpu": "best_cpu"})
    assert untimed["cpu"]["best_cpu"] == ""


def test_the_metrics_of_a_call_timed_alone():
    t = {"median_ms": 2.0, "p20_ms": 1.0, "p80_ms": 3.0, "min_ms": 1.0, "n_timed": 5}
    m = race.metrics_of(t, race.Entry("k", None, bytes=4e9,
                                      rates={"Giter/s": (2e9, "Giter/s", 1e9)}))
    assert m["median_ms"] == (2.0, "ms") and m["n_timed"] == (5, "1")
    assert m["TB/s"][0] == pytest.approx(2.0) and m["Giter/s"][0] == pytest.approx(1000.0)
    assert "rounds" not in m


class AheadCtx(FakeCtx):
    """A FakeCtx that times each call's host part and its work behind `ahead` too."""

    def __init__(self, times: dict, host_ms: dict, queued_ms: dict):
        super().__init__(times)
        self.host_ms, self.queued_ms = host_ms, queued_ms

    def time_interleaved(self, calls, budget_s=None, rounds=9, ahead=None, n_repeat=None):
        self.asked = (ahead, n_repeat, rounds)
        res = super().time_interleaved(calls, budget_s, rounds)
        for k in calls:
            res[k] |= {"host_ms": sorted(self.host_ms[k])[1], "round_host_ms": self.host_ms[k],
                       "queued_ms": sorted(self.queued_ms[k])[1],
                       "round_queued_ms": self.queued_ms[k]}
        return res


def test_a_race_behind_ahead_has_each_ratio_on_the_host_part_and_the_queued_work():
    """With `ahead`, every row keeps its host and queued medians, and each ratio to a
    baseline comes three times, round by round: on the call, on its host part and on its
    work behind `ahead`; `n_repeat` and `rounds` reach the timer as given."""
    spin = object()
    ctx = AheadCtx({"mine": [1.0, 1.0, 1.0], "lib": [4.0, 5.0, 3.0]},
                   host_ms={"mine": [0.1, 0.2, 0.1], "lib": [3.0, 3.0, 2.0]},
                   queued_ms={"mine": [0.5, 0.5, 0.5], "lib": [2.0, 1.0, 1.5]})
    rows = race.run(ctx, [race.Entry("mine", lambda: None, check=lambda: OK),
                          race.Entry("lib", lambda: None, check=lambda: OK, baseline="x_lib")],
                    ahead=spin, n_repeat=20, rounds=7)
    assert ctx.asked == (spin, 20, 7)
    m = rows["mine"]["metrics"]
    assert m["host_ms"] == (0.1, "ms") and m["queued_ms"] == (0.5, "ms")
    assert m["x_lib"][0] == pytest.approx(4.0)
    assert [m["x_lib_host" + x][0] for x in ("", "_min", "_max")] == pytest.approx([20, 15, 30])
    assert [m["x_lib_queued" + x][0] for x in ("", "_min", "_max")] == pytest.approx([3, 2, 4])
    assert "x_lib_host" not in rows["lib"]["metrics"] and rows["lib"]["metrics"]["queued_ms"]
    with pytest.raises(ValueError, match="host calls"):
        race.run(ctx, [race.Entry("c", lambda: None, host=True)], ahead=spin)
