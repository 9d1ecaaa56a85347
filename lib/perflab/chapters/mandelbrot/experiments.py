"""Chapter 7's experiments: the C paths and the Python baselines on the CPU (target
"host": live wherever C builds, filed under the CPU's slug), the GPU kernels on three
views, the FP32 rate inside the cardioid against chapter 0's FFMA peak, the GPU against
the best CPU path of its host, and the explorer's grid of views, limits and block shapes.

Every implementation is checked count for count against the scalar C reference
(cpu.reference) on the grid it is timed on, its output poisoned first; one that differs
anywhere (the FMA build: at more than gpu.FMA_TOLERANCE of the pixels) is recorded as
failing and not timed.
"""
from __future__ import annotations

import os

import numpy as np

from ... import host
from ...device import clocks_now
from ...errors import HostUnavailableError
from ...registry import experiment
from ...timing import as_metrics, ratio
from . import cpu, gpu, model, race
from .views import view

POISON = np.iinfo(np.int32).min

#: The CPU experiment's cases: (view, width, height, limit). Small enough that every path
#: (NumPy too) runs in a few seconds on a two-core machine: the book measures them live.
CPU_CASES = (("full", 641, 479, 256), ("cardioid", 321, 239, 256))
#: The GPU experiments' grid: not a multiple of any block width (nor of 64, two pixels).
GPU_SIZE = (2000, 1500)
GPU_ITER = 1024
GPU_VIEWS = ("full", "cardioid", "seahorse")
MAIN_KERNELS = ("pixel", "pixel FMA", "one lane", "two pixels", f"chunked U={gpu.DEFAULT_CHUNK}")
RATE_KERNELS = ("pixel", "two pixels") + tuple(f"chunked U={u}" for u in gpu.CHUNKS)
SWEEP_SIZE = (1000, 750)
SWEEP_ITERS = (256, 1024, 4096)
SWEEP_KERNELS = ("pixel", "two pixels")


def _threads_used(threads: int) -> int:
    if threads:
        return threads
    env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0]
    return int(env) if env.isdigit() else host.cpu_info()["available_cores"]


def _iterations(ref: np.ndarray) -> float:
    """The useful iterations of a count map: the sum of its counts."""
    return float(ref.astype(np.int64).sum())


# --------------------------------------------------------------------------- the CPU

def _into(out: np.ndarray, render):
    """A call that writes what `render()` returns into `out`."""
    def call():
        out[...] = render()
    return call


def _cpu_variants(grid, max_iter):
    """(name, params, call into `out`, kernels entry, extra, why not) for every CPU
    implementation: the C paths on one core and on all, NumPy, Numba on one and all."""
    out = []
    for p in cpu.C_PATHS.values():
        for threads in (1, 0):
            extra = {"kind": "C", "isa": p.isa or "-", "lanes": p.lanes,
                     "in_flight": p.in_flight, "cores": _threads_used(threads)}
            why = p.runs_here()
            fn = None if why else (lambda o, p=p, t=threads: cpu.caller(p, grid, max_iter, t, o))
            out.append((p.name, "1" if threads == 1 else "all", fn, [p.entry()], extra, why))
    out.append(("NumPy", "1", lambda o: _into(o, lambda: cpu.numpy_render(grid, max_iter)), [],
                {"kind": "Python", "isa": "-", "lanes": 1, "in_flight": 1, "cores": 1,
                 "version": f"NumPy {np.__version__}"}, None))
    why = cpu.numba_missing()
    for par in (False, True):
        cores = _threads_used(0) if par else 1
        out.append(("Numba", "all" if par else "1",
                    None if why else (lambda o, par=par: (lambda: cpu.numba_render(
                        grid, max_iter, par, o))), [],
                    {"kind": "Python", "isa": "-", "lanes": 1, "in_flight": 1,
                     "cores": cores, "version": cpu.numba_version()}, why))
    return out


@experiment("mandelbrot.cpu", title="Every CPU path and the Python baselines, checked, interleaved",
            target="host",
            small={"cases": (("full", 67, 43, 64), ("seahorse", 45, 31, 300)), "budget_s": 0.2},
            # both cases, raced for 1 s each instead of 3 (this one runs live wherever C
            # builds, the book's own builds included)
            reader={"budget_s": 1.0})
