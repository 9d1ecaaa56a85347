"""The scan chapters' one-pass encoder of choice, 25 (25_rle_room.cu: the ballot walk of
ballot.cuh, launched as a CUDA graph with its epoch on the GPU (graph.cuh, 24), 6 bytes a
staged head so that L1 keeps room for the loads in flight), without a GPU: the walk's
shape rules, 24 and 25 compile without spills from 25's file, their shared memory and the
L1 they leave, a call with the same input launches its graph at once, the experiment
races its L1 plan, and the page's facts come from its rows; on a GPU: 25 round trips at
edge sizes on every kind of runs, its replayed graph too, with its SMs split for the
least L1 too, and back to back."""
from __future__ import annotations

import numpy as np
import pytest

from perflab import device, kernels, registry
from perflab.chapters.scan import encoders as enc_mod
from perflab.chapters.scan import experiments as ex
from perflab.chapters.scan import report, rle
from perflab.errors import ConfigError

from .rle_helpers import Graph, Prepared, call_rows, checked_rows


@pytest.mark.parametrize("shape,why", [
    ((16, 2048, 16, 384, 2, 1), "sequencer tiles a lane"),
    ((31, 2048, 16, 384, 1, 1, 2), "1 to 31 walker warps"),
    ((16, 2000, 16, 384, 2, 1, 2), "whole batches"),
    ((16, 2048, 16, 2080, 1, 1, 2), "from 32 to the piece"),
    ((16, 2048, 16, 100, 2, 1, 2), "a multiple of 32"),
    ((16, 2048, 16, 384, 2, 3, 2), "1, 2, 4 or 8"),
    ((16, 2048, 16, 384, 2, 1, 8), "1, 2, 4 tiles"),
    ((16, 2048, 16, 512, 3, 1, 2), "228 KiB"),
    ((16, 1024, 16, 64, 4, 1, 2), "at most 64 warps"),
])
def test_bad_ballot_shapes_are_refused_with_the_rule(shape, why):
    with pytest.raises(ConfigError, match=why):
        rle.check_ballot_shape(shape)


def test_the_stages_are_the_walks_and_its_shared_memory():
    import re
    src = (kernels.paths.KERNELS / "03-scan" / "ballot.cuh").read_text()
    assert re.findall(r"^constexpr int STAGES = (\d+);", src, re.M) == [str(rle.BALLOT_STAGES)]
    # three stages a walker, CAP heads each, a 4-byte value and a 4-byte index a head (24)
    assert rle.ballot_smem(rle.BALLOT) == 3 * 8 * 384 * 8
    assert rle.ballot_threads(rle.BALLOT) == (8 + 1 + 1) * 32        # and the sequencer's warp
    assert rle.ballot_threads((16, 2048, 16, 384, 2, 1, 0)) == (16 + 1) * 32


def test_no_kernel_file_includes_another():
    """Shared code lives in headers: 25 includes graph.cuh (24's kernel), which includes
    ballot.cuh (23's walk); no .cu includes a .cu."""
    import re
    for f in (kernels.paths.KERNELS / "03-scan").glob("*.c*"):
        for inc in re.findall(r'#include "([^"]+)"', f.read_text()):
            assert not inc.endswith(".cu"), (f.name, inc)
    src25 = rle.room_spec().path.read_text()
    assert '#include "graph.cuh"' in src25
    assert '#include "ballot.cuh"' in (kernels.paths.KERNELS / "03-scan" / "graph.cuh").read_text()


def test_25_is_the_walk_with_split_stages_and_24_is_compiled_from_its_file():
    src25 = rle.room_spec().path.read_text()
    assert "struct SplitStage" in src25 and "EpochWord, SplitStage>" in src25
    assert "st.shared.b16" in src25 and "BYTES = 6" in src25
    assert src25.count("encode_ballot<") == 1
    assert rle.room_spec().template == rle.ROOM
    assert rle.graph_spec().file == rle.room_spec().file == "03-scan/25_rle_room.cu"
    assert rle.graph_spec().template == rle.BALLOT


