"""Chapter 6's experiments: every kernel checked at odd sizes and radii, the 1D, 2D and 3D
races against cupyx.scipy.ndimage.convolve and the copy ceiling (one interleaved run
each), the filter-radius sweep, and the tile-shape sweeps behind the explorers.

Bytes that must move: every input read once and every output written once, 8 bytes per
output (float32). FLOPs: 2 per tap per output (one FMA), all (2r+1)^d taps counted, also
those that fall on the zero border: 2 (2r + 1)^d per output.
"""
from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np

from ... import race
from ...correctness import compare, poison
from ...device import current
from ...kernels import checked, warm
from ...registry import experiment
from . import reference as refm
from .variants import VARIANTS, get, prepare

#: Every variant's correctness cases: (radius, launch parameters). Each list has radius 0,
#: the radius the races use, and one large radius — for the tiles whose halo comes from
#: the loader or the caches, larger than the tile itself (a 19-wide filter over an 8-wide
#: tile); the input-tile kernels need T > 2R, so theirs is the largest that fits.
CHECKS = {
    "1d-naive": [(0, {}), (2, {}), (9, {"B": 8})],
    "1d-const": [(0, {}), (2, {}), (9, {"B": 8})],
    "1d-tiled": [(0, {}), (2, {}), (9, {"B": 8})],
    "2d-naive": [(0, {}), (2, {}), (9, {"BX": 8, "BY": 4})],
    "2d-const": [(0, {}), (2, {}), (9, {"BX": 8, "BY": 4})],
    "2d-tiled": [(0, {}), (2, {}), (7, {"T": 16})],
    "2d-cached": [(0, {}), (2, {}), (9, {"T": 8})],
    "2d-regtile": [(0, {}), (2, {}), (9, {"BX": 8, "BY": 2, "PY": 2}),
                   (2, {"BX": 16, "BY": 4, "PY": 16})],
    "3d-naive": [(0, {}), (1, {}), (3, {})],
    "3d-tiled": [(0, {}), (1, {}), (3, {})],
    "3d-regtile": [(0, {}), (1, {}), (3, {"BX": 8, "BY": 2, "PZ": 2}),
                   (1, {"BX": 16, "BY": 4, "PZ": 16})],
    "3d-dw-cached": [(0, {}), (1, {}), (9, {"T": 8})],
    "3d-dw-tiled": [(0, {}), (1, {}), (9, {"BX": 8, "BY": 2})],
    # the four-wide tiles: the small tiles are 8 x 4 (2D) and 8 x 2 x 2 (3D)
    "2d-wide": [(0, {}), (2, {}), (5, {"BX": 2, "BY": 2, "PY": 2})],
    "3d-wide": [(0, {}), (1, {}), (3, {"BX": 2, "BY": 2, "PY": 1, "PZ": 2})],
}
#: The variants of the first check (convolution.check); the four-wide tiles came after
#: it, with their own (convolution.check_wide).
FIRST = tuple(n for n in CHECKS if not n.endswith("-wide"))
WIDE = ("2d-wide", "3d-wide")
#: The radius each dimension is raced at (5-tap, 5x5 and 3x3x3 filters).
RACE_R = {1: 2, 2: 2, 3: 1}
RADII = tuple(range(9))
COPIES = ("cudaMemcpy", "cupy copyto")
LIBRARY = "cupyx convolve"
#: The key of a race's ratios to the library (how many times as fast as cupyx convolve).
LIBRARY_KEY = "vs_library"


def config_label(p: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in p.items()) or "-"


def flops_per_output(v_dims: int, r: int) -> int:
    return 2 * (2 * r + 1) ** v_dims


def _specs_of_checks(names=FIRST) -> list:
    out = []
    for name in names:
        cases = CHECKS[name]
        v = VARIANTS[name]
        for r, given in cases:
            out.append(v.spec(r, v.params(**given)))
    return out


def _run_checked(prep, out, ref):
    poison(out)
    checked(prep.call, f"{prep.variant.name} r={prep.r} {config_label(prep.params)}")
    return compare(out, ref, "fp32")


