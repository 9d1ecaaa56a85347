// Rung 10: Hopper's own path to the tensor cores. TF32 wgmma.mma_async (a warpgroup of
// 128 threads issues one 64 x 256 x 8 MMA) fed by the tensor-memory accelerator
// (cp.async.bulk.tensor, TMA: one instruction copies a whole 2-D box of a matrix into
// shared memory, swizzled, and counts the bytes on an mbarrier). Compiled for sm_90a.
// C = A @ B, row-major fp32, any M, N, K.
//
// The design, and what each piece is predicted to buy (chapters/notes/01-sgemm.md has the
// predictions and the measurements):
// * TF32 wgmma reads a shared-memory operand only K-major (the transpose option exists for
//   16-bit types only). A (M x K, row-major) is K-major; B (K x N) is not. So each tile is
//   computed transposed, C^T = B^T A^T: the wgmma's first operand is B^T, taken from
//   registers (the "RS" form), each thread loading its fragment values from B's tile as
//   TMA left it (n contiguous); the second is A^T, i.e. A's tile read K-major from shared
//   memory through a descriptor. No pass over B, no transpose (rung 08's pre-pass read and
//   wrote both operands once: ~10 % of the time at 4096^3).
// * Rounding to TF32 happens in the copy engine: the tensor maps have the element type
//   TFLOAT32, and TMA rounds each fp32 value on its way into shared memory (measured: the
//   error is cuBLAS TF32's; with FLOAT32 maps the tensor core truncates, 2.65x the error).
// * A tensor map's row stride must be a multiple of 16 bytes: where a row of A (K % 4) or
//   of B (N % 4) does not start on 16 bytes, the host first copies that operand into rows
//   padded to a multiple of 4 floats (pad_copy, wgmma_tile.cuh; the padding is never
//   read, the map's width is K or N).
// * Block tile 256 (m) x 128 (n) x 32 (k): two consumer warpgroups, each owning 64 columns
//   of C (64 rows of C^T) with one m64n256k8 per k8 step, 128 accumulators per thread. Per
//   stage one TMA box of A (256 rows x 32 floats = 128 bytes, the 128-byte swizzle's width:
//   32 KB) and 4 boxes of B (32 k-rows x 32 n: 4 KB each): 48 KB; 4 stages = 192 KB, one
//   block per SM. Boxes over an edge are zero-filled by TMA: no edge code in the main loop.
// * B^T's register fragment: lane (g, t) of warp w needs rows g and g+8 (n) at columns t
//   and t+4 (k). In a swizzled box, 16-byte chunk j of row k sits at j ^ (k % 8); the 8 n
//   of one fragment row are taken as two runs of 4 that lie 4 chunks apart, so the 32
//   lanes of each LDS.32 hit 32 different banks. Rows of C^T may be permuted freely (the
//   epilogue undoes it), so this costs nothing.
// * Warp specialisation: warpgroup 0 is the producer (one thread issues the copies; the
//   warpgroup gives registers back with setmaxnreg.dec), warpgroups 1 and 2 consume
//   (setmaxnreg.inc). A stage is handed over by two mbarriers: full[s] (the producer's
//   arrive + the copies' bytes) and empty[s] (one arrive per consumer warpgroup once the
//   MMAs that read the stage have completed).
// * Per k-tile a consumer loads its 16 fragment values (into one of two register buffers),
//   issues 4 wgmma m64n256k8 as one group and waits until at most one group is in flight:
//   the previous k-tile's MMAs are then complete, its stage is released and its fragment
//   buffer is free for the next k-tile.
// * Optional (CL = 2): a cluster of two blocks of one tile-row, each loading half of the A
//   tile for both with a multicast copy: 32 KB instead of 48 KB from L2 per block and
//   k-tile. Measured slower on the H200 (see the notes); off by default.
// * Epilogue straight from the accumulators to C, guarded at the edges.
#include "wgmma_tile.cuh"

namespace rung10 {

using wgt::BK;             // 32: k per stage, 128 bytes of a row of A, the swizzle width
constexpr int BM = 256;    // rows of C per block: the wgmma N

template <int CONS, int STAGES>
struct Shape {
    static constexpr int BN = 64 * CONS;              // columns of C per block
    static constexpr int THREADS = 128 * (CONS + 1);
    static constexpr int A_BYTES = BM * BK * 4;        // 32 KB
    static constexpr int B_BOX = wgt::B_BOX;           // 4 KB: 32 k-rows x 32 n
    static constexpr int B_BYTES = BN * BK * 4;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    // + 1 KB so that the stages can start on a 1024-byte boundary (the swizzle atom).
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;
};

template <int CONS, int STAGES, int CL>
__device__ __forceinline__ void gemm(const hop::TensorMap* map_a, const hop::TensorMap* map_b,
                                     float* __restrict__ C, int M, int N, int K) {
    using S = Shape<CONS, STAGES>;
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];

    const unsigned base = (hop::smem_u32(smem_raw) + 1023u) & ~1023u;
    const int wg = threadIdx.x / 128;
    const int nkt = (K + BK - 1) / BK;
    // A cluster of CL blocks takes CL neighbouring tiles of one tile-row (the same A tile).
    const int tiles_nc = ((N + S::BN - 1) / S::BN + CL - 1) / CL;
    int tm, tnc;
    grouped_block<8>(blockIdx.x / CL, (M + BM - 1) / BM, tiles_nc, tm, tnc);   // common.cuh
    const unsigned rank = CL > 1 ? hop::cluster_rank() : 0;
    const int tn = tnc * CL + rank;

