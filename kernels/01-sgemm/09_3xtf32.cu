// Rung 09: 3xTF32. The tensor cores of rung 08, with fp32-class accuracy bought back by
// arithmetic: each operand is split as x = big + small, big = tf32(x) and
// small = tf32(x - big), and the product is accumulated as
//     a*b ~= big_a*big_b + big_a*small_b + small_a*big_b
// (small_a*small_b, ~2^-22 relative, is dropped). big keeps 11 significant bits and small
// the next 11, so the operands carry ~22 of fp32's 24 bits; the products are exact in the
// tensor core's fp32 accumulate, and the error drops from TF32's ~1e-3 relative per
// product to fp32 rounding level.
//
// PRE (default where there is no split-K): the pre-pass round_tf32<true> writes x' = big +
// small (exact in fp32, 22 bits) once per element, and the loop splits x' with an integer
// round (IADD, LOP3) and one FADD: 3 instructions per fragment value instead of ~10
// (2 x cvt with its Inf/NaN test, masks, selects, FADD). SASS (sm_90, default tile): 1507
// -> 998 instructions per k-tile and warp, for 384 HMMA. The same big and small as the
// in-loop split, except at a tie (|small| exactly half a TF32 ulp of big, same sign),
// where the pair becomes (big + ulp, -small): the same sum. Predicted: 66 -> 75-85
// TFLOP/s at 8192^3 (the tensor pipe, 3 MMAs per step, is the larger share here).
//
// Predicted cost: 3 MMAs instead of 1 per tile step, so at best 1/3 of rung 08's rate
// (~100 TFLOP/s on an H200 against ~300), plus the split itself (cvt, fadd, cvt per
// fragment value, ~1.7 integer/fp32 instructions per MMA, hidden under the MMAs). Still
// well above the ~50 TFLOP/s fp32 FMA peak of the H200, at the same accuracy.
//
// Where the accuracy goes. Measured on the H200: relative error 1.4e-5 to 5.7e-5 over the
// checked sizes, 20-50x fp32's ~1e-6 (to confirm on the GPU: it should grow like K, the
// smallest at K = 2048, the largest at K = 8192). The operand split
// is not the cause (big and small are both rounded to nearest, x - big is exact, and the
// dropped small*small is ~2^-22 relative with a random sign). The likely cause is the
// tensor core's fp32 accumulate: it adds the products to C and rounds the sum toward zero
// (Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor cores", 2021), a
// bias of up to 2^-23 |C| per MMA, always towards zero, summed over 3K/8 chained MMAs: it
// grows like K, where round-to-nearest errors grow like sqrt(K). A NumPy model of this
// loop (uniform(-1, 1) inputs, float64 reference, 64 x 64 outputs) gives: truncating
// accumulate 1.9e-5 (K = 2048) and 7.6e-5 (K = 8192), the measured range; round-to-nearest
// accumulate 4.9e-7 and 1.0e-6; fp32 FFMA chain 8.2e-7 and 1.6e-6; and the three MMAs of
// each k8 step into a fresh partial (C = 0) added to the accumulator by an fp32 FADD:
// 2.9e-7 and 5.8e-7. That last form is the fix, but with a 64 x 64 warp tile its partials
// push ptxas to 255 registers and spills (ptxas keeps ~16 partials in flight), so it
// needs a register budget this tile does not have (a smaller warp tile, or mt-outer loops).
//
// Everything else (tiles, cp.async pipeline, swizzles, split-K, epilogue) is rung 08's.
#include "mma_tf32.cuh"

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
