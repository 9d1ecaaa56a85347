// The box blur's shared pieces. Pixels past an edge take the value of the nearest edge
// pixel (SciPy's mode "nearest"), and the mean of a (2R+1)² window is rounded to nearest:
// an integer sum divided by a constant, so the result is exact.
#pragma once

__device__ __forceinline__ int clamp_to(int v, int hi)
{
    return v < 0 ? 0 : (v > hi ? hi : v);
}

template <int R>
__device__ __forceinline__ unsigned box_mean(unsigned sum)
{
    constexpr unsigned D = (2 * R + 1) * (2 * R + 1);
    return (sum + D / 2) / D;
}
