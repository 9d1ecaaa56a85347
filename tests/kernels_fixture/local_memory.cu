// Fixture: kernels that need local memory.
//   local_array: a large array indexed by a run-time value cannot live in registers,
//                so it takes a stack frame (but no spills).
//   forced_spill: 64 live accumulators under a 32-register budget
//                (__launch_bounds__(1024, 2): 65536 / 2048 = 32 registers) must spill.

__global__ void local_array(const float* a, float* out, int pick)
{
    float t[256];
    for (int j = 0; j < 256; ++j) t[j] = a[j] * (float)threadIdx.x;
    out[threadIdx.x] = t[pick & 255];
}

__global__ void __launch_bounds__(1024, 2) forced_spill(float* a, int n)
{
    float acc[64];
#pragma unroll
    for (int j = 0; j < 64; ++j) acc[j] = a[j * n + threadIdx.x];
    for (int it = 0; it < n; ++it) {
#pragma unroll
        for (int j = 0; j < 64; ++j) acc[j] = acc[j] * acc[(j + 1) % 64] + a[it];
    }
#pragma unroll
    for (int j = 0; j < 64; ++j) a[j * n + threadIdx.x] = acc[j];
}
