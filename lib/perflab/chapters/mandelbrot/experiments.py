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

from ... import host, race
from ...device import clocks_now
from ...errors import HostUnavailableError
from ...registry import experiment
from . import cpu, gpu, model
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


def _giter(iters: float) -> dict:
    """The rate a row reports, iterations per second, as a race entry declares it."""
    return {"Giter/s": (iters, "Giter/s", 1e9)}


def _host_entry(name: str, fn, out: np.ndarray, ref: np.ndarray, iters: float,
                metrics: dict | None = None, **kw) -> race.Entry:
    """A CPU path as a race entry: `fn()` fills `out` (poisoned), which must equal the
    scalar reference `ref` at every pixel; fn None: it cannot run here (never checked)."""
    got = {}

    def check():
        fn()
        got["c"] = gpu.compare_counts(out, ref, 0.0)
        return got["c"].check
    return race.Entry(name, fn, check=check, host=True, rates=_giter(iters), **kw,
                      metrics=lambda: {"iterations": (iters, "1"),
                                       **(got["c"].metrics() if got else {}), **(metrics or {})})


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
        entries = []
        for name, threads, make, kernels, extra, why in _cpu_variants(grid, max_iter):
            out = np.full((h, w), POISON, np.int32)
            base = {"baseline": "vs_scalar", "self_ratio": True} \
                if (name, threads) == ("scalar", "1") else {}
            entries.append(_host_entry(
                f"{name} / {threads}", None if why else make(out), out, ref, iters,
                variant=name, params={"threads": threads}, kernels=kernels,
                extra={"runs_here": why is None, "reason": why or "", **extra}, **base))
        race.run(ctx, entries, params={"view": vname, "w": w, "h": h, "max_iter": max_iter},
                 budget_s=budget_s, rounds=5)


# --------------------------------------------------------------------------- the GPU

def launch_info(k, grid, block) -> dict:
    """The launch of `k` over `grid` in blocks of `block`, as a row records it: grid, block,
    registers, blocks per SM and the occupancy they allow."""
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


def _kernel_entry(name: str, grid, max_iter: int, block, ref: np.ndarray, iters: float, *,
                  detail: bool = True, keep_where: int = 0, **kw) -> race.Entry:
    """Kernel `name` on `grid` as a race entry: checked count for count against `ref` (its
    output poisoned first), its launch with its registers and occupancy; `detail`: its row
    carries the count map's trips per warp (model.predict), its occupancy, the counts'
    hash and the base kernel ("pixel"), with the first `keep_where` differing pixels."""
    import cupy as cp

    from ...correctness import poison

    k = gpu.kernel(name)
    out = cp.empty((grid.h, grid.w), dtype=cp.int32)
    fn = gpu.caller(k, grid, max_iter, out, block)
    launch = launch_info(k, grid, block)
    got = {}

    def check():
        poison(out)
        fn()
        got["c"] = gpu.compare_counts(out, ref, k.tolerance)
        return got["c"].check

    def metrics():
        m = {"iterations": (iters, "1"), **got["c"].metrics()}
        if detail:
            m.update({**model_metrics(k, ref, max_iter, block), **_occupancy_metrics(launch)})
        return m

    def extra():
        c = got["c"]
        return {"counts_sha256": c.sha256, "base": "pixel",
                **({"mismatch_where": c.where[:keep_where]} if keep_where and c.mismatches
                   else {})} if detail else {}
    base = {"baseline": "slower_than_base", "slower": True} if detail and name == "pixel" else {}
    return race.Entry(name, fn, check=check, kernels=[k.spec], launch=launch,
                      rates=_giter(iters), metrics=metrics, extra=extra, **base, **kw)


def _params(grid, max_iter: int, block) -> dict:
    return {"view": grid.view, "w": grid.w, "h": grid.h, "max_iter": max_iter,
            "block": list(block)}


@experiment("mandelbrot.gpu", title="The GPU kernels on three views, checked count for count, interleaved",
            small={"size": (517, 389), "max_iter": 200},
            kernels=lambda: [gpu.kernel(n).spec for n in MAIN_KERNELS],
            reader={"budget_s": 0.5})     # every view and kernel, raced 0.5 s, not 2
