// Box blur with running sums: O(1) work per pixel instead of (2R+1)².
//
// Each warp owns a strip of 120 output columns and ROWS output rows; lane L holds four
// adjacent columns (cin … cin + 3, cin = first column − 4 + 4L) and keeps their vertical
// window sums in registers, two 16-bit sums packed per 32-bit word. Moving down one row
// adds the row entering the window and subtracts the one leaving it; the 2R + 1 rows in
// the window stay in a ring of registers, so every input byte is loaded once per strip.
// The horizontal sum of an output column needs the vertical sums of R columns on either
// side: the neighbouring lanes' four columns, fetched with two shuffles each way (R ≤ 4).
// Lanes 0 and 31 only supply those edge columns; lanes 1 … 30 write 4 pixels each.
//
// Rows are loaded 4 bytes at a time: one 32-bit load where the four columns are inside the
// image and start at a multiple of 4 bytes (every row of an image whose width is a
// multiple of 4), four clamped 1-byte loads elsewhere. The 2R + 1 loads of a group of rows
// are issued before any of them is used. Blocks are 32 × WARPS threads, a warp per strip.
#include "box.cuh"

constexpr unsigned FULL = 0xffffffffu;

__device__ __forceinline__ unsigned load4(const unsigned char* __restrict__ in,
                                          long long row, int cin, int width, bool inside)
{
    const long long a = row + cin;
    if (inside && (a & 3) == 0) return __ldg(reinterpret_cast<const unsigned*>(in + a));
    unsigned w = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) w |= (unsigned)in[row + clamp_to(cin + j, width - 1)] << (8 * j);
    return w;
}

// Four bytes as two words of two 16-bit lanes: (b0, b1) and (b2, b3).
__device__ __forceinline__ unsigned pair_lo(unsigned w) { return __byte_perm(w, 0, 0x4140); }
__device__ __forceinline__ unsigned pair_hi(unsigned w) { return __byte_perm(w, 0, 0x4342); }

// One output row: the horizontal window sums of this lane's four columns from the
// vertical sums of its own and its neighbours' columns, rounded, stored.
template <int R>
__device__ __forceinline__ void emit(unsigned char* __restrict__ out, int y, int width,
                                     int cin, bool writer, unsigned lo, unsigned hi)
{
    const unsigned llo = __shfl_up_sync(FULL, lo, 1), lhi = __shfl_up_sync(FULL, hi, 1);
    const unsigned rlo = __shfl_down_sync(FULL, lo, 1), rhi = __shfl_down_sync(FULL, hi, 1);
    const unsigned e[12] = {llo & 0xffffu, llo >> 16, lhi & 0xffffu, lhi >> 16,
                            lo & 0xffffu, lo >> 16, hi & 0xffffu, hi >> 16,
                            rlo & 0xffffu, rlo >> 16, rhi & 0xffffu, rhi >> 16};
    if (!writer) return;
    unsigned s = 0;
#pragma unroll
    for (int t = 4 - R; t <= 4 + R; ++t) s += e[t];
    unsigned word = box_mean<R>(s);
#pragma unroll
    for (int j = 1; j < 4; ++j) {
        s += e[4 + j + R] - e[3 + j - R];
        word |= box_mean<R>(s) << (8 * j);
    }
    const long long a = (long long)y * width + cin;
    if (cin + 3 < width && (a & 3) == 0) {
        *reinterpret_cast<unsigned*>(out + a) = word;
    } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
            if (cin + j < width) out[a + j] = (unsigned char)(word >> (8 * j));
    }
}

template <int R, int ROWS>
__global__ void blur_sliding(const unsigned char* __restrict__ in,
                             unsigned char* __restrict__ out, int width, int height)
{
    static_assert(R >= 1 && R <= 4, "the neighbouring lanes hold 4 columns: R is 1 to 4");
    constexpr int K = 2 * R + 1;
    const int lane = threadIdx.x;
    const int ox = (blockIdx.x * blockDim.y + threadIdx.y) * 120;   // the strip's first column
    if (ox >= width) return;                                          // the whole warp
    const int cin = ox - 4 + 4 * lane;
    const bool inside = cin >= 0 && cin + 3 < width;
    const bool writer = lane >= 1 && lane <= 30 && cin < width;
    const int oy = blockIdx.y * ROWS;
    const int rows = min(ROWS, height - oy);
    const int hmax = height - 1;

    unsigned ring[K];
    unsigned lo = 0, hi = 0;
#pragma unroll
    for (int k = 0; k < K; ++k)
        ring[k] = load4(in, (long long)clamp_to(oy - R + k, hmax) * width, cin, width, inside);
#pragma unroll
    for (int k = 0; k < K; ++k) {
        lo += pair_lo(ring[k]);
        hi += pair_hi(ring[k]);
    }
    emit<R>(out, oy, width, cin, writer, lo, hi);
    // Row oy + i adds row oy + i + R and drops row oy + i - R - 1, which is ring[(i - 1) % K].
    for (int i0 = 1; i0 < rows; i0 += K) {
        unsigned fresh[K];
#pragma unroll
        for (int k = 0; k < K; ++k)       // clamped rows: in bounds even past the strip
            fresh[k] = load4(in, (long long)clamp_to(oy + i0 + k + R, hmax) * width, cin,
                             width, inside);
#pragma unroll
        for (int k = 0; k < K; ++k) {
            if (i0 + k < rows) {          // the same for every lane of the warp
                lo = lo + pair_lo(fresh[k]) - pair_lo(ring[k]);
                hi = hi + pair_hi(fresh[k]) - pair_hi(ring[k]);
                ring[k] = fresh[k];
                emit<R>(out, oy + i0 + k, width, cin, writer, lo, hi);
            }
        }
    }
}