def test_25_compiles_like_24():
    from perflab import compile_report as cr
    df = cr.report([rle.room_spec(), rle.graph_spec()], ("sm_90", "sm_80"))
    assert len(df) == 4
    assert (df["spill_store_bytes"] == 0).all() and (df["spill_load_bytes"] == 0).all()
    for _, r in df.iterrows():
        assert r["registers"] * rle.ballot_threads(rle.ROOM) * rle.ROOM[4] <= 65536


def test_the_least_l1_kernel_is_compiled_apart():
    for spec in (rle.room_spec, rle.graph_spec):
        a, b = spec(None, False), spec(None, True)
        assert a.template == b.template and a.options != b.options
        assert b.options == rle.ALL_SHARED


def test_25s_stages_take_three_quarters_of_24s():
    shape = rle.ROOM
    assert rle.room_smem(shape) == 3 * 8 * 288 * 6
    assert rle.room_smem(shape) * 4 == rle.ballot_smem(shape) * 3
    rle.check_ballot_shape(shape, rle.room_smem)
    # 384 heads a walker at four blocks an SM: 24's stages do not fit, 25's do
    big = shape[:3] + (384, 4) + shape[5:]
    with pytest.raises(rle.ConfigError, match="228 KiB"):
        rle.check_ballot_shape(big)
    rle.check_ballot_shape(big, rle.room_smem)


def test_the_l1_left_follows_the_split():
    # 24 at its default: 220.8 KiB of three blocks, the 228 KiB split, 28 KiB of L1
    r = device.l1_room(608, rle.ballot_smem(rle.BALLOT), 3, False, "9.0")
    assert r == {"shared_kib_sm": 220.8, "l1_kib": 28}
    r = device.l1_room(608, rle.ballot_smem(enc_mod.GRAPH_288), 3, False, "9.0")
    assert r["l1_kib"] == 60
    assert device.l1_room(608, rle.ballot_smem(enc_mod.GRAPH_288), 3, True, "9.0")["l1_kib"] == 28
    assert device.l1_room(624, rle.room_smem(rle.ROOM), 3, False, "9.0")["l1_kib"] == 124
    assert device.l1_room(624, rle.room_smem(rle.ROOM), 3, False, "8.0")["l1_kib"] is None
    assert device.l1_room(0, 240 * 1024, 1, False, "9.0")["l1_kib"] is None    # does not fit


def test_the_race_plan_is_buildable_and_named():
    for name, (head_bytes, shape, _) in enc_mod.L1_PLAN.items():
        rle.check_ballot_shape(shape, rle.room_smem if head_bytes == 6 else rle.ballot_smem)
        assert name.startswith("rle room" if head_bytes == 6 else "rle graph")
    assert enc_mod.L1_PLAN[enc_mod.ROOM_NAME] == (6, rle.ROOM, False)
    assert {nm for _, nm, _ in report.ROOM_RACE} == set(enc_mod.L1_PLAN)


def test_the_room_encoder_is_the_default_for_any_recent_gpu():
    assert "room" in rle.VARIANTS and "room" in rle.ONE_PASS and "room" not in rle.SM90
    assert [s.file for s in ex.RLE_SPECS["room"]()] == ["03-scan/25_rle_room.cu"]
    assert rle.traffic_bytes("room", 1000, 10) == 4 * 1000 + 8 * 10


def test_the_room_experiment_races_the_l1_plan():
    e = registry.get("scan.rle_room")
    assert e.sweep and e.requires is None
    specs = e.kernels()
    files = {s.file for s in specs}
    assert {"03-scan/25_rle_room.cu", "00-machine/read.cu", "00-machine/spin.cu"} <= files
    assert sum(s.options == rle.ALL_SHARED for s in specs) == 2


