// The tile loaders of the four-wide register tiles (conv2d_wide.cu, conv3d_wide.cu).
//
// The window is PLANES x ROWS x (4 * NV) floats of a W x H x D array (a 2D image is one
// plane), its first column x0 a multiple of 4, zeros outside the array. Everything is a
// compile-time constant but the origin, so the loader is one unrolled sweep: thread t
// takes elements t, t + NT, t + 2 NT, ... of the window; BATCH of them are loaded back to
// back (in flight together), then stored.
//
// load_window_vec moves 16-byte vectors: one LDG.128 and one STS.128 per four floats. It
// needs W % 4 == 0 and 16-byte aligned arrays (a vector is then wholly inside the array or
// wholly outside); load_window_scalar is the same sweep one float at a time, for the rest.
#pragma once

template <int PLANES, int ROWS, int NV, int NT, int BATCH = 8>
__device__ __forceinline__ void load_window_vec(float4* dst, const float* __restrict__ src,
                                                int W, int H, int D, int x0, int y0, int z0,
                                                int t) {
    constexpr int PER_PLANE = ROWS * NV, TOTAL = PLANES * PER_PLANE;
    constexpr int TRIPS = (TOTAL + NT - 1) / NT;
#pragma unroll
    for (int k0 = 0; k0 < TRIPS; k0 += BATCH) {
        float4 v[BATCH];
#pragma unroll
        for (int b = 0; b < BATCH; ++b) {
            const int i = t + (k0 + b) * NT;
            const int a = i / PER_PLANE, rem = i - a * PER_PLANE;
            const int row = rem / NV, c4 = rem - row * NV;
            const int gz = z0 + a, gy = y0 + row, gx = x0 + 4 * c4;
            const bool inside = k0 + b < TRIPS && i < TOTAL && gz >= 0 && gz < D && gy >= 0 &&
                                gy < H && gx >= 0 && gx < W;
            v[b] = inside ? *reinterpret_cast<const float4*>(
                                src + (static_cast<long long>(gz) * H + gy) * W + gx)
                          : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int b = 0; b < BATCH; ++b) {
            const int i = t + (k0 + b) * NT;
            if (k0 + b < TRIPS && i < TOTAL) dst[i] = v[b];
        }
    }
}

template <int PLANES, int ROWS, int COLS, int NT>
__device__ __forceinline__ void load_window_scalar(float* dst, const float* __restrict__ src,
                                                   int W, int H, int D, int x0, int y0, int z0,
                                                   int t) {
    constexpr int PER_PLANE = ROWS * COLS, TOTAL = PLANES * PER_PLANE;
    for (int i = t; i < TOTAL; i += NT) {
        const int a = i / PER_PLANE, rem = i - a * PER_PLANE;
        const int row = rem / COLS, c = rem - row * COLS;
        const int gz = z0 + a, gy = y0 + row, gx = x0 + c;
        const bool inside = gz >= 0 && gz < D && gy >= 0 && gy < H && gx >= 0 && gx < W;
        dst[i] = inside ? src[(static_cast<long long>(gz) * H + gy) * W + gx] : 0.0f;
    }
}
