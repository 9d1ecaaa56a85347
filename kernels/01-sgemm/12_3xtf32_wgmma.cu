// Rung 12: 3xTF32 on Hopper's wgmma. Rung 09's arithmetic (each operand split as
// x = big + small, three products a step: big_a*big_b + big_a*small_b + small_a*big_b)
// on rung 10's pipeline (TMA, mbarriers, a producer warpgroup, two consumer warpgroups,
// C^T = B^T A^T), with the accumulation error that rung 09 keeps taken out.
// Compiled for sm_90a. C = A @ B, row-major fp32, any M, N, K.
//
// The design and its prediction (chapters/notes/01-sgemm.md has the budget):
// * The error. Rung 09 chains all 3K/8 products of an output in the tensor core's fp32
//   accumulator, which truncates each sum (towards zero): a bias that grows like K, 35x
//   cuBLAS FP32's error at 8192^3. Here the products of CHUNK k-tiles (32 CHUNK values
//   of k) go into a fresh partial sum (the first wgmma of a chunk has scale-d = 0), and
//   the partial is added to the real accumulator with an fp32 FADD, rounded to nearest.
//   The bias then grows with the chunk, not with K. CHUNK = 0: one chunk of all of K
//   (rung 09's chaining, kept for the comparison).
// * The registers. The partial and the accumulator are two sets, so a consumer owns a
//   64 x 128 slice of C^T (m64n128k8: 64 registers a set), not rung 10's 64 x 256:
//   128 accumulator registers, and 2 x 2 x 16 for the split fragments. Block tile 128 (m)
//   x 128 (n) x 32 (k).
// * The operands. B^T is the register operand, as in rung 10: each thread loads its 16
//   values a k-tile from B's tile as the copy engine left it (fp32, FLOAT32 map: no
//   rounding on the way) and splits them in registers (cvt.rna, FADD, cvt.rna). A is the
//   shared-memory operand, read by the tensor core as stored: its big and small parts
//   must both be in shared memory, so a pre-pass writes them once (split_a below: a read
//   of A and two writes, ~3 % of the GEMM at 8192^3) and two tensor maps bring them in.
//   A stage is big A (16 KB) + small A (16 KB) + B (16 KB): rung 10's 48 KB, 4 stages.
// * Per k8 step: small_b*big_a, big_b*small_a, then big_b*big_a (the small terms first,
//   as in rung 09), 12 wgmma a k-tile and consumer. At a chunk's end the consumer waits
//   for its products, adds the partial and releases the stages; the other consumer's
//   products keep the tensor pipe busy meanwhile.
// * Special values: three products cannot carry an infinity (rung 09's note); the
//   pre-pass raises a flag on NaN, +-Inf or |x| >= 2^48 in A or B, and rung 09's
//   fix_not_finite computes the elements of C that came out not finite again in fp32.
#include "mma_tf32.cuh"
#include "wgmma_tile.cuh"

namespace rung12 {

using wgt::BK;             // 32: k per stage, 128 bytes of a row, the swizzle width
constexpr int BM = 128;    // rows of C per block: the wgmma N
constexpr int BN = 128;    // columns of C per block: 64 per consumer warpgroup
constexpr int CONS = 2;
constexpr int THREADS = 128 * (CONS + 1);
constexpr int A_BYTES = BM * BK * 4;          // 16 KB, one part of A
using wgt::B_BOX;          // 4 KB: 32 k-rows x 32 n
constexpr int STAGE_BYTES = 2 * A_BYTES + BN * BK * 4;

// D (64 x 128, fp32, registers) = A (64 x 8, tf32, registers) * B (8 x 128, tf32, shared
// memory through the descriptor `db`, K-major) + (acc ? D : 0): wgmma.cuh's m64n256k8 RS
// form at half the width (the same fragment and accumulator layouts, j < 16), scale-d a
// predicate: the first product of a chunk starts a fresh partial without zeroing it.
__device__ __forceinline__ void mma_m64n128k8_rs(float (&d)[64], const unsigned (&a)[4],
                                                 unsigned long long db, int acc) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "{%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(acc));
}

