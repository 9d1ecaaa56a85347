// Transpose through a shared-memory tile (tile.cuh), stored the plain way: element (r, c)
// at word r * 32 + c. 32 x 32 threads, one element each.
//
// Phase 1 writes tile rows: lane x of a warp writes word r * 32 + x, bank x, conflict-free.
// Phase 2 reads a tile column: lane x reads word x * 32 + c, and every one of those words
// is in bank c. 32 lanes, 32 different words, one bank: 32-way conflict, 32 passes.
#include "tile.cuh"

template <int TILE> struct Plain {
    static constexpr int SIZE = TILE * TILE;
    __device__ static int at(int r, int c) { return r * TILE + c; }
};

template <typename T>
__global__ void __launch_bounds__(1024)
transpose_tiled(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    transpose_tile<T, 32, 32, Plain<32>>(in, out, rows, cols);
}
