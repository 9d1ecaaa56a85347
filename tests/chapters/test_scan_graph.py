"""Chapter 3's graph-launched encoder (24: 23 launched as a CUDA graph, its epoch a word in
device memory that the kernel advances) without a GPU: its kernel is 23's body with the
other epoch, it compiles like 23, the graph cache builds once a key, the experiment and
the page's numbers; on a GPU: its replayed graphs round trip at edge sizes on every kind
of runs, back to back, across the epoch's wrap, and its word advances once a call."""
from __future__ import annotations

import numpy as np
import pytest

from perflab import kernels, registry
from perflab.chapters.scan import experiments as ex
from perflab.chapters.scan import rle

from .rle_helpers import Graph, Prepared, call_rows, checked_rows


def test_24_is_23s_body_with_its_epoch_in_memory():
    src24 = rle.graph_spec().path.read_text()
    src23 = rle.ballot_spec().path.read_text()
    assert '#include "23_rle_ballot.cu"' in src24
    assert "EpochWord{epoch}" in src24 and "EpochArgument{epoch}" in src23
    # one body: 23's kernel and 24's only call encode_ballot
    assert src24.count("encode_ballot<") == 1 and src23.count("encode_ballot<") == 1
    assert "ld.acquire.gpu" in src24 and "atomicAdd(word, 1u)" in src24
    assert rle.graph_spec().template == rle.ballot_spec().template
    assert rle.graph_spec(rle.BALLOT, 3).template[-1] == 3


def test_24_compiles_like_23():
    from perflab import compile_report as cr
    df = cr.report([rle.graph_spec(), rle.ballot_spec()], ("sm_90", "sm_80"))
    assert len(df) == 4
    assert (df["spill_store_bytes"] == 0).all() and (df["spill_load_bytes"] == 0).all()
    for _, r in df.iterrows():
        assert r["registers"] * rle.ballot_threads(rle.BALLOT) * rle.BALLOT[4] <= 65536


def test_the_graph_encoder_is_an_encoder_for_any_recent_gpu():
    assert "graph" in rle.ALL and "graph" in rle.ONE_PASS and "graph" not in rle.SM90
    assert [s.file for s in ex.RLE_SPECS["graph"]()] == ["03-scan/24_rle_graph.cu"]
    assert rle.traffic_bytes("graph", 1000, 10) == 4 * 1000 + 8 * 10


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


def test_the_graph_experiment_checks_races_and_splits_24():
    e = registry.get("scan.rle_graph")
    assert e.sweep and e.requires is None
    files = {s.file for s in e.kernels()}
    assert {"03-scan/24_rle_graph.cu", "03-scan/23_rle_ballot.cu", "00-machine/read.cu",
            "00-machine/spin.cu"} <= files


# -- the page's numbers, from rows like the recorded ones --------------------------------
def _graph_rows(x24=3.9, failed=False, ct24=3.85):
    import pandas as pd
    t = 0.22
    rows = []
    for kind in ("short", "long", "mixed", "equal", "distinct"):
        for v, x in (("rle graph", x24), ("rle ballot", 3.5)):
            rows.append({"variant": v, "part": "race", "kind": kind, "n": 1 << 25,
                         "median_ms": t / x, "x_torch": x, "x_torch_min": x - 0.1,
                         "x_torch_max": x + 0.1, "correct": v != "rle graph" or not failed})
        rows += [{"variant": "torch.unique_consecutive", "kind": kind, "median_ms": t,
                  "correct": True},
                 {"variant": "read ceiling", "kind": kind, "median_ms": 0.040},
                 {"variant": "copy", "kind": kind, "median_ms": 0.075}]
    rows += checked_rows("rle graph")
    rows += call_rows((("rle graph", 0.0565, 0.002, 0.0555, ct24),
                       ("rle ballot", 0.0645, 0.0105, 0.0556, 3.35),
                       ("torch.unique_consecutive", 0.2175, 0.213, 0.197, None)), 0.197)
    return pd.DataFrame(rows)


