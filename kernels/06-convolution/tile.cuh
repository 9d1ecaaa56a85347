// Loading a tile with its halo into shared memory, zeros outside the array (the "zero
// boundary": a tap that falls outside the image reads 0).
//
// The window is cols x rows (x3 planes for a volume) with the block's origin at (x0, y0),
// cols >= blockDim.x and rows >= BULK * blockDim.y. Its bulk, one element per thread for
// each of the BULK rows (or planes) a thread owns, is loaded first: BULK loads issued
// back to back, so they are in flight together, then stored. What is left — the halo
// columns past the block's width, the halo rows past the bulk — is loaded in loops that
// also cover a halo wider than the block (a radius larger than the tile). A warp always
// reads consecutive addresses of one row (coalesced).
#pragma once

__device__ __forceinline__ float at_or_zero(const float* __restrict__ src, int W, int H, int gx,
                                            int gy) {
    return (gx >= 0 && gx < W && gy >= 0 && gy < H) ? src[static_cast<long long>(gy) * W + gx]
                                                    : 0.0f;
}

// The halo columns [blockDim.x, cols) of row r, and (from row `first_row` on) whole rows.
__device__ __forceinline__ void load_rest(float* dst, const float* __restrict__ src, int W,
                                          int H, int x0, int y0, int cols, int rows,
                                          int bulk_rows) {
    for (int r = threadIdx.y; r < bulk_rows; r += blockDim.y)
        for (int c = threadIdx.x + blockDim.x; c < cols; c += blockDim.x)
            dst[r * cols + c] = at_or_zero(src, W, H, x0 + c, y0 + r);
    for (int r = bulk_rows + threadIdx.y; r < rows; r += blockDim.y)
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            dst[r * cols + c] = at_or_zero(src, W, H, x0 + c, y0 + r);
}

// A 2D window: the bulk is rows threadIdx.y + k * blockDim.y (k < BULK), column threadIdx.x.
template <int BULK>
__device__ __forceinline__ void load_window(float* dst, const float* __restrict__ src, int W,
                                            int H, int x0, int y0, int cols, int rows) {
    float v[BULK];
#pragma unroll
    for (int k = 0; k < BULK; ++k)
        v[k] = at_or_zero(src, W, H, x0 + threadIdx.x, y0 + threadIdx.y + k * blockDim.y);
#pragma unroll
    for (int k = 0; k < BULK; ++k) dst[(threadIdx.y + k * blockDim.y) * cols + threadIdx.x] = v[k];
    load_rest(dst, src, W, H, x0, y0, cols, rows, BULK * blockDim.y);
}

// NP planes z0 .. z0 + NP - 1 of a W x H x D volume, each a cols x rows window (planes
// outside the volume are zeros): the bulk is element (threadIdx.x, threadIdx.y) of every plane.
template <int NP>
__device__ __forceinline__ void load_planes(float* dst, const float* __restrict__ src, int W,
                                            int H, int D, int x0, int y0, int z0, int cols,
                                            int rows) {
    const long long plane = static_cast<long long>(W) * H;
    float v[NP];
#pragma unroll
    for (int a = 0; a < NP; ++a) {
        const int z = z0 + a;
        v[a] = (z >= 0 && z < D) ? at_or_zero(src + z * plane, W, H, x0 + threadIdx.x,
                                               y0 + threadIdx.y)
                                 : 0.0f;
    }
#pragma unroll
    for (int a = 0; a < NP; ++a) dst[(a * rows + threadIdx.y) * cols + threadIdx.x] = v[a];
    for (int a = 0; a < NP; ++a) {
        const int z = z0 + a;
        float* d = dst + a * rows * cols;
        if (z >= 0 && z < D) {
            load_rest(d, src + z * plane, W, H, x0, y0, cols, rows, blockDim.y);
        } else {
            for (int r = threadIdx.y; r < rows; r += blockDim.y)
                for (int c = threadIdx.x; c < cols; c += blockDim.x)
                    if (r >= blockDim.y || c >= blockDim.x) d[r * cols + c] = 0.0f;
        }
    }
}
