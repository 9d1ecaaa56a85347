// TF32 tensor-core peak for wgmma (Hopper, sm_90a): the ceiling of every kernel that feeds
// the tensor cores through warpgroup MMA, as cuBLAS TF32 and chapter 1's rungs 10 and 12
// do, measured with nothing to load: A (64 x 8) in registers, B (8 x 256) in shared
// memory, written once before the loop.
//
// Each warpgroup of 128 threads chains wgmma m64n256k8 into one accumulator tile (128
// floats a thread), four per group, at most two groups in flight (the pattern of a GEMM's
// main loop, without its waits for data). With A = 1 and B = 0.5 every wgmma adds
// 8 x 0.5 = 4 to each accumulator element: exact while the count stays under 2^22.
#include "01-sgemm/wgmma.cuh"

template <int WG>
__global__ void __launch_bounds__(128 * WG, 1)
wgmma_tf32_peak(const float* __restrict__ ab, float* __restrict__ out, int iters) {
    extern __shared__ unsigned char smem_raw[];
    // B: 256 rows of 32 floats (the 128-byte swizzle's rows), on a 1024-byte boundary.
    const unsigned raw = hop::smem_u32(smem_raw);
    const unsigned base = (raw + 1023u) & ~1023u;
    float* b = reinterpret_cast<float*>(smem_raw + (base - raw));
    for (int i = threadIdx.x; i < 256 * 32; i += blockDim.x) b[i] = ab[1];
    // The tensor core reads shared memory through the async proxy: make the stores visible.
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();

    unsigned a[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(a[i]) : "f"(ab[0]));
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.f;
    for (int it = 0; it < iters; ++it) {
        hop::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) hop::mma_m64n256k8_rs(d, a, hop::desc_sw128(base + 32 * kk));
        hop::wgmma_commit();
        hop::wgmma_wait<1>();
    }
    hop::wgmma_wait<0>();
    hop::fence_regs(d);
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < 128; ++i) s += d[i];
    out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}