def cpu_paths(ctx, cases=CPU_CASES, budget_s=3.0):
    """For each case, every implementation this CPU runs fills a poisoned count map that
    must equal the scalar reference at every pixel; the correct ones are then timed in
    interleaved rounds, and each speed-up is taken against scalar C on one core round by
    round. A path this CPU cannot run is a row with the reason."""
    for vname, w, h, max_iter in cases:
        grid = view(vname).grid(w, h)
        ref = cpu.reference(grid, max_iter)
        iters = _iterations(ref)
        checks, calls, rows = {}, {}, []
        for name, threads, make, entries, extra, why in _cpu_variants(grid, max_iter):
            key = f"{name} / {threads}"
            chk = None
            if why is None:
                o = np.full((h, w), POISON, np.int32)
                fn = make(o)
                fn()
                chk = gpu.compare_counts(o, ref, 0.0)
                checks[key] = chk
                if chk.check.correct:
                    calls[key] = ("host", fn)
            rows.append((key, name, threads, entries, extra, why, chk))
        res = race.interleaved(calls, f"{ctx.exp.chapter}/{ctx.exp.name}/{vname}",
                               budget_s=budget_s) if ctx.timing and calls else {}
        base = "scalar / 1"
        for key, name, threads, entries, extra, why, chk in rows:
            metrics = {"iterations": (iters, "1")}
            if chk is not None:
                metrics.update(chk.metrics())
            if key in res:
                metrics.update(as_metrics(res[key]))
                metrics["Giter/s"] = (iters / (res[key]["median_ms"] * 1e-3) / 1e9, "Giter/s")
                if base in res:
                    r = ratio(res, base, key)
                    metrics.update({"vs_scalar": (r["ratio"], "1"),
                                    "vs_scalar_min": (r["ratio_min"], "1"),
                                    "vs_scalar_max": (r["ratio_max"], "1"),
                                    "rounds": (r["rounds"], "1")})
            ctx.row(variant=name, params={"view": vname, "w": w, "h": h, "max_iter": max_iter,
                                          "threads": threads},
                    metrics=metrics, check=None if chk is None else chk.check,
                    kernels=entries, runs_here=why is None, reason=why or "", **extra)


# --------------------------------------------------------------------------- the GPU

def _launch_info(k, grid, block) -> dict:
    from ...device import current
    from ...kernels import blocks_per_sm, get_kernel

    g, b = gpu.launch_dims(k, grid, block)
    fn = get_kernel(k.spec)
    threads = int(np.prod(b))
    per_sm = blocks_per_sm(fn, threads)
    return {"grid": list(g), "block": list(b), "registers": int(fn.num_regs),
            "blocks_per_sm": int(per_sm),
            "occupancy": per_sm * threads / current().max_threads_per_sm}


def _occupancy_metrics(launch: dict) -> dict:
    """The launch's registers and occupancy as metrics (a frame keeps metrics, not the
    launch record)."""
    return {"registers": (launch["registers"], "registers"),
            "blocks_per_sm": (launch["blocks_per_sm"], "1"),
            "occupancy": (launch["occupancy"], "1")}


def _check_kernels(grid, max_iter, names, block, ref):
    """Each kernel of `names` on `grid`: its poisoned output, its launch and its check."""
    import cupy as cp

    from ...correctness import poison
    from ...kernels import checked

    out = {}
    for name in names:
        k = gpu.kernel(name)
        o = cp.empty((grid.h, grid.w), dtype=cp.int32)
        poison(o)
        fn = gpu.caller(k, grid, max_iter, o, block)
        checked(fn, f"{name} on {grid.view}")
        out[name] = (k, fn, gpu.compare_counts(o, ref, k.tolerance), o)
    return out


def model_metrics(k, ref, max_iter, block) -> dict:
    chunk = k.spec.template[0] if k.spec.template else None
    p = model.predict(k, ref, max_iter, block, chunk)
    return {"warp_trips": (p["trips"], "1"), "replay_trips": (p["replay_trips"], "1"),
            "active_lane_frac": (p["active_lane_frac"], "1"),
            "useful_frac": (p["useful_frac"], "1")}