def test_the_runs_metrics_are_read_after_the_checks():
    state = {}
    moved, runs_only = ex.runs_metrics(state, lambda runs: 400 + 8 * runs), ex.runs_metrics(state)
    assert runs_only() == {"runs": (0, "1")} and moved()["bytes_moved"] == (400, "B")
    state["runs"] = 7                   # what the last encoder's check found
    assert moved() == {"runs": (7, "1"), "bytes_moved": (456, "B")}
    assert runs_only() == {"runs": (7, "1")}


def test_a_graph_is_built_once_a_key_and_the_oldest_dropped():
    built = []

    graphs = []

    def build(prepared, grid, args):
        built.append((grid, args))
        graphs.append(Graph())
        return graphs[-1]
    g = kernels.GraphLaunch(Prepared(), keep=2, build=build)
    g("a", 4, 1, 2)
    g("a", 4, 1, 2)
    assert built == [(4, (1, 2))] and graphs[0].launched == 2 and g.graphs == 1
    assert g.get("a") is graphs[0] and g.get("b") is None
    g("b", 8, 3)
    g("c", 8, 5)
    assert len(built) == 3 and g.graphs == 2 and g.get("a") is None
    g("a", 4, 1, 2)
    assert len(built) == 4 and g.get("c") is graphs[2] and g.get("b") is None
    assert graphs[3].launched == 1 and graphs[0].launched == 2


def test_while_launches_are_captured_the_prepared_launch_runs():
    p = Prepared()
    g = kernels.GraphLaunch(p, build=lambda *a: pytest.fail("no graph while capturing"))
    with kernels.capture_launches():
        g("a", 3, 7)
        assert g.get("a") is None
    assert p.calls == [(3, (7,))] and g.graphs == 0


# -- a graph call's host steps, without a GPU ---------------------------------------------
class _State:
    """LookbackState.graph_args's host side: counts the calls, resets past EPOCH_LIMIT."""

    def __init__(self):
        self.epoch, self.generation, self.args_calls, self.resets = 0, 0, 0, 0

    def graph_args(self, tiles):
        self.args_calls += 1
        self.epoch += 1
        if self.epoch > rle.EPOCH_LIMIT:
            self.epoch = 1
            self.resets += 1
        return ("counter", "lo", "hi", "word")


class _Data:
    def __init__(self, ptr):
        self.ptr = ptr


class _Array:
    def __init__(self, ptr, size):
        self.data, self.size = _Data(ptr), size


def _call():
    built = []

    def build(prepared, grid, args):
        built.append(Graph())
        return built[-1]
    st = _State()
    return rle.GraphCall(Prepared(), 100, build=build, state=st), built, st


def test_a_call_with_the_same_input_only_launches_its_graph():
    call, built, st = _call()
    x = _Array(4096, 1000)
    for _ in range(3):
        call(x, "values", "lengths", "count")
    assert len(built) == 1 and built[0].launched == 3
    assert st.args_calls == 1 and st.epoch == 3          # every call counted
    y = _Array(4096, 1000)                                # same pointer, another object
    call(y, "values", "lengths", "count")
    assert len(built) == 1 and built[0].launched == 4 and st.args_calls == 2
    call(_Array(8192, 1000), "values", "lengths", "count")
    assert len(built) == 2 and st.epoch == 5


def test_the_epochs_wrap_through_the_full_call(monkeypatch):
    monkeypatch.setattr(rle, "EPOCH_LIMIT", 3)
    call, built, st = _call()
    x = _Array(4096, 1000)
    for _ in range(7):
        call(x, "values", "lengths", "count")
        assert 1 <= st.epoch <= 3
    assert st.resets == 2 and built[0].launched == 7


def test_while_launches_are_captured_a_graph_call_launches_directly():
    call, built, st = _call()
    x = _Array(4096, 1000)
    call(x, "values", "lengths", "count")
    with kernels.capture_launches():
        call(x, "values", "lengths", "count")
    assert built[0].launched == 1 and len(call.graphs.prepared.calls) == 1
    assert call.graphs.prepared.calls[0][0] == 8           # min(tiles, grid)


