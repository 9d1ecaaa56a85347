// TF32 tensor-core peak for mma.sync: the ceiling of every kernel that feeds the tensor
// cores from registers (no wgmma), measured with the operands already in registers.
//
// Each warp keeps ACC independent accumulator tiles (16x8 each, 4 floats per lane) and
// issues mma.sync.m16n8k8 on them round-robin, so ACC tensor-core operations are in
// flight per warp. With A = 1 and B = 0.5 every mma adds 8 x 0.5 = 4 to each accumulator
// element, exactly representable while the count stays under 2^22: checkable exactly.
template <int ACC>
__global__ void __launch_bounds__(256)
mma_tf32_peak(const float* __restrict__ ab, float* __restrict__ out, int iters)
{
    unsigned a[4], b[2];
    const float av = ab[0], bv = ab[1];
#pragma unroll
    for (int i = 0; i < 4; ++i) asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(a[i]) : "f"(av));
#pragma unroll
    for (int i = 0; i < 2; ++i) asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(b[i]) : "f"(bv));
    float d[ACC][4];
#pragma unroll
    for (int t = 0; t < ACC; ++t)
#pragma unroll
        for (int i = 0; i < 4; ++i) d[t][i] = 0.0f;
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int t = 0; t < ACC; ++t) {
            asm volatile(
                "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                : "+f"(d[t][0]), "+f"(d[t][1]), "+f"(d[t][2]), "+f"(d[t][3])
                : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        }
    }
    float s = 0.0f;
#pragma unroll
    for (int t = 0; t < ACC; ++t)
#pragma unroll
        for (int i = 0; i < 4; ++i) s += d[t][i];
    out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}
