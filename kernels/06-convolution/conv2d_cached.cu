// 2D convolution, tiled, with the halo left to the caches (the textbook's last kernel):
// a T x T block loads only its own T x T inputs into shared memory; a tap that falls
// inside the tile reads shared memory, one that falls in the halo reads global memory
// (an L1 or L2 hit: the neighbouring block loaded it). The choice is an if/else inside
// the two tap loops, taken differently by the lanes at a tile edge.
#include "filter.cuh"

template <int R>
__global__ void conv2d_cached(const float* __restrict__ in, float* __restrict__ out, int W,
                              int H) {
    extern __shared__ float tile[];                 // T x T, T = blockDim.x = blockDim.y
    constexpr int K = 2 * R + 1;
    const int T = blockDim.x;
    const int x = blockIdx.x * T + threadIdx.x;
    const int y = blockIdx.y * T + threadIdx.y;
    tile[threadIdx.y * T + threadIdx.x] = (x < W && y < H) ? in[y * W + x] : 0.0f;
    __syncthreads();
    if (x >= W || y >= H) return;
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < K; ++i) {
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int ty = threadIdx.y + i - R, tx = threadIdx.x + j - R;
            if (ty >= 0 && ty < T && tx >= 0 && tx < T) {
                acc += c_filter[i * K + j] * tile[ty * T + tx];
            } else {
                const int yy = y + i - R, xx = x + j - R;
                if (yy >= 0 && yy < H && xx >= 0 && xx < W) acc += c_filter[i * K + j] * in[yy * W + xx];
            }
        }
    }
    out[y * W + x] = acc;
}