# Reader plans: every experiment of this chapter declares reader={}. The chapter runs its
# full plan in about a minute on an H200 (73 s, of which about 11 s are the machine
# chapter's ceilings, which their own reader plans shorten); and what would cost time is
# what the page quotes: every check, every radius (where a kernel turns compute-bound),
# every tile of both sweeps (the explorers), every kernel's counters.
@experiment("convolution.check", title="Every kernel at odd sizes, radius 0 to past the tile",
            small={"shapes": ((1001,), (67, 45), (13, 11, 19))}, kernels=_specs_of_checks,
            reader={})
def check(ctx, shapes=((100003,), (333, 517), (45, 37, 61))):
    """Each variant × its CHECKS cases on fresh random input of each shape (no dimension a
    multiple of a block), output poisoned, against the NumPy float64 reference; the library
    at the same radii. Nothing is timed."""
    check_cases(ctx, shapes, FIRST, library=True)


@experiment("convolution.check_wide", title="The four-wide tiles at odd sizes and at widths that are multiples of 4",
            small={"shapes": ((67, 45), (67, 44), (13, 11, 19), (13, 11, 20))},
            kernels=lambda: _specs_of_checks(WIDE), reader={})
def check_wide(ctx, shapes=((333, 517), (333, 516), (45, 37, 61), (45, 37, 60))):
    """As convolution.check, for the four-wide tiles: an odd width takes their scalar path,
    a width that is a multiple of 4 (but of no tile) their 16-byte path."""
    check_cases(ctx, shapes, WIDE, library=False)


def check_cases(ctx, shapes, names, library: bool):
    import cupy as cp

    dev = current().as_dict()
    rng = np.random.default_rng()
    warm(_specs_of_checks(names))
    for shape in shapes:
        dims = len(shape)
        xh = refm.fresh(shape, rng)
        x = cp.asarray(xh)
        out = cp.empty_like(x)
        cases = {}                                  # (op, r) -> (filter, reference)
        for v in (VARIANTS[n] for n in names if VARIANTS[n].dims == dims):
            for r, given in CHECKS[v.name]:
                key = (v.op, r)
                if key not in cases:
                    f = refm.filter_for(dims, r, rng, v.op, depth=shape[0])
                    cases[key] = (f, cp.asarray(refm.reference(xh, f, v.op)))
                f, ref = cases[key]
                prep = prepare(v, x, f, out, device=dev, **given)
                chk = _run_checked(prep, out, ref)
                ctx.row(variant=v.name, params={"dims": dims, "shape": list(shape), "r": r,
                                                "op": v.op, "config": config_label(prep.params)},
                        metrics={"taps": (v.taps(r, shape), "1")}, check=chk,
                        kernels=[prep.spec], launch=prep.launch)
        for (op, r), (f, ref) in sorted(cases.items()):
            if op != "conv" or not library:
                continue
            poison(out)
            checked(refm.library(x, f, out), LIBRARY)
            ctx.row(variant=LIBRARY, params={"dims": dims, "shape": list(shape), "r": r,
                                             "op": op, "config": "mode=constant"},
                    metrics={"taps": ((2 * r + 1) ** dims, "1")}, check=compare(out, ref, "fp32"))
        x = out = None
        cp.get_default_memory_pool().free_all_blocks()


# ---- the races -------------------------------------------------------------------------

def _entry(name: str, call, out, ref, n: int, *, op: str, r: int, flops: float, kernels=(),
           launch=None, config: str, library: bool, kind: str = "kernel",
           variant: str | None = None) -> race.Entry:
    """One contestant: `call()` checked into `out` (poisoned first) against its float64
    reference `ref`, then timed; 8 bytes per output of the `n`, `flops` FLOPs; compared
    with the copy and, with `library`, with cupyx convolve (vs_library)."""
    def check():
        poison(out)
        call()
        return compare(out, ref, "fp32")
    return race.Entry(name, call, check=check, params={"r": r, "op": op, "config": config},
                      kernels=list(kernels), launch=dict(launch or {}),
                      metrics={"intensity": (flops / (8 * n), "FLOP/B")}, bytes=8 * n,
                      flops=flops, baseline=LIBRARY_KEY if kind == "library" else None,
                      against=(race.COPY_KEY, LIBRARY_KEY) if library else (race.COPY_KEY,),
                      extra={"kind": kind}, variant=variant)


