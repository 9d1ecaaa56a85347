"""Chapter 1's experiments: every rung of the ladder checked against a float64 reference
and timed next to cuBLAS (FP32 and TF32 modes, named) measured in the same run."""
from __future__ import annotations

import itertools
import os

from ... import race
from ...correctness import compare, poison
from ...errors import ConfigError
from ...kernels import KernelSpec, checked, get_kernel, warm
from ...profile import REPLAYED, ncu_missing
from ...registry import BUDGET_S, ROUNDS, experiment
from ...device import current
from ...timing import as_metrics
from . import get as get_variant
from . import variants

#: (M, N, K): the seed's size, two large squares, a non-square, a size that is a multiple
#: of no tile, and the skinny problem that leaves all but one SM idle without split-K.
SIZES = ((3072, 3072, 3072), (4096, 4096, 4096), (8192, 8192, 8192),
         (4096, 8192, 2048), (3000, 2999, 3001), (128, 128, 32768))
# (512, 512, 512) is a multiple of every default tile: the untested (EDGE = false) kernels
# of 06, 07 and 08 run in the correctness pass and under the sanitizers too.
SMALL_SIZES = ((67, 45, 93), (128, 128, 1024), (257, 130, 511), (512, 512, 512))
#: The naive rungs take seconds per call at the large sizes; they are timed up to this.
NAIVE_MAX_FLOP = 2 * 3072 ** 3
SWEEP_SIZE = (4096, 4096, 4096)
SWEEP_VARIANTS = ("06-warptiling", "08-tf32-mma")
#: Why a reader's run shows the recorded sweep (registry: replay_reader).
SWEEP_REPLAYED = ("the recorded sweep, about 70 configurations each compiled and timed; "
                  "the explorer's button measures the one you pick")


def _all_specs():
    """Every kernel the ladder launches: each rung at its default parameters."""
    return [s for v in variants() for s in v.kernels(dict(v.default_params))]


def combinations(v) -> list[dict]:
    """Every combination of a variant's param_space over its defaults (defaults first)."""
    out = [dict(v.default_params)]
    keys = list(v.param_space)
    for combo in itertools.product(*(v.param_space[k] for k in keys)):
        p = {**v.default_params, **dict(zip(keys, combo))}
        if p not in out:
            out.append(p)
    return out


def configs(v, M=4096, N=4096, K=4096, device: dict | None = None) -> list[dict]:
    """The valid combinations of a variant's param_space (defaults first)."""
    out = []
    for p in combinations(v):
        try:
            v.check(p, M, N, K, device)
        except ConfigError:
            continue
        out.append(p)
    return out


class Problem:
    """Fresh random inputs for one (M, N, K), a float64 reference, and rotated copies of
    the inputs so that every timed call reads them from device memory, not L2."""

    def __init__(self, M, N, K, *, timing: bool, reference: str = "gpu"):
        import cupy as cp
        from ...timing import rotations

        self.M, self.N, self.K = M, N, K
        self.seed = int.from_bytes(os.urandom(4), "little")
        rng = cp.random.default_rng(self.seed)
        self.A = rng.uniform(-1, 1, (M, K), dtype=cp.float32)
        self.B = rng.uniform(-1, 1, (K, N), dtype=cp.float32)
        self.C = cp.empty((M, N), dtype=cp.float32)
        if reference == "cpu":       # small sizes: NumPy float64 on the host
            self.ref = cp.asarray(cp.asnumpy(self.A).astype("f8") @ cp.asnumpy(self.B).astype("f8"))
        else:                        # cuBLAS DGEMM on float64 copies
            self.ref = self.A.astype(cp.float64) @ self.B.astype(cp.float64)
        self.flops = 2.0 * M * N * K
        nbytes = 4 * (M * K + K * N + M * N)
        n = rotations(nbytes, current().l2_bytes) if timing else 1
        self.sets = [(self.A, self.B, self.C)] + [
            (self.A.copy(), self.B.copy(), cp.empty_like(self.C)) for _ in range(n - 1)]

    @property
    def params(self) -> dict:
        return {"M": self.M, "N": self.N, "K": self.K}


