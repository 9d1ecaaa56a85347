"""The scan segments perflab.profile runs under ncu (`prepare`): one scan at one size each."""
from __future__ import annotations


def prepare(segments: list[dict]) -> list:
    """One callable per segment {"variant", "n"}, kernels compiled."""
    import cupy as cp
    import numpy as np

    from . import ops, rle

    rng = np.random.default_rng()
    calls = []
    for seg in segments:
        n = seg["n"]
        x = cp.asarray(rng.integers(-1000, 1001, n).astype(np.int32))
        out = cp.empty_like(x)
        if seg["variant"] == "rle bulk":
            x = rle.make_runs(n, "short", rng)
            enc = rle.Encoder(n)
            enc.encode(x, "bulk")
            fn = (lambda x=x, enc=enc: enc.encode(x, "bulk", check=False))
        elif seg["variant"] in ops.VARIANTS:
            fn = (lambda x=x, out=out, v=seg["variant"]: ops.enqueue(x, out, True, v))
        else:
            fn = (lambda x=x, out=out: cp.cumsum(x, dtype=x.dtype, out=out))
        calls.append(fn)
    return calls
