"""The kernels of chapter 6 as variants (`ConvVariant`, the lab's Variant of
perflab.variant for a shape and a radius): what each one launches, with which block and
grid, how much shared memory, and every reason it cannot run a problem.

Every variant computes the same thing for a float32 array `x` of 1, 2 or 3 dimensions
(C order: (n,), (H, W), (D, H, W)) and an odd filter `f` of radius r:

    out[i] = sum over the taps j of f[j] * x[i + j - r]     (zeros outside x)

the correlation form (scipy.ndimage.convolve flips the filter; `library` passes it the
flipped filter, so both compute this). The depthwise variants take a (D, H, W) volume and a
(D, k, k) filter: slice z is convolved in 2D with filter z.

    v = get("2d-regtile")
    prep = prepare(v, x, f, out, BX=32, BY=8, PY=8)   # every check, filter uploaded
    prep.call()                                     # only the launch (what is timed)
    v.run(x, f, out, v.params(PY=4))                # checked, filter uploaded, launched
    v.reason(v.params(PY=4), x.shape, r)            # why it cannot run, or None

`prepare` and `run` check operands and parameters the same way (`operands`, then `check`);
a bad one raises ConfigError with the reason, before anything is compiled or launched.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...errors import ConfigError
from ...kernels import KernelSpec, get_kernel, launch, upload_global
from ...variant import Variant
from . import CHAPTER

#: float32 taps the constant-memory filter holds (kernels/06-convolution/filter.cuh).
CONST_TAPS = 16384
#: The largest index the kernels compute in 32-bit arithmetic.
MAX_ELEMENTS = (1 << 31) - 1
#: Blocks along grid y and z.
MAX_GRID_YZ = 65535


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True, kw_only=True)
class ConvVariant(Variant):
    """A convolution kernel: the lab's Variant (perflab.variant), its problem a shape and a
    radius, with the launch this chapter's kernels share (one kernel, a block, a grid and
    dynamic shared memory from the parameters)."""

    dims: int                    # 1, 2 or 3
    op: str                      # "conv" (a (2r+1)^dims filter) or "depthwise"
    file: str                    # under kernels/06-convolution/
    kernel: str                  # the __global__ function
    template: tuple              # names of its template arguments, in order ("R", "PY")
    const: bool                  # the filter in constant memory (else a pointer argument)
    block: Callable[[dict], tuple]
    grid: Callable[[tuple, int, dict], tuple]     # (shape, r, params) -> grid
    smem: Callable[[int, dict], int] = lambda r, p: 0
    rule: Callable[[int, dict], str | None] = lambda r, p: None   # variant-specific reason
    # The kernel takes a last int argument `vec`: 1 when 16-byte loads and stores are safe
    # (W % 4 == 0 and both arrays 16-byte aligned), 0 for the scalar path.
    vec_arg: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        # One kernel, compiled for the radius: kernels(params, r); enqueue uploads the
        # filter and launches.
        object.__setattr__(self, "kernels", lambda p, r: [self.spec(r, p)])
        object.__setattr__(self, "enqueue", lambda x, f, out, p: _bind(self, x, f, out, p)[-1]())

    def cast(self, name: str, value) -> int:
        return int(value)

    def spec(self, r: int, p: dict) -> KernelSpec:
        args = tuple(r if t == "R" else p[t] for t in self.template)
        return KernelSpec(f"{CHAPTER}/{self.file}", self.kernel, template=args)

    def flops_per_output(self, r: int) -> int:
        """2 per tap (one FMA): 2 (2r+1)^dims, or 2 (2r+1)^2 for a depthwise slice."""
        k = 2 * r + 1
        return 2 * (k * k if self.op == "depthwise" else k ** self.dims)

    def taps(self, r: int, shape: tuple) -> int:
        k = 2 * r + 1
        return shape[0] * k * k if self.op == "depthwise" else k ** self.dims

    def operands(self, x, f, out) -> tuple[tuple, int]:
        """(shape, radius) of the problem, after every check on x, f and out."""
        return tuple(x.shape), check_operands(self, x, f, out)

    def check_common(self, p: dict, shape: tuple, r: int, device: dict | None = None) -> None:
        """Why this configuration cannot run `shape` with radius `r` (ConfigError)."""
        why = self._why(tuple(shape), r, p, device)
        if why:
            raise ConfigError(why)

    def _why(self, shape: tuple, r: int, p: dict, device: dict | None) -> str | None:
        if r < 0:
            return f"the radius must be 0 or more, got {r}"
        why = self.rule(r, p)
        if why:
            return f"{self.name}: {why}"
        threads = int(np.prod(self.block(p)))
        if threads > 1024:
            return (f"{self.name}: a block of {' x '.join(map(str, self.block(p)))} = {threads} "
                    "threads; a block holds at most 1024")
        smem = self.smem(r, p)
        limit = (device or {}).get("smem_per_block_optin")
        if limit and smem > limit:
            return (f"{self.name}: the tile needs {smem / 1024:.1f} KiB of shared memory; this "
                    f"GPU gives a block at most {limit / 1024:.0f} KiB")
        if self.const and self.taps(r, shape) > CONST_TAPS:
            n = self.taps(r, shape)
            return (f"{self.name}: a filter of {n} taps ({4 * n / 1024:.0f} KiB) does not fit "
                    f"the {CONST_TAPS} float32 taps (64 KiB) of constant memory it is read "
                    "from")
        g = self.grid(shape, r, p)
        if any(v > MAX_GRID_YZ for v in g[1:]):
            return f"{self.name}: a grid of {g} blocks; grid y and z hold at most {MAX_GRID_YZ}"
        return None


def _block2(p):
    return (p["BX"], p["BY"])


def _tile_rule(dims):
    def rule(r, p):
        if p["T"] <= 2 * r:
            return (f"an input tile of T={p['T']} leaves T - 2R = {p['T'] - 2 * r} outputs per "
                    f"side for radius {r}: it needs T > 2R (here T >= {2 * r + 1})")
        return None
    return rule


def _positive(*names):
    def rule(r, p):
        bad = [n for n in names if p[n] < 1]
        return f"{', '.join(bad)} must be at least 1" if bad else None
    return rule


VARIANTS: dict[str, ConvVariant] = {}


def _add(name, dims, op, label, file, kernel, template, const, defaults, block, grid,
         smem=None, *, rule, space=None, vec_arg=False) -> None:
    """A kernel in the chapter's order: its launch parameters `defaults` (with the values an
    explorer offers, `space`), block, grid and shared memory from them."""
    VARIANTS[name] = ConvVariant(
        name=name, label=label, dims=dims, op=op, file=file, kernel=kernel, template=template,
        const=const, default_params=defaults, param_space=space or {}, block=block, grid=grid,
        smem=smem or (lambda r, p: 0), rule=rule, vec_arg=vec_arg)


_add("1d-naive", 1, "conv", "naive (global filter)", "conv1d_naive.cu", "conv1d_naive",
     (), False, {"B": 256}, lambda p: (p["B"],),
     lambda s, r, p: (_cdiv(s[0], p["B"]),), rule=_positive("B"))
_add("1d-const", 1, "conv", "constant-memory filter", "conv1d_const.cu", "conv1d_const",
     ("R",), True, {"B": 256}, lambda p: (p["B"],),
     lambda s, r, p: (_cdiv(s[0], p["B"]),), rule=_positive("B"))
_add("1d-tiled", 1, "conv", "tiled with halo", "conv1d_tiled.cu", "conv1d_tiled",
     ("R",), True, {"B": 256}, lambda p: (p["B"],),
     lambda s, r, p: (_cdiv(s[0], p["B"]),), lambda r, p: 4 * (p["B"] + 2 * r),
     rule=_positive("B"))

_add("2d-naive", 2, "conv", "naive (global filter)", "conv2d_naive.cu", "conv2d_naive",
     (), False, {"BX": 32, "BY": 8}, _block2,
     lambda s, r, p: (_cdiv(s[1], p["BX"]), _cdiv(s[0], p["BY"])),
     rule=_positive("BX", "BY"))
_add("2d-const", 2, "conv", "constant-memory filter", "conv2d_const.cu", "conv2d_const",
     ("R",), True, {"BX": 32, "BY": 8}, _block2,
     lambda s, r, p: (_cdiv(s[1], p["BX"]), _cdiv(s[0], p["BY"])),
     rule=_positive("BX", "BY"))
_add("2d-tiled", 2, "conv", "tiled with halo (input tile)", "conv2d_tiled.cu",
     "conv2d_tiled", ("R",), True, {"T": 32}, lambda p: (p["T"], p["T"]),
     lambda s, r, p: (_cdiv(s[1], p["T"] - 2 * r), _cdiv(s[0], p["T"] - 2 * r)),
     lambda r, p: 4 * p["T"] ** 2, rule=_tile_rule(2))
_add("2d-cached", 2, "conv", "tiled, halo from the caches", "conv2d_cached.cu",
     "conv2d_cached", ("R",), True, {"T": 32}, lambda p: (p["T"], p["T"]),
     lambda s, r, p: (_cdiv(s[1], p["T"]), _cdiv(s[0], p["T"])),
     lambda r, p: 4 * p["T"] ** 2, rule=_positive("T"))
_add("2d-regtile", 2, "conv", "tiled with halo, PY outputs per thread",
     "conv2d_regtile.cu", "conv2d_regtile", ("R", "PY"), True,
     {"BX": 32, "BY": 8, "PY": 8}, _block2,
     lambda s, r, p: (_cdiv(s[1], p["BX"]), _cdiv(s[0], p["BY"] * p["PY"])),
     lambda r, p: 4 * (p["BX"] + 2 * r) * (p["BY"] * p["PY"] + 2 * r),
     rule=_positive("BX", "BY", "PY"),
     space={"BX": [8, 16, 32, 64, 128], "BY": [1, 2, 4, 8, 16], "PY": [1, 2, 4, 8, 16]})

_add("3d-naive", 3, "conv", "naive (volumetric)", "conv3d_naive.cu", "conv3d_naive",
     ("R",), True, {"BX": 32, "BY": 8, "BZ": 1}, lambda p: (p["BX"], p["BY"], p["BZ"]),
     lambda s, r, p: (_cdiv(s[2], p["BX"]), _cdiv(s[1], p["BY"]), _cdiv(s[0], p["BZ"])),
     rule=_positive("BX", "BY", "BZ"))
_add("3d-tiled", 3, "conv", "tiled with halo (input tile)", "conv3d_tiled.cu",
     "conv3d_tiled", ("R",), True, {"T": 8}, lambda p: (p["T"],) * 3,
     lambda s, r, p: tuple(_cdiv(d, p["T"] - 2 * r) for d in (s[2], s[1], s[0])),
     lambda r, p: 4 * p["T"] ** 3, rule=_tile_rule(3))
_add("3d-regtile", 3, "conv", "tiled with halo, PZ outputs per thread",
     "conv3d_regtile.cu", "conv3d_regtile", ("R", "PZ"), True,
     {"BX": 32, "BY": 8, "PZ": 8}, _block2,
     lambda s, r, p: (_cdiv(s[2], p["BX"]), _cdiv(s[1], p["BY"]), _cdiv(s[0], p["PZ"])),
     lambda r, p: 4 * (p["BX"] + 2 * r) * (p["BY"] + 2 * r) * (p["PZ"] + 2 * r),
     rule=_positive("BX", "BY", "PZ"),
     space={"BX": [16, 32, 64, 128], "BY": [2, 4, 8, 16], "PZ": [2, 4, 8, 16]})
_add("3d-dw-cached", 3, "depthwise", "depthwise, halo from the caches",
     "conv3d_depthwise_cached.cu", "conv3d_depthwise_cached", ("R",), True, {"T": 32},
     lambda p: (p["T"], p["T"]),
     lambda s, r, p: (_cdiv(s[2], p["T"]), _cdiv(s[1], p["T"]), s[0]),
     lambda r, p: 4 * p["T"] ** 2, rule=_positive("T"))
_add("3d-dw-tiled", 3, "depthwise", "depthwise, tiled with halo",
     "conv3d_depthwise_tiled.cu", "conv3d_depthwise_tiled", ("R",), True,
     {"BX": 32, "BY": 8}, _block2,
     lambda s, r, p: (_cdiv(s[2], p["BX"]), _cdiv(s[1], p["BY"]), s[0]),
     lambda r, p: 4 * (p["BX"] + 2 * r) * (p["BY"] + 2 * r), rule=_positive("BX", "BY"))


def _rp(r: int) -> int:
    """The halo columns of the four-wide tiles: r rounded up to a multiple of 4."""
    return (r + 3) // 4 * 4


_add("2d-wide", 2, "conv", "four-wide register tile, compile-time shape",
     "conv2d_wide.cu", "conv2d_wide", ("R", "BX", "BY", "PY"), True,
     {"BX": 32, "BY": 8, "PY": 4}, _block2,
     lambda s, r, p: (_cdiv(s[1], 4 * p["BX"]), _cdiv(s[0], p["BY"] * p["PY"])),
     lambda r, p: 4 * (4 * p["BX"] + 2 * _rp(r)) * (p["BY"] * p["PY"] + 2 * r),
     rule=_positive("BX", "BY", "PY"), vec_arg=True)
_add("3d-wide", 3, "conv", "four-wide register tile, compile-time shape",
     "conv3d_wide.cu", "conv3d_wide", ("R", "BX", "BY", "PY", "PZ"), True,
     {"BX": 32, "BY": 4, "PY": 2, "PZ": 8}, _block2,
     lambda s, r, p: (_cdiv(s[2], 4 * p["BX"]), _cdiv(s[1], p["BY"] * p["PY"]),
                      _cdiv(s[0], p["PZ"])),
     lambda r, p: 4 * (4 * p["BX"] + 2 * _rp(r)) * (p["BY"] * p["PY"] + 2 * r)
     * (p["PZ"] + 2 * r),
     rule=_positive("BX", "BY", "PY", "PZ"), vec_arg=True)


def get(name: str) -> ConvVariant:
    if name not in VARIANTS:
        raise ConfigError(f"unknown convolution variant {name!r}; known: {', '.join(VARIANTS)}")
    return VARIANTS[name]


def of(dims: int, op: str = "conv") -> list[ConvVariant]:
    return [v for v in VARIANTS.values() if v.dims == dims and v.op == op]


# ---- operands -------------------------------------------------------------------------

def radius_of(v: ConvVariant, x_shape: tuple, f_shape: tuple) -> int:
    """The filter's radius, after checking that its shape suits `v` and `x`."""
    want = "(k,) * %d" % v.dims if v.op == "conv" else "(D, k, k) with D = x.shape[0]"
    if v.op == "conv":
        ok = len(f_shape) == v.dims and len(set(f_shape)) == 1
    else:
        ok = len(f_shape) == 3 and f_shape[0] == x_shape[0] and f_shape[1] == f_shape[2]
    if not ok:
        raise ConfigError(f"{v.name}: f has shape {tuple(f_shape)}; it needs {want} "
                          f"for x of shape {tuple(x_shape)}")
    k = f_shape[-1]
    if k % 2 == 0:
        raise ConfigError(f"{v.name}: f is {k} wide, an even width; the kernels centre the filter "
                          "on each output, which needs an odd width 2r + 1")
    return (k - 1) // 2


