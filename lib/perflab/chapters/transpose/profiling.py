"""The profiler's view of chapter 5 (perflab.profile runs this module's `prepare` in the
process ncu watches): for every rung, CuPy's strided copy and chapter 0's copy kernel at
8192² float32, the sectors per global load and store request, the shared-memory
wavefronts and bank conflicts of loads and stores, DRAM traffic, and why warps stall (MIO
throttle, barrier, memory)."""
from __future__ import annotations

from ...errors import PerflabError
from ...profile import REPLAYED, ncu_missing
from ...registry import experiment
from .. import machine
from . import ops

#: Counters of perflab.profile.COUNTERS besides its METRICS: the store side of every
#: access, DRAM throughput, and the MIO-throttle stall as ncu's warp-state section and its
#: stall sampling give it. (perflab.profile leaves out any this GPU's ncu does not list.)
SAFE_EXTRA = ("smem_st_instructions", "smem_st_wavefronts", "smem_st_bank_conflicts",
              "gst_sectors_per_request", "gst_requests", "gst_sectors", "dram_throughput_pct",
              "l2_read_sectors", "l2_write_sectors")
EXTRA = SAFE_EXTRA + ("mio_throttle_latency", "pcsamp_mio_throttle", "pcsamp_total")
SEGMENT_VARIANTS = ops.VARIANTS + ("cupy strided copy", "copy kernel")


def all_segments(dtype: str = "float32", rows: int = 8192, cols: int = 8192) -> list[dict]:
    return [{"variant": v, "dtype": dtype, "rows": rows, "cols": cols}
            for v in SEGMENT_VARIANTS]


@experiment("transpose.profile", title="Counters: sectors per request, bank conflicts, stalls",
            small={"segments": ()}, requires=ncu_missing,
            # a recorded check: a reader's run shows the recorded counters (every rung's,
            # which the page quotes); plan="full" profiles where Nsight Compute is installed
            reader={}, replay_reader=REPLAYED,
            kernels=lambda: [ops.spec(v, "float32") for v in ops.VARIANTS])
def profile(ctx, segments=None):
    """Every segment once under Nsight Compute (clocks untouched). If this GPU's ncu
    rejects one of the optional counters, the run is made again with the safe set."""
    from ...profile import profiled

    child = "perflab.chapters.transpose.profiling"
    try:
        found, counters = profiled(ctx, segments, all_segments, child, EXTRA), "extra"
    except PerflabError as exc:
        print(f"transpose.profile: ncu refused the optional counters ({str(exc)[:300]}); "
              "profiling again with the safe set", flush=True)
        found, counters = profiled(ctx, segments, all_segments, child, SAFE_EXTRA), "safe"
    for seg in found:
        v = seg["variant"]
        specs = ([ops.spec(v, seg["dtype"])] if v in ops.RUNGS
                 else [machine.copy_spec()] if v == "copy kernel" else [])
        ctx.row(variant=v, params={k: seg[k] for k in ("dtype", "rows", "cols")},
                metrics=seg["metrics"], kernels=specs, counters=counters,
                profiled_kernels=", ".join(seg["kernels"]))


def prepare(plan: list[dict]) -> list:
    """One callable per segment, every input made from the host and every kernel compiled
    (and run once) before the first marker."""
    import cupy as cp

    from .experiments import baselines, fresh_host, seed

    made, calls = {}, []
    for seg in plan:
        key = (seg["dtype"], seg["rows"], seg["cols"])
        if key not in made:
            a = cp.asarray(fresh_host((seg["rows"], seg["cols"]), seg["dtype"], seed()))
            made[key] = (a, cp.empty((a.shape[1], a.shape[0]), dtype=a.dtype), cp.empty_like(a))
        a, out, dst = made[key]
        v = seg["variant"]
        fn = ops.plan(a, out, v) if v in ops.RUNGS else baselines(a, out, dst)[v]
        fn()
        calls.append(fn)
    cp.cuda.Device().synchronize()
    return calls
