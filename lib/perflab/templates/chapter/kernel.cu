// @TITLE@, a first kernel: y = a * x, one element per thread, with a bounds guard so that
// any n works (not only multiples of the block). Replace it with the chapter's own.
extern "C" __global__ void scale(const float* __restrict__ x, float* __restrict__ y,
                                 float a, long long n) {
    const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