def _prepared(name: str, prep, out, ref, n: int, library: bool, variant=None) -> race.Entry:
    """A prepared kernel (variants.prepare) as a contestant."""
    return _entry(name, prep.call, out, ref, n, op=prep.variant.op, r=prep.r,
                  flops=float(n) * prep.variant.flops_per_output(prep.r), kernels=[prep.spec],
                  launch=prep.launch, config=config_label(prep.params), library=library,
                  variant=variant)


def _copies(x) -> list[race.Entry]:
    """The two copies of x's bytes, each checked exactly: the baseline of_copy is the
    faster, the rows' `baseline` names it."""
    import cupy as cp

    dst = cp.empty_like(x)
    copyto = lambda: cp.copyto(dst, x)          # noqa: E731

    def check():
        poison(dst)
        copyto()
        return compare(dst, x, "exact")
    kw = {"params": {"r": 0, "op": "copy", "config": "-"}, "extra": {"kind": "copy"},
          "launch": {}, "against": (race.COPY_KEY,), "self_ratio": True}
    return [replace(race.copy_of([(x, dst)], name="cudaMemcpy"), **kw),
            race.Entry("cupy copyto", copyto, check=check, bytes=2 * x.nbytes,
                       baseline=race.COPY_KEY, **kw)]


def run_race(ctx, entries: list[race.Entry], x, budget_s: float) -> dict:
    """The contestants `entries` (on input x) and the two copies of x's bytes, raced: each
    checked, the correct ones timed interleaved (about `budget_s` seconds). One row each,
    with its ratio to the faster copy (of_copy) and, where it names the library, to
    cupyx convolve (vs_library), round by round. A failed check is recorded and never
    timed."""
    return race.run(ctx, entries + _copies(x), params={"dims": x.ndim, "shape": list(x.shape)},
                    budget_s=budget_s)


def contestants(x, out, variants, f, ref, dev, library: bool, configs=(), **given):
    """Prepared entries for `variants` (with the default parameters, or `given`) and, with
    `library`, cupyx convolve, all on (x, f) against `ref`."""
    n = x.size
    ents = []
    for name in variants:
        v = get(name)
        prep = prepare(v, x, f, out, device=dev, **given.get(name, {}))
        ents.append(_prepared(name, prep, out, ref, n, library))
    for name, cfg in configs:
        prep = prepare(get(name), x, f, out, device=dev, **cfg)
        ents.append(_prepared(f"{name} {config_label(prep.params)}", prep, out, ref, n, library,
                              variant=name))
    if library:
        r = (f.shape[0] - 1) // 2
        ents.append(_entry(LIBRARY, refm.library(x, f, out), out, ref, n, op="conv", r=r,
                           flops=float(n) * flops_per_output(x.ndim, r), config="mode=constant",
                           library=True, kind="library"))
    return ents


def _race_inputs(shape, r, specs):
    """What every race starts from: its kernels compiled, a fresh random input, an output,
    a random filter of radius r and the float64 reference (on the GPU)."""
    import cupy as cp

    warm(specs)
    rng = np.random.default_rng()
    x = refm.fresh_device(shape)
    f = refm.filter_for(len(shape), r, rng)
    return current().as_dict(), rng, x, cp.empty_like(x), f, refm.reference(x, f)


def _race_kernels(dims, names=None):
    return [v.spec(RACE_R[dims], v.params()) for v in VARIANTS.values()
            if v.dims == dims and (names is None or v.name in names) and v.name not in WIDE]


@experiment("convolution.conv1d", title="1D: naive, constant filter, tiled vs library and copy",
            small={"n": 100003}, kernels=lambda: _race_kernels(1), reader={})
def conv1d(ctx, n=1 << 26, r=2):
    dev, _, x, out, f, ref = _race_inputs((n,), r, _race_kernels(1))
    ents = contestants(x, out, ["1d-naive", "1d-const", "1d-tiled"], f, ref, dev, library=True)
    run_race(ctx, ents, x, budget_s=1.0)


