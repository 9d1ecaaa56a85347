// Every wrapper of kernels/common/ptx.cuh, used once, so the compile report compiles it.
#include "common/ptx.cuh"

extern "C" __global__ void uses_ptx(const unsigned* __restrict__ p, unsigned* out) {
    __shared__ __align__(16) unsigned s[256];
    const unsigned long long t0 = ptx::clock64_(), g0 = ptx::globaltimer();
    unsigned v = ptx::ld_ca(p) + ptx::ld_cg(p + 1) + ptx::ld_cv(p + 2) + ptx::ld_lu(p + 3)
               + ptx::ld_nc(p + 4);
    ptx::cp_async_cg16(ptx::smem_u32(s + 4 * (threadIdx.x % 32)), p + 4 * (threadIdx.x % 32), 16);
    ptx::cp_async_ca4(ptx::smem_u32(s + 128 + threadIdx.x % 32), p, 4);
    ptx::cp_async_commit();
    ptx::cp_async_wait<0>();
    __syncthreads();
    unsigned r[4];
    ptx::ldmatrix_x4(r, ptx::smem_u32(s + 4 * (threadIdx.x % 32)));
    out[threadIdx.x] = v + r[0] + r[1] + r[2] + r[3]
                     + static_cast<unsigned>(ptx::clock64_() - t0 + ptx::globaltimer() - g0);
}
