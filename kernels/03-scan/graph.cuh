// Run-length encoding in one pass, launched as a CUDA graph: 23 with its epoch kept on the GPU.
//
// 23's GPU work at 2^25 is about 56 µs, and its call took about 10 µs more: the host's part
// of a call, the driver's launch, and the status state's epoch (the tag that tells this
// call's tile words from older ones) advanced on the host and passed as an argument. A CUDA
// graph launches a kernel whose configuration and arguments were fixed when the graph was
// built, for a fraction of a launch's host time, so every argument has to stay the same from
// call to call. The epoch is the one that did not: here it lives in a word in device memory.
//   - One thread of each block reads the word (an acquire load) before it takes the block's
//     first ticket; every block shares that value through shared memory.
//   - The look-back warp that finds the last tile's prefix adds one to the word. Every tile
//     of the call was ticketed before that prefix could be found, and each ticket was taken
//     after its block read the word, so every block that works on a tile read the same
//     epoch; a block that reads the word after the advance finds no tile left. The next call
//     starts after this one ends (one stream), so it reads the advanced word.
// The host counts the calls and, before the epoch could reach 2^30 (its 30 bits in a status
// word), zeroes the status words and sets the word back to 1, as it does for 23's epochs.
// The rest is 23, unchanged: its shapes, its traffic.
#include "ballot.cuh"

// The call's epoch, a word in device memory the last tile's look-back advances.
struct EpochWord {
    unsigned* word;
    __device__ __forceinline__ void take(unsigned* shared) const {
        unsigned e;
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(e) : "l"(word) : "memory");
        *shared = e;
    }
    __device__ __forceinline__ unsigned get(unsigned shared) const { return shared; }
    __device__ __forceinline__ void advance() const { atomicAdd(word, 1u); }
};

template <int WARPS, int PIECE, int BATCH, int CAP, int MINB, int WIDTH, int SEQ>
__global__ void __launch_bounds__((WARPS + 1 + (SEQ > 0)) * 32, MINB)
rle_encode_graph(const int* __restrict__ in, int* __restrict__ values,
                 int* __restrict__ lengths, int* __restrict__ count, long long n,
                 unsigned* counter, unsigned num_tiles, unsigned long long* lo,
                 unsigned long long* hi, unsigned* epoch) {
    encode_ballot<WARPS, PIECE, BATCH, CAP, WIDTH, SEQ>(
        in, values, lengths, count, n, counter, num_tiles, lo, hi, EpochWord{epoch});
}
