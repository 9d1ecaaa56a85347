// Depthwise 3D convolution, tiled with the halo left to the caches: slice z of the volume
// is convolved with its own (2R+1)^2 filter (filter z, in constant memory), as a depthwise
// layer treats each channel. A T x T block loads only its own T x T inputs of one slice;
// a tap inside the tile reads shared memory, a tap in the halo reads global memory. That
// if/else sits inside the two tap loops, and the lanes at a tile edge take both sides.
#include "filter.cuh"

template <int R>
__global__ void conv3d_depthwise_cached(const float* __restrict__ in, float* __restrict__ out,
                                        int W, int H, int D) {
    extern __shared__ float tile[];                 // T x T, T = blockDim.x = blockDim.y
    constexpr int K = 2 * R + 1;
    const int T = blockDim.x;
    const int x = blockIdx.x * T + threadIdx.x;
    const int y = blockIdx.y * T + threadIdx.y;
    const int z = blockIdx.z;
    const float* slice = in + static_cast<long long>(z) * W * H;
    const float* f = c_filter + z * K * K;          // this slice's filter
    tile[threadIdx.y * T + threadIdx.x] = (x < W && y < H) ? slice[y * W + x] : 0.0f;
    __syncthreads();
    if (x >= W || y >= H) return;
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < K; ++i) {
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int ty = threadIdx.y + i - R, tx = threadIdx.x + j - R;
            if (ty >= 0 && ty < T && tx >= 0 && tx < T) {
                acc += f[i * K + j] * tile[ty * T + tx];
            } else {
                const int yy = y + i - R, xx = x + j - R;
                if (yy >= 0 && yy < H && xx >= 0 && xx < W) acc += f[i * K + j] * slice[yy * W + xx];
            }
        }
    }
    out[static_cast<long long>(z) * W * H + y * W + x] = acc;
}
