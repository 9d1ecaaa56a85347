"""The machine chapter's experiments: the three ceilings every other chapter is placed against,
measured on the device rather than quoted from a datasheet."""
from __future__ import annotations

import numpy as np

from ... import race
from ...correctness import compare, poison
from ...device import clocks_now, current, fp32_peak_flops
from ...kernels import KernelSpec, blocks_per_sm, get_kernel, launch
from ...registry import BUDGET_S, experiment

COPY_UNROLL = 4
FMA_CHAINS = (1, 2, 4, 8, 16)
MMA_ACC = (1, 2, 4, 8)


def copy_spec():
    return KernelSpec("00-machine/copy.cu", "copy_vec4", template=(COPY_UNROLL,))


#: 16-byte loads a thread of the read ceiling keeps in flight (read.cu)
READ_UNROLL = 8


def read_spec(unroll=READ_UNROLL):
    return KernelSpec("00-machine/read.cu", "read_vec4", template=(unroll,))


def read_once(x, unroll=READ_UNROLL):
    """A call that reads device array `x` once with read.cu (its 16-byte vectors: the last
    nbytes % 16 bytes are left out) and writes nothing: the ceiling of a pass that only
    reads, timed next to one that does."""
    import cupy as cp

    k = get_kernel(read_spec(unroll))
    n4 = x.nbytes // 16
    block = 256
    grid = max(1, -(-n4 // (block * unroll)))
    sink = cp.zeros(1, dtype=cp.int32)
    key = np.int32(0x5bd1e995)
    return lambda: launch(k, grid, block, (x, np.int64(n4), key, sink))


def read_write_spec(unroll=READ_UNROLL):
    return KernelSpec("00-machine/read_write.cu", "read_write_vec4", template=(unroll,))


def read_write(x, nbytes: int, unroll=READ_UNROLL):
    """The floor of a pass that reads device array `x` once and writes `nbytes` (rounded up
    to 16-byte vectors) elsewhere, each block its share (read_write.cu): (a call, a check
    of what it wrote). The check poisons the output, runs the call and compares each
    vector's first word with its index."""
    import cupy as cp

    k = get_kernel(read_write_spec(unroll))
    n4, m4 = x.nbytes // 16, max(1, -(-nbytes // 16))
    block = 256
    grid = max(1, -(-n4 // (block * unroll)))
    dst = cp.empty((m4, 4), dtype=cp.int32)
    sink = cp.zeros(1, dtype=cp.int32)
    key = np.int32(0x5bd1e995)

    def call():
        launch(k, grid, block, (x, np.int64(n4), dst, np.int64(m4), key, sink))

    def check():
        poison(dst)
        call()
        return compare(dst[:, 0], cp.arange(m4), "exact")
    return call, check


def spin_spec():
    return KernelSpec("00-machine/spin.cu", "spin_ns")


#: how long the kernel ahead of a queued call spins: far longer than any call's host part
#: (timing.interleaved's `ahead`)
AHEAD_NS = 300_000


def ahead(ns: int = AHEAD_NS):
    """A call that enqueues `ns` nanoseconds of one spinning thread (spin.cu)."""
    k = get_kernel(spin_spec())
    t = np.uint64(ns)
    return lambda: launch(k, 1, 1, (t,))


def fma_spec(chains):
    return KernelSpec("00-machine/fma_chains.cu", "fma_chains", template=(chains,))


def mma_spec(acc):
    return KernelSpec("00-machine/mma_tf32_peak.cu", "mma_tf32_peak", template=(acc,))


#: Warpgroups per block of the wgmma peak (Hopper only).
WGMMA_WG = (1, 2)
WGMMA_SMEM = 256 * 32 * 4 + 1024     # B (8 x 256 per k8 step, 4 steps), 1 KB of alignment


def wgmma_spec(wg):
    return KernelSpec("00-machine/wgmma_tf32_peak.cu", "wgmma_tf32_peak", template=(wg,),
                      options=("-arch=sm_90a",))


# reader={}: nine copies of at most 4 GiB, each timed for well under a second (at most 200
# runs of a call of 2 ms): about 2 s in all, and the page quotes the best of all sizes.
@experiment("machine.copy", title="Device-to-device copy bandwidth",
            small={"sizes": (4099 * 16,)}, kernels=lambda: [copy_spec()], reader={})
def copy(ctx, sizes=(1 << 28, 1 << 30, 1 << 32)):
    """Copy `size` bytes three ways: the lab's 16-byte kernel, CuPy's elementwise copy and
    the driver's cudaMemcpy. Bytes moved = 2 × size (read + write)."""
    import cupy as cp

    dev = current()
    spec = copy_spec()
    k = get_kernel(spec)
    for size in sizes:
        if 2 * size > dev.total_mem_bytes // 2:      # a smaller GPU: skip what cannot fit
            continue
        n4 = size // 16
        src = cp.random.random(n4 * 4, dtype=cp.float32)
        dst = cp.empty_like(src)
        block = 256
        grid = -(-n4 // (block * COPY_UNROLL))

        ways = {
            "kernel-vec4": lambda: launch(k, grid, block, (src, dst, np.int64(n4))),
            "cupy-elementwise": lambda: cp.copyto(dst, src),
            "cudaMemcpy": lambda: dst.data.copy_from_device(src.data, src.nbytes),
        }
        for variant, fn in ways.items():           # each checked, then timed alone
            def check(fn=fn):
                poison(dst)
                fn()
                return compare(dst, src, "exact")
            kernel = variant == "kernel-vec4"
            alone(ctx, race.Entry(variant, fn, check=check, params={"bytes": int(src.nbytes)},
                                  kernels=[spec] if kernel else [], bytes=2 * src.nbytes,
                                  launch={"grid": grid, "block": block} if kernel else {}))
        src = dst = None                               # free before the next size
        cp.get_default_memory_pool().free_all_blocks()


def alone(ctx, entry: race.Entry) -> dict:
    """A ceiling checked, then timed by itself (ctx.time: about ctx.budget_s seconds of
    runs); the core derives its TB/s or TFLOP/s. Its row."""
    return race.run(ctx, [entry], alone=True)[entry.name]


@experiment("machine.fma", title="FP32 FMA peak vs independent chains",
            small={"fmas_per_thread": 1 << 10, "occupancies": ("full",)},
            kernels=lambda: [fma_spec(c) for c in FMA_CHAINS],
            # every row (the page draws both occupancies), each timed 0.3 s, not 1.5 s:
            # the ceiling reaches the chapters that place kernels under it in seconds
            reader={"budget_s": 0.3})
def fma(ctx, fmas_per_thread=1 << 20, occupancies=("1 warp/scheduler", "full"),
        budget_s=BUDGET_S):
    """FFMA throughput for CHAINS independent chains per thread, at one warp per SM
    sub-partition (latency exposed) and at full occupancy, each timed for about
    `budget_s` seconds. FLOPs = 2 per FMA."""
    import cupy as cp

    ctx.budget_s = budget_s

    dev = current()
    y, z = np.float32(0.5), np.float32(0.5)
    for occ in occupancies:
        for chains in FMA_CHAINS:
            spec = fma_spec(chains)
            k = get_kernel(spec)
            if occ == "full":
                block = 256
                per_sm = blocks_per_sm(k, block)
            else:
                block, per_sm = 128, 1       # 4 warps per SM: one per scheduler
            grid = dev.sms * per_sm
            iters = max(1, fmas_per_thread // (8 * chains))
            out = cp.empty(grid * block, dtype=cp.float32)

            def call(k=k, grid=grid, block=block, out=out, iters=iters):
                launch(k, grid, block, (out, y, z, np.int32(iters)))

            def check(call=call, out=out, chains=chains, iters=iters):
                poison(out)
                call()
                ref = fma_reference(chains, iters * 8, 0.5, 0.5)
                return compare(out, cp.full(out.shape, ref, dtype=cp.float64), "fp32")
            alone(ctx, race.Entry(
                f"chains{chains}-{occ}", call, check=check, variant=f"chains={chains}",
                params={"chains": chains, "occupancy": occ, "fmas_per_thread": iters * 8 * chains},
                kernels=[spec], flops=2.0 * grid * block * iters * 8 * chains,
                launch={"grid": grid, "block": block, "blocks_per_sm": per_sm},
                derived=lambda m, dev=dev: of_datasheet(m, dev)))


def of_datasheet(m: dict, dev) -> dict:
    """A timed FMA row's datasheet rate, its TFLOP/s as a fraction of it, and the SM clock
    read right after its timed runs (nothing for a row that was not timed)."""
    if "TFLOP/s" not in m:
        return {}
    peak = fp32_peak_flops(dev.as_dict())
    out = {"datasheet_TFLOP/s": (peak / 1e12, "TFLOP/s"),
           "frac_of_datasheet": (m["TFLOP/s"][0] * 1e12 / peak, "1")}
    clk = clocks_now().get("sm_clock_mhz")
    if clk:
        out["sm_clock_after_mhz"] = (clk, "MHz")
    return out


def fma_reference(chains: int, steps: int, y: float, z: float) -> float:
    """Closed form of x <- x*y + z after `steps` steps, summed over the chains, in float64."""
    fixed = z / (1 - y)
    return float(sum(y ** steps * ((c + 1) * 0.125 - fixed) + fixed for c in range(chains)))


@experiment("machine.tensor", title="TF32 tensor-core peaks",
            small={"iters": 64, "gemm_sizes": (257,)},
            kernels=lambda: [mma_spec(a) for a in MMA_ACC] + [wgmma_spec(w) for w in WGMMA_WG],
            reader={"budget_s": 0.3})    # every row, each timed 0.3 s (as machine.fma)
def tensor(ctx, iters=1 << 14, gemm_sizes=(8192,), budget_s=BUDGET_S):
    """Three tensor ceilings: mma.sync m16n8k8 TF32 with operands in registers (what any
    mma.sync kernel can reach), wgmma m64n256k8 TF32 with nothing to load (Hopper: what
    any wgmma kernel can reach) and cuBLAS TF32/FP32 GEMM (the practical library peak),
    each timed for about `budget_s` seconds."""
    import cupy as cp
    from ...blas import gemm

    ctx.budget_s = budget_s

    dev = current()
    ab = cp.asarray([1.0, 0.5], dtype=cp.float32)
    for acc in MMA_ACC:
        spec = mma_spec(acc)
        k = get_kernel(spec)
        block = 256
        per_sm = blocks_per_sm(k, block)
        grid = dev.sms * per_sm
        out = cp.empty(grid * block, dtype=cp.float32)

        def call(k=k, grid=grid, out=out):
            launch(k, grid, block, (ab, out, np.int32(iters)))

        def check(call=call, out=out, acc=acc):
            poison(out)
            call()
            return compare(out, cp.full(out.shape, 4.0 * 4 * acc * iters, dtype=cp.float64),
                           "fp32")
        alone(ctx, race.Entry(f"mma-acc{acc}", call, check=check, variant=f"mma.sync acc={acc}",
                              params={"acc": acc, "size": 0}, kernels=[spec],
                              flops=2.0 * 16 * 8 * 8 * (grid * block // 32) * acc * iters,
                              launch={"grid": grid, "block": block, "blocks_per_sm": per_sm}))
    wgmma_peak(ctx, ab, iters)
    for n in gemm_sizes:
        A = cp.random.uniform(-1, 1, (n, n), dtype=cp.float32)
        B = cp.random.uniform(-1, 1, (n, n), dtype=cp.float32)
        C = cp.empty((n, n), dtype=cp.float32)
        ref = A.astype(cp.float64) @ B.astype(cp.float64)
        for mode in ("fp32", "tf32"):
            def call(mode=mode):
                gemm(A, B, C, mode)

            def check(call=call, mode=mode):
                poison(C)
                call()
                return compare(C, ref, mode)
            alone(ctx, race.Entry(f"cublas-{mode}", call, check=check,
                                  variant=f"cuBLAS {mode.upper()}", params={"acc": 0, "size": n},
                                  kernels=[], flops=2.0 * n ** 3, launch={}))
        A = B = C = ref = None


def wgmma_peak(ctx, ab, iters: int) -> None:
    """The wgmma rows of machine.tensor: one per WGMMA_WG, or, off Hopper, one saying why."""
    import cupy as cp

    dev = current()
    for wg in WGMMA_WG:
        spec = wgmma_spec(wg)
        if not str(dev.compute_capability).startswith("9."):
            ctx.row(variant=f"wgmma warpgroups={wg}", params={"acc": wg, "size": 0}, metrics={},
                    kernels=[], invalid=f"wgmma needs a Hopper GPU (compute capability 9.x); "
                                        f"{dev.name} has {dev.compute_capability}",
                    invalid_short="needs sm_90 (wgmma)")
            continue
        k = get_kernel(spec)
        block = 128 * wg
        per_sm = blocks_per_sm(k, block, WGMMA_SMEM)
        grid = dev.sms * per_sm
        out = cp.empty(grid * block, dtype=cp.float32)
        args = (ab, out, np.int32(iters))

        def call(k=k, grid=grid, block=block, args=args):
            launch(k, grid, block, args, shared_mem=WGMMA_SMEM)

        def check(call=call, out=out):
            poison(out)
            call()
            return compare(out, cp.full(out.shape, 128 * 4 * 4.0 * iters, dtype=cp.float64),
                           "fp32")
        alone(ctx, race.Entry(f"wgmma-wg{wg}", call, check=check,
                              variant=f"wgmma warpgroups={wg}", params={"acc": wg, "size": 0},
                              kernels=[spec], flops=2.0 * 64 * 256 * 8 * 4 * (grid * wg) * iters,
                              launch={"grid": grid, "block": block, "blocks_per_sm": per_sm}))
