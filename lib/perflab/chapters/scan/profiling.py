"""The scan segments of the profiler experiment (perflab.profile runs this module's
`prepare` inside the process ncu watches): one scan at one size each."""
from __future__ import annotations


def prepare(segments: list[dict]) -> list:
    """One callable per segment {"variant", "n"} (and for the encoders "shape", "diag"):
    int32 inputs made from the host (for "rle bulk" (17), "rle lean" (18), "rle masks"
    (19), "rle rounds" (20), "rle reread" (21), "rle walk" (22) and "rle ballot" (23),
    runs of 1-15), every kernel compiled (the encoder run once), nothing launched after."""
    import cupy as cp
    import numpy as np

    from . import ops

    rng = np.random.default_rng()
    calls = []
    for seg in segments:
        n = seg["n"]
        x = cp.asarray(rng.integers(-1000, 1001, n).astype(np.int32))
        out = cp.empty_like(x)
        if seg["variant"] in ("rle bulk", "rle lean", "rle masks", "rle rounds",
                              "rle reread", "rle walk", "rle ballot"):  # 17-23
            from . import rle
            x = rle.make_runs(n, "short", rng)
            enc = rle.Encoder(n)
            run = {"rle bulk": enc._bulk, "rle lean": enc._lean, "rle masks": enc._masks,
                   "rle rounds": enc._rounds, "rle reread": enc._reread,
                   "rle walk": enc._walk, "rle ballot": enc._ballot}[seg["variant"]]
            shape = tuple(seg["shape"]) if seg.get("shape") else None
            run(x, shape, seg.get("diag", 0))
            fn = (lambda x=x, run=run: run(x))
        elif seg["variant"] in ops.RACED + ("lookahead", "chunked", "bulk"):
            fn = (lambda x=x, out=out, v=seg["variant"]: ops.enqueue(x, out, True, v))
        else:
            fn = (lambda x=x, out=out: cp.cumsum(x, dtype=x.dtype, out=out))
        calls.append(fn)
    return calls