template <int STAGES, int CHUNK>
__device__ __forceinline__ void gemm(const hop::TensorMap* map_hi, const hop::TensorMap* map_lo,
                                     const hop::TensorMap* map_b, float* __restrict__ C,
                                     int M, int N, int K) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];

    const unsigned base = (hop::smem_u32(smem_raw) + 1023u) & ~1023u;
    const int wg = threadIdx.x / 128;
    const int nkt = (K + BK - 1) / BK;
    int tm, tn;
    grouped_block<8>(blockIdx.x, (M + BM - 1) / BM, (N + BN - 1) / BN, tm, tn);

    if (threadIdx.x == 0) {
        hop::prefetch_tensormap(map_hi);
        hop::prefetch_tensormap(map_lo);
        hop::prefetch_tensormap(map_b);
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            hop::mbar_init(hop::smem_u32(&full[s]), 1);
            hop::mbar_init(hop::smem_u32(&empty[s]), CONS);
        }
        hop::fence_barrier_init();
    }
    __syncthreads();

    if (wg == 0) {
        // Producer: rung 10's, with the two parts of A.
        hop::setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            for (int kt = 0; kt < nkt; ++kt) {
                const int s = kt % STAGES;
                if (kt >= STAGES) hop::mbar_wait(hop::smem_u32(&empty[s]), (kt / STAGES - 1) & 1);
                const unsigned fb = hop::smem_u32(&full[s]);
                const unsigned st = base + s * STAGE_BYTES;
                hop::mbar_arrive_expect_tx(fb, STAGE_BYTES);
                hop::tma_load_2d(st, map_hi, fb, kt * BK, tm * BM);
                hop::tma_load_2d(st + A_BYTES, map_lo, fb, kt * BK, tm * BM);
#pragma unroll
                for (int b = 0; b < 2 * CONS; ++b)
                    hop::tma_load_2d(st + 2 * A_BYTES + b * B_BOX, map_b, fb, tn * BN + 32 * b,
                                     kt * BK);
            }
        }
    } else {
        hop::setmaxnreg_inc<232>();
        const int c = wg - 1;
        const int i = threadIdx.x % 128, w = i / 32, g = (i % 32) / 4, t = i % 4;
        // This thread's fragment values in a stage's B boxes: rung 10's offsets.
        unsigned off[2][2];
        wgt::frag_offsets(off, 2 * A_BYTES, c, w, g, t);

        float acc[64], part[64];
#pragma unroll
        for (int j = 0; j < 64; ++j) acc[j] = part[j] = 0.f;
        unsigned big[2][BK / 8][4], small[2][BK / 8][4];

        auto release = [&](int kt) {
            if (i == 0) hop::mbar_arrive(hop::smem_u32(&empty[kt % STAGES]));
        };
        // The last k-tile of a chunk: its partial is added to acc when its products are done.
        auto chunk_end = [&](int kt) {
            return kt == nkt - 1 || (CHUNK > 0 && kt % CHUNK == CHUNK - 1);
        };
        auto step = [&](int kt, auto buf_c) {
            constexpr int buf = decltype(buf_c)::value;
            const int s = kt % STAGES;
            hop::mbar_wait(hop::smem_u32(&full[s]), (kt / STAGES) & 1);
            const unsigned st = base + s * STAGE_BYTES;
#pragma unroll
            for (int kk = 0; kk < BK / 8; ++kk)
#pragma unroll
                for (int r = 0; r < 4; ++r) {
                    const float v = __uint_as_float(
                        hop::lds32(st + off[r & 1][r >> 1] + kk * 1024));
                    tc::split_tf32(v, big[buf][kk][r], small[buf][kk][r]);
                }
            const int fresh = kt == 0 || (CHUNK > 0 && kt % CHUNK == 0);
            hop::wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BK / 8; ++kk) {
                const unsigned long long hi = hop::desc_sw128(st + 32 * kk);
                const unsigned long long lo = hop::desc_sw128(st + A_BYTES + 32 * kk);
                mma_m64n128k8_rs(part, small[buf][kk], hi, !(fresh && kk == 0));
                mma_m64n128k8_rs(part, big[buf][kk], lo, 1);
                mma_m64n128k8_rs(part, big[buf][kk], hi, 1);
            }
            hop::wgmma_commit();
            const bool prev_done = kt == 0 || chunk_end(kt - 1);   // kt-1 already released
            if (chunk_end(kt)) {
                hop::wgmma_wait<0>();
                hop::fence_regs(part);
#pragma unroll
                for (int j = 0; j < 64; ++j) acc[j] += part[j];
                if (!prev_done) release(kt - 1);
                release(kt);
            } else {
                // The previous k-tile's products are done; this one's may still run (and
                // write `part`, which nothing here reads).
                hop::wgmma_wait<1>();
                if (!prev_done) release(kt - 1);
            }
        };
        int kt = 0;
        for (; kt + 1 < nkt; kt += 2) {
            step(kt, wgt::Buf<0>{});
            step(kt + 1, wgt::Buf<1>{});
        }
        if (kt < nkt) step(kt, wgt::Buf<0>{});
        hop::wgmma_wait<0>();      // (the last step waited already: for the compiler)

        // acc to C: rung 10's epilogue, 16 column blocks (wgmma_tile.cuh).
        wgt::store_ct<BM>(C, M, N, tm * BM + 2 * t, tn * BN, c, w, g, acc);
    }
}

}  // namespace rung12

