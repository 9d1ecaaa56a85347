"""The profiled process of `matmul.profile` (perflab.profile runs `prepare` inside the
process ncu watches): one kernel, or cuBLAS FP32, at one size per segment."""
from __future__ import annotations


def prepare(segments: list[dict]) -> list:
    """One callable per segment {"variant", "M", "N", "K"}: inputs made from the host (no
    cuRAND kernels), B copied to Fortran order for the column-major kernels, every kernel
    compiled; nothing launched inside a segment but the GEMM."""
    import cupy as cp
    import numpy as np

    from ...blas import gemm
    from ...kernels import get_kernel
    from .experiments import BASELINE
    from .variants import get

    rng = np.random.default_rng()
    inputs = {}
    for M, N, K in {(s["M"], s["N"], s["K"]) for s in segments}:
        B = cp.asarray(rng.uniform(-1, 1, (K, N)).astype(np.float32))
        inputs[(M, N, K)] = (cp.asarray(rng.uniform(-1, 1, (M, K)).astype(np.float32)), B,
                             cp.asfortranarray(B), cp.empty((M, N), dtype=cp.float32))
    calls = []
    for seg in segments:
        A, B, Bf, C = inputs[(seg["M"], seg["N"], seg["K"])]
        if seg["variant"] == BASELINE:
            calls.append(lambda A=A, B=B, C=C: gemm(A, B, C, "fp32"))
            continue
        v = get(seg["variant"])
        p = v.params()
        for s in v.kernels(p):
            get_kernel(s)
        Bv = Bf if v.b_layout == "col" else B
        calls.append(lambda A=A, B=Bv, C=C, v=v, p=p: v.run(A, B, C, p))
    cp.cuda.Device().synchronize()
    return calls
