// Transpose with 16-byte accesses on both sides: a register transpose of V x V micro-tiles
// and a swizzled shared-memory tile of 16-byte chunks. V = 16 / sizeof(T): 4 floats or
// ints, 2 doubles.
//
// Phase 1: thread (x, y) loads V vectors, one from each of V consecutive input rows at the
// same column chunk: a V x V micro-tile, which it transposes in registers, so that it holds
// V vectors of the output; each goes to shared memory as one 16-byte chunk of the output
// tile. Barrier. Phase 2: the lanes of a warp read whole rows of the output tile, 16 bytes
// each, and store them to the output. Every global access is a 16-byte vector and a warp's
// are contiguous.
//
// Shared memory holds the output tile: TILE rows of CH = TILE / V chunks, chunk q of row r
// at chunk q ^ ((r / V) % 8) of that row. A 16-byte shared access is served eight lanes at
// a time (128 bytes: all 32 banks once). In phase 1 the eight lanes write rows V apart at
// the same chunk q, and the XOR sends them to eight different chunk columns; in phase 2
// they read eight neighbouring chunks of one row: conflict-free both ways.
//
// Any shape: a tile moves this way only when it lies inside the matrix and every row
// starts on a 16-byte boundary (`vec_ok`: rows and cols multiples of V, aligned pointers);
// the other tiles take the same path one element at a time, with bounds checks.

__device__ __forceinline__ unsigned& word(uint4& u, int k) {
    return k == 0 ? u.x : (k == 1 ? u.y : (k == 2 ? u.z : u.w));
}

template <typename T, int TILE, int ROWS>
__global__ void __launch_bounds__(TILE / (16 / sizeof(T)) * ROWS)
transpose_wide(const T* __restrict__ in, T* __restrict__ out, int rows, int cols, int vec_ok)
{
    constexpr int V = 16 / sizeof(T);             // elements per 16-byte chunk
    constexpr int W = sizeof(T) / 4;              // 32-bit words per element
    constexpr int CH = TILE / V;                  // chunks per tile row
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- or 8-byte elements");
    static_assert(CH >= 8 && (CH & (CH - 1)) == 0, "TILE / V: a power of two, at least 8");
    static_assert(CH % ROWS == 0, "ROWS must divide TILE / V");
    __shared__ uint4 tile[TILE * CH];
    T* const elems = reinterpret_cast<T*>(tile);
    const int x = threadIdx.x, y = threadIdx.y;
    const int c0 = blockIdx.x * TILE;
    auto slot = [](int r, int q) { return r * CH + (q ^ ((r / V) & 7)); };
    for (int r0 = blockIdx.y * TILE; r0 < rows; r0 += gridDim.y * TILE) {
        const bool wide = vec_ok && r0 + TILE <= rows && c0 + TILE <= cols;   // block-uniform
        if (wide) {
#pragma unroll
            for (int k = 0; k < CH / ROWS; ++k) {
                const int m = y + k * ROWS;       // micro-tile: input rows V*m .. V*m + V - 1
                uint4 a[V];
#pragma unroll
                for (int i = 0; i < V; ++i)
                    a[i] = *reinterpret_cast<const uint4*>(
                        in + (long long)(r0 + V * m + i) * cols + c0 + V * x);
#pragma unroll
                for (int j = 0; j < V; ++j) {     // output row V*x + j of the tile, chunk m
                    uint4 b;
#pragma unroll
                    for (int i = 0; i < V; ++i)
#pragma unroll
                        for (int w = 0; w < W; ++w) word(b, i * W + w) = word(a[i], j * W + w);
                    tile[slot(V * x + j, m)] = b;
                }
            }
        } else {
            for (int k = 0; k < CH / ROWS; ++k) {
                const int m = y + k * ROWS;
                for (int i = 0; i < V; ++i)
                    for (int j = 0; j < V; ++j) {
                        const int r = r0 + V * m + i, c = c0 + V * x + j;
                        if (r < rows && c < cols)
                            elems[slot(V * x + j, m) * V + i] = in[(long long)r * cols + c];
                    }
            }
        }
        __syncthreads();
        if (wide) {
#pragma unroll
            for (int k = 0; k < TILE / ROWS; ++k) {
                const int orow = y + k * ROWS;    // output row c0 + orow, chunk x
                *reinterpret_cast<uint4*>(out + (long long)(c0 + orow) * rows + r0 + V * x) =
                    tile[slot(orow, x)];
            }
        } else {
            for (int orow = y; orow < TILE; orow += ROWS)
                for (int i = 0; i < V; ++i) {
                    const int og = c0 + orow, oc = r0 + V * x + i;
                    if (og < cols && oc < rows) out[(long long)og * rows + oc] = elems[slot(orow, x) * V + i];
                }
        }
        if (r0 + gridDim.y * TILE < rows) __syncthreads();   // tile reused: all reads first
    }
}
