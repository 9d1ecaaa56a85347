"""For the tests of the graph-launched encoders (24, 25): a prepared launch and a graph
that only count their calls, and rows like their recorded ones (scan.rle_graph,
scan.rle_room) for the page's numbers: checks, replays, large sizes and back-to-back
calls, and a call-time part."""
from __future__ import annotations


class Prepared:
    """A prepared launch that records its calls (grid, arguments)."""
    grid = 8

    def __init__(self):
        self.calls = []

    def __call__(self, grid, *args):
        self.calls.append((grid, args))


class Graph:
    """A graph that counts its launches."""

    def __init__(self):
        self.launched = 0

    def launch(self):
        self.launched += 1


def checked_rows(variant: str) -> list[dict]:
    """Three checks, four replays, 2^30 + 1 right and 2^31 + 5 refused, 1000 calls."""
    rows = [{"variant": variant, "part": "check", "n": n, "kind": "short", "correct": True}
            for n in (0, 1, 31)]
    rows += [{"variant": variant, "part": "replay", "n": n, "kind": k, "correct": True}
             for n in (1, 4097) for k in ("short", "distinct")]
    return rows + [
        {"variant": variant, "part": "large", "n": (1 << 30) + 1, "kind": "short",
         "correct": True},
        {"variant": variant, "part": "large", "n": (1 << 31) + 5, "kind": "short",
         "correct": None, "invalid": "n=2147483653: run positions and lengths are int32"},
        {"variant": variant, "part": "stress", "n": 1000003, "calls": 1000, "wrong_calls": 0,
         "correct": True}]


def call_rows(calls, torch_queued_ms: float) -> list[dict]:
    """The call-time part: (variant, call, host, queued ms, × torch or None) each."""
    rows = []
    for v, call, host, queued, x in calls:
        r = {"variant": v, "part": "call time", "kind": "short", "n": 1 << 25,
             "call_ms": call, "host_ms": host, "queued_ms": queued, "lead_ms": call - queued,
             "correct": True}
        if x is not None:
            r.update({"x_torch": x, "x_torch_min": x - 0.1, "x_torch_max": x + 0.1,
                      "x_torch_queued": torch_queued_ms / queued})
        rows.append(r)
    return rows
