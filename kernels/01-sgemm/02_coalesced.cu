// Rung 02 — global-memory coalescing. Same arithmetic as rung 01, one change: threadIdx.x
// now walks the COLUMNS of C.
//
// The 32 threads of a warp hold one row and 32 consecutive columns, so:
//   - B[k][col..col+31] is 128 contiguous bytes: one fully used line instead of 32;
//   - A[row][k] is one address for the whole warp (a broadcast);
//   - the stores to C[row][col..col+31] coalesce into 128 contiguous bytes.
// The bytes each thread needs are unchanged (2K floats per output); what changes is the
// number of memory transactions a warp needs to get them, roughly 32x fewer for B and C.
// Predicted effect: several times faster than rung 01, still far from compute bound
// (no data reuse beyond what L1/L2 happen to give).
//
// Launch: block (32, 32), grid (ceil(N/32), ceil(M/32)).

#include "common.cuh"

extern "C" __global__ void sgemm_coalesced(const float* __restrict__ A, const float* __restrict__ B,
                                           float* __restrict__ C, int M, int N, int K) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;   // x walks columns: coalesced
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    dot_element(A, B, C, M, N, K, row, col);                 // the same loop as rung 01
}
