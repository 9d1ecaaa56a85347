"""On a machine with an NVIDIA GPU: CuPy finds the driver and the CUDA libraries the lab
uses (NVRTC to compile, cuBLAS for the baseline, cuRAND for inputs). A failure here means
an installation problem (see README, "Requirements"), not a bug in a chapter."""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


def test_nvrtc_compiles_and_runs_a_kernel():
    import cupy as cp

    k = cp.RawKernel(r'''
    extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i] + y[i];
    }''', "axpy")
    n = 1000
    x = cp.arange(n, dtype=cp.float32)
    y = cp.ones(n, dtype=cp.float32)
    k(((n + 255) // 256,), (256,), (np.float32(2.0), x, y, np.int32(n)))
    np.testing.assert_allclose(cp.asnumpy(y), 2.0 * np.arange(n) + 1.0)


def test_cublas_and_curand_load():
    import cupy as cp

    a = cp.random.default_rng(0).standard_normal((64, 64), dtype=cp.float32)
    ref = cp.asnumpy(a).astype(np.float64) @ cp.asnumpy(a).astype(np.float64)
    np.testing.assert_allclose(cp.asnumpy(a @ a), ref, rtol=1e-3, atol=1e-3)
