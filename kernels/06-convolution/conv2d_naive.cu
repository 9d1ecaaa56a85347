// 2D convolution, naive (the textbook's first kernel): one output per thread, the filter
// and every input read from global memory, the radius a run-time argument, a bounds test
// on every tap. out[y][x] = sum f[i][j] * in[y + i - r][x + j - r], zeros outside.
extern "C" __global__ void conv2d_naive(const float* __restrict__ in,
                                        const float* __restrict__ f,
                                        float* __restrict__ out, int W, int H, int r) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    const int k = 2 * r + 1;
    float acc = 0.0f;
    for (int i = 0; i < k; ++i) {
        const int yy = y + i - r;
        for (int j = 0; j < k; ++j) {
            const int xx = x + j - r;
            if (yy >= 0 && yy < H && xx >= 0 && xx < W) acc += f[i * k + j] * in[yy * W + xx];
        }
    }
    out[y * W + x] = acc;
}
