// 1D convolution, tiled with halo cells: a block of T = blockDim.x threads loads its T
// inputs and the R halo cells on either side into shared memory (zeros past the ends),
// then each thread sums its 2R + 1 taps from there. Filter in constant memory.
#include "filter.cuh"

template <int R>
__global__ void conv1d_tiled(const float* __restrict__ x, float* __restrict__ y, int n) {
    extern __shared__ float tile[];                 // blockDim.x + 2R floats
    const int base = blockIdx.x * blockDim.x;       // first output of this block
    for (int c = threadIdx.x; c < blockDim.x + 2 * R; c += blockDim.x) {
        const int k = base + c - R;                 // halo cells included (R may exceed T)
        tile[c] = (k >= 0 && k < n) ? x[k] : 0.0f;
    }
    __syncthreads();
    const int i = base + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
#pragma unroll
    for (int j = 0; j <= 2 * R; ++j) acc += c_filter[j] * tile[threadIdx.x + j];
    y[i] = acc;
}
