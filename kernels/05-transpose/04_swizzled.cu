// Transpose through a swizzled shared-memory tile (tile.cuh): no padding; instead element
// (r, c) sits at column c XOR r of row r (TILE a power of two, so c ^ r stays in the row).
// 32 x 32 threads, one element each.
//
// Phase 1's row write: lane x writes column x ^ r, a permutation of the row: 32 banks.
// Phase 2's column read: lane x reads row x at column c ^ x, bank c ^ x: again 32 banks.
// Conflict-free both ways in exactly TILE * TILE elements.
#include "tile.cuh"

template <int TILE> struct Swizzled {
    static_assert((TILE & (TILE - 1)) == 0, "TILE must be a power of two");
    static constexpr int SIZE = TILE * TILE;
    __device__ static int at(int r, int c) { return r * TILE + (c ^ (r & (TILE - 1))); }
};

template <typename T>
__global__ void __launch_bounds__(1024)
transpose_swizzled(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    transpose_tile<T, 32, 32, Swizzled<32>>(in, out, rows, cols);
}
