// The shared-memory transpose that rungs 02-05 share: a block moves one TILE x TILE tile of
// `in` (rows x cols, row-major) to `out` (cols x rows) through shared memory.
//
// A block is TILE x ROWS threads; each moves TILE / ROWS elements. Phase 1: thread (x, y)
// reads input rows y, y + ROWS, ... of the tile at column x (a warp reads consecutive
// elements of a row: coalesced) and writes them to tile row y + k, column x. Barrier.
// Phase 2: thread (x, y) reads tile row x, column y + k (a warp walks down a tile column)
// and writes it to output row c0 + y + k, column r0 + x (consecutive elements of an output
// row: coalesced again).
//
// Where element (r, c) of the tile lives in shared memory is the Layout's business, its
// `at(r, c)` and its SIZE in elements: the rungs differ only in their Layout.
//
// Any shape: elements of the tile outside the matrix are neither read nor written, and the
// grid's y dimension loops over tile rows (a grid is at most 65535 blocks high).
#pragma once

template <typename T, int TILE, int ROWS, class Layout>
__device__ __forceinline__ void transpose_tile(const T* __restrict__ in, T* __restrict__ out,
                                               int rows, int cols)
{
    static_assert(TILE % ROWS == 0, "ROWS must divide TILE");
    __shared__ T tile[Layout::SIZE];
    const int x = threadIdx.x, y = threadIdx.y;
    const int c0 = blockIdx.x * TILE;                     // the tile's first input column
    for (int r0 = blockIdx.y * TILE; r0 < rows; r0 += gridDim.y * TILE) {
#pragma unroll
        for (int k = 0; k < TILE; k += ROWS) {
            const int r = r0 + y + k, c = c0 + x;
            if (r < rows && c < cols) tile[Layout::at(y + k, x)] = in[(long long)r * cols + c];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; k += ROWS) {
            const int orow = c0 + y + k, ocol = r0 + x;   // output row = input column
            if (orow < cols && ocol < rows)
                out[(long long)orow * rows + ocol] = tile[Layout::at(x, y + k)];
        }
        if (r0 + gridDim.y * TILE < rows) __syncthreads();   // tile reused: all reads first
    }
}
