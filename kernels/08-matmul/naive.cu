// The seed's naive SGEMM: one thread per element of C, the dot product straight from
// global memory.
//
//   C[row][col] = sum_k A[row][k] * B[k][col]      (row-major, any M, N, K >= 1)
//
// threadIdx.x walks the COLUMNS of C (the seed's and PMPP's mapping), so a warp holds one
// row and 32 consecutive columns:
//   - A[row][k] is one address for the whole warp: a broadcast, 4 useful bytes;
//   - B[k][col .. col+31] is 128 contiguous bytes: one coalesced request;
//   - the stores to C[row][col .. col+31] are 128 contiguous bytes.
// Structurally every FMA (2 FLOP) reads 8 bytes: 0.25 FLOP per byte. Whether the DRAM
// sees that traffic is a question for the caches: a block of 32 x 32 threads reads one
// 32-row panel of A and one 32-column panel of B, and L1 and L2 serve the reuse.
//
// Indices are 64-bit wherever a product of two dimensions is formed: an element past
// 2^31 (a 46341 x 46341 C) is addressed correctly.
//
// Launch: block (32, 32), grid (ceil(N/32), ceil(M/32)).

extern "C" __global__ void __launch_bounds__(1024)
matmul_naive(const float* __restrict__ A, const float* __restrict__ B,
             float* __restrict__ C, int M, int N, int K) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;

    const float* a = A + (size_t)row * K;
    const float* b = B + col;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc = fmaf(a[k], b[(size_t)k * N], acc);
    C[(size_t)row * N + col] = acc;
}
