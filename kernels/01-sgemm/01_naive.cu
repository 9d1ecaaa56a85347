// Rung 01 — the naive kernel: one thread per element of C, each computing a full dot
// product straight from global memory.
//
//   C[row][col] = sum_k A[row][k] * B[k][col]
//
// The mapping is deliberately the "wrong" one: threadIdx.x walks the ROWS of C. The 32
// threads of a warp therefore hold 32 different rows and one column:
//   - their loads of A[row][k] hit 32 rows, K floats apart: 32 separate 32-byte sectors
//     for 128 useful bytes;
//   - their loads of B[k][col] are the same address (a broadcast, 4 useful bytes);
//   - their stores to C are 32 different rows: 32 sectors again.
// Every thread reads 2K floats for 2K flops, so the kernel does 0.25 flop per byte
// requested. Caches rescue some of it, but this is the floor of the ladder.
//
// Launch: block (32, 32), grid (ceil(M/32), ceil(N/32)).

#include "common.cuh"

extern "C" __global__ void sgemm_naive(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;   // x walks rows: uncoalesced
    const int col = blockIdx.y * blockDim.y + threadIdx.y;
    dot_element(A, B, C, M, N, K, row, col);                 // common.cuh
}