// The tensor maps of A's big part, A's small part (M x K each, from split_a) and of B
// (K x N, as stored or padded), passed by value in the kernel's parameter space.
struct Rung12Maps {
    hop::TensorMap hi, lo, b;
};

template <int STAGES, int CHUNK>
__global__ void __launch_bounds__(rung12::THREADS, 1)
sgemm_3xtf32_wgmma(const __grid_constant__ Rung12Maps maps, float* __restrict__ C, int M,
                   int N, int K) {
    rung12::gemm<STAGES, CHUNK>(&maps.hi, &maps.lo, &maps.b, C, M, N, K);
}

// The pre-pass: Hi and Lo (M rows of ldh floats, ldh a multiple of 4) = the big and small
// TF32 parts of A (M x K, row-major, as given), and *flag |= 1 if A or B (nb values) holds
// a value that can make an element of C not finite (rung 09's test: NaN, +-Inf or
// |x| >= 2^48). Columns K..ldh-1 are never read (the tensor maps' width is K). VEC4: K % 4
// == 0 and A 16-byte aligned.
__device__ __forceinline__ bool needs_fix(float x) { return !(fabsf(x) < 0x1p48f); }

template <bool VEC4>
__global__ void __launch_bounds__(256)
split_a(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ Hi,
        float* __restrict__ Lo, int* __restrict__ flag, int M, int K, int ldh, long long nb) {
    bool special = false;
    for (int r = blockIdx.y; r < M; r += gridDim.y) {
        const float* a = A + (size_t)r * K;
        float* hi = Hi + (size_t)r * ldh;
        float* lo = Lo + (size_t)r * ldh;
        if (VEC4) {
            for (int c = (blockIdx.x * blockDim.x + threadIdx.x) * 4; c < K;
                 c += gridDim.x * blockDim.x * 4) {
                const float4 v = *reinterpret_cast<const float4*>(a + c);
                unsigned b0, b1, b2, b3, s0, s1, s2, s3;
                tc::split_tf32(v.x, b0, s0);
                tc::split_tf32(v.y, b1, s1);
                tc::split_tf32(v.z, b2, s2);
                tc::split_tf32(v.w, b3, s3);
                special |= needs_fix(v.x) | needs_fix(v.y) | needs_fix(v.z) | needs_fix(v.w);
                *reinterpret_cast<uint4*>(hi + c) = make_uint4(b0, b1, b2, b3);
                *reinterpret_cast<uint4*>(lo + c) = make_uint4(s0, s1, s2, s3);
            }
        } else {
            for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < K; c += gridDim.x * blockDim.x) {
                unsigned b, s;
                tc::split_tf32(a[c], b, s);
                special |= needs_fix(a[c]);
                hi[c] = __uint_as_float(b);
                lo[c] = __uint_as_float(s);
            }
        }
    }
    const long long stride = (long long)gridDim.x * gridDim.y * blockDim.x;
    for (long long j = ((long long)blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
         j < nb; j += stride)
        special |= needs_fix(B[j]);
    if (special) atomicOr(flag, 1);
}
