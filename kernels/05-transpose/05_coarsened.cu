// Transpose with more elements per thread: the padded tile of 03_padded.cu, moved by
// TILE x ROWS threads, TILE / ROWS elements each (the classic is TILE = 32, ROWS = 8).
//
// A thread's TILE / ROWS loads are independent: all of them are issued before the first is
// stored to shared memory, so a thread keeps TILE / ROWS loads in flight where the
// one-element version keeps one. Fewer threads per block also means more blocks per SM, so
// one block waiting at its barrier leaves others loading.
#include "03_padded.cu"

template <typename T, int TILE, int ROWS>
__global__ void __launch_bounds__(TILE * ROWS)
transpose_coarsened(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    transpose_tile<T, TILE, ROWS, Padded<TILE>>(in, out, rows, cols);
}
