// Transpose, naive: every thread moves one element straight from global memory to global
// memory. out (cols x rows) = in (rows x cols) transposed, both row-major.
//
// ROW_READ says which side of the copy walks a row:
//   true:  consecutive threads read consecutive elements of an input row (a warp reads 128
//          contiguous bytes) and write them down an output column, `rows` elements apart:
//          32 lanes, 32 different rows, one 32-byte sector each for 4 useful bytes.
//   false: consecutive threads write consecutive elements of an output row and read them
//          down an input column: the same two sides, swapped.
// A block is 32 x 8 threads. The grid's y dimension loops, so any height fits (a grid is at
// most 65535 blocks high); threads outside the matrix do nothing.
template <typename T, bool ROW_READ>
__global__ void __launch_bounds__(256)
transpose_naive(const T* __restrict__ in, T* __restrict__ out, int rows, int cols)
{
    const int fast = blockIdx.x * 32 + threadIdx.x;      // along the coalesced side
    const int fast_n = ROW_READ ? cols : rows;
    const int slow_n = ROW_READ ? rows : cols;
    if (fast >= fast_n) return;
    for (int slow = blockIdx.y * 8 + threadIdx.y; slow < slow_n; slow += gridDim.y * 8) {
        const int r = ROW_READ ? slow : fast;             // input row
        const int c = ROW_READ ? fast : slow;             // input column
        out[(long long)c * rows + r] = in[(long long)r * cols + c];
    }
}
