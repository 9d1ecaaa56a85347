// Fixture header, found through -I<kernels dir>: tiny helpers shared by fixture kernels.
#pragma once

__device__ __forceinline__ int ceil_div_dev(int a, int b) { return (a + b - 1) / b; }

__device__ __forceinline__ float load_or_zero(const float* p, int row, int col,
                                              int rows, int cols, int ld)
{
    return (row < rows && col < cols) ? p[(size_t)row * ld + col] : 0.0f;
}