@experiment("convolution.conv2d", title="2D: the ladder vs cupyx convolve and the copy ceiling",
            small={"shape": (131, 67)}, kernels=lambda: _race_kernels(2), reader={})
def conv2d(ctx, shape=(8192, 8192), r=2):
    dev, _, x, out, f, ref = _race_inputs(shape, r, _race_kernels(2))
    names = ["2d-naive", "2d-const", "2d-tiled", "2d-cached", "2d-regtile"]
    ents = contestants(x, out, names, f, ref, dev, library=True)
    run_race(ctx, ents, x, budget_s=1.6)


@experiment("convolution.conv3d", title="3D: volumetric and depthwise kernels vs cupyx convolve and copy",
            small={"shape": (19, 23, 37)}, kernels=lambda: _race_kernels(3), reader={})
def conv3d(ctx, shape=(512, 512, 512), r=1):
    dev, rng, x, out, f, ref = _race_inputs(shape, r, _race_kernels(3))
    ents = contestants(x, out, ["3d-naive", "3d-tiled", "3d-regtile"], f, ref, dev, library=True)
    fdw = refm.filter_for(3, r, rng, "depthwise", depth=shape[0])
    refdw = refm.reference(x, fdw, "depthwise")
    ents += contestants(x, out, ["3d-dw-cached", "3d-dw-tiled"], fdw, refdw, dev, library=False)
    run_race(ctx, ents, x, budget_s=2.0)


def _radius_kernels(name, radii):
    """The kernels of a radius sweep: `name` at its default tile, at every radius."""
    v = get(name)
    return [v.spec(r, v.params()) for r in radii]


@experiment("convolution.radius", title="2D: the filter radius against the roofline",
            small={"shape": (97, 61), "radii": (0, 1, 4)},
            kernels=lambda: _radius_kernels("2d-regtile", RADII), reader={})
def radius(ctx, shape=(8192, 8192), radii=RADII):
    """The register-tiled 2D kernel at every radius, interleaved with the copy: where the
    time leaves the memory floor is where the kernel turns compute-bound."""
    radius_sweep(ctx, "2d-regtile", shape, radii, budget_s=1.6)


def radius_sweep(ctx, name, shape, radii, budget_s):
    import cupy as cp

    dev = current().as_dict()
    rng = np.random.default_rng()
    v = get(name)
    warm(_radius_kernels(name, radii))
    x = refm.fresh_device(shape)
    out = cp.empty_like(x)
    ents = []
    for r in radii:
        f = refm.filter_for(2, r, rng)
        prep = prepare(v, x, f, out, device=dev)
        ents.append(_prepared(f"r={r}", prep, out, refm.reference(x, f), x.size, library=False,
                              variant=v.name))
    run_race(ctx, ents, x, budget_s=budget_s)


# ---- the four-wide register tiles --------------------------------------------------------

#: Other tile shapes of the four-wide kernels raced next to their defaults.
WIDE_ALT = {"2d-wide": {"BX": 64, "BY": 4, "PY": 4}, "3d-wide": {"BX": 32, "BY": 4, "PY": 2, "PZ": 4}}
WIDE_RADII = (0, 1, 2, 3, 4, 6, 8)


def _wide_kernels(name):
    v = get(name)
    r = RACE_R[v.dims]
    return [v.spec(r, v.params()), v.spec(r, v.params(**WIDE_ALT[name])),
            get(name.replace("wide", "regtile")).spec(r, get(name.replace("wide", "regtile")).params())]


@experiment("convolution.wide2d", title="2D: the four-wide tile vs cupyx convolve and the copy ceiling",
            small={"shape": (131, 68)}, kernels=lambda: _wide_kernels("2d-wide"), reader={})
def wide2d(ctx, shape=(8192, 8192), r=2):
    dev, _, x, out, f, ref = _race_inputs(shape, r, _wide_kernels("2d-wide"))
    ents = contestants(x, out, ["2d-wide", "2d-regtile"], f, ref, dev, library=True,
                    configs=[("2d-wide", WIDE_ALT["2d-wide"])])
    run_race(ctx, ents, x, budget_s=1.2)