    if (threadIdx.x == 0) {
        hop::prefetch_tensormap(map_a);
        hop::prefetch_tensormap(map_b);
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            hop::mbar_init(hop::smem_u32(&full[s]), 1);
            hop::mbar_init(hop::smem_u32(&empty[s]), CONS * CL);
        }
        hop::fence_barrier_init();
    }
    // The peer blocks' barriers must be initialised before the first multicast.
    if (CL > 1) hop::cluster_sync(); else __syncthreads();

    if (wg == 0) {
        // Producer. Phase p of full[s] / empty[s] is the p-th use of stage s.
        hop::setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            for (int kt = 0; kt < nkt; ++kt) {
                const int s = kt % STAGES;
                const unsigned use = kt / STAGES;
                if (kt >= STAGES) hop::mbar_wait(hop::smem_u32(&empty[s]), (use - 1) & 1);
                const unsigned fb = hop::smem_u32(&full[s]);
                const unsigned st = base + s * S::STAGE_BYTES;
                hop::mbar_arrive_expect_tx(fb, S::STAGE_BYTES);
                if (CL == 1) {
                    hop::tma_load_2d(st, map_a, fb, kt * BK, tm * BM);
                } else {        // this block's 1/CL of the A tile, to every block of the cluster
                    hop::tma_load_2d_multicast(st + rank * (S::A_BYTES / CL), map_a, fb, kt * BK,
                                               tm * BM + rank * (BM / CL), (1u << CL) - 1);
                }
#pragma unroll
                for (int b = 0; b < 2 * CONS; ++b)
                    hop::tma_load_2d(st + S::A_BYTES + b * S::B_BOX, map_b, fb,
                                     tn * S::BN + 32 * b, kt * BK);
            }
        }
    } else {
        hop::setmaxnreg_inc<232>();
        const int c = wg - 1;              // this consumer's 64 columns of the block tile
        const int i = threadIdx.x % 128, w = i / 32, g = (i % 32) / 4, t = i % 4;
        // This thread's B^T fragment values in a stage (wgmma_tile.cuh).
        unsigned off[2][2];
        wgt::frag_offsets(off, S::A_BYTES, c, w, g, t);

        float d[128];
#pragma unroll
        for (int j = 0; j < 128; ++j) d[j] = 0.f;
        unsigned a[2][BK / 8][4];

        // One k-tile: fragments into buffer `buf`, 4 MMAs, then release the previous
        // k-tile's stage once its MMAs have completed.
        auto step = [&](int kt, auto buf_c) {
            constexpr int buf = decltype(buf_c)::value;
            const int s = kt % STAGES;
            hop::mbar_wait(hop::smem_u32(&full[s]), (kt / STAGES) & 1);
            const unsigned st = base + s * S::STAGE_BYTES;
#pragma unroll
            for (int kk = 0; kk < BK / 8; ++kk) {
                a[buf][kk][0] = hop::lds32(st + off[0][0] + kk * 1024);
                a[buf][kk][1] = hop::lds32(st + off[1][0] + kk * 1024);
                a[buf][kk][2] = hop::lds32(st + off[0][1] + kk * 1024);
                a[buf][kk][3] = hop::lds32(st + off[1][1] + kk * 1024);
            }
            hop::wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BK / 8; ++kk)
                hop::mma_m64n256k8_rs(d, a[buf][kk], hop::desc_sw128(st + 32 * kk));
            hop::wgmma_commit();
            hop::wgmma_wait<1>();
            hop::fence_regs(d);
            // One thread per warpgroup releases the stage, in every block of the cluster
            // (each of them multicasts into it).
            if (kt > 0 && i == 0) {
                const unsigned e = hop::smem_u32(&empty[(kt - 1) % STAGES]);
                if (CL == 1) {
                    hop::mbar_arrive(e);
                } else {
#pragma unroll
                    for (int r = 0; r < CL; ++r) hop::mbar_arrive_cluster(hop::mapa(e, r));
                }
            }
        };
        int kt = 0;
        for (; kt + 1 < nkt; kt += 2) {
            step(kt, wgt::Buf<0>{});
            step(kt + 1, wgt::Buf<1>{});
        }
        if (kt < nkt) step(kt, wgt::Buf<0>{});
        hop::wgmma_wait<0>();
        hop::fence_regs(d);

        // C^T's accumulators to C (wgmma_tile.cuh).
        wgt::store_ct<BM>(C, M, N, tm * BM + 2 * t, tn * S::BN, c, w, g, d);
    }
    // No block may leave while a peer can still arrive on its barriers.
    if (CL > 1) hop::cluster_sync();
}

}  // namespace rung10

// The tensor maps of A (M x K) and of B (K x N), passed by value in the kernel's
// parameter space (__grid_constant__: the copy engine reads them from there).
struct Rung10Maps {
    hop::TensorMap a, b;
};

template <int CONS, int STAGES, int CL>
__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(128 * (CONS + 1), 1)
sgemm_wgmma_tma(const __grid_constant__ Rung10Maps maps, float* __restrict__ C, int M, int N,
                int K) {
    rung10::gemm<CONS, STAGES, CL>(&maps.a, &maps.b, C, M, N, K);
}