def test_the_fifteenth_try_summary_comes_from_its_rows():
    from perflab.chapters.scan import report
    s = report.graph_summary(_graph_rows())
    assert s["gr15_short_x_torch"] == pytest.approx(3.9)
    assert s["gr15_short_us"] == pytest.approx(220 / 3.9)     # the race row, not a check's
    assert s["gr15_over_ballot"] == pytest.approx(3.9 / 3.5)
    assert s["gr15_need_us"] == pytest.approx(55)
    assert s["gr15_n_checked"] == 3 + 1 + 4 and s["gr15_replay_n"] == 4
    assert s["gr15_n_failed"] == 0 and s["gr15_stress_ok"] and s["gr15_large_ok"]
    assert s["gr15_ct_gr_call_us"] == pytest.approx(56.5)
    assert s["gr15_ct_host_saved_us"] == pytest.approx(8.5)
    assert s["gr15_ct_lead_saved_us"] == pytest.approx((64.5 - 55.6) - (56.5 - 55.5))
    assert s["gr15_ct_work_diff_us"] == pytest.approx(-0.1)
    assert s["gr15_ct_need_us"] == pytest.approx(217.5 / 4)
    t = report.graph_call_table(_graph_rows())
    assert list(t["call"]) == ["24, launched as a graph", "23, its prepared launch",
                               "torch.unique_consecutive"]


def test_the_fifteenth_try_targets_follow_the_rows():
    from perflab.chapters.scan import report
    t = report.targets_fifteenth_try(report.graph_summary(_graph_rows(4.1, ct24=4.05)))
    assert t["met"].iloc[0] and t["met"].iloc[1] and len(t) == 4
    t = report.targets_fifteenth_try(report.graph_summary(_graph_rows(3.9)))
    assert not t["met"].iloc[0] and not t["met"].iloc[1]
    t = report.targets_fifteenth_try(report.graph_summary(_graph_rows(4.1, failed=True)))
    assert not t["met"].iloc[0]


# -- on a GPU -----------------------------------------------------------------------------
@pytest.fixture
def live(monkeypatch):
    monkeypatch.setenv("PERFLAB_MODE", "live")


TILE = rle.BALLOT[0] * rle.BALLOT[1]


def _replayed(enc, x):
    """Two calls, the second (the graph's replay) into poisoned outputs."""
    enc.encode(x, "graph")
    enc.values.fill(np.iinfo(np.int32).min)
    enc.lengths.fill(-1)
    enc.count.fill(-1)
    return enc.encode(x, "graph")


@pytest.mark.gpu
@pytest.mark.parametrize("n", [0, 1, 2, 31, 33, 2049, TILE - 1, TILE, TILE + 1,
                               264 * TILE + 7, 1000003])
@pytest.mark.parametrize("kind", ["equal", "distinct", "short", "long", "mixed"])
def test_the_replayed_graph_round_trips(live, n, kind):
    import cupy as cp
    enc = rle.Encoder(n)
    x = rle.make_runs(n, kind, np.random.default_rng(n)) if n else cp.empty(0, cp.int32)
    chk, runs = ex.check_rle(x, *_replayed(enc, x))
    assert chk.correct
    if n:
        assert enc._gr.graphs.graphs == 1
    if kind == "equal" and n:
        assert runs == 1
    if kind == "distinct":
        assert runs == n


@pytest.mark.gpu
def test_the_word_advances_once_a_call_and_a_new_input_gets_its_own_graph(live):
    n = 3 * TILE + 5
    enc = rle.Encoder(n)
    xs = [rle.make_runs(n, "short", np.random.default_rng(k)) for k in range(2)]
    for k in range(5):
        enc.encode(xs[k % 2], "graph")
    graphs, st = enc._gr.graphs, enc._gr.state
    assert int(st.word[0]) == st.epoch + 1 == 6
    assert graphs.graphs == 2
    for x in xs:
        assert ex.check_rle(x, *_replayed(enc, x))[0].correct


@pytest.mark.gpu
def test_the_epoch_wraps_over_zeroed_words(live, monkeypatch):
    monkeypatch.setattr(rle, "EPOCH_LIMIT", 3)
    n = 5 * TILE + 1
    enc = rle.Encoder(n)
    x = rle.make_runs(n, "mixed", np.random.default_rng(3))
    for k in range(8):
        enc.values.fill(np.iinfo(np.int32).min)
        enc.count.fill(-1)
        assert ex.check_rle(x, *enc.encode(x, "graph"))[0].correct, k
        st = enc._gr.state
        assert 1 <= st.epoch <= 3 and int(st.word[0]) == st.epoch + 1


@pytest.mark.gpu
def test_back_to_back_graph_encodes(live):
    xs = [rle.make_runs(1000003, k, np.random.default_rng(9))
          for k in ("short", "long", "mixed", "distinct")]
    encs = [rle.Encoder(x.size) for x in xs]
    for k in range(200):
        encs[k % 4].encode(xs[k % 4], "graph", check=False)
    for x, e in zip(xs, encs):
        assert ex.check_rle(x, e.values, e.lengths, e.count)[0].correct
