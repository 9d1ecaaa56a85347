// 2D convolution with the filter in constant memory and the radius R known at compile
// time: the (2R+1)^2 taps unroll into FFMAs with constant-bank operands. The inputs are
// still one global load per tap per thread; L1 serves most of them (a warp's neighbours
// read the same lines), so what limits it is how many loads L1 can answer per cycle.
#include "filter.cuh"

template <int R>
__global__ void conv2d_const(const float* __restrict__ in, float* __restrict__ out, int W,
                             int H) {
    constexpr int K = 2 * R + 1;
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < K; ++i) {
        const int yy = y + i - R;
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int xx = x + j - R;
            const bool inside = yy >= 0 && yy < H && xx >= 0 && xx < W;
            const float v = inside ? in[yy * W + xx] : 0.0f;   // a predicated load
            acc += c_filter[i * K + j] * v;
        }
    }
    out[y * W + x] = acc;
}