# -- the page's numbers, from rows like the recorded ones --------------------------------
def _room_rows(x25=4.2, failed=False, ct25=4.1):
    import pandas as pd
    t = 0.24
    us = {"rle room": t / x25, "rle room, 32 chunks a batch": t / x25,
          "rle room, least L1": 0.0626, "rle graph": 0.062, "rle graph, 288 heads": 0.0599,
          "rle graph, 288 heads, least L1": 0.0622,
          "rle graph, 288 heads, 32 chunks a batch": 0.0881}
    l1 = {"rle room": 124, "rle room, 32 chunks a batch": 124, "rle room, least L1": 28,
          "rle graph": 28, "rle graph, 288 heads": 60, "rle graph, 288 heads, least L1": 28,
          "rle graph, 288 heads, 32 chunks a batch": 60}
    rows = []
    for kind in ("short", "long", "mixed", "equal", "distinct"):
        for _, v, _ in report.ROOM_RACE:
            rows.append({"variant": v, "part": "race", "kind": kind, "n": 1 << 25,
                         "median_ms": us[v], "x_torch": t / us[v], "x_torch_min": t / us[v] - .1,
                         "x_torch_max": t / us[v] + .1, "of_floor": 0.05 / us[v],
                         "of_floor_min": 0.045 / us[v], "of_floor_max": 0.055 / us[v],
                         "l1_kib": l1[v],
                         "shared_kib_sm": 126.3 if "room" in v else 166.8,
                         "in_flight_kib": 96 if "32" in v else 48, "cap": 288,
                         "batch": 32 if "32" in v else 16,
                         "bytes_a_head": 6 if "room" in v else 8,
                         "correct": v != "rle room" or not failed})
        rows += [{"variant": "torch.unique_consecutive", "kind": kind, "median_ms": t,
                  "correct": True},
                 {"variant": "read ceiling", "kind": kind, "median_ms": 0.046},
                 {"variant": "floor", "kind": kind, "median_ms": 0.05},
                 {"variant": "copy", "kind": kind, "median_ms": 0.075}]
    rows += checked_rows("rle room")
    rows += call_rows((("rle room", 0.0586, 0.0049, 0.0548, ct25),
                       ("rle graph", 0.0598, 0.0045, 0.0562, 4.0),
                       ("torch.unique_consecutive", 0.240, 0.233, 0.198, None)), 0.198)
    return pd.DataFrame(rows)


def test_25s_facts_come_from_its_rows():
    f = report.room_facts(_room_rows())
    assert f["rm17_short_us"] == pytest.approx(240 / 4.2)
    assert f["rm17_l1_gain_us"] == pytest.approx(62.0 - 59.9)
    assert f["rm17_least_cost_us"] == pytest.approx(62.2 - 59.9)
    assert f["rm17_g384_l1_kib"] == 28 and f["rm17_l1_kib"] == 124
    assert f["rm17_n_checked"] == 3 + 1 + 4 and f["rm17_replay_n"] == 4
    assert f["rm17_n_failed"] == 0 and f["rm17_stress_wrong"] == 0
    assert f["rm17_ct_torch_host_pct"] == pytest.approx(100 * 233 / 240)
    assert f["rle_room_over_read"] == pytest.approx(240 / 4.2 / 46)
    # the floor's ratio is 25's time over the floor's, round by round: 1 / of_floor
    assert f["rle_room_x_floor"] == pytest.approx(240 / 4.2 / 50)
    assert f["rle_room_x_floor_lo"] == pytest.approx(240 / 4.2 / 55)
    assert f["rle_room_x_floor_hi"] == pytest.approx(240 / 4.2 / 45)
    assert f["rm17_short_floor_us"] == pytest.approx(50)
    # 25 as fast as 24 at 288 heads (as recorded): every prediction held; 5 % faster: not
    assert report.room_facts(_room_rows(4.0))["rm17_predictions"] == "Every prediction held."
    assert f["rm17_predictions"].startswith("Not every prediction held")
    t = report.room_l1_table(_room_rows())
    assert list(t["encoder"])[:2] == ["24, 384 heads", "24, 288 heads"] and len(t) == 7
    c = report.room_call_table(_room_rows())
    assert list(c["call"]) == ["25, launched as a graph", "24, launched as a graph",
                               "torch.unique_consecutive"]


