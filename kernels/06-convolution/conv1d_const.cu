// 1D convolution with the filter in constant memory and the radius R a compile-time
// constant: the tap loop unrolls, each tap is an FFMA with a constant-bank operand, and
// the inputs still come from global memory (neighbouring threads share them through L1).
#include "filter.cuh"

template <int R>
__global__ void conv1d_const(const float* __restrict__ x, float* __restrict__ y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
#pragma unroll
    for (int j = 0; j <= 2 * R; ++j) {
        const int k = i + j - R;
        const float v = (k >= 0 && k < n) ? x[k] : 0.0f;     // a predicated load
        acc += c_filter[j] * v;
    }
    y[i] = acc;
}
