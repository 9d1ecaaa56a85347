// What every C path of this chapter shares: the pixel grid, the iteration's one order of
// float32 operations, and the loop over rows on one core or all of them.
//
// Pixel (i, j) is c = (x0 + i*dx, y0 + j*dy), each product and sum rounded to float32.
// Its count is the first n at which |z_n|^2 = x*x + y*y exceeds 4, z_0 = 0, or max_iter
// if none does. One step, in this order and nothing else:
//     x2 = x*x;  y2 = y*y;  escaped if x2 + y2 > 4;  t = x*y;
//     y = (t + t) + cy;  x = (x2 - y2) + cx;
// The files are compiled with -ffp-contract=off, so no product and sum are fused into an
// FMA (which rounds once where this rounds twice): every path, SIMD or not, then computes
// the same float32 numbers and the same count at every pixel. A width or height up to
// 2^24 keeps i and j exact in float32.
#pragma once
#include <omp.h>
#include <stdint.h>

// The loop over rows, each row handed to ROW(j). threads == 1: this core alone (no
// OpenMP team); threads > 1: that many; threads == 0: one per core (OpenMP's default).
// Rows are dealt out one at a time (schedule(dynamic)): a row through the set costs far
// more than a row outside it.
#define MANDEL_ROWS(h, threads, ROW)                                                   \
    do {                                                                               \
        const int nt_ = (threads) > 0 ? (threads) : omp_get_max_threads();             \
        _Pragma("omp parallel for schedule(dynamic, 1) num_threads(nt_) if(nt_ > 1)")  \
        for (int64_t j_ = 0; j_ < (h); ++j_) { ROW(j_); }                              \
    } while (0)

// The arguments every entry point takes, and the check every entry point makes first:
// -1 for a size or limit the loops cannot serve (Python refuses these before calling).
#define MANDEL_ARGS int32_t *out, int64_t w, int64_t h, float x0, float y0, float dx, \
                    float dy, int32_t max_iter, int32_t threads
#define MANDEL_BAD_ARGS (w <= 0 || h <= 0 || w > (1 << 24) || h > (1 << 24) || \
                         max_iter < 1 || threads < 0)
