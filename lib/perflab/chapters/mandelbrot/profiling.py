"""The profiler's view of chapter 7 (perflab.profile runs this module's `prepare` in the
process ncu watches): for each kernel on each view, the warp instructions issued, the
threads active per instruction, the branch uniformity, the FP32 instructions by opcode
and by pipe, the issue-slot use and the occupancy reached."""
from __future__ import annotations

from ...profile import REPLAYED, ncu_missing
from ...registry import experiment
from .views import view

PROFILE_SIZE = (1000, 750)
PROFILE_ITER = 1024
PROFILE_KERNELS = ("pixel", "one lane", "two pixels", "chunked U=16")
PROFILE_VIEWS = ("full", "cardioid", "seahorse")

#: Counters of perflab.profile.COUNTERS this chapter records besides its METRICS; a pair
#: is (the name this chapter's rows give it, the catalogue's name).
EXTRA = (("warp_inst", "inst_executed"), "threads_per_inst",
         ("branch_uniform_pct", "branch_efficiency_pct"), "divergent_branch_targets",
         "fadd_thread_inst", "fmul_thread_inst", "ffma_thread_inst", "pipe_fma_inst",
         "pipe_alu_inst", "sm_cycles")


def all_segments(kernels=PROFILE_KERNELS, views=PROFILE_VIEWS) -> list[dict]:
    return [{"kernel": k, "view": v} for v in views for k in kernels]


@experiment("mandelbrot.profile", title="Counters: instructions, active threads, branches, FP32 pipes",
            small={"segments": ()}, requires=ncu_missing,
            # a recorded check: a reader's run shows the recorded counters (every segment's,
            # beside the model's prediction); plan="full" profiles (about 17 s) where Nsight
            # Compute is installed
            reader={}, replay_reader=REPLAYED)
def profile(ctx, segments=None, size=PROFILE_SIZE, max_iter=PROFILE_ITER):
    """Every segment once under Nsight Compute (clocks untouched), next to what the
    count map predicts for it (model.predict)."""
    from ...profile import profile as run_ncu
    from . import cpu, gpu
    from .experiments import model_metrics

    if not ctx.timing or segments == ():
        return
    segments = all_segments() if segments is None else list(segments)
    plan = [{**seg, "w": size[0], "h": size[1], "max_iter": max_iter} for seg in segments]
    for seg in run_ncu(plan, child="perflab.chapters.mandelbrot.profiling", extra=EXTRA):
        k = gpu.kernel(seg["kernel"])
        grid = view(seg["view"]).grid(seg["w"], seg["h"])
        ref = cpu.cached_reference(grid, seg["max_iter"])
        m = {**seg["metrics"], **model_metrics(k, ref, seg["max_iter"], gpu.DEFAULT_BLOCK),
             "iterations": (float(ref.astype("int64").sum()), "1")}
        ctx.row(variant=seg["kernel"], params={"view": seg["view"], "w": seg["w"],
                                               "h": seg["h"], "max_iter": seg["max_iter"],
                                               "block": list(gpu.DEFAULT_BLOCK)},
                metrics=m, kernels=[k.spec], profiled_kernels=", ".join(seg["kernels"]))


def prepare(plan: list[dict]) -> list:
    """One launch per segment, every output made and every kernel compiled first."""
    import cupy as cp

    from . import gpu

    calls = []
    for seg in plan:
        k = gpu.kernel(seg["kernel"])
        grid = view(seg["view"]).grid(seg["w"], seg["h"])
        out = cp.empty((grid.h, grid.w), dtype=cp.int32)
        fn = gpu.caller(k, grid, seg["max_iter"], out, gpu.DEFAULT_BLOCK)
        fn()                                     # compiled before ncu's first marker
        calls.append(fn)
    cp.cuda.Device().synchronize()
    return calls
