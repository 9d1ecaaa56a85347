// Thread coarsening (PMPP 6.4; the seed's "2 outputs per thread"): the 32 x 32 tiled
// kernel, each thread computing COARSE elements of C instead of one.
//
// The block keeps TILE x TILE threads and covers COARSE tiles of C. Two directions:
//
//   ALONG_M = false (PMPP's): thread (ty, tx) owns C[row][col + c*TILE], c < COARSE, the
//     same row. Per K step the block loads one A tile and COARSE B tiles; per k a thread
//     reads As[ty][k] once (kept in a register for its COARSE FMAs) and COARSE values
//     Bs[c][k][tx]. Shared loads per FMA: (1/4 + COARSE) / COARSE, with A read 4 k at a
//     time (LDS.128): 1.125 at COARSE = 2, 1.06 at 4, against 1.25 for the tiled kernel.
//
//   ALONG_M = true: thread (ty, tx) owns C[row + c*TILE][col], the same column. Per k a
//     thread reads Bs[k][tx] once and COARSE values As[c][ty][k], which are contiguous in
//     k and come 4 at a time: (1 + COARSE/4) / COARSE loads per FMA, 0.75 at COARSE = 2,
//     0.5 at 4.
//
// Either way global traffic per FMA falls (one tile of the shared operand is loaded once
// for COARSE outputs): structural intensity 16 * COARSE / (1 + COARSE) FLOP per byte,
// 10.7 at 2 and 12.8 at 4. One __syncthreads pair per K step for COARSE x 32 FMAs per
// thread (the seed's "doubles the compute phase"). The price: COARSE accumulators and
// (1 + COARSE) * TILE^2 * 4 bytes of shared memory per block.
//
// Launch: block (TILE, TILE); grid (ceil(N/(TILE*COARSE)), ceil(M/TILE)) when
// ALONG_M = false, (ceil(N/TILE), ceil(M/(TILE*COARSE))) when true.

template <int TILE, int COARSE, bool ALONG_M>
__global__ void __launch_bounds__(TILE * TILE)
matmul_coarsened(const float* __restrict__ A, const float* __restrict__ B,
                 float* __restrict__ C, int M, int N, int K) {
    constexpr int NA = ALONG_M ? COARSE : 1;   // A tiles per K step
    constexpr int NB = ALONG_M ? 1 : COARSE;   // B tiles per K step
    __shared__ float As[NA][TILE][TILE];
    __shared__ float Bs[NB][TILE][TILE];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row0 = blockIdx.y * (TILE * NA) + ty;   // row of tile c: row0 + c * TILE
    const int col0 = blockIdx.x * (TILE * NB) + tx;   // column of tile c: col0 + c * TILE

    float acc[COARSE];
#pragma unroll
    for (int c = 0; c < COARSE; ++c) acc[c] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TILE) {
#pragma unroll
        for (int c = 0; c < NA; ++c) {
            const int r = row0 + c * TILE;
            As[c][ty][tx] = (r < M && k0 + tx < K) ? A[(size_t)r * K + k0 + tx] : 0.0f;
        }
#pragma unroll
        for (int c = 0; c < NB; ++c) {
            const int n = col0 + c * TILE;
            Bs[c][ty][tx] = (k0 + ty < K && n < N) ? B[(size_t)(k0 + ty) * N + n] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            if (ALONG_M) {
                const float b = Bs[0][k][tx];
#pragma unroll
                for (int c = 0; c < COARSE; ++c) acc[c] = fmaf(As[c][ty][k], b, acc[c]);
            } else {
                const float a = As[0][ty][k];
#pragma unroll
                for (int c = 0; c < COARSE; ++c) acc[c] = fmaf(a, Bs[c][k][tx], acc[c]);
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int c = 0; c < COARSE; ++c) {
        const int r = ALONG_M ? row0 + c * TILE : row0;
        const int n = ALONG_M ? col0 : col0 + c * TILE;
        if (r < M && n < N) C[(size_t)r * N + n] = acc[c];
    }
}
