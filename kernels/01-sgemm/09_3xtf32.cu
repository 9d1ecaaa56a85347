// Rung 09: 3xTF32. The tensor cores of rung 08, with fp32-class accuracy bought back by
// arithmetic: each operand is split as x = big + small, big = tf32(x) and
// small = tf32(x - big), and the product is accumulated as
//     a*b ~= big_a*big_b + big_a*small_b + small_a*big_b
// (small_a*small_b, ~2^-22 relative, is dropped). big keeps 11 significant bits and small
// the next 11, so the operands carry ~22 of fp32's 24 bits; the products are exact in the
// tensor core's fp32 accumulate, and the error drops from TF32's ~1e-3 relative per
// product to fp32 rounding level.
//
// PRE (default where there is no split-K): the pre-pass round_3xtf32 (below) writes
// x' = big + small (exact in fp32, 22 bits) once per element, and the loop splits x' with
// an integer round (IADD, LOP3) and one FADD: 3 instructions per fragment value, not ~10
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
// Where the accuracy goes. Measured on the H200 (run 391f6df60025): relative error
// 1.4e-5 at 2048^3 and 5.7e-5 at 8192^3, against cuBLAS FP32's 8.1e-7 and 1.6e-6: it grows
// like K, where round-to-nearest errors grow like sqrt(K). The operand split is not the
// cause (big and small are both rounded to nearest, x - big is exact, and the dropped
// small*small is ~2^-22 relative with a random sign). The cause is the tensor core's fp32
// accumulate: it adds the products to C and rounds the sum toward zero (Fasi, Higham,
// Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor cores", 2021), a bias of up to
// 2^-23 |C| per MMA, always towards zero, summed over 3K/8 chained MMAs. The three MMAs
// of each k8 step into a fresh partial (C = 0), added to the accumulator by an fp32 FADD,
// take the error to 3.0e-7 and 5.8e-7 in the same run, under cuBLAS FP32's; but with
// this 64 x 64 warp tile the partials take ptxas to 255 registers and 64-72 B of spills,
// and the rung to 0.79x its speed (58.6 against 74.3 TFLOP/s at 8192^3); with a 64 x 32
// warp tile, which fits, 60.5. So this rung keeps the chained accumulate.
//
// Everything else (tiles, cp.async pipeline, swizzles, split-K, epilogue) is rung 08's;
// special values (NaN, +-Inf, values near FLT_MAX) take the fp32 fallback at the end.
#include "mma_tf32.cuh"

// PRE: the operands come from round_3xtf32 (already big + small, 22 bits), and the
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
    // Tiles, cp.async pipeline, split-K slice and epilogue: mma_tf32.cuh's frame, as rung
    // 11 runs it. This rung's own part is one k8 step: three products per fragment pair.
    tc::gemm_kn<T, ALIGNED>(A, B, C, M, N, K, [](auto& acc, const auto& fa, unsigned a_base,
                                                 const char* b_base, int ks) {
        // A fragments as big + small pairs: 2 x 16 registers for a 64-row warp tile,
        // loaded as fp32 bits into a_big and split in place.
        unsigned a_big[T::MT][4], a_small[T::MT][4];
        tc::load_a<T>(a_big, fa, a_base, ks);
#pragma unroll
        for (int mt = 0; mt < T::MT; ++mt)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                split<PRE>(__uint_as_float(a_big[mt][r]), a_big[mt][r], a_small[mt][r]);
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
    });
}

// ---- Special values -------------------------------------------------------------------
// Three products cannot carry an infinity: with x = Inf split as big = Inf, the cross term
// big_a * small_b is Inf * 0 = NaN for every b that TF32 holds exactly (small_b = 0), where
// IEEE gives Inf * b = +-Inf; and a value within half a TF32 ulp of FLT_MAX rounds up to
// Inf as a big part. So the GEMM above leaves them alone, and a pass after it (and after
// the split-K reduction) computes every element of C that came out not finite again, as an
// fp32 FMA chain over all of K from the operands as given: the IEEE result, as cuBLAS
// FP32 gives it. Only inputs that can make a non-finite element need the pass: NaN, +-Inf
// or |x| >= 2^48 (finite products of smaller values stay under 2^96 and K < 2^31 of them
// under FLT_MAX). The pre-pass raises a flag when it meets one, and the pass reads the
// flag and stops at once when it is down: one launch, no read of C. Without the pre-pass
// (split-K, PRE_ROUND = 0) there is no flag and the pass reads C (small there).
__device__ __forceinline__ bool not_finite(float v) {
    return (__float_as_uint(v) & 0x7f800000u) == 0x7f800000u;
}

// Operand pre-pass (PRE): Y[i] = big + small of X[i], as split_tf32 makes them (exact in
// fp32, 22 significant bits), so that the loop splits with split_pre. +-Inf and NaN pass
// through (big + small would turn Inf into Inf + NaN) and a finite X[i] whose big rounds
// up to Inf is kept finite (cut to 22 bits, toward zero): the GEMM then gives NaN or +-Inf
// exactly where the pass above must step in. *flag |= 1 where an input needs the pass.
// float4 when both pointers are 16-byte aligned; a scalar loop does the rest.
__device__ __forceinline__ float round_split(float x, bool& special) {
    special |= !(fabsf(x) < 0x1p48f);              // NaN, +-Inf, or |x| >= 2^48
    unsigned big, small;
    tc::split_tf32(x, big, small);
    if (not_finite(__uint_as_float(big)))     // x is +-Inf or NaN, or rounds past FLT_MAX
        return not_finite(x) ? x : __uint_as_float(__float_as_uint(x) & 0xfffffffcu);
    return __uint_as_float(big) + __uint_as_float(small);
}

extern "C" __global__ void __launch_bounds__(256)
round_3xtf32(const float* __restrict__ X, float* __restrict__ Y, long long n,
             int* __restrict__ flag) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long done = 0;
    bool special = false;
    if (((reinterpret_cast<unsigned long long>(X) | reinterpret_cast<unsigned long long>(Y)) &
         15) == 0) {
        const long long n4 = n / 4;
        for (long long i = first; i < n4; i += stride) {
            float4 v = reinterpret_cast<const float4*>(X)[i];
            v.x = round_split(v.x, special);
            v.y = round_split(v.y, special);
            v.z = round_split(v.z, special);
            v.w = round_split(v.w, special);
            reinterpret_cast<float4*>(Y)[i] = v;
        }
        done = n4 * 4;
    }
    for (long long i = done + first; i < n; i += stride) Y[i] = round_split(X[i], special);
    if (special) atomicOr(flag, 1);
}

// The pass: C[r][c] not finite -> sum over k of A[r][k] * B[k][c], fp32 FMAs in k order.
// Block b takes rows b, b + gridDim.x, ...; its threads walk the row's columns. flag null
// (no pre-pass): always look.
extern "C" __global__ void __launch_bounds__(256)
fix_not_finite(const float* __restrict__ A, const float* __restrict__ B,
               float* __restrict__ C, int M, int N, int K, const int* __restrict__ flag) {
    if (flag != nullptr && *flag == 0) return;
    for (int row = blockIdx.x; row < M; row += gridDim.x) {
        const float* a = A + (size_t)row * K;
        float* c = C + (size_t)row * N;
        for (int col = threadIdx.x; col < N; col += blockDim.x) {
            if (!not_finite(c[col])) continue;
            float s = 0.f;
            for (int k = 0; k < K; ++k) s = fmaf(a[k], B[(size_t)k * N + col], s);
            c[col] = s;
        }
    }
}
