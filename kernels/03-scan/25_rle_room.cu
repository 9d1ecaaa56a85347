// Run-length encoding in one pass, with room for its loads: 24 with its staged heads in 6
// bytes, so that the SM's L1 can hold the walkers' loads in flight.
//
// An SM's 256 KiB hold its shared memory and its L1, split at launch at the smallest of 0,
// 8, 16, 32, 64, 100, 132, 164, 196 or 228 KiB shared that holds its resident blocks. Our
// measurements (scan.rle_room) say that L1 also bounds the bytes of loads an SM can have
// in flight. Three of 24's blocks (three stages of 384 staged heads, 8 bytes a head: 72
// KiB each) take the 228 KiB split and leave L1 28 KiB, less than the 48 KiB their 24
// walkers ask for (16 chunks of 128 bytes each). At 288 heads a stage (54 KiB a block) the
// split is 196 KiB, L1 60 KiB, and 24 is faster; forced to the 228 KiB split it is as
// slow as at 384; and asking twice the loads a walker (96 KiB an SM) of those 60 KiB, it
// is far slower.
// Here a stage keeps a head's value in one array and its index in the piece (below the
// piece's length, at most 65536) in a second, of 16-bit words: 6 bytes a head. Three
// stages of 288 heads take 40.5 KiB a block, three blocks the 132 KiB split, and L1 gets
// about 124 KiB: room for the loads of twice as many chunks a batch. Staging a head is two
// shared stores instead of one, and the copy-out reads two arrays; the walk, its tiles,
// its tickets, its prefixes and its graph launch are 24's.
#include "graph.cuh"

// A walker's stage with the values and the indices apart (the layout of the block's
// stages: SLOTS * CAP values, then SLOTS * CAP indices); the cursor counts heads.
template <int CAP, int SLOTS>
struct SplitStage {
    static constexpr int BYTES = 6;                    // shared memory a head
    const int* val;
    const unsigned short* idx;
    unsigned vaddr, iaddr;                             // (their shared addresses)
    __device__ __forceinline__ SplitStage(unsigned char* staging, int slot)
        : val(reinterpret_cast<const int*>(staging) + slot * CAP),
          idx(reinterpret_cast<const unsigned short*>(staging + SLOTS * CAP * 4) + slot * CAP),
          vaddr((unsigned)__cvta_generic_to_shared(val)),
          iaddr((unsigned)__cvta_generic_to_shared(idx)) {}
    __device__ __forceinline__ unsigned start() const { return 0u; }
    __device__ __forceinline__ unsigned advance(unsigned c, unsigned k) const { return c + k; }
    __device__ __forceinline__ bool room(unsigned c) const { return c < CAP; }
    __device__ __forceinline__ unsigned count(unsigned c) const { return c; }
    __device__ __forceinline__ void put(unsigned c, bool on, int v, int at) const {
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %0, 0;\n\t"
                     "@p st.shared.b32 [%1], %2;\n\t@p st.shared.b16 [%3], %4;\n\t}"
                     :: "r"((int)on), "r"(vaddr + 4u * c), "r"(v), "r"(iaddr + 2u * c),
                        "h"((unsigned short)at) : "memory");
    }
    __device__ __forceinline__ int2 head(unsigned r) const { return make_int2(val[r], idx[r]); }
    __device__ __forceinline__ int index(unsigned r) const { return idx[r]; }
};

template <int WARPS, int PIECE, int BATCH, int CAP, int MINB, int WIDTH, int SEQ>
__global__ void __launch_bounds__((WARPS + 1 + (SEQ > 0)) * 32, MINB)
rle_encode_room(const int* __restrict__ in, int* __restrict__ values,
                int* __restrict__ lengths, int* __restrict__ count, long long n,
                unsigned* counter, unsigned num_tiles, unsigned long long* lo,
                unsigned long long* hi, unsigned* epoch) {
    encode_ballot<WARPS, PIECE, BATCH, CAP, WIDTH, SEQ, EpochWord, SplitStage>(
        in, values, lengths, count, n, counter, num_tiles, lo, hi, EpochWord{epoch});
}