#: Which cuBLAS modes a rung of each precision is timed against: the FP32 rungs against
#: cuBLAS FP32, the TF32 rungs against cuBLAS TF32, 3xTF32 (FP32-class accuracy from the
#: tensor cores) against both.
COMPARED = {"fp32": ("fp32",), "tf32": ("tf32",), "3xtf32": ("fp32", "tf32")}


def measure(ctx, prob: Problem, name: str, precision: str, fn, *, params: dict,
            specs=(), baseline: dict | None = None, fast=None) -> dict:
    """Check `fn(A, B, C)` on `prob`, then time it if it passed (`fast`, the same call
    without its argument checks, when given); record and return the row: one race
    (perflab.race) of the kernel (its TFLOP/s from the problem's FLOPs) and its baselines.

    `baseline` maps a cuBLAS mode to (variant name, call): the kernel and those calls are
    then timed interleaved, round by round, and the row keeps its ratio to each
    (`vs_cublas_<mode>`, the median over rounds, with the lowest and highest round as
    `_min`/`_max`) and cuBLAS's own time in those rounds (`cublas_<mode>_ms`). The
    baselines are checked where they are the kernel (baselines()), not again here.
    Without a baseline the kernel is timed alone."""
    def check():
        poison(prob.C)
        checked(lambda: fn(prob.A, prob.B, prob.C), f"{name} {prob.params}")
        return compare(prob.C, prob.ref, precision)

    entries = [race.Entry(name, fast or fn, prob.sets, check=check, kernels=list(specs),
                          flops=prob.flops)]
    entries += [race.Entry(bname, bfn, prob.sets, baseline=f"vs_cublas_{mode}",
                           median_as=f"cublas_{mode}_ms", row=False)
                for mode, (bname, bfn) in (baseline or {}).items()]
    return race.run(ctx, entries, params={**prob.params, **params}, rounds=None,
                    alone=not baseline, precision=precision, seed=prob.seed)[name]


def baselines(ctx, prob: Problem) -> dict:
    """cuBLAS FP32 and TF32 on `prob`, each checked, timed interleaved with the other and
    recorded as rows; returns mode -> (variant name, call) for the modes that passed their
    check, the calls the rungs are then timed against."""
    from ...blas import gemm

    calls = {mode: (f"cuBLAS {mode.upper()}", lambda A, B, C, m=mode: gemm(A, B, C, m))
             for mode in ("fp32", "tf32")}
    out = {}
    for mode, (name, fn) in calls.items():
        other = {m: c for m, c in calls.items() if m != mode}
        r = measure(ctx, prob, name, mode, fn, params={}, baseline=other)
        if r["correct"]:
            out[mode] = (name, fn)
    return out


def run_variant(ctx, prob, v, params, baseline):
    """Check, time and record rung `v` with `params` on `prob`, interleaved with the cuBLAS
    calls of `baseline` (baselines()) that its precision is compared with (a row saying
    why, when the parameters cannot run it)."""
    base = {m: baseline[m] for m in COMPARED[v.precision] if m in baseline}
    try:
        v.check(params, prob.M, prob.N, prob.K, current().as_dict())
        return measure(ctx, prob, v.name, v.precision,
                       lambda A, B, C: v.run(A, B, C, params),
                       fast=lambda A, B, C: v.enqueue(A, B, C, params),
                       params=params, specs=v.kernels(params), baseline=base)
    except ConfigError as exc:   # invalid here (tile sizes, or this GPU's limits): say why
        return ctx.row(variant=v.name, params={**prob.params, **params}, metrics={},
                       kernels=[], invalid=str(exc), precision=v.precision,
                       **({"invalid_short": exc.short} if exc.short else {}))


#: A reader's timing of the interleaved runs: a fifteenth of the budget and three rounds,
#: not nine (three rotations: each of up to three calls once in each place). Every row
#: stays, since the page quotes every size; the rounds' floor of three repeats of each
#: call, not the budget, then sets the time.
READER_TIMING = {"budget_s": 0.05, "rounds": 3}


@experiment("sgemm.ladder", title="The SGEMM ladder against cuBLAS",
            small={"sizes": SMALL_SIZES}, kernels=_all_specs, reader=READER_TIMING)