def _check_layout(v: ConvVariant, what: str, a, ndim: int) -> None:
    """dtype, dimensions and layout of an array operand (any array type)."""
    dt = getattr(a, "dtype", None)
    if dt != np.float32:
        raise ConfigError(f"{v.name}: {what} has dtype {dt}; these kernels are float32 "
                          f"(pass {what}.astype(cupy.float32))")
    if a.ndim != ndim:
        raise ConfigError(f"{v.name}: {what} has {a.ndim} dimension(s); this kernel takes {ndim}")
    if not a.flags.c_contiguous:
        raise ConfigError(f"{v.name}: {what} is not C-contiguous (strides {a.strides}); the "
                          f"kernels index a dense row-major array: pass "
                          f"cupy.ascontiguousarray({what})")


def check_operands(v: ConvVariant, x, f, out) -> int:
    """Every check on x, f and out (in that order: layout first, then where they live);
    returns the filter's radius."""
    _check_layout(v, "x", x, v.dims)
    if x.size == 0:
        raise ConfigError(f"{v.name}: x is empty")
    if x.size > MAX_ELEMENTS:
        raise ConfigError(f"{v.name}: x has {x.size} elements; the kernels index in 32 bits "
                          f"(at most {MAX_ELEMENTS})")
    _check_layout(v, "f", f, 3 if v.op == "depthwise" else v.dims)
    r = radius_of(v, x.shape, f.shape)
    _check_layout(v, "out", out, v.dims)
    if out.shape != x.shape:
        raise ConfigError(f"{v.name}: out has shape {out.shape}, x has {x.shape}")
    import cupy as cp

    for what, a in (("x", x), ("out", out)):
        if not isinstance(a, cp.ndarray):
            raise ConfigError(f"{v.name}: {what} is a {type(a).__module__}.{type(a).__name__}, "
                              f"not a CuPy array on the GPU; pass cupy.asarray({what})")
    if abs(int(out.data.ptr) - int(x.data.ptr)) < x.nbytes:
        raise ConfigError(f"{v.name}: out overlaps x; the kernels read x while writing out, "
                          "so they need separate arrays")
    return r


