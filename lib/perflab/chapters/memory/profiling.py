"""The profiler's view of the memory chapter (perflab.profile runs this module's
`prepare` in the process ncu watches): bank conflicts at every stride, sectors per request of the copies,
and which level served each load operator."""
from __future__ import annotations

from ...profile import REPLAYED, ncu_missing
from ...registry import experiment

KiB, MiB = 1 << 10, 1 << 20


def all_segments() -> list[dict]:
    from .experiments import BANK_STRIDES, STRIDES
    from .latency import OPS
    return ([{"what": "banks", "pad": p, "stride": s} for p in (False, True)
             for s in BANK_STRIDES]
            + [{"what": "pair", "variant": v} for v in ("interleaved", "per-thread runs")]
            + [{"what": "strided", "stride": s} for s in STRIDES]
            + [{"what": "chase", "op": o, "bytes": b} for b in (16 * KiB, 4 * MiB)
               for o in OPS])


@experiment("memory.profile", title="Counters: bank conflicts, sectors per request, hit rates",
            small={"segments": ()}, requires=ncu_missing,
            # a recorded check (40 segments under Nsight Compute): a reader's run shows
            # the recorded counters, plan="full" profiles where Nsight Compute is
            reader={}, replay_reader=REPLAYED)
def profile(ctx, segments=None):
    """Every segment once under Nsight Compute (clocks untouched)."""
    from ...profile import profiled
    from .experiments import banks_spec, coalescing_specs
    from .latency import chase_spec

    for seg in profiled(ctx, segments, all_segments, "perflab.chapters.memory.profiling"):
        what = seg["what"]
        specs = ([banks_spec(seg["pad"])] if what == "banks"
                 else [chase_spec(seg["op"])] if what == "chase" else coalescing_specs())
        params = {k: seg.get(k) for k in ("what", "pad", "stride", "variant", "op", "bytes")}
        ctx.row(variant=what, params=params, metrics=seg["metrics"], kernels=specs,
                profiled_kernels=", ".join(seg["kernels"]))


def prepare(plan: list[dict]) -> list:
    """One callable per segment, every input made and every kernel compiled first."""
    import cupy as cp
    import numpy as np

    from ...device import current
    from ...kernels import blocks_per_sm, get_kernel, launch
    from .experiments import banks_spec, coalescing_specs
    from .latency import make_chain, walk

    dev = current()
    calls = []
    specs = {s.name: s for s in coalescing_specs()}
    n = 1 << 26
    src = cp.random.random(n, dtype=cp.float32)
    dst = cp.empty_like(src)
    block = 256
    grid = dev.sms * 8
    run = -(-n // (grid * block))
    sn = 1 << 24
    ssrc = cp.random.random(sn * 32, dtype=cp.float32)
    sdst = cp.empty(sn, dtype=cp.float32)
    chains = {}
    for seg in plan:
        what = seg["what"]
        if what == "banks":
            k = get_kernel(banks_spec(seg["pad"]))
            g = dev.sms * blocks_per_sm(k, 256)
            out = cp.empty(g * 256, dtype=cp.uint32)
            calls.append(lambda k=k, g=g, out=out, s=seg["stride"]:
                         launch(k, g, 256, (np.int32(s), np.int32(256), out)))
        elif what == "pair":
            if seg["variant"] == "interleaved":
                k = get_kernel(specs["copy_interleaved"])
                calls.append(lambda k=k: launch(k, grid, block, (src, dst, np.int64(n))))
            else:
                k = get_kernel(specs["copy_runs"])
                calls.append(lambda k=k: launch(k, grid, block,
                                                (src, dst, np.int64(n), np.int64(run))))
        elif what == "strided":
            k = get_kernel(specs["copy_strided"])
            calls.append(lambda k=k, s=seg["stride"]: launch(
                k, -(-sn // block), block, (ssrc, sdst, np.int64(sn), np.int32(s))))
        elif what == "chase":
            ch = chains.setdefault(seg["bytes"], make_chain(seg["bytes"]))
            walk(ch, seg["op"])                     # compiled (and checked) before ncu looks
            calls.append(lambda ch=ch, op=seg["op"]: walk(ch, op))
        else:
            raise ValueError(f"unknown profile segment {seg!r}")
    return calls
