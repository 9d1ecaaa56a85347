// The seed's scan, reproduced on purpose: the right decomposition (reduce per block, scan
// the block totals, re-walk each block from its offset), but every kernel begins
// `if (threadIdx.x != 0) return;`, so one thread per 256-element block walks its elements
// one by one while the other 255 exit. Parallel across blocks, serial within them.
constexpr int SEED_BLOCK = 256;

template <typename T>
__global__ void seed_reduce(const T* in, T* totals, long long n) {
    if (threadIdx.x != 0) return;
    const long long base = (long long)blockIdx.x * SEED_BLOCK;
    T s = T(0);
    for (int i = 0; i < SEED_BLOCK && base + i < n; ++i) s += in[base + i];
    totals[blockIdx.x] = s;
}

template <typename T>
__global__ void seed_scan_totals(T* totals, long long num_blocks) {
    if (threadIdx.x != 0) return;                 // one block, one thread: every total in turn
    T run = T(0);
    for (long long b = 0; b < num_blocks; ++b) {
        const T t = totals[b];
        totals[b] = run;
        run += t;
    }
}

template <typename T, bool INCLUSIVE>
__global__ void seed_downsweep(const T* in, const T* offsets, T* out, long long n) {
    if (threadIdx.x != 0) return;
    const long long base = (long long)blockIdx.x * SEED_BLOCK;
    T run = offsets[blockIdx.x];
    for (int i = 0; i < SEED_BLOCK && base + i < n; ++i) {
        const T v = in[base + i];
        if (INCLUSIVE) { run += v; out[base + i] = run; }
        else { out[base + i] = run; run += v; }
    }
}
