// The decoder, to check every encode by a round trip: offsets = exclusive scan of the
// lengths (the single-pass scan), marks = 1 at every run's first index but the first
// (marks zeroed first), run = inclusive scan of the marks, out[i] = values[run[i]].
extern "C" __global__ void mark_run_heads(const int* __restrict__ offsets, long long runs,
                               int* __restrict__ marks) {
    const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (r < runs) marks[offsets[r]] = 1;
}

template <typename T>
__global__ void gather_runs(const T* __restrict__ values, const int* __restrict__ run,
                            T* __restrict__ out, long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = values[run[i]];
}
