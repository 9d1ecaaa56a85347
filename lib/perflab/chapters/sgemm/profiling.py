"""The SGEMM segments of the profiler experiment (perflab.profile runs this module's
`prepare` inside the process ncu watches): one rung or cuBLAS mode at one size each."""
from __future__ import annotations


def prepare(segments: list[dict]) -> list:
    """One callable per segment {"variant", "M", "N", "K"}: inputs made from the host,
    every kernel compiled, nothing launched yet."""
    import cupy as cp
    import numpy as np

    from ...blas import gemm
    from ...kernels import get_kernel
    from . import get

    rng = np.random.default_rng()
    inputs = {}
    for M, N, K in {(s["M"], s["N"], s["K"]) for s in segments}:
        inputs[(M, N, K)] = (cp.asarray(rng.uniform(-1, 1, (M, K)).astype(np.float32)),
                             cp.asarray(rng.uniform(-1, 1, (K, N)).astype(np.float32)),
                             cp.empty((M, N), dtype=cp.float32))
    calls = []
    for seg in segments:
        A, B, C = inputs[(seg["M"], seg["N"], seg["K"])]
        name = seg["variant"]
        if name.startswith("cuBLAS"):
            calls.append(lambda A=A, B=B, C=C, m=name.split()[1].lower(): gemm(A, B, C, m))
            continue
        v = get(name)
        p = v.params()
        for spec in v.kernels(p):
            get_kernel(spec)
        calls.append(lambda A=A, B=B, C=C, v=v, p=p: v.run(A, B, C, p))
    return calls
