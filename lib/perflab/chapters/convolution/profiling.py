"""The profiler's view of chapter 6 (perflab.profile runs this module's `prepare` in the
process Nsight Compute watches): branches and branch efficiency, shared-memory bank
conflicts, stall reasons (MIO throttle among them), L1 and DRAM traffic — for the 2D ladder,
the 3D kernels and a few radii, at sizes a quarter (2D) and an eighth (3D) of the races'.
"""
from __future__ import annotations

from ...profile import REPLAYED, ncu_missing
from ...registry import experiment

#: Counters of perflab.profile.COUNTERS this chapter records besides its METRICS; a pair
#: is (the name this chapter's rows give it, the catalogue's name).
EXTRA = ("branch_instructions", "branch_efficiency_pct", "divergent_branch_targets",
         ("instructions", "inst_executed"), ("threads_per_instruction", "threads_per_inst"),
         ("l1_throughput_pct", "l1tex_throughput_pct"), "dram_throughput_pct",
         "l1_wavefronts_global_ld")

SHAPE2, SHAPE3 = (4096, 4096), (256, 256, 256)


def all_segments() -> list[dict]:
    from .experiments import LIBRARY, RACE_R
    seg = []
    for v in ("2d-naive", "2d-const", "2d-tiled", "2d-cached", "2d-regtile", LIBRARY):
        seg.append({"what": "2d", "variant": v, "r": RACE_R[2], "shape": list(SHAPE2), "config": {}})
    seg.append({"what": "2d", "variant": "2d-regtile", "r": RACE_R[2], "shape": list(SHAPE2),
                "config": {"BX": 16, "BY": 8, "PY": 8}})
    for v in ("3d-naive", "3d-tiled", "3d-regtile", LIBRARY, "3d-dw-cached", "3d-dw-tiled"):
        seg.append({"what": "3d", "variant": v, "r": RACE_R[3], "shape": list(SHAPE3), "config": {}})
    for r in (0, 4, 8):
        seg.append({"what": "radius", "variant": "2d-regtile", "r": r, "shape": list(SHAPE2),
                    "config": {}})
    return seg


def segments_wide() -> list[dict]:
    """The four-wide tiles: the race's radius in 2D and 3D, and three radii in 2D."""
    from .experiments import RACE_R
    seg = [{"what": "2d", "variant": "2d-wide", "r": RACE_R[2], "shape": list(SHAPE2), "config": {}},
           {"what": "3d", "variant": "3d-wide", "r": RACE_R[3], "shape": list(SHAPE3), "config": {}}]
    for r in (0, 4, 8):
        seg.append({"what": "radius", "variant": "2d-wide", "r": r, "shape": list(SHAPE2),
                    "config": {}})
    return seg


def _specs(seg):
    from .experiments import LIBRARY
    from .variants import get
    if seg["variant"] == LIBRARY:
        return []
    v = get(seg["variant"])
    return [v.spec(seg["r"], v.params(**seg["config"]))]


@experiment("convolution.profile", title="Counters: branches, bank conflicts, stalls, traffic",
            small={"segments": ()}, requires=ncu_missing, reader={},   # experiments.py says why
            replay_reader=REPLAYED)
def profile(ctx, segments=None):
    """Every segment (all_segments() where None) once under Nsight Compute (clocks
    untouched)."""
    run_profile(ctx, segments, all_segments)


@experiment("convolution.profile_wide", title="Counters of the four-wide tiles",
            small={"segments": ()}, requires=ncu_missing, reader={},
            replay_reader=REPLAYED)
def profile_wide(ctx, segments=None):
    """The four-wide tiles' segments (segments_wide() where None) once under Nsight
    Compute (clocks untouched)."""
    run_profile(ctx, segments, segments_wide)


def run_profile(ctx, segments, default) -> None:
    from ...profile import profiled
    from .experiments import config_label
    from .variants import get

    for seg in profiled(ctx, segments, default, "perflab.chapters.convolution.profiling", EXTRA):
        specs = _specs(seg)
        cfg = get(seg["variant"]).params(**seg["config"]) if specs else {}
        ctx.row(variant=seg["variant"],
                params={"what": seg["what"], "shape": seg["shape"], "r": seg["r"],
                        "config": config_label(cfg) if specs else "mode=constant"},
                metrics=seg["metrics"], kernels=specs, profiled_kernels=", ".join(seg["kernels"]))


def prepare(plan: list[dict]) -> list:
    """One callable per segment: inputs made on the host, every kernel compiled, each
    filter in its kernel's constant memory; nothing launched."""
    import cupy as cp
    import numpy as np

    from ...device import current
    from . import reference as refm
    from ...kernels import warm
    from .experiments import LIBRARY
    from .variants import get, prepare as prep_call

    dev = current().as_dict()
    rng = np.random.default_rng(6)
    warm([s for seg in plan for s in _specs(seg)])
    arrays, filters, calls = {}, {}, []
    for seg in plan:
        shape = tuple(seg["shape"])
        if shape not in arrays:
            x = cp.asarray(refm.fresh(shape, rng))
            arrays[shape] = (x, cp.empty_like(x))
        x, out = arrays[shape]
        name, r = seg["variant"], seg["r"]
        op = "conv" if name == LIBRARY else get(name).op
        key = (len(shape), op, r)
        if key not in filters:
            filters[key] = refm.filter_for(len(shape), r, rng, op, depth=shape[0])
        f = filters[key]
        if name == LIBRARY:
            calls.append(refm.library(x, f, out))
        else:
            calls.append(prep_call(get(name), x, f, out, device=dev, **seg["config"]).call)
    return calls
