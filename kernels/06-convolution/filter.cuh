// The filter in constant memory, for every kernel of this chapter but the naive ones.
//
// Constant memory is a 64 KiB region of device memory read through a small per-SM cache
// that broadcasts one word to a whole warp in one go: exactly the pattern of a filter tap,
// which every thread of a warp reads at the same time. With the radius known at compile
// time, every tap index is a constant and the FFMA reads its operand straight from the
// constant bank (`FFMA R1, R2, c[0x3][0x8], R1`): no load instruction at all.
//
// The host copies the filter in before a launch (perflab.chapters.convolution.filters);
// a filter with more taps than this array holds is refused there with a ConfigError.
#pragma once

#define CONV_CONST_TAPS 16384   // 64 KiB of float32: all the constant memory a module may declare

__constant__ float c_filter[CONV_CONST_TAPS];