@experiment("convolution.wide3d", title="3D: the four-wide tile vs cupyx convolve and the copy ceiling",
            small={"shape": (19, 23, 36)}, kernels=lambda: _wide_kernels("3d-wide"), reader={})
def wide3d(ctx, shape=(512, 512, 512), r=1):
    dev, _, x, out, f, ref = _race_inputs(shape, r, _wide_kernels("3d-wide"))
    ents = contestants(x, out, ["3d-wide", "3d-regtile"], f, ref, dev, library=True,
                    configs=[("3d-wide", WIDE_ALT["3d-wide"])])
    run_race(ctx, ents, x, budget_s=1.5)


@experiment("convolution.radius_wide", title="2D: the four-wide tile at every radius, against the roofline",
            small={"shape": (97, 60), "radii": (0, 1, 4)},
            kernels=lambda: _radius_kernels("2d-wide", WIDE_RADII), reader={})
def radius_wide(ctx, shape=(8192, 8192), radii=WIDE_RADII):
    """The radius sweep of convolution.radius, for the four-wide tile."""
    radius_sweep(ctx, "2d-wide", shape, radii, budget_s=1.2)


# ---- tile-shape sweeps (the explorers) ----------------------------------------------------

def _sweep_specs(name: str, r: int, tile_key: str):
    v = get(name)
    return [v.spec(r, v.params(**{tile_key: t})) for t in v.param_space[tile_key]]


def sweep(ctx, name: str, shape: tuple, r: int, space: dict, budget_s: float):
    """Every combination of `space` for variant `name`: the reason it cannot run, or its
    check and its time (each timed alone, a race of one: no ratios are taken from these
    rows)."""
    import cupy as cp

    dev = current().as_dict()
    rng = np.random.default_rng()
    v = get(name)
    keys = list(space)
    combos = [dict(zip(keys, c)) for c in itertools.product(*space.values())]
    warm([v.spec(r, v.params(**p)) for p in combos
          if v.reason(v.params(**p), shape, r, device=dev) is None])
    x = refm.fresh_device(shape)
    out = cp.empty_like(x)
    f = refm.filter_for(len(shape), r, rng)
    ref = refm.reference(x, f)
    n = x.size
    for p in combos:
        full = v.params(**p)
        params = {"shape": list(shape), "r": r, **p}
        why = v.reason(full, shape, r, device=dev)
        if why:
            ctx.row(variant=name, params=params, metrics={}, invalid=why)
            continue
        prep = prepare(v, x, f, out, device=dev, **p)
        entry = race.Entry(f"{name}/{config_label(p)}", prep.call,
                           check=lambda prep=prep: _run_checked(prep, out, ref),
                           kernels=[prep.spec], launch=prep.launch,
                           metrics={"smem_bytes": (prep.smem, "B")}, bytes=8 * n,
                           flops=n * flops_per_output(len(shape), r), variant=name)
        race.run(ctx, [entry], params=params, budget_s=budget_s, alone=True)


@experiment("convolution.tiles2d", title="2D register-tiled kernel: block shape × outputs per thread",
            small={"shape": (67, 45), "space": {"BX": (16, 32), "BY": (2, 64), "PY": (1, 4)}},
            sweep=True, kernels=lambda: _sweep_specs("2d-regtile", 2, "PY"), reader={})
def tiles2d(ctx, shape=(8192, 8192), r=2, space=None):
    sweep(ctx, "2d-regtile", tuple(shape), r, space or get("2d-regtile").param_space, budget_s=0.03)


@experiment("convolution.tiles3d", title="3D register-tiled kernel: block shape × outputs per thread",
            small={"shape": (13, 11, 19), "space": {"BX": (16,), "BY": (2, 128), "PZ": (2, 4)}},
            sweep=True, kernels=lambda: _sweep_specs("3d-regtile", 1, "PZ"), reader={})
def tiles3d(ctx, shape=(512, 512, 512), r=1, space=None):
    sweep(ctx, "3d-regtile", tuple(shape), r, space or get("3d-regtile").param_space, budget_s=0.03)


__all__ = ["CHECKS", "RACE_R", "RADII", "LIBRARY", "COPIES", "config_label", "flops_per_output",
           "warm", "contestants", "run_race", "sweep"]
