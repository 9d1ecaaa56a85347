// Run-length encoding in separate passes, each a kernel of its own: head flags, then an
// exclusive scan of the flags (the single-pass scan), then a scatter of each run's value
// and first index. Every pass reads or writes n-element arrays: the flags are written and
// read back twice, the positions once.
//   head_flags:   flags[i] = 1 where a run begins (i == 0 or x[i] != x[i-1]), else 0
//   scatter_runs: where flags[i]: values[pos[i]] = x[i], starts[pos[i]] = i;
//                 the thread of the last element writes the number of runs.

// Four elements per thread, with 16-byte loads and stores where all four exist (T: 4 bytes).
template <typename T>
__global__ void head_flags(const T* __restrict__ x, int* __restrict__ flags, long long n) {
    const long long i0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (i0 >= n) return;
    const T before = i0 == 0 ? T(0) : x[i0 - 1];
    if (i0 + 4 <= n) {
        struct alignas(16) Four { T v[4]; };
        const Four q = *reinterpret_cast<const Four*>(x + i0);
        const T* e = q.v;
        int4 f;
        f.x = i0 == 0 || e[0] != before;
        f.y = e[1] != e[0];
        f.z = e[2] != e[1];
        f.w = e[3] != e[2];
        *reinterpret_cast<int4*>(flags + i0) = f;
    } else {
        T prev = before;
        for (long long i = i0; i < n; ++i) {
            const T v = x[i];
            flags[i] = i == 0 || v != prev;
            prev = v;
        }
    }
}

template <typename T>
__global__ void scatter_runs(const T* __restrict__ x, const int* __restrict__ flags,
                             const int* __restrict__ pos, T* __restrict__ values,
                             int* __restrict__ starts, int* __restrict__ count, long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int f = flags[i], p = pos[i];
    if (f) { values[p] = x[i]; starts[p] = (int)i; }
    if (i == n - 1) *count = p + f;
}
