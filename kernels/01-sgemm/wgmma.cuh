// Hopper (sm_90a) pieces of rung 10 of the SGEMM ladder: mbarriers, the tensor-memory
// copy (cp.async.bulk.tensor, TMA, with its multicast form), clusters, warpgroup MMA
// (wgmma.mma_async, TF32) and its shared-memory matrix descriptors, setmaxnreg. One
// instruction per wrapper, operands in the PTX ISA's order. Plain CUDA C++17 for NVRTC:
// no CUDA headers.
//
// ---------------------------------------------------------------------------------------
// The wgmma m64nNk8 accumulator layout (PTX ISA, "Register fragments and shared memory
// matrix layouts", wgmma .m64nNk8 D). Thread i of the warpgroup is in warp w = i / 32,
// lane l = i % 32, g = l / 4, t = l % 4. For each n8 column block j (0 .. N/8 - 1):
//   d[4j + 0] = D[16w + g    ][8j + 2t]      d[4j + 1] = D[16w + g    ][8j + 2t + 1]
//   d[4j + 2] = D[16w + g + 8][8j + 2t]      d[4j + 3] = D[16w + g + 8][8j + 2t + 1]
// (the mma.sync m16n8 C layout of each warp, repeated over N).
// ---------------------------------------------------------------------------------------
#pragma once

namespace hop {

// A tensor map (CUtensorMap): 128 opaque bytes, 64-byte aligned, made on the host by
// cuTensorMapEncodeTiled.
struct __align__(64) TensorMap {
    unsigned long long v[16];
};

__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// ---- mbarriers (PTX ISA, "Parallel Synchronization and Communication: mbarrier") -------
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count) : "memory");
}
// Make the initialised barriers visible to the other threads and to the copy engine.
__device__ __forceinline__ void fence_barrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Arrive and add `bytes` to the transactions the current phase waits for.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
                 :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(bar) : "memory");
}
// Wait until the phase of parity `parity` has completed (try_wait suspends the thread for
// a while in hardware before it returns false; the loop retries).
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    unsigned done;
    do {
        asm volatile("{\n.reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
}

// ---- TMA (PTX ISA, "cp.async.bulk.tensor") ----------------------------------------------
// Copy the box at element coordinates (c0 innermost, c1) of the tensor `map` describes into
// shared memory at `dst`; completion is counted in bytes on the mbarrier `bar`. Parts of
// the box outside the tensor are filled with zeros (and still counted).
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TensorMap* map, unsigned bar,
                                            int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
        "[%0], [%1, {%2, %3}], [%4];\n"
        :: "r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1),
           "r"(bar)
        : "memory");
}
__device__ __forceinline__ void prefetch_tensormap(const TensorMap* map) {
    asm volatile("prefetch.tensormap [%0];\n"
                 :: "l"(reinterpret_cast<unsigned long long>(map)) : "memory");
}

// ---- clusters (PTX ISA, "Thread Block Clusters", mapa, barrier.cluster) ------------------
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
// All threads of all blocks of the cluster: release what this thread wrote to shared
// memory, wait for every other thread of the cluster.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// The shared::cluster address of this block's shared address `a` in block `rank`.
__device__ __forceinline__ unsigned mapa(unsigned a, unsigned rank) {
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(a), "r"(rank));
    return r;
}
// Arrive on an mbarrier of any block of the cluster (address from mapa).
__device__ __forceinline__ void mbar_arrive_cluster(unsigned cluster_addr) {
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n"
                 :: "r"(cluster_addr) : "memory");
}
// tma_load_2d, multicast: the box lands at the same shared offset `dst` in every block of
// `mask` (bit i: cluster rank i), and each of them counts its bytes on its own mbarrier at
// the offset `bar`.
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const TensorMap* map,
                                                      unsigned bar, int c0, int c1,
                                                      unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n"
        :: "r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1),
           "r"(bar), "h"(mask)
        : "memory");
}

// ---- register reallocation between warpgroups (sm_90a) ---------------------------------
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" :: "n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" :: "n"(N));
}

// ---- wgmma (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate") ---------
// Shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address,
// leading- and stride-dimension byte offsets (each >> 4, 14 bits), swizzle mode in bits
// 62-63 (1 = 128-byte swizzle). For a K-major operand in the 128-byte swizzle, written by
// TMA with CU_TENSOR_MAP_SWIZZLE_128B from 32-float (128-byte) rows: 8 rows form a
// 1024-byte swizzle atom, atoms follow each other every 1024 bytes (the stride offset);
// the leading offset is not used (a k8 step of tf32 is 32 bytes, inside the atom) and set
// to 1 (16 bytes). The k-th k8 step starts 32 k bytes into the row: the start
// address moves, the hardware applies the swizzle to the address bits (tile bases are
// 1024-byte aligned, so the base-offset field stays 0).
__device__ __forceinline__ unsigned long long desc_sw128(unsigned addr) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4)
         | (1ull << 16)                       // leading byte offset (unused), 16 B
         | ((unsigned long long)(1024 >> 4) << 32)   // stride byte offset: 1024 B
         | (1ull << 62);                      // 128-byte swizzle
}

__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}
// The accumulators must not be touched by ordinary code while a wgmma that writes them is
// in flight: this empty asm, with every accumulator as an in/out operand, keeps the
// compiler from moving reads or writes of d across the wait that precedes it.
template <int N>
__device__ __forceinline__ void fence_regs(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i]) :: "memory");
}

// D (64 x 256, fp32, in registers) += A (64 x 8, tf32, in registers) * B (8 x 256, tf32,
// in shared memory through the descriptor `db`, K-major): the "RS" form, issued by the
// whole warpgroup. a[0..3] hold this thread's part of A as mma.sync m16n8k8 holds it in
// each warp: a0 = A[16w + g][t], a1 = A[16w + g + 8][t], a2 = A[16w + g][t + 4],
// a3 = A[16w + g + 8][t + 4]. The registers must not change until the wgmma has completed.
__device__ __forceinline__ void mma_m64n256k8_rs(float (&d)[128], const unsigned (&a)[4],
                                                 unsigned long long db) {
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "{%128, %129, %130, %131}, %132, 1, 1, 1;\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}

// One 32-bit shared-memory load (the fragments of the register operand). Volatile: it
// must stay after the mbarrier wait that publishes the copy engine's writes.
__device__ __forceinline__ unsigned lds32(unsigned addr) {
    unsigned v;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
    return v;
}
}  // namespace hop
