// The seed's (and PMPP's) 32 x 32 shared-memory tiled SGEMM.
//
// A block of TILE x TILE threads owns a TILE x TILE tile of C. It walks K in steps of
// TILE: every thread copies one float of A and one of B into shared memory (coalesced:
// tx walks contiguous addresses in both), the block synchronizes, and each thread takes
// its TILE-long slice of the dot product from shared memory.
//
// Structural traffic: per K step a block reads 2 * TILE^2 floats for 2 * TILE^3 FLOPs,
// TILE / 4 FLOP per byte = 8 at TILE = 32 (the seed's number), 32x the naive kernel's.
// The next wall is shared memory: per FMA one read of Bs[k][tx] (a conflict-free row) and
// a share of As[ty][k] (a broadcast; four consecutive k come in one LDS.128). The compile
// report and the profiler count those loads per FMA.
//
// Edges: a tile that hangs over the matrix is loaded with zeros, which add nothing; only
// in-range elements of C are stored. 64-bit indices for every row * columns product.
//
// Launch: block (TILE, TILE), grid (ceil(N/TILE), ceil(M/TILE)), TILE <= 32.

template <int TILE>
__global__ void __launch_bounds__(TILE * TILE)
matmul_tiled(const float* __restrict__ A, const float* __restrict__ B,
             float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k)
            acc = fmaf(As[ty][k], Bs[k][tx], acc);
        __syncthreads();   // before the next step overwrites the tiles
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}
