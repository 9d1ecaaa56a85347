// RGB -> gray, PX pixels per thread with wide loads. An image is contiguous, so a
// pointwise operation can forget its rows: thread t takes pixels PX·t … PX·t + PX - 1 of
// the flat image, 3·PX consecutive bytes in and PX bytes out.
//   PX = 4:  three 32-bit loads (12 bytes) and one 32-bit store;
//   PX = 16: three 128-bit loads (48 bytes) and one 128-bit store.
// Each pixel's bytes are picked out of the loaded words by shifts that unrolling turns into
// constants. The image must start at a multiple of 16 bytes (checked in Python), so 3·PX·t
// and PX·t are multiples of the load width. The last thread's partial group (pixels % PX)
// goes byte by byte.
#include "luma.cuh"

template <int N>
__device__ __forceinline__ unsigned byte_at(const unsigned (&w)[N], int k)
{
    return (w[k >> 2] >> (8 * (k & 3))) & 0xffu;
}

template <int PX>
__global__ void rgb_to_gray_vec(const unsigned char* __restrict__ rgb,
                                unsigned char* __restrict__ gray, long long pixels)
{
    static_assert(PX == 4 || PX == 16, "PX is 4 (32-bit loads) or 16 (128-bit loads)");
    const long long p0 = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * PX;
    if (p0 >= pixels) return;
    if (p0 + PX > pixels) {
        for (long long p = p0; p < pixels; ++p)
            gray[p] = (unsigned char)luma(rgb[3 * p], rgb[3 * p + 1], rgb[3 * p + 2]);
        return;
    }
    unsigned w[3 * PX / 4];
    if constexpr (PX == 16) {
        const uint4* src = reinterpret_cast<const uint4*>(rgb + 3 * p0);
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            const uint4 v = src[k];
            w[4 * k] = v.x;
            w[4 * k + 1] = v.y;
            w[4 * k + 2] = v.z;
            w[4 * k + 3] = v.w;
        }
    } else {
        const unsigned* src = reinterpret_cast<const unsigned*>(rgb + 3 * p0);
#pragma unroll
        for (int k = 0; k < 3; ++k) w[k] = src[k];
    }
    unsigned out[PX / 4];
#pragma unroll
    for (int q = 0; q < PX / 4; ++q) {
        unsigned packed = 0;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int k = 3 * (4 * q + j);          // the pixel's first byte in the group
            packed |= luma(byte_at(w, k), byte_at(w, k + 1), byte_at(w, k + 2)) << (8 * j);
        }
        out[q] = packed;
    }
    if constexpr (PX == 16)
        *reinterpret_cast<uint4*>(gray + p0) = make_uint4(out[0], out[1], out[2], out[3]);
    else
        *reinterpret_cast<unsigned*>(gray + p0) = out[0];
}
