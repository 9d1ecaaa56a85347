"""The simple-matmul chapter's experiments: the case study's and PMPP's kernels checked and timed against cuBLAS
FP32 in the same rounds (`matmul.kernels`), an L2 roof for the roofline (`matmul.l2`),
the profiler's bytes and counters for each kernel (`matmul.profile`) and the correctness
audit, category × kernel (`matmul.audit`)."""
from __future__ import annotations

import math

import numpy as np

from ... import race
from ...correctness import TOLERANCE, Check, compare, poison
from ...kernels import KernelSpec, blocks_per_sm, checked, get_kernel, launch, warm
from ...profile import REPLAYED, ncu_missing
from ...registry import experiment
from . import CHAPTER
from . import audit as au
from .variants import VARIANTS
from .variants import get as get_variant

BASELINE = "cuBLAS FP32"

#: The sources' sizes: 512-2048 (the T4 table of the SGEMM case study), 3072 (the RTX 4000
#: Ada portfolio), 4096 and 8192 and the two non-square shapes of the case study's H100
#: table (M x N x K).
SIZES = ((512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (3072, 3072, 3072),
         (4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 4096), (4096, 4096, 8192))
#: The correctness pass: sizes that are multiples of no tile, and N = 1.
SMALL_SIZES = ((67, 45, 93), (257, 130, 511), (33, 1, 65))
#: The race's baselines: each row keeps its ratio to each of these kernels of the same
#: run, round by round (perflab.race), under this key: vs_cublas, and how many times as
#: fast as the naive, tiled and plain column-major kernels.
KEYS = {BASELINE: "vs_cublas", "naive": "x_naive", "tiled": "x_tiled", "cm-plain": "x_cm_plain"}


def _entries(prob) -> list:
    """The race on `prob`: cuBLAS FP32 and every variant (the checked call, and the
    launch-only call it is timed by), each checked on its first argument set; the
    column-major variants get B in Fortran order."""
    import cupy as cp
    from ...blas import gemm

    M, N, K = prob.M, prob.N, prob.K
    bcm = [cp.asfortranarray(b) for _, b, _ in prob.sets]

    def entry(name, run, fast, sets, specs, layout):
        def check():
            A, B, C = sets[0]
            poison(C)
            checked(lambda: run(A, B, C), f"{name} {M}x{N}x{K}")
            return compare(C, prob.ref, "fp32")
        return race.Entry(name, fast, sets, check=check, kernels=specs, flops=prob.flops,
                          baseline=KEYS.get(name), extra={"b_layout": layout})

    gemm32 = lambda A, B, C: gemm(A, B, C, "fp32")
    out = [entry(BASELINE, gemm32, gemm32, list(prob.sets), [], "row")]
    for v in VARIANTS:
        sets = [(a, bcm[i] if v.b_layout == "col" else b, c)
                for i, (a, b, c) in enumerate(prob.sets)]
        p = v.params()
        out.append(entry(v.name, lambda A, B, C, v=v, p=p: v.run(A, B, C, p),
                         lambda A, B, C, v=v, p=p: v.enqueue(A, B, C, p), sets, v.kernels(p),
                         "col" if v.b_layout == "col" else "row"))
    return out


@experiment("matmul.kernels", title="The case study's and PMPP's kernels against cuBLAS FP32",
            small={"sizes": SMALL_SIZES}, kernels=lambda: [s for v in VARIANTS
                                                           for s in v.kernels(v.params())],
            # reader={}: the page quotes every kernel at every size, and a shorter budget
            # saves about a second: the time is the large sizes' few rounds of one call
            reader={})
def kernels(ctx, sizes=SIZES, budget_s=0.6):
    """Every kernel checked against a float64 reference (output poisoned, fresh random
    inputs), then the correct ones timed with cuBLAS FP32 in interleaved rounds (5, fewer
    where a round is slow: Context.time_interleaved); each row keeps its ratio to cuBLAS
    and to the naive, tiled and plain column-major kernels, round by round, with the
    spread."""
    import cupy as cp
    from ..sgemm import Problem

    warm([s for v in VARIANTS for s in v.kernels(v.params())])
    for M, N, K in sizes:
        prob = Problem(M, N, K, timing=ctx.timing, reference="gpu" if ctx.timing else "cpu")
        race.run(ctx, _entries(prob), params=prob.params, budget_s=budget_s, rounds=5,
                 precision="fp32", seed=prob.seed)
        del prob
        cp.get_default_memory_pool().free_all_blocks()


# ------------------------------------------------------------------------------- L2 roof

def l2_spec() -> KernelSpec:
    return KernelSpec(f"{CHAPTER}/l2_read.cu", "l2_read")


#: (bytes, passes): 16 MiB read 64 times per launch (in L2), 4 GiB once (from DRAM).
L2_CASES = ((16 << 20, 64), (4 << 30, 1))


@experiment("matmul.l2", title="An L2 roof: one read kernel served by L2 and by DRAM",
            small={"cases": ((1 << 20, 2), (16 << 20, 1))}, kernels=lambda: [l2_spec()],
            # reader={}: two cases (the L2 roof and the DRAM one), raced for 0.4 s
            reader={})
def l2(ctx, cases=L2_CASES, budget_s=0.4):
    """The same grid-strided ld.global.cg read kernel on a working set that fits in L2 and
    on one that does not, checked (per-thread sums against float64), then timed in
    interleaved rounds. Bytes counted: those read, bytes × passes."""
    import cupy as cp
    from ...device import current

    k = get_kernel(l2_spec())
    grid = current().sms * min(4, blocks_per_sm(k, 256))
    threads = grid * 256
    out = cp.empty(threads, dtype=cp.float32)
    entries = []
    for want, passes in cases:
        # A whole number of 4-load steps per thread and pass (the kernel's fast loop).
        n4 = max(1, round(want / 16 / (4 * threads))) * 4 * threads
        nbytes = n4 * 16
        x = cp.random.default_rng().uniform(-1, 1, n4 * 4, dtype=cp.float32)
        name = f"{'L2' if nbytes <= current().l2_bytes // 2 else 'DRAM'} {_size(nbytes)}"
        fn = (lambda x=x, n4=n4, passes=passes:
              launch(k, grid, 256, (x, np.int64(n4), np.int32(passes), out)))

        def check(fn=fn, x=x, n4=n4, passes=passes, name=name):
            poison(out)
            checked(fn, name)
            sums = x.reshape(-1, 4).astype(cp.float64).sum(axis=1)
            padded = cp.zeros(-(-n4 // threads) * threads, dtype=cp.float64)
            padded[:n4] = sums
            return compare(out, padded.reshape(-1, threads).sum(axis=0) * passes, "fp32")
        # bytes counted: those read, bytes x passes (the race's TB/s)
        entries.append(race.Entry(name, fn, [()], check=check, kernels=[l2_spec()],
                                  params={"bytes": nbytes, "passes": passes},
                                  metrics={"bytes_read": (nbytes * passes, "B")},
                                  bytes=nbytes * passes, variant=name.split()[0],
                                  launch={"grid": grid, "block": 256}))
    race.run(ctx, entries, budget_s=budget_s, rounds=5)


def _size(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.1f} MiB"


# -------------------------------------------------------------------------------- audit

def _audit_specs():
    return [s for sub in au.subjects() for s in sub.specs()]


@experiment("matmul.audit", title="The correctness audit: every category, every kernel",
            small={"names": tuple(v.name for v in VARIANTS), "categories": au.SMALL_CATEGORIES,
                   "isolated": False},
            kernels=_audit_specs,
            # reader={}: the page's audit table is every category of every kernel, and
            # the isolated cases are the ones that show a lost context
            reader={})
def audit(ctx, names=None, categories=None, isolated=True):
    """One row per category × kernel (chapter 1's rungs and this chapter's kernels): the
    verdict, every case's outcome and detail. The cases that can lose the CUDA context
    run in child processes, alongside the others."""
    from concurrent.futures import ThreadPoolExecutor

    subs = au.subjects(None if names is None else list(names))
    cats = list(categories or au.CATEGORIES)
    warm([s for sub in subs for s in sub.specs()])
    env = au.Env.gpu()
    iso_cases = [k for k, (cat, _) in au.ISOLATED.items() if cat in cats] if isolated else []
    pool = ThreadPoolExecutor(max_workers=1)
    pending = pool.submit(au.run_isolated, subs, tuple(iso_cases)) if iso_cases else None
    results = {(c, s.name): [] for c in cats for s in subs}
    try:
        for s in subs:
            for c in cats:
                if au.CATEGORIES[c].run is not None:
                    results[(c, s.name)] += au.run_inprocess(c, s, env)
        if pending is not None:
            for (name, case), res in pending.result().items():
                results[(au.ISOLATED[case][0], name)].append(res)
    finally:
        pool.shutdown(wait=True)
    for s in subs:
        for c in cats:
            cases = results[(c, s.name)]
            ok = bool(cases) and all(x.ok for x in cases)
            rel = [x.rel_err for x in cases if x.rel_err is not None]
            br = [x.bound_ratio for x in cases if x.bound_ratio is not None]
            metrics = {"cases": (len(cases), "1"),
                       "failed": (sum(not x.ok for x in cases), "1")}
            if rel:
                metrics["worst_rel_err"] = (max(rel), "1")
            if br:
                metrics["bound_ratio"] = (max(br), "1")
            chk = Check(ok, max(rel) if rel else math.nan, TOLERANCE[s.precision], 0)
            ctx.row(variant=s.name, params={"category": c}, metrics=metrics, check=chk,
                    kernels=s.specs(), verdict=au.verdict(cases),
                    detail=au.summary_detail(cases), kernel_chapter=s.chapter,
                    precision=s.precision, cases=[x.as_dict() for x in cases])


# ------------------------------------------------------------------------------ profile

#: 2048^3 fits in the 60 MiB L2 (48 MB of operands): its DRAM bytes are the compulsory
#: ones. 4096^3 (192 MB) does not, as the seed's 2048^3 did not fit the T4's 4 MB L2.
PROFILE_SIZES = ((2048, 2048, 2048), (4096, 4096, 4096))

#: Counters of perflab.profile.COUNTERS besides its METRICS: FMAs executed (to check the
#: FLOP count), shared stores and their bank conflicts (corner turning), total
#: instructions, the LSU pipe and the L1, L2 and DRAM throughputs as a share of their
#: peaks, theoretical occupancy. A pair is (the name this chapter's rows give it, the
#: catalogue's name).
EXTRA = ("ffma_thread_inst", "smem_st_instructions", "smem_st_wavefronts",
         "smem_st_bank_conflicts", "inst_executed", "lsu_pipe_pct", "l1tex_throughput_pct",
         "l2_throughput_pct", ("dram_throughput_pct", "gpu_dram_throughput_pct"),
         "theoretical_occupancy_pct")


def profile_segments() -> list[dict]:
    return [{"variant": v, "M": M, "N": N, "K": K} for M, N, K in PROFILE_SIZES
            for v in [BASELINE] + [x.name for x in VARIANTS]]


@experiment("matmul.profile", title="What each kernel moves: DRAM and L2 bytes, counters",
            small={"segments": ()}, requires=ncu_missing,
            # a recorded check (the roofline table: every kernel at both sizes); a reader's
            # run shows the recorded counters, plan="full" profiles where Nsight Compute is
            reader={}, replay_reader=REPLAYED)
def profile(ctx, segments=None):
    """Each kernel launched once per size under Nsight Compute (clocks untouched)."""
    from ...profile import profiled

    for seg in profiled(ctx, segments, profile_segments, "perflab.chapters.matmul.profiling", EXTRA):
        v = None if seg["variant"] == BASELINE else get_variant(seg["variant"])
        ctx.row(variant=seg["variant"], params={"M": seg["M"], "N": seg["N"], "K": seg["K"]},
                metrics=seg["metrics"], kernels=[] if v is None else v.kernels(v.params()),
                profiled_kernels=", ".join(seg["kernels"]))