def gpu_kernels(ctx, views=GPU_VIEWS, size=GPU_SIZE, max_iter=GPU_ITER,
                block=gpu.DEFAULT_BLOCK, budget_s=2.0):
    """Every kernel of MAIN_KERNELS on each view: checked against the reference, then
    the correct ones timed interleaved (each one's time over the one-pixel kernel's,
    round by round: slower_than_base); with each row the count map's trips per warp
    (model.predict) and, for the FMA build, where its counts differ."""
    for vname in views:
        grid = view(vname).grid(*size)
        ref = cpu.cached_reference(grid, max_iter)
        iters = _iterations(ref)
        entries = [_kernel_entry(n, grid, max_iter, block, ref, iters, keep_where=5000)
                   for n in MAIN_KERNELS]
        race.run(ctx, entries, params=_params(grid, max_iter, block), budget_s=budget_s)
        del entries


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
    the FFMA rate measured in the same rounds: the peak's row keeps every entry's times
    round by round (round_ms) for that comparison."""
    grid = view("cardioid").grid(*size)
    ref = cpu.cached_reference(grid, max_iter)
    at_limit = float((ref == max_iter).mean())
    iters = _iterations(ref)
    entries = [_kernel_entry(n, grid, max_iter, block, ref, iters) for n in RATE_KERNELS]
    peak_fn, peak_check, peak_ffma, peak_launch = fma_peak(fmas_per_thread)
    peak_ok = {}

    def peak_metrics():
        m = {"ffma": (peak_ffma, "1")}
        if ctx.timing and peak_ok.get("correct"):       # the peak was timed
            clk = clocks_now().get("sm_clock_mhz")     # read right after the timed rounds
            if clk:
                m["sm_clock_after_mhz"] = (clk, "MHz")
        return m

    def check():
        c = peak_check()
        peak_ok["correct"] = c.correct
        return c
    entries.append(race.Entry(
        "FFMA peak", peak_fn, check=check, kernels=[_fma_peak_spec()], launch=peak_launch,
        params={"view": "-", "w": 0, "h": 0, "max_iter": 0,
                "block": list(peak_launch["block"]), "at_limit": 0.0},
        metrics=peak_metrics, rates={"FFMA/s": (peak_ffma, "1/s", 1)}, keep_rounds=True,
        against=()))
    race.run(ctx, entries, params={**_params(grid, max_iter, block), "at_limit": at_limit},
             budget_s=budget_s)


def _fma_peak_spec():
    from ..machine import fma_spec
    return fma_spec(8)


def fma_peak(fmas_per_thread: int):
    """Chapter 0's FFMA-peak kernel as chapter 0 launches it at full occupancy: the call,
    its check (the output poisoned, one launch, the closed form), the thread FFMAs per
    call and the launch."""
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

    def check():
        poison(out)
        launch(k, g, block, args)
        want = fma_reference(chains, iters * 8, 0.5, 0.5)
        return compare(out, cp.full(out.shape, want, dtype=cp.float64), "fp32")
    return (lambda: launch(k, g, block, args)), check, float(g * block * iters * 8 * chains), \
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
    counts written to host memory), the faster C path the baseline (vs_best_cpu, named in
    every row's best_cpu). Refused where the host's C paths cannot be built or loaded (the
    rows would hold no CPU side: the recorded ones replay instead)."""
    why = host.unavailable() or (None if cpu.widest() else "no C path runs on this CPU")
    if why:
        raise HostUnavailableError(f"mandelbrot.versus races the GPU against the host: {why}")
    names = ("pixel", f"chunked U={gpu.DEFAULT_CHUNK}")
    for vname in views:
        grid = view(vname).grid(*size)
        ref = cpu.cached_reference(grid, max_iter)
        iters = _iterations(ref)
        entries = [_kernel_entry(n, grid, max_iter, block, ref, iters, detail=False,
                                 params={"side": "gpu"}) for n in names]
        for p in cpu.widest():
            out = np.full((grid.h, grid.w), POISON, np.int32)
            entries.append(_host_entry(
                f"{p.name} / all cores", cpu.caller(p, grid, max_iter, 0, out), out, ref, iters,
                metrics={"cores": (_threads_used(0), "1")}, params={"side": "cpu"},
                kernels=[p.entry()], baseline="vs_best_cpu", against=()))
        race.run(ctx, entries, params={"view": vname, "w": grid.w, "h": grid.h,
                                       "max_iter": max_iter},
                 budget_s=budget_s, rounds=5, name_fastest={"vs_best_cpu": "best_cpu"},
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
                        m.update(race.metrics_of(t, race.Entry(name, fn,
                                                               rates=_giter(iters_done))))
                    launch = launch_info(k, grid, block)
                    m.update(_occupancy_metrics(launch))
                    ctx.row(variant=name, params={"view": vname, "w": grid.w, "h": grid.h,
                                                  "max_iter": max_iter, "bx": block[0],
                                                  "by": block[1]},
                            metrics=m, check=chk.check, kernels=[k.spec], launch=launch)
