// Transpose through a padded shared-memory tile (tile.cuh): each row of the tile is one
// element longer than the tile, so element (r, c) sits at r * (TILE + 1) + c. 32 x 32
// threads, one element each.
//
// Phase 2's column read: lane x reads word x * 33 + c, bank (x + c) mod 32: 32 lanes, 32
// different banks, one pass. Phase 1's row write stays conflict-free. The price: one unused
// element per row (32 of 1056).
#include "tile.cuh"

template <int TILE> struct Padded {
    static constexpr int SIZE = TILE * (TILE + 1);
    __device__ static int at(int r, int c) { return r * (TILE + 1) + c; }
};

template <typename T>
__global__ void __launch_bounds__(1024)
transpose_padded(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    transpose_tile<T, 32, 32, Padded<32>>(in, out, rows, cols);
}
