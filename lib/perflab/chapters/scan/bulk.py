"""The sixth try's experiments: the bulk-copy single pass (16) and its encoder (17), both
with the sequencer (kernels/03-scan/sequencer.cuh); compute capability 9.0 and later.

  scan.bulk          16 by shape at 2^28 and 2^25 int32, and its diagnostic (no sequencer:
                     each tile scanned alone), in the same rounds as the copy,
                     torch.cumsum, 03, 12 and 14; then 16 on int64 and float32
  scan.rle_bulk      17 by shape at 2^25 on every kind of runs, and its four diagnostics
                     (each takes one more part away: the scanners' work, the reducers'
                     reading, the prefix waits, the sequencer), in the same rounds as 15,
                     13, torch.unique_consecutive, the copy and the read ceiling
  scan.bulk_profile  16 and 17 once each under Nsight Compute (DRAM bytes against the
                     input's)

16 and 17 are also in scan.targets and scan.stress (experiments.py) with the earlier
tries' kernels.
"""
from __future__ import annotations

import numpy as np

from ...correctness import poison
from ...device import current
from ...errors import ConfigError
from ...kernels import capture_launches, checked
from ...registry import experiment
from ...timing import rotations
from .. import machine
from . import ops, rle
from .experiments import (RLE_KINDS, RLE_SPECS, TORCH_VIEWS, Tagged, check_scan,
                          check_tile_scans, fresh, ours, profile_missing, race_encoders,
                          race_with_03, rotated, run_checked, seed, time_set)

#: the sizes scan.bulk times (2^25: the encoder's size, where the ring's fill and drain weigh)
BULK_SIZES = (1 << 28, 1 << 25)


def shape_params(shape) -> dict:
    sc, rd, kib, st, wd, d = shape[:6]
    p = {"scanners": sc, "reducers": rd, "tile_kib": kib, "stages": st, "width": wd,
         "delay_ns": d}
    if len(shape) > 6:
        p["elems_per_lane"] = shape[6]
    return p


def shape_name(shape) -> str:
    sc, rd, kib, st, wd, d = shape[:6]
    return (f"{sc}+{rd} warps, {kib} KiB x {st}"
            + ("" if wd == ops.BULK[4] else f", sequencer x{wd}")
            + ("" if d == ops.BULK[5] else f", {d} ns")
            + (f", {shape[6]} a lane" if len(shape) > 6 else ""))


def bulk_reason(dtype: str, shape, encoder: bool = False) -> str | None:
    try:
        if encoder:
            rle.check_bulk_shape(shape)
        else:
            ops.check_bulk(dtype, shape)
    except ConfigError as exc:
        return str(exc)
    return None


def _bulk_specs():
    return ([ops.bulk_spec("int32", sh) for sh in ops.BULK_SWEEP]
            + [ops.bulk_spec("int32", sh, lookback=False) for sh in ops.BULK_DIAGNOSTIC]
            + [s for dt in ("int32", "int64", "float32")
               for s in ops.specs("bulk", dt, True) + ops.specs("chunked", dt, True)]
            + ops.specs("lookahead", "int32", True))


@experiment("scan.bulk", title="A sequencer instead of look-backs: the bulk-copy single pass by shape",
            small={"sizes": (1000003,), "wide_bytes": 1 << 22}, sweep=True,
            requires=ops.bulk_missing,
            kernels=_bulk_specs)
def bulk(ctx, sizes=BULK_SIZES, sweep=ops.BULK_SWEEP, diagnostic=ops.BULK_DIAGNOSTIC,
         wide_bytes=1 << 30):
    """Every shape of 16 (scanner warps + reducer warps, tile KiB x stages, sequencer words
    a lane, pause) at each size, int32 inclusive, checked exactly, then timed in the same
    rounds as the copy, torch.cumsum (dtype=int32), the single pass of 03, the look-ahead
    scan (12), the chunked one (14) and 16 without its sequencer (each tile scanned alone,
    checked as such). Then 16 at its default on int64 and float32 (`wide_bytes` of input),
    against 14, torch.cumsum and the copy: int64 is the status that needs two words."""
    import cupy as cp
    for n in sizes:
        s = seed()
        x = fresh(n, "int32", s)
        sets = rotated(x, rotations(2 * x.nbytes, current().l2_bytes) if ctx.timing else 1)
        out = sets[0][1]
        calls, info = {}, {}
        plan = [(sh, True) for sh in sweep] + [(sh, False) for sh in diagnostic]
        for sh, lb in plan:
            name = f"bulk {shape_name(sh)}" + ("" if lb else " without sequencer")
            params = {"n": n, "dtype": "int32", "kernel": "bulk", "lookback": lb,
                      **shape_params(sh)}
            why = bulk_reason("int32", sh)
            if why:
                ctx.row(variant=name, params=params, metrics={}, invalid=why)
                continue
            fn = (lambda a, o, sh=sh, lb=lb: ops.enqueue_bulk(a, o, True, sh, lb))
            poison(out)
            with capture_launches() as launches:
                checked(lambda: fn(x, out), "scan")
            chk = check_scan(out, x, True) if lb else check_tile_scans(out, x, sh[2] * 256)
            info[name] = (chk, launches, params, [ops.bulk_spec("int32", sh, True, lb)])
            if chk.correct:
                calls[name] = (fn, sets)
        for v in ("lookahead", "chunked"):
            fn = ours(v, True)
            chk, launches = run_checked(fn, x, out, True)
            info[v] = (chk, launches, {"n": n, "dtype": "int32", "kernel": v},
                       ops.specs(v, "int32", True))
            if chk.correct:
                calls[v] = (fn, sets)
        race_with_03(ctx, calls, info, x, out, sets, s, budget_s=6.0, baseline_rows=True)
        del sets, x, out
        TORCH_VIEWS.clear()
        cp.get_default_memory_pool().free_all_blocks()
    if wide_bytes:
        for dt in ("int64", "float32"):
            n = wide_bytes // np.dtype(dt).itemsize
            time_set(Tagged(ctx, {"part": "dtype"}), n, dt, (True,), ("bulk", "chunked"),
                     budget_s=2.0)