def _kernel_rows(ctx, grid, max_iter, block, checks, res, base, extra_params=None,
                 keep_where=0):
    ref = cpu.cached_reference(grid, max_iter)
    iters = _iterations(ref)
    for name, (k, _, chk, _) in checks.items():
        metrics = {"iterations": (iters, "1"), **chk.metrics(),
                   **model_metrics(k, ref, max_iter, block)}
        if name in res:
            metrics.update(as_metrics(res[name]))
            metrics["Giter/s"] = (iters / (res[name]["median_ms"] * 1e-3) / 1e9, "Giter/s")
            if base in res and name != base:
                r = ratio(res, name, base)           # > 1: the base kernel is faster
                metrics.update({"slower_than_base": (r["ratio"], "1"),
                                "slower_min": (r["ratio_min"], "1"),
                                "slower_max": (r["ratio_max"], "1")})
        launch = _launch_info(k, grid, block)
        metrics.update(_occupancy_metrics(launch))
        extra = {"counts_sha256": chk.sha256, "base": base}
        if keep_where and chk.mismatches:
            extra["mismatch_where"] = chk.where[:keep_where]
        ctx.row(variant=name, params={"view": grid.view, "w": grid.w, "h": grid.h,
                                      "max_iter": max_iter, "block": list(block),
                                      **(extra_params or {})},
                metrics=metrics, check=chk.check, kernels=[k.spec], launch=launch, **extra)


@experiment("mandelbrot.gpu", title="The GPU kernels on three views, checked count for count, interleaved",
            small={"size": (517, 389), "max_iter": 200},
            kernels=lambda: [gpu.kernel(n).spec for n in MAIN_KERNELS],
            reader={"budget_s": 0.5})     # every view and kernel, raced 0.5 s, not 2
def gpu_kernels(ctx, views=GPU_VIEWS, size=GPU_SIZE, max_iter=GPU_ITER,
                block=gpu.DEFAULT_BLOCK, budget_s=2.0):
    """Every kernel of MAIN_KERNELS on each view: checked against the reference, then
    the correct ones timed interleaved (ratios to the one-pixel kernel round by round);
    with each row the count map's trips per warp (model.predict) and, for the FMA build,
    where its counts differ."""
    for vname in views:
        grid = view(vname).grid(*size)
        ref = cpu.cached_reference(grid, max_iter)
        checks = _check_kernels(grid, max_iter, MAIN_KERNELS, block, ref)
        ok = {n: (fn, [()]) for n, (_, fn, chk, _) in checks.items() if chk.check.correct}
        res = ctx.time_interleaved(ok, budget_s=budget_s) if ctx.timing and ok else {}
        _kernel_rows(ctx, grid, max_iter, block, checks, res, "pixel", keep_where=5000)
        checks = None


@experiment("mandelbrot.rate", title="FP32 instruction rate inside the cardioid against the FFMA peak",
            small={"size": (259, 131), "max_iter": 96},
            kernels=lambda: [gpu.kernel(n).spec for n in RATE_KERNELS] + [_fma_peak_spec()],
            reader={"budget_s": 1.0})     # every kernel and the peak, raced 1 s, not 3
def rate(ctx, size=GPU_SIZE, max_iter=GPU_ITER, block=gpu.DEFAULT_BLOCK, budget_s=3.0,
         fmas_per_thread=1 << 19):
    """Inside the main cardioid every pixel iterates to the limit: no lane ever waits,
    and the iterations are exactly w·h·max_iter. Each kernel of RATE_KERNELS is timed
    interleaved with chapter 0's FFMA-peak kernel (fma_chains<8>, full occupancy), so the
    FP32 rate (the SASS's FP32 instructions per step × steps per second) is compared with
    the FFMA rate measured in the same rounds."""
    grid = view("cardioid").grid(*size)
    ref = cpu.cached_reference(grid, max_iter)
    at_limit = float((ref == max_iter).mean())
    checks = _check_kernels(grid, max_iter, RATE_KERNELS, block, ref)
    calls = {n: (fn, [()]) for n, (_, fn, chk, _) in checks.items() if chk.check.correct}
    peak_fn, peak_chk, peak_ffma, peak_launch = _fma_peak(fmas_per_thread)
    if peak_chk.correct:
        calls["FFMA peak"] = (peak_fn, [()])
    res = ctx.time_interleaved(calls, budget_s=budget_s) if ctx.timing and calls else {}
    _kernel_rows(ctx, grid, max_iter, block, checks, res, "pixel",
                 extra_params={"at_limit": at_limit})
    metrics = {"ffma": (peak_ffma, "1")}
    if "FFMA peak" in res:
        metrics.update(as_metrics(res["FFMA peak"]))
        metrics["FFMA/s"] = (peak_ffma / (res["FFMA peak"]["median_ms"] * 1e-3), "1/s")
        clk = clocks_now().get("sm_clock_mhz")         # read right after the timed rounds
        if clk:
            metrics["sm_clock_after_mhz"] = (clk, "MHz")
    ctx.row(variant="FFMA peak", params={"view": "-", "w": 0, "h": 0, "max_iter": 0,
                                         "block": list(peak_launch["block"]), "at_limit": 0.0},
            metrics=metrics, check=peak_chk, kernels=[_fma_peak_spec()], launch=peak_launch,
            round_ms={k: v["round_ms"] for k, v in res.items()})


