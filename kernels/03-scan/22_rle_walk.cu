// Run-length encoding in rounds, each head found once: 21's counters leave the heads as
// masks, and the writers walk the bits. Compute capability 9.0 and later.
//
// In 21 the counters' work from registers is nearly free, but its writers find every head
// again, element by element, and execute 34 of the kernel's 49 million warp instructions
// at 2^25 (notes, tenth try). Here:
//   - 21's COUNTERS (count_rounds, with MASKS) also leave each piece's heads in the slot
//     as masks, one 32-bit word for 32 elements (a segment of 16 KiB: 512 bytes a slot);
//   - a WRITERS warp takes a unit of 1024 elements, 32 mask words, lane l word l: a popcount
//     and one warp scan give each lane the slot of its first head, then the lane walks its
//     word's set bits, 8 a pass (find the lowest, clear it), loads those heads' values
//     (their line, 32 elements, from L1 or L2: the counters read it moments before), and
//     stages each head's index and value; the unit's runs are then copied out as 21's are.
//     Work goes with the heads, not with the elements: runs of 1-15 leave about 4 heads a
//     word, so a pass or two a unit;
//   - 21's POLLER (poll_rounds), words, slots and rounds, unchanged.
// DRAM reads 4n; L2 serves the counters' reads and the heads' lines.
// DIAG as 21's: 1: no runs written; 2: and no words, nobody waits; 3: and no heads counted.
// Dynamic shared memory (walk_smem in rle.py): WRITERS * 1024 * 6 staging bytes;
// (COUNTERS + WRITERS + 1) * 32 threads.
#include "21_rle_reread.cu"

constexpr int WALK_UNIT = 1024;      // a writer's unit: 32 mask words
constexpr int WALK_PASS = 8;         // heads a lane takes a pass

template <int COUNTERS, int WRITERS, int SEG, int SLOTS, int MINB, int PF, int DIAG>
__global__ void __launch_bounds__((COUNTERS + WRITERS + 1) * 32, MINB)
rle_encode_walk(const int* __restrict__ in, int* __restrict__ values,
                int* __restrict__ lengths, int* __restrict__ count, long long n,
                unsigned* /* (no ticket counter) */, unsigned num_segs,
                unsigned long long* words, unsigned long long* /* (one word a segment) */,
                unsigned epoch) {
#if __CUDA_ARCH__ >= 900
    using P = unsigned long long;
    constexpr int SUB = REREAD_PIECE, PIECES = SEG / SUB, UNITS = SEG / WALK_UNIT;
    constexpr int PPC = PIECES / COUNTERS, PPW = UNITS / WRITERS;
    constexpr int POLLER = COUNTERS + WRITERS;
    static_assert(SEG % WALK_UNIT == 0 && PIECES <= 32, "whole units of 1024 elements, "
                  "at most 32 pieces of 512");
    static_assert(PIECES % COUNTERS == 0 && PPC <= 4, "1 to 4 pieces a counter a segment");
    static_assert(UNITS % WRITERS == 0 && PPW <= 4, "1 to 4 units a writer a segment");
    static_assert(SLOTS >= 2 && SLOTS <= 16, "2 to 16 slots");
    extern __shared__ __align__(16) unsigned char staging[];
    __shared__ RoundsShared<SLOTS, PIECES, SEG> sh;

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned G = gridDim.x, b = blockIdx.x;
    const unsigned rounds = (num_segs - b + G - 1) / G;      // this block's segments
    const Runs op;
    if (threadIdx.x == 0) rounds_init(sh, COUNTERS * 4, WRITERS);   // (4 mask lanes a counter)
    __syncthreads();
    if (warp < COUNTERS) {
        count_rounds<COUNTERS, SEG, SLOTS, PF, DIAG, true>(sh, in, n, count, words, epoch, G,
                                                           b, rounds, lane, warp);
        return;
    }
    if (warp == POLLER) {
        if (DIAG < 2) poll_rounds<SEG, SLOTS, MINB, DIAG>(sh, words, num_segs, epoch, lengths,
                                                          count, n, G, b, rounds, lane);
        return;
    }

    // A writer: units wr, wr + WRITERS, ... of every round, from their masks.
    if (DIAG >= 2) return;
    const int wr = warp - COUNTERS;
    unsigned short* const idx = reinterpret_cast<unsigned short*>(staging) + wr * WALK_UNIT;
    int* const val = reinterpret_cast<int*>(staging + WRITERS * WALK_UNIT * 2) + wr * WALK_UNIT;
    for (unsigned p = 0; p < rounds; ++p) {
        const int c = p % SLOTS;
        const long long t = (long long)p * G + b;
        mbar_wait_parity(&sh.counted[c], (p / SLOTS) & 1);
        mbar_wait_parity(&sh.started[c], (p / SLOTS) & 1);
        if (DIAG == 0) {
            const P pc = lane < PIECES ? sh.pair[c][lane] : P(0);
            const P inc = warp_inclusive_scan_op(pc, lane, op);
            const P up = __shfl_up_sync(FULL_MASK, inc, 1);
            const P ex = op(sh.start[c], lane == 0 ? P(0) : up);    // each piece's start
#pragma unroll
            for (int k = 0; k < PPW; ++k) {
                const int unit = wr + k * WRITERS;
                const long long ubase = t * SEG + unit * WALK_UNIT;
                const P st = __shfl_sync(FULL_MASK, ex, 2 * unit);
                const unsigned run = (unsigned)(st >> 32), last1 = (unsigned)st;
                unsigned w = sh.mask[c][unit * 32 + lane];
                const unsigned cnt = __popc(w);
                const unsigned incl = warp_scan_add(cnt, lane);
                const unsigned tot = __shfl_sync(FULL_MASK, incl, 31);
                unsigned q = incl - cnt;
                const int* const line = in + ubase + 32 * lane;
                while (__any_sync(FULL_MASK, w != 0u)) {
                    int at[WALK_PASS], v[WALK_PASS];
#pragma unroll
                    for (int h = 0; h < WALK_PASS; ++h) {    // the next heads, lowest first
                        at[h] = __ffs(w) - 1;
                        w &= w - 1u;
                    }
#pragma unroll
                    for (int h = 0; h < WALK_PASS; ++h) v[h] = at[h] >= 0 ? __ldg(line + at[h]) : 0;
#pragma unroll
                    for (int h = 0; h < WALK_PASS; ++h) {
                        if (at[h] >= 0) {
                            idx[q] = (unsigned short)(32 * lane + at[h]);
                            val[q] = v[h];
                            ++q;
                        }
                    }
                }
                __syncwarp();
                const unsigned ub = (unsigned)ubase;
                for (unsigned u = lane; u < tot; u += 32) {
                    const unsigned head = ub + idx[u];
                    const unsigned prev1 = u ? ub + idx[u - 1] + 1u : last1;
                    values[run + u] = val[u];
                    if (run + u > 0) lengths[run + u - 1] = (int)(head + 1u - prev1);
                }
                __syncwarp();
            }
        }
        __syncwarp();
        if (lane == 0) mbar_arrive(&sh.drained[c]);
    }
#endif
}