def one_pass_entry(n: int, run, params: dict, spec, check: bool = True) -> dict:
    """An entry of race_encoders for a one-pass encoder (17, 18) at n int32: a fresh
    Encoder, `run(encoder, x)`, its row params and kernel; it moves 4n bytes read and 8 a
    run written. `check`: False for a diagnostic, whose output is no encoding."""
    return {"encoder": rle.Encoder(n), "run": run, "params": params, "kernels": [spec],
            "check": check, "bytes": lambda runs: 4 * n + 8 * runs}


def _rle_bulk_specs():
    return ([rle.bulk_spec(sh) for sh in rle.BULK_SHAPES]
            + [rle.bulk_spec(rle.BULK, d) for d in rle.BULK_DIAGNOSTICS]
            + RLE_SPECS["chunked"]() + RLE_SPECS["lookahead"]() + [machine.read_spec()])


@experiment("scan.rle_bulk", title="The bulk-copy encoder (17) by shape, against 15, 13 and PyTorch",
            small={"n": 100003, "kinds": ("short", "distinct")}, sweep=True,
            requires=ops.bulk_missing, kernels=_rle_bulk_specs)
def rle_bulk(ctx, n=1 << 25, kinds=RLE_KINDS, shapes=rle.BULK_SHAPES,
             diags=tuple(rle.BULK_DIAGNOSTICS)):
    """Each shape of 17 on each kind of runs at n int32, checked (reference runs and a round
    trip), then timed round by round with 17's diagnostics at its default shape (DIAG 1:
    the scanners wait for each prefix and do nothing else; 2: and the reducers publish
    without reading; 3: and the scanners do not wait; 4: and no sequencer runs, the ring
    alone; none is an encoder, so none is checked), the chunked encoder (15), the
    look-ahead one (13), torch.unique_consecutive(return_counts=True), the copy of the
    input and the read ceiling (read.cu: the input read once, nothing written)."""
    entries = {}
    plan = [(sh, 0) for sh in shapes] + [(rle.BULK, d) for d in diags]
    for sh, d in plan:
        name = f"rle bulk {shape_name(sh)}" + (f" diagnostic {d}" if d else "")
        params = {**shape_params(sh), "diagnostic": d}
        if d:
            params["removed"] = rle.BULK_DIAGNOSTICS[d]
        why = bulk_reason("int32", sh, encoder=True)
        if why:
            ctx.row(variant=name, params={"n": n, **params}, metrics={}, invalid=why)
            continue
        entries[name] = one_pass_entry(n, lambda enc, x, sh=sh, d=d: enc._bulk(x, sh, d),
                                       params, rle.bulk_spec(sh, d), check=not d)
    race_encoders(ctx, n, kinds, entries, ("chunked", "lookahead"),
                  ceilings={"read ceiling": (machine.read_once, [machine.read_spec()])})


def _profile_or_bulk_missing():
    return ops.bulk_missing() or profile_missing()


@experiment("scan.bulk_profile", title="What the bulk-copy scan and encoder move: DRAM counters",
            small={"segments": ()}, requires=_profile_or_bulk_missing,
            kernels=lambda: ops.specs("bulk", "int32", True) + [rle.bulk_spec()])
def bulk_profile(ctx, segments=(("bulk", 1 << 28), ("rle bulk", 1 << 25))):
    """16 at 2^28 int32 and 17 at 2^25 (runs of 1-15) once each under Nsight Compute
    (clocks untouched): DRAM bytes read and written against the input's 4n bytes (one read
    of the input each; 16 writes 4n, 17 about 8 bytes a run), and the L2 hit rate."""
    from ...profile import profile as run_ncu

    if not ctx.timing or not segments:
        return
    plan = [{"variant": v, "n": n} for v, n in segments]
    for seg in run_ncu(plan, child="perflab.chapters.scan.profiling"):
        n = seg["n"]
        metrics = dict(seg["metrics"])
        for k in ("read", "write"):
            if f"dram_{k}_MB" in metrics:
                metrics[f"dram_{k}_over_input"] = (metrics[f"dram_{k}_MB"][0] * 1e6 / (4 * n), "x")
        kernels = (ops.specs("bulk", "int32", True) if seg["variant"] == "bulk"
                   else [rle.bulk_spec()])
        ctx.row(variant=seg["variant"], params={"n": n, "dtype": "int32"}, metrics=metrics,
                kernels=kernels, profiled_kernels=", ".join(seg["kernels"]))
