// Corner turning (PMPP 6.2): the tiled kernel when B is stored column-major.
//
// B (K x N) column-major holds B[k][n] at Bc[n * K + k]: a column of B is contiguous, a
// row is K floats apart. The tiled kernel's B load, Bs[ty][tx] = B[k0 + ty][col0 + tx],
// then has the 32 lanes of a warp (consecutive tx) read 32 different columns: 32
// addresses K floats apart, 32 sectors for 128 useful bytes (TURN = false).
//
// Turned (TURN = true): the threads swap roles for the copy. Lane tx reads
// B[k0 + tx][col0 + ty], i.e. Bc[(col0 + ty) * K + k0 + tx]: a warp reads 128 contiguous
// bytes of one column, and writes them to Bs[tx][ty], the same place in the tile as
// before, so the compute loop is unchanged. The write is a column of the shared tile:
// with rows of TILE floats, 32 lanes land in one bank (a 32-way conflict, 32 wavefronts
// per store); PAD = 1 makes a row TILE + 1 floats and spreads them over all 32 banks.
//
// A is row-major and read as in the tiled kernel. Launch: block (TILE, TILE), grid
// (ceil(N/TILE), ceil(M/TILE)), TILE <= 32.

template <int TILE, bool TURN, int PAD>
__global__ void __launch_bounds__(TILE * TILE)
matmul_colmajor_b(const float* __restrict__ A, const float* __restrict__ Bc,
                  float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + PAD];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col0 = blockIdx.x * TILE;
    const int col = col0 + tx;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
        if (TURN) {   // lane tx walks k down one column of B: contiguous in Bc
            const int n = col0 + ty, k = k0 + tx;
            Bs[tx][ty] = (k < K && n < N) ? Bc[(size_t)n * K + k] : 0.0f;
        } else {      // lane tx walks n along one row of B: K floats apart in Bc
            const int k = k0 + ty;
            Bs[ty][tx] = (k < K && col < N) ? Bc[(size_t)col * K + k] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k)
            acc = fmaf(As[ty][k], Bs[k][tx], acc);
        __syncthreads();
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}
