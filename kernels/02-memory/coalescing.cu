// Coalescing: the same bytes, moved by the same threads, in two orders.
//
// copy_interleaved: thread t copies elements t, t + T, t + 2T, ... (T threads in all), so
// at each step a warp's 32 loads are 32 consecutive floats: one 128-byte line.
// copy_runs: thread t copies its own run [t * run, (t + 1) * run), so at each step a
// warp's 32 loads are `run` floats apart: 32 lines for one useful float from each.
// copy_strided: out[i] = in[i * stride]; one useful float in every `stride`, so a warp's
// load spans stride * 128 bytes and the sectors fetched per useful byte grow with stride
// until each float has a 32-byte sector of its own (stride 8).
extern "C" __global__ void copy_interleaved(const float* __restrict__ src,
                                            float* __restrict__ dst, long long n)
{
    const long long T = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += T)
        dst[i] = src[i];
}

extern "C" __global__ void copy_runs(const float* __restrict__ src, float* __restrict__ dst,
                                     long long n, long long run)
{
    const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const long long begin = t * run;
    const long long end = begin + run < n ? begin + run : n;
    for (long long i = begin; i < end; ++i)
        dst[i] = src[i];
}

extern "C" __global__ void copy_strided(const float* __restrict__ src,
                                        float* __restrict__ dst, long long n, int stride)
{
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i * stride];
}
