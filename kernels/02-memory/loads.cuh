// Loads with the cache operator the template names, so that one measurement loop can be
// compiled once per operator. OP_PLAIN is what C++ `*p` compiles to; the others are the
// PTX ld.global operators, one instruction each (the 32-bit ones are in common/ptx.cuh).
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

// A pointer loaded from where `p` points: the step of a pointer chase, whose next address
// is the value the load returns, with no arithmetic between one load and the next.
// (ld.global with no operator is the plain load; a C++ `*p` through a pointer the compiler
// cannot place in global memory would become a generic LD instead.)
#define LDG_PTR(QUAL)                                                                       \
    {                                                                                      \
        const void* r;                                                                     \
        asm volatile("ld.global" QUAL ".u64 %0, [%1];\n" : "=l"(r) : "l"(p) : "memory");   \
        return r;                                                                          \
    }
template <int OP>
__device__ __forceinline__ const void* load_ptr(const void* p) {
    if constexpr (OP == OP_CA) LDG_PTR(".ca")
    else if constexpr (OP == OP_CG) LDG_PTR(".cg")
    else if constexpr (OP == OP_CV) LDG_PTR(".cv")
    else if constexpr (OP == OP_NC) LDG_PTR(".nc")
    else LDG_PTR("")           // no operator: what a C++ load of a global pointer compiles to
}
#undef LDG_PTR
