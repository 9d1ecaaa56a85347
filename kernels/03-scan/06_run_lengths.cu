// Run lengths from run starts: lengths[r] = starts[r + 1] - starts[r], the last run ending
// at n. The number of runs is read from device memory (the encoder wrote it), so nothing
// waits for the host; a grid-stride loop covers any count.
extern "C" __global__ void run_lengths(const int* __restrict__ starts, const int* __restrict__ count,
                            int* __restrict__ lengths, long long n) {
    const long long runs = *count;
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < runs;
         r += (long long)gridDim.x * blockDim.x) {
        const long long end = r + 1 < runs ? starts[r + 1] : n;
        lengths[r] = (int)(end - starts[r]);
    }
}
