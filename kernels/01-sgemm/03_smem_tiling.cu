// Rung 03 — shared-memory tiling.
//
// A block of TILE x TILE threads owns a TILE x TILE tile of C. It walks K in steps of
// TILE: the block copies a TILE x TILE tile of A and one of B into shared memory (one
// float per thread each, coalesced), synchronizes, and every thread then takes its
// TILE-long slice of the dot product from shared memory.
//
// Reuse: each float brought from global memory is now read TILE times from shared memory
// instead of TILE times from global memory. Global traffic drops from 2K floats per
// output element (rungs 01-02) to 2K/TILE: 16x less with TILE = 32.
// The next wall is shared memory itself: each FMA still needs two shared loads
// (A[ty][k] is a broadcast, B[k][tx] a conflict-free row read), so the kernel is bound
// by shared-memory bandwidth, not by the FMA units.
//
// Edges: a tile that hangs over the matrix is loaded with zeros, which add nothing to
// the dot product; only in-range elements of C are stored.
//
// Launch: block (TILE, TILE), grid (ceil(N/TILE), ceil(M/TILE)). TILE <= 32.

template <int TILE>
__global__ void __launch_bounds__(TILE * TILE)
sgemm_smem(const float* __restrict__ A, const float* __restrict__ B,
           float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // One float of A and one of B per thread; tx walks contiguous addresses in both.
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();

#pragma unroll
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();   // before the next iteration overwrites the tiles
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}