def ladder(ctx, sizes=SIZES, variant_names=None, budget_s=BUDGET_S, rounds=ROUNDS):
    """Every rung at every size, checked, then timed interleaved with the cuBLAS modes its
    precision is compared with: `rounds` rounds of about `budget_s` seconds per call."""
    import cupy as cp

    ctx.budget_s, ctx.rounds = budget_s, rounds
    warm(_all_specs())    # every rung compiled at once, not one by one at its first launch

    for M, N, K in sizes:
        prob = Problem(M, N, K, timing=ctx.timing,
                       reference="gpu" if ctx.timing else "cpu")
        baseline = baselines(ctx, prob)
        for v in variants():
            if variant_names and v.name not in variant_names:
                continue
            slow = v.name.startswith(("01-", "02-")) and prob.flops > NAIVE_MAX_FLOP
            if slow:
                continue
            run_variant(ctx, prob, v, dict(v.default_params), baseline)
        del prob
        cp.get_default_memory_pool().free_all_blocks()


def _planned(variant_names, M, N, K) -> list:
    """Every valid (variant, params) of `variant_names` at M x N x K on this GPU, their
    kernels compiled at once (kernels.warm) before the first launch."""
    dev = current().as_dict()
    todo = [(v, p) for v in map(get_variant, variant_names) for p in configs(v, M, N, K, dev)]
    warm([s for v, p in todo for s in v.kernels(p)])
    return todo


@experiment("sgemm.sweep", title="Tile-size sweep of the fastest rungs",
            small={"size": (130, 67, 200)}, sweep=True,
            kernels=lambda: [s for n in SWEEP_VARIANTS for p in configs(get_variant(n))
                             for s in get_variant(n).kernels(p)],
            # a reader's run shows the recorded sweep (the heat map and the explorers, whose
            # button measures the configuration a reader picks); plan="full" re-measures
            # every configuration, each compiled and timed in three short rounds
            reader={}, replay_reader=SWEEP_REPLAYED)
def sweep(ctx, size=SWEEP_SIZE, variant_names=SWEEP_VARIANTS, budget_s=0.4, rounds=ROUNDS):
    """Every valid tile configuration of `variant_names` at `size`, checked and timed
    interleaved with cuBLAS; ~100 configurations, so a shorter `budget_s` for each."""
    ctx.budget_s, ctx.rounds = budget_s, rounds
    M, N, K = size
    todo = _planned(variant_names, M, N, K)
    prob = Problem(M, N, K, timing=ctx.timing, reference="gpu" if ctx.timing else "cpu")
    baseline = baselines(ctx, prob)
    for v, p in todo:
        run_variant(ctx, prob, v, p, baseline)


#: The split-K rungs swept on the skinny problem: FP32 (07) and tensor cores (11).
SPLITK_VARIANTS = ("07-split-k", "11-tf32-split-k")


@experiment("sgemm.splitk", title="Split-K on the skinny problem",
            small={"size": (64, 96, 4100)}, sweep=True,
            kernels=lambda: [s for n in SPLITK_VARIANTS
                             for p in configs(get_variant(n), 128, 128, 32768)
                             for s in get_variant(n).kernels(p)]
            + [KernelSpec("01-sgemm/empty.cu", "empty")],
            reader=READER_TIMING)    # every slice count: the split-K curve
def splitk(ctx, size=(128, 128, 32768), variant_names=SPLITK_VARIANTS, budget_s=BUDGET_S,
           rounds=ROUNDS):
    """Every configuration of the split-K rungs on the skinny problem, checked and timed
    interleaved with cuBLAS (`rounds` rounds of about `budget_s` seconds per call)."""
    ctx.budget_s, ctx.rounds = budget_s, rounds
    M, N, K = size
    todo = _planned(variant_names, M, N, K)
    prob = Problem(M, N, K, timing=ctx.timing, reference="gpu" if ctx.timing else "cpu")
    baseline = baselines(ctx, prob)
    if ctx.timing:
        empty_launches(ctx)
    for v, p in todo:
        run_variant(ctx, prob, v, p, baseline)


def empty_launches(ctx, n: int = 2) -> dict:
    """The timer's floor for a call of `n` launches: `n` launches of an empty kernel, timed
    like every call here (CUDA events around the Python call). At tens of microseconds the
    host's enqueueing is part of what a split-K call measures."""
    from ...kernels import launch

    spec = KernelSpec("01-sgemm/empty.cu", "empty")
    k = get_kernel(spec)
    call = lambda: [launch(k, (1, 1, 1), (32, 1, 1), ()) for _ in range(n)]
    t = ctx.time(call, [()], f"{n} empty launches")
    return ctx.row(variant=f"{n} empty launches", params={"launches": n},
                   metrics=as_metrics(t), kernels=[spec])