def _fma_peak_spec():
    from ..machine import fma_spec
    return fma_spec(8)


def _fma_peak(fmas_per_thread: int):
    """Chapter 0's FFMA-peak kernel as chapter 0 launches it at full occupancy: the call,
    its check (closed form), the thread FFMAs per call and the launch."""
    import cupy as cp

    from ...correctness import compare, poison
    from ...device import current
    from ...kernels import blocks_per_sm, get_kernel, launch
    from ..machine.experiments import fma_reference

    chains, spec = 8, _fma_peak_spec()
    k = get_kernel(spec)
    block = 256
    per_sm = blocks_per_sm(k, block)
    g = current().sms * per_sm
    iters = max(1, fmas_per_thread // (8 * chains))
    out = cp.empty(g * block, dtype=cp.float32)
    args = (out, np.float32(0.5), np.float32(0.5), np.int32(iters))
    poison(out)
    launch(k, g, block, args)
    want = fma_reference(chains, iters * 8, 0.5, 0.5)
    chk = compare(out, cp.full(out.shape, want, dtype=cp.float64), "fp32")
    return (lambda: launch(k, g, block, args)), chk, float(g * block * iters * 8 * chains), \
        {"grid": g, "block": [block], "blocks_per_sm": per_sm, "registers": int(k.num_regs)}


@experiment("mandelbrot.versus", title="The GPU against the best CPU path of its host, interleaved",
            small={"size": (203, 151), "max_iter": 128, "views": ("full",), "budget_s": 0.3},
            kernels=lambda: [gpu.kernel(n).spec for n in ("pixel", f"chunked U={gpu.DEFAULT_CHUNK}")],
            reader={"budget_s": 1.0})     # both views, raced 1 s, not 4
def versus(ctx, views=("full", "cardioid"), size=GPU_SIZE, max_iter=GPU_ITER,
           block=gpu.DEFAULT_BLOCK, budget_s=4.0):
    """The one-pixel and chunked kernels against the widest C paths this host runs (one
    and two vectors in flight, every core), all checked, then timed in the same rounds:
    GPU kernel time (CUDA events; the counts stay on the GPU) against CPU wall time (the
    counts written to host memory). Refused where the host's C paths cannot be built or
    loaded (the rows would hold no CPU side: the recorded ones replay instead)."""
    why = host.unavailable() or (None if cpu.widest() else "no C path runs on this CPU")
    if why:
        raise HostUnavailableError(f"mandelbrot.versus races the GPU against the host: {why}")
    names = ("pixel", f"chunked U={gpu.DEFAULT_CHUNK}")
    for vname in views:
        grid = view(vname).grid(*size)
        ref = cpu.cached_reference(grid, max_iter)
        iters = _iterations(ref)
        checks = _check_kernels(grid, max_iter, names, block, ref)
        calls = {n: ("gpu", fn) for n, (_, fn, chk, _) in checks.items() if chk.check.correct}
        cpu_rows = {}
        for p in cpu.widest():
            o = np.full((grid.h, grid.w), POISON, np.int32)
            fn = cpu.caller(p, grid, max_iter, 0, o)
            fn()
            chk = gpu.compare_counts(o, ref, 0.0)
            name = f"{p.name} / all cores"
            cpu_rows[name] = (p, chk)
            if chk.check.correct:
                calls[name] = ("host", fn)
        res = race.interleaved(calls, f"{ctx.exp.chapter}/{ctx.exp.name}/{vname}",
                               budget_s=budget_s) if ctx.timing and calls else {}
        cpu_done = [n for n in cpu_rows if n in res]
        best_cpu = min(cpu_done, key=lambda n: res[n]["median_ms"]) if cpu_done else None
        params = {"view": vname, "w": grid.w, "h": grid.h, "max_iter": max_iter}
        for name, (k, _, chk, _) in checks.items():
            m = {"iterations": (iters, "1"), **chk.metrics()}
            if name in res:
                m.update(as_metrics(res[name]))
                m["Giter/s"] = (iters / (res[name]["median_ms"] * 1e-3) / 1e9, "Giter/s")
                if best_cpu:
                    r = ratio(res, best_cpu, name)       # > 1: the GPU is faster
                    m.update({"vs_best_cpu": (r["ratio"], "1"),
                              "vs_best_cpu_min": (r["ratio_min"], "1"),
                              "vs_best_cpu_max": (r["ratio_max"], "1")})
            ctx.row(variant=name, params={**params, "side": "gpu"}, metrics=m, check=chk.check,
                    kernels=[k.spec], launch=_launch_info(k, grid, block),
                    best_cpu=best_cpu or "", cpu_model=host.cpu_info()["model"])
        for name, (p, chk) in cpu_rows.items():
            m = {"iterations": (iters, "1"), **chk.metrics(),
                 "cores": (_threads_used(0), "1")}
            if name in res:
                m.update(as_metrics(res[name]))
                m["Giter/s"] = (iters / (res[name]["median_ms"] * 1e-3) / 1e9, "Giter/s")
            ctx.row(variant=name, params={**params, "side": "cpu"}, metrics=m,
                    check=chk.check, kernels=[p.entry()], best_cpu=best_cpu or "",
                    cpu_model=host.cpu_info()["model"])


def sweep_reason(p: dict) -> str | None:
    """Why a configuration of the explorer cannot run (the check the launch makes)."""
    from ...errors import ConfigError
    try:
        gpu.check_block(p["block"] if "block" in p else (p["bx"], p["by"]))
    except ConfigError as exc:
        return str(exc)
    return None


@experiment("mandelbrot.sweep", title="Views × iteration limits × block shapes (the explorer's grid)",
            small={"size": (131, 97), "iters": (64,), "blocks": ((32, 4), (8, 8)),
                   "views": ("full",)}, sweep=True,
            kernels=lambda: [gpu.kernel(n).spec for n in SWEEP_KERNELS],
            # the limit the page quotes (1024), every view, block and kernel: the explorer's
            # grid at one limit, a third of the runs
            reader={"iters": (GPU_ITER,)})
def sweep(ctx, views=GPU_VIEWS, iters=SWEEP_ITERS, blocks=gpu.BLOCKS, size=SWEEP_SIZE,
          kernels=SWEEP_KERNELS, budget_s=0.05):
    """Each kernel × block shape on each view and limit: checked, then timed alone."""
    for vname in views:
        grid = view(vname).grid(*size)
        for max_iter in iters:
            ref = cpu.cached_reference(grid, max_iter)
            iters_done = _iterations(ref)
            for block in blocks:
                checks = _check_kernels(grid, max_iter, kernels, block, ref)
                for name, (k, fn, chk, _) in checks.items():
                    m = {"iterations": (iters_done, "1"), **chk.metrics(),
                         **model_metrics(k, ref, max_iter, block)}
                    if ctx.timing and chk.check.correct:
                        t = ctx.time(fn, [()], f"{name}/{vname}/{max_iter}/{block[0]}x{block[1]}",
                                     budget_s=budget_s)
                        m.update(as_metrics(t))
                        m["Giter/s"] = (iters_done / (t["median_ms"] * 1e-3) / 1e9, "Giter/s")
                    launch = _launch_info(k, grid, block)
                    m.update(_occupancy_metrics(launch))
                    ctx.row(variant=name, params={"view": vname, "w": grid.w, "h": grid.h,
                                                  "max_iter": max_iter, "bx": block[0],
                                                  "by": block[1]},
                            metrics=m, check=chk.check, kernels=[k.spec], launch=launch)
