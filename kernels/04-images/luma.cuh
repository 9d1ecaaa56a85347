// Luma from 8-bit R, G, B with integer weights: ITU-R BT.601's 0.299, 0.587, 0.114 times
// 256 and rounded (77, 150, 29, which sum to 256), then rounded to nearest. Integer
// arithmetic is exact, so every kernel, the CuPy baseline and the host reference agree bit
// for bit; the largest value, 256 · 255 + 128, still shifts down to 255.
#pragma once

__device__ __forceinline__ unsigned luma(unsigned r, unsigned g, unsigned b)
{
    return (77u * r + 150u * g + 29u * b + 128u) >> 8;
}
