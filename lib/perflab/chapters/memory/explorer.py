"""The working-set × stride explorer of the memory chapter: pick a buffer size and the stride of a
strided pointer chase, read the recorded latency (or, in Jupyter on a GPU, measure it)."""
from __future__ import annotations

import pandas as pd

from ...errors import refusal
from ...explorer import Explorer, Field
from .experiments import EXPLORE_SIZES, EXPLORE_STRIDES
from .latency import slots_for
from .report import size_label


def stride_explorer(rows: pd.DataFrame) -> Explorer:
    """An explorer over the rows of memory.stride_chase (replayed or live)."""
    def reason(p):
        return refusal(slots_for, int(p["bytes"]), int(p["stride"]))

    return Explorer(
        "memory-stride", rows, experiment="memory.stride_chase", match={"variant": "strided"},
        params={"bytes": list(EXPLORE_SIZES), "stride": list(EXPLORE_STRIDES)},
        labels={"bytes": size_label, "stride": size_label},
        defaults={"bytes": 1 << 30, "stride": 128},
        title="Strided pointer chase: latency by working set and stride",
        fields=[Field("cycles", digits=0, suffix=" cycles per load"),
                Field("ns", digits=1, suffix=" ns")],
        reason=reason, measure=_measure)


def _measure(p: dict) -> pd.DataFrame:
    """One strided chase on this GPU (live): checked, then timed, as a frame."""
    from ... import lab
    from .experiments import stride_chase

    ctx = lab.live_context("memory.stride_chase")
    stride_chase(ctx, sizes=(int(p["bytes"]),), strides=(int(p["stride"]),))
    return lab.frame(ctx.rows, source="live")