# -- on a GPU -----------------------------------------------------------------------------
@pytest.fixture
def live(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")


TILE = rle.ROOM[0] * rle.ROOM[1]


@pytest.mark.gpu
@pytest.mark.parametrize("n", [0, 1, 2, 31, 33, 2049, TILE - 1, TILE, TILE + 1,
                               264 * TILE + 7, 1000003])
@pytest.mark.parametrize("kind", ["equal", "distinct", "short", "long", "mixed"])
def test_25_round_trips_first_and_replayed(live, n, kind):
    import cupy as cp
    enc = rle.Encoder(n)
    x = rle.make_runs(n, kind, np.random.default_rng(n)) if n else cp.empty(0, cp.int32)
    for _ in range(3):              # builds, then launches the same array's graph twice
        enc.values.fill(np.iinfo(np.int32).min)
        enc.lengths.fill(-1)
        enc.count.fill(-1)
        chk, runs = ex.check_rle(x, *enc.encode(x, "room"))
        assert chk.correct
    if n:
        assert enc.graph_call().graphs.graphs == 1
    if kind == "distinct":
        assert runs == n


@pytest.mark.gpu
@pytest.mark.parametrize("head_bytes", [6, 8])
def test_the_least_l1_split_changes_no_result(live, head_bytes):
    n = 5 * TILE + 3
    x = rle.make_runs(n, "mixed", np.random.default_rng(5))
    enc = rle.Encoder(n)
    enc.encode(x, "room", head_bytes=head_bytes, all_shared=True)
    assert ex.check_rle(x, enc.values, enc.lengths, enc.count)[0].correct


@pytest.mark.gpu
def test_back_to_back_room_encodes(live):
    xs = [rle.make_runs(1000003, k, np.random.default_rng(9))
          for k in ("short", "long", "mixed", "distinct")]
    encs = [rle.Encoder(x.size) for x in xs]
    for k in range(200):
        encs[k % 4].encode(xs[k % 4], "room", check=False)
    for x, e in zip(xs, encs):
        assert ex.check_rle(x, e.values, e.lengths, e.count)[0].correct


@pytest.mark.gpu
def test_the_call_time_race_times_each_part_and_names_its_ratios(live):
    """25 and 24 (its graph) against torch behind the spin, timed: each row checked, its
    call, host part, queued work and the host's lead; the encoders' ratios to torch on
    each part, with their spread."""
    from perflab.vendors import torch_or_none
    ctx = registry.Context(registry.get("scan.rle_room"), {"run_id": "t"}, timing=True)
    enc_mod.call_time_rows(ctx, 100003, rounds=2, n_repeat=3)
    rows = {r["variant"]: r for r in ctx.rows}
    names = set(enc_mod.CALL_ENCODERS) | ({"torch.unique_consecutive"} if torch_or_none() else set())
    assert set(rows) == names
    for v, r in rows.items():
        m = {k: x["value"] for k, x in r["metrics"].items()}
        assert r["correct"] and r["params"]["part"] == "call time" and m["runs"] > 0, v
        assert m["call_ms"] == m["median_ms"] and m["lead_ms"] == pytest.approx(
            m["call_ms"] - m["queued_ms"]) and m["host_ms"] > 0, v
        if v in enc_mod.CALL_ENCODERS and torch_or_none():
            for key in ("x_torch", "x_torch_host", "x_torch_queued"):
                assert m[key + "_min"] <= m[key] <= m[key + "_max"], (v, key)


def test_the_call_time_rows_are_a_race_behind_the_spin(monkeypatch):
    """Without a GPU (encoders, torch and the timing faked): 25 and 24 checked twice each
    (a graph replays on its second call), torch checked against the last encoder and
    raced as x_torch; the race runs behind machine.ahead() with the experiment's rounds
    and repeats, and each row has its call, host part, queued work and the host's lead,
    and the encoders their ratios to torch on each part."""
    from perflab import race
    from perflab.correctness import Check
    calls, asked = [], {}

    class Enc:
        def __init__(self, n):
            self.values = self.lengths = self.count = None

        def poison(self):
            calls.append("poison")

        def encode(self, x, check=True, **opts):
            calls.append(opts.get("head_bytes", 6))

    class Torch:
        @staticmethod
        def unique_consecutive(tx, return_counts):
            calls.append("torch")
    spin = object()
    monkeypatch.setattr(enc_mod.rle, "Encoder", Enc)
    monkeypatch.setattr(enc_mod.rle, "make_runs", lambda n, kind, rng: np.zeros(n, np.int32))
    monkeypatch.setattr(enc_mod, "check_rle", lambda x, v, l, c: (Check(True, 0, 0, 0), 7))
    monkeypatch.setattr(enc_mod, "torch_or_none", lambda: Torch)
    monkeypatch.setattr(enc_mod, "as_torch", lambda x: x)
    monkeypatch.setattr(enc_mod, "torch_runs", lambda torch, tx, enc, runs:
                        Check(runs == 7 and isinstance(enc, Enc), 0, 0, 0))
    monkeypatch.setattr(enc_mod, "checked", lambda fn, what: fn())
    monkeypatch.setattr(enc_mod, "release", lambda: None)
    monkeypatch.setattr(enc_mod.machine, "ahead", lambda: spin)
    monkeypatch.setattr(race, "checked", lambda fn, what: fn())
    ctx = registry.Context(registry.get("scan.rle_room"), {"run_id": "t"})
    times = {"rle room": (1.0, 0.1, 0.8), "rle graph": (1.1, 0.1, 0.9),
             "torch.unique_consecutive": (4.0, 3.0, 2.0)}

    def time_interleaved(cs, *, budget_s=None, rounds=None, ahead=None, n_repeat=None):
        asked.update(names=list(cs), rounds=rounds, ahead=ahead, n_repeat=n_repeat)
        out = {}
        for k, (fn, sets) in cs.items():
            fn(*sets[0])
            call, host, queued = times[k]
            out[k] = {"median_ms": call, "p20_ms": call, "p80_ms": call, "min_ms": call,
                      "n_timed": 3, "round_ms": [call] * 3, "host_ms": host,
                      "round_host_ms": [host] * 3, "queued_ms": queued,
                      "round_queued_ms": [queued] * 3}
        return out
    ctx.time_interleaved = time_interleaved
    enc_mod.call_time_rows(ctx, 1000, rounds=7, n_repeat=20)
    assert calls == ["poison", 6, "poison", 6, "poison", 8, "poison", 8, 6, 8, "torch"]
    assert asked == {"names": ["rle room", "rle graph", "torch.unique_consecutive"],
                     "rounds": 7, "ahead": spin, "n_repeat": 20}
    rows = {r["variant"]: r for r in ctx.rows}
    for v, (call, host, queued) in times.items():
        m = {k: x["value"] for k, x in rows[v]["metrics"].items()}
        assert rows[v]["params"]["part"] == "call time" and m["runs"] == 7
        assert (m["call_ms"], m["host_ms"], m["queued_ms"]) == (call, host, queued)
        assert m["lead_ms"] == pytest.approx(call - queued)
    m = {k: x["value"] for k, x in rows["rle room"]["metrics"].items()}
    assert (m["x_torch"], m["x_torch_host"], m["x_torch_queued"]) == pytest.approx((4, 30, 2.5))
    assert "x_torch" not in rows["torch.unique_consecutive"]["metrics"]
