"""The vendor baseline, with its compute mode named: cuBLAS `gemmEx` called directly, so
FP32 (CUBLAS_COMPUTE_32F, plain FFMA) and TF32 (CUBLAS_COMPUTE_32F_FAST_TF32, tensor cores)
are explicit per call rather than read once from an environment variable."""
from __future__ import annotations

import numpy as np

_ALPHA = np.ones(1, dtype=np.float32)
_BETA = np.zeros(1, dtype=np.float32)

MODES = ("fp32", "tf32")


def gemm(A, B, C, mode: str = "fp32") -> None:
    """C = A @ B for row-major float32 CuPy arrays through cuBLAS in `mode`."""
    from cupy.cuda import device
    from cupy_backends.cuda.libs import cublas

    if mode not in MODES:
        raise ValueError(f"cuBLAS mode must be one of {MODES}, not {mode!r}")
    M, K = A.shape
    K2, N = B.shape
    if K2 != K or C.shape != (M, N):
        raise ValueError(f"shapes do not match: A {A.shape}, B {B.shape}, C {C.shape}")
    for name, x in (("A", A), ("B", B), ("C", C)):
        if x.dtype != np.float32 or not x.flags.c_contiguous:
            raise ValueError(f"{name} must be a C-contiguous float32 array")
    compute = (cublas.CUBLAS_COMPUTE_32F if mode == "fp32"
               else cublas.CUBLAS_COMPUTE_32F_FAST_TF32)
    handle = device.get_cublas_handle()
    r32 = 0  # CUDA_R_32F
    # Row-major C = A B is column-major C^T = B^T A^T: swap the operands, no transposes.
    cublas.gemmEx(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, N, M, K,
                  _ALPHA.ctypes.data, B.data.ptr, r32, N, A.data.ptr, r32, K,
                  _BETA.ctypes.data, C.data.ptr, r32, N, compute, -1)
