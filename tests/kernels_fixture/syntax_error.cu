// Fixture: does not compile (line 5 lacks a semicolon).
__global__ void broken(float* a)
{
    int i = threadIdx.x;
    a[i] = 1.0f
}