#: Rung 12's accumulation chunk (k-tiles of 32 per fresh partial; 0: all of K in one), at
#: the size of the 3xTF32 target.
CHUNKS = (0, 1, 2, 4, 8, 32)
CHUNK_SIZE = (8192, 8192, 8192)
CHUNK_VARIANT = "12-3xtf32-wgmma"


@experiment("sgemm.chunks", title="3xTF32 on wgmma: error and speed against the chunk",
            small={"size": (130, 67, 200)}, sweep=True,
            kernels=lambda: [s for c in CHUNKS
                             for s in get_variant(CHUNK_VARIANT).kernels(
                                 get_variant(CHUNK_VARIANT).params(chunk=c))],
            reader=READER_TIMING)    # every chunk: the page quotes the longest that holds
def chunks(ctx, size=CHUNK_SIZE, chunks=CHUNKS, budget_s=BUDGET_S, rounds=ROUNDS):
    """Rung 12 at each accumulation chunk, checked and timed interleaved with cuBLAS FP32
    and TF32: how the error grows with the products chained in the tensor core's
    accumulator, and what the fp32 adds cost."""
    ctx.budget_s, ctx.rounds = budget_s, rounds
    M, N, K = size
    prob = Problem(M, N, K, timing=ctx.timing, reference="gpu" if ctx.timing else "cpu")
    v = get_variant(CHUNK_VARIANT)
    warm([s for c in chunks for s in v.kernels(v.params(chunk=c))])
    baseline = baselines(ctx, prob)
    for c in chunks:
        run_variant(ctx, prob, v, v.params(chunk=c), baseline)


PROFILE_SEGMENTS = (
    [((4096, 4096, 4096), n) for n in ("cuBLAS FP32", "cuBLAS TF32")]
    + [((4096, 4096, 4096), v) for v in
       ("01-naive", "02-coalesced", "03-smem-tiling", "04-register-tiling", "05-occupancy",
        "06-warptiling", "08-tf32-mma", "09-3xtf32", "10-wgmma-tma", "11-tf32-split-k",
        "12-3xtf32-wgmma")]
    + [((128, 128, 32768), v) for v in ("cuBLAS FP32", "06-warptiling", "07-split-k",
                                         "cuBLAS TF32", "11-tf32-split-k")])


# A recorded check: the page quotes the counters of every segment (the roofline's points,
# the split-K durations), about 45 s under Nsight Compute; a reader's run shows the
# recorded ones, plan="full" profiles every segment where Nsight Compute is installed.
@experiment("sgemm.profile", title="What limits each rung: profiler counters",
            small={"segments": ()}, requires=ncu_missing, reader={},
            replay_reader=REPLAYED)
def profile(ctx, segments=PROFILE_SEGMENTS):
    """Each rung once under Nsight Compute: DRAM and L2 bytes, shared-memory wavefronts
    and bank conflicts, occupancy, pipe utilisation and the main stall reasons."""
    from ...profile import profile as run_ncu

    if not ctx.timing or not segments:
        return
    plan, dev = [], current().as_dict()
    for (m, n, k), v in segments:
        if not v.startswith("cuBLAS"):
            rung = get_variant(v)
            try:        # a rung this GPU cannot run (10 off Hopper): a row saying why
                rung.check(rung.params(), m, n, k, dev)
            except ConfigError as exc:
                ctx.row(variant=v, params={"M": m, "N": n, "K": k}, metrics={}, kernels=[],
                        invalid=str(exc),
                        **({"invalid_short": exc.short} if exc.short else {}))
                continue
        plan.append({"variant": v, "M": m, "N": n, "K": k})
    for seg in run_ncu(plan, child="perflab.chapters.sgemm.profiling"):
        specs = [] if seg["variant"].startswith("cuBLAS") else \
            get_variant(seg["variant"]).kernels(get_variant(seg["variant"]).params())
        ctx.row(variant=seg["variant"], params={"M": seg["M"], "N": seg["N"], "K": seg["K"]},
                metrics=seg["metrics"], kernels=specs, profiled_kernels=", ".join(seg["kernels"]))
