// Shared-memory bandwidth under a stride: lane l of every warp reads word l * stride,
// over and over. Shared memory has 32 banks of 4 bytes (word w is in bank w % 32) and
// serves one word per bank per cycle, so a warp whose 32 words fall in 32/d banks, d
// distinct words to a bank, takes d passes: bandwidth / d, with d = gcd(stride, 32).
// PAD = true inserts one unused word after every 32 (word w lives at w + w / 32), the
// textbook fix: consecutive rows of 32 start one bank further on.
#include "loads.cuh"

constexpr int SMEM_WORDS = 32 * 32 + 32;      // the largest index, 31*32 padded, fits

template <bool PAD>
__global__ void __launch_bounds__(256)
smem_banks(int stride, int reps, unsigned* out)
{
    __shared__ unsigned s[SMEM_WORDS];
    for (int i = threadIdx.x; i < SMEM_WORDS; i += blockDim.x) s[i] = i;
    __syncthreads();
    const int lane = threadIdx.x & 31;
    int w = lane * stride;
    if (PAD) w += w >> 5;
    const unsigned addr = ptx::smem_u32(s + w);
    unsigned acc = 0;
    for (int r = 0; r < reps; ++r) {
#pragma unroll
        for (int u = 0; u < 16; ++u) {
            unsigned v;     // ld.volatile: the compiler may not merge the 16 loads into one
            asm volatile("ld.volatile.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
            acc += v;
        }
    }
    out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = acc;   // = 16 * reps * w
}
