// One 32-bit global load with the cache operator the template names, so that the same
// measurement loop can be compiled once per operator. OP_PLAIN is what C++ `*p` compiles
// to; the others are the PTX ld.global operators, one instruction each (common/ptx.cuh).
#pragma once
#include "common/ptx.cuh"

enum LoadOp { OP_PLAIN = 0, OP_CA = 1, OP_CG = 2, OP_CV = 3, OP_NC = 4 };

template <int OP>
__device__ __forceinline__ unsigned load_op(const unsigned* p) {
    if constexpr (OP == OP_CA) return ptx::ld_ca(p);
    else if constexpr (OP == OP_CG) return ptx::ld_cg(p);
    else if constexpr (OP == OP_CV) return ptx::ld_cv(p);
    else if constexpr (OP == OP_NC) return ptx::ld_nc(p);
    else return *p;
}

// Make the clock read that follows wait for `v`: an instruction that reads a register
// waits for the load that writes it, and volatile asm keeps its place among the others.
__device__ __forceinline__ unsigned consume(unsigned v) {
    unsigned r;
    asm volatile("mov.b32 %0, %1;\n" : "=r"(r) : "r"(v) : "memory");
    return r;
}