@dataclass
class Prepared:
    """A checked call: `call()` launches, nothing else (the filter is already in place)."""
    variant: ConvVariant
    r: int
    params: dict
    spec: KernelSpec
    grid: tuple
    block: tuple
    smem: int
    call: Callable[[], None]

    @property
    def launch(self) -> dict:
        return {"grid": list(self.grid), "block": list(self.block), "dynamic_smem": self.smem}


def _bind(v: ConvVariant, x, f, out, p: dict):
    """Compile, put the filter where the kernel reads it, and return (r, spec, grid, block,
    smem, call) with `call()` the launch alone; no checks (`prepare` and `run` make them)."""
    import cupy as cp

    r = (f.shape[-1] - 1) // 2
    spec = v.spec(r, p)
    kern = get_kernel(spec)
    grid, block, smem = v.grid(x.shape, r, p), v.block(p), v.smem(r, p)
    sizes = tuple(np.int32(n) for n in reversed(x.shape))          # W, H, D
    f32 = cp.asnumpy(f).astype(np.float32).ravel()
    if v.const:
        upload_global(spec, "c_filter", f32)   # the filter, in constant memory
        args = (x, out) + sizes
        if v.vec_arg:
            vec = x.shape[-1] % 4 == 0 and x.data.ptr % 16 == 0 and out.data.ptr % 16 == 0
            args += (np.int32(vec),)
    else:
        fd = cp.asarray(f32)
        args = (x, fd, out) + sizes + (np.int32(r),)

    def call():
        launch(kern, grid, block, args, shared_mem=smem)

    return r, spec, grid, block, smem, call


def prepare(v: ConvVariant, x, f, out, device: dict | None = None, **given) -> Prepared:
    """Check everything, compile, put the filter where the kernel reads it, and return
    the launch (see the module docstring)."""
    p = v.params(**given)
    v.check(p, *v.operands(x, f, out), device=device)
    r, spec, grid, block, smem, call = _bind(v, x, f, out, p)
    return Prepared(v, r, p, spec, grid, block, smem, call)
