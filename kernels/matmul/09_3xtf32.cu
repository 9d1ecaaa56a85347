// Rung 09: 3xTF32. The tensor cores of rung 08, with fp32-class accuracy bought back by
// arithmetic: each operand is split as x = big + small, big = tf32(x) and
// small = tf32(x - big), and the product is accumulated as
//     a*b ~= big_a*big_b + big_a*small_b + small_a*big_b
// (small_a*small_b, ~2^-22 relative, is dropped). big keeps 11 significant bits and small
// the next 11, so the operands carry ~22 of fp32's 24 bits; the products are exact in the
// tensor core's fp32 accumulate, and the error drops from TF32's ~1e-3 relative per
// product to fp32 rounding level.
//
// Predicted cost: 3 MMAs instead of 1 per tile step, so at best 1/3 of rung 08's rate
// (~100 TFLOP/s on an H200 against ~300), plus the split itself (cvt, fadd, cvt per
// fragment value, ~1.7 integer/fp32 instructions per MMA, hidden under the MMAs). Still
// well above the ~50 TFLOP/s fp32 FMA peak of the H200, at the same accuracy.
//
// Everything else (tiles, cp.async pipeline, swizzles, split-K, epilogue) is rung 08's.
#include "matmul/mma_tf32.cuh"

// PRE: the operands come from round_tf32<true> (already big + small, 22 bits), and the
// split in the loop is tf32 + one subtraction; !PRE: the full split of a raw fp32 value.
template <bool PRE>
__device__ __forceinline__ void split(float x, unsigned& big, unsigned& small) {
    if (PRE) tc::split_pre(x, big, small);
    else tc::split_tf32(x, big, small);
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool PRE, bool ALIGNED>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 1)
sgemm_3xtf32(const float* __restrict__ A, const float* __restrict__ B,
               float* __restrict__ C, int M, int N, int K) {
    using T = tc::Tiles<BM, BN, BK, WM, WN, STAGES>;
    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned As = tc::smem_u32(smem);
    const unsigned Bs = As + STAGES * T::A_STAGE * 4;
    const char* Bs_ptr = reinterpret_cast<const char*>(smem) + STAGES * T::A_STAGE * 4;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int warp_m = warp / T::WARPS_N, warp_n = warp % T::WARPS_N;

    int tm, tn;
    tc::block_tile<8>((M + BM - 1) / BM, (N + BN - 1) / BN, tm, tn);
    int kt0, nkt;
    tc::k_range(K, BK, kt0, nkt);
    C += (size_t)blockIdx.z * M * N;   // split-K: this split's slice of the workspace

    tc::Loader<T, ALIGNED> loader(A, B, M, N, K, tm, tn, kt0, tid, As, Bs);
    const tc::FragAddr<T> fa(warp_m, warp_n, lane);

    float acc[T::MT][T::NT][4];
#pragma unroll
    for (int i = 0; i < T::MT; ++i)
#pragma unroll
        for (int j = 0; j < T::NT; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;

    // Prologue: fill STAGES-1 stages. Every step commits a group, even an empty one, so
    // that wait_group<STAGES-2> below always means "the tile about to be used is here".
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nkt) loader.load(s);
        tc::cp_async_commit();
    }

    int read = 0, write = STAGES - 1;
    for (int t = 0; t < nkt; ++t) {
        tc::cp_async_wait<STAGES - 2>();
        // One barrier per k-tile: it publishes tile t to all warps and proves every warp
        // is done with tile t-1, whose stage is the one refilled next.
        __syncthreads();
        if (t + STAGES - 1 < nkt) loader.load(write);
        tc::cp_async_commit();

        const unsigned a_base = As + read * (T::A_STAGE * 4);
        const char* b_base = Bs_ptr + read * (T::B_STAGE * 4);
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks) {
            // A fragments as big + small pairs: 2 x 16 registers for a 64-row warp tile.
            unsigned a_big[T::MT][4], a_small[T::MT][4];
#pragma unroll
            for (int mt = 0; mt < T::MT; ++mt) {
                unsigned raw[4];
                tc::ldmatrix_x4(raw, a_base + fa.a[ks] + mt * 16 * BK * 4);
#pragma unroll
                for (int r = 0; r < 4; ++r)
                    split<PRE>(__uint_as_float(raw[r]), a_big[mt][r], a_small[mt][r]);
            }
#pragma unroll
            for (int j = 0; j < T::NT; ++j) {
                // B is split one n8-tile at a time: 4 live registers instead of 4 * NT.
                unsigned b0_big, b0_small, b1_big, b1_small;
                split<PRE>(*reinterpret_cast<const float*>(b_base + tc::b_off(fa, ks, 0, j)),
                           b0_big, b0_small);
                split<PRE>(*reinterpret_cast<const float*>(b_base + tc::b_off(fa, ks, 1, j)),
                           b1_big, b1_small);
#pragma unroll
                for (int mt = 0; mt < T::MT; ++mt) {
                    // The two small cross terms first, then big*big: the small terms are
                    // added while the accumulator is still close to their magnitude.
                    tc::mma_tf32(acc[mt][j], a_small[mt], b0_big, b1_big);
                    tc::mma_tf32(acc[mt][j], a_big[mt], b0_small, b1_small);
                    tc::mma_tf32(acc[mt][j], a_big[mt], b0_big, b1_big);
                }
            }
        }
        read = (read + 1 == STAGES) ? 0 : read + 1;
        write = (write + 1 == STAGES) ? 0 : write + 1;
    }
    tc::cp_async_wait<0>();   // no copy may outlive the block (empty groups only, by now)

    tc::store_tile<T, ALIGNED>(C, M, N, tm * BM + warp_m * WM, tn * BN + warp_n * WN, acc, lane);
}
