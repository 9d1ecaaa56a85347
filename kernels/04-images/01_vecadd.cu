// VecAdd, one element per thread (PMPP chapter 2): thread i of the grid computes
// c[i] = a[i] + b[i]. The grid has ceil(n / blockDim.x) blocks, so when n is not a
// multiple of the block the last block runs past the end of the arrays: the guard `i < n`
// keeps those threads from reading or writing there.
extern "C" __global__ void vecadd(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, long long n)
{
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
