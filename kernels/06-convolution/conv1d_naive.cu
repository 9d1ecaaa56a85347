// 1D convolution, naive: one output per thread; every input and every filter tap is a
// load from global memory, the radius a run-time argument. The convolution is written in
// correlation form, y[i] = sum_j f[j] * x[i + j - r], with zeros outside the array.
extern "C" __global__ void conv1d_naive(const float* __restrict__ x,
                                        const float* __restrict__ f,
                                        float* __restrict__ y, int n, int r) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int j = 0; j <= 2 * r; ++j) {
        const int k = i + j - r;
        if (k >= 0 && k < n) acc += f[j] * x[k];
    }
    y[i] = acc;
}
