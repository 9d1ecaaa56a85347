"""The profiler's view of chapter 4 (perflab.profile runs this module's `prepare` in the
process ncu watches): DRAM throughput and bytes, sectors per request, L1 and shared-memory
traffic, achieved occupancy and the stall reasons of every kernel and library call, at
8192² pixels (2^26 floats for VecAdd): large enough to stream from DRAM, small enough
that the profiler's replays stay short."""
from __future__ import annotations

from ...profile import REPLAYED, ncu_missing
from ...registry import experiment
from . import ops
from .experiments import RADIUS

PROFILE_N = 1 << 26
PROFILE_SHAPE = (8192, 8192)
LIBRARY = {"vecadd": "CuPy a + b", "gray": "CuPy array ops", "blur": "cupyx uniform_filter"}

#: Counters of perflab.profile.COUNTERS this chapter records besides its METRICS; a pair
#: is (the name this chapter's rows give it, the catalogue's name).
EXTRA = (("dram_pct", "dram_throughput_pct"), ("l1tex_pct", "l1tex_throughput_pct"),
         "lsu_pipe_pct", "gst_sectors_per_request", "inst_executed", "gld_instructions",
         "smem_st_wavefronts")


def all_segments() -> list[dict]:
    kinds = {"vecadd": ops.VECADD, "gray": ops.GRAY, "blur": ops.BLUR}
    return [{"kind": k, "variant": v} for k, vs in kinds.items()
            for v in (*vs, LIBRARY[k])]


def _specs(seg: dict) -> list:
    k, v = seg["kind"], seg["variant"]
    if v == LIBRARY[k]:
        return []
    return [{"vecadd": ops.vecadd_spec, "gray": ops.gray_spec}[k](v)] if k != "blur" \
        else [ops.blur_spec(v, RADIUS)]


@experiment("images.profile", title="Counters: DRAM, sectors per request, L1 and shared memory, occupancy",
            small={"segments": ()}, requires=ncu_missing,
            # a recorded check: a reader's run shows the recorded counters (every kernel's,
            # which the page quotes); plan="full" profiles where Nsight Compute is installed
            reader={}, replay_reader=REPLAYED,
            kernels=lambda: [s for seg in all_segments() for s in _specs(seg)])
def profile(ctx, segments=None):
    """Every kernel and library call once under Nsight Compute (clocks untouched)."""
    from ...profile import profiled

    for seg in profiled(ctx, segments, all_segments, "perflab.chapters.images.profiling", EXTRA):
        size = {"n": PROFILE_N} if seg["kind"] == "vecadd" else \
            {"height": PROFILE_SHAPE[0], "width": PROFILE_SHAPE[1]}
        ctx.row(variant=seg["variant"],
                params={"kind": seg["kind"], "radius": RADIUS if seg["kind"] == "blur" else 0,
                        "role": "library" if seg["variant"] == LIBRARY[seg["kind"]] else "kernel",
                        **size},
                metrics=seg["metrics"], kernels=_specs(seg),
                profiled_kernels=", ".join(seg["kernels"]))


def prepare(plan: list[dict]) -> list:
    """One callable per segment; inputs made on the host and copied (no kernel runs before
    the first marker), every lab kernel compiled."""
    import cupy as cp
    import numpy as np

    rng = np.random.default_rng()
    h, w = PROFILE_SHAPE
    made: dict = {}

    def have(name, make):
        if name not in made:
            made[name] = make()
        return made[name]

    calls = []
    for seg in plan:
        k, v = seg["kind"], seg["variant"]
        if k == "vecadd":
            a = have("a", lambda: cp.asarray(rng.random(PROFILE_N, dtype=np.float32)))
            b = have("b", lambda: cp.asarray(rng.random(PROFILE_N, dtype=np.float32)))
            c = have("c", lambda: cp.empty(PROFILE_N, dtype=cp.float32))
            fn = (lambda a=a, b=b, c=c: ops.cupy_add(a, b, c)) if v == LIBRARY[k] \
                else ops.vecadd_call(a, b, c, v)[0]
        elif k == "gray":
            rgb = have("rgb", lambda: cp.asarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)))
            g = have("g", lambda: cp.empty((h, w), dtype=cp.uint8))
            fn = (lambda rgb=rgb, g=g: ops.cupy_gray(rgb, g)) if v == LIBRARY[k] \
                else ops.gray_call(rgb, g, v)[0]
        elif k == "blur":
            img = have("img", lambda: cp.asarray(rng.integers(0, 256, (h, w), dtype=np.uint8)))
            o = have("o", lambda: cp.empty((h, w), dtype=cp.uint8))
            fn = (lambda img=img, o=o: ops.cupyx_blur(img, o, RADIUS)) if v == LIBRARY[k] \
                else ops.blur_call(img, o, RADIUS, v)[0]
        else:
            raise ValueError(f"unknown profile segment {seg!r}")
        calls.append(fn)
    return calls
