// VecAdd with a grid-stride loop: the grid is sized to the GPU (one wave: SMs × the blocks
// an SM holds), not to n, and each thread walks the arrays one grid apart. The loop
// condition is the boundary guard, so any n works with any grid, and a block is launched
// once per SM slot instead of once per 256 elements.
extern "C" __global__ void vecadd_grid_stride(const float* __restrict__ a,
                                              const float* __restrict__ b,
                                              float* __restrict__ c, long long n)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += step)
        c[i] = a[i] + b[i];
}
