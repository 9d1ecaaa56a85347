"""Chapter 4's experiments: VecAdd, RGB -> gray and the box blur, each kernel checked
against an exact reference and then raced against the library and the copy ceiling
(cudaMemcpy of the same number of bytes) in one interleaved run; the photograph through
every kernel; block shapes for the explorer.

Checks: float outputs are poisoned with NaN first; uint8 outputs are run twice, poisoned
with 0 and with 255, and must match the reference exactly both times (an unwritten pixel
cannot match both).
"""
from __future__ import annotations

import numpy as np

from ... import race
from ...correctness import Check, compare, poison
from ...kernels import get_kernel, launch
from ...registry import experiment
from .. import machine
from . import ops, reference as ref

#: The library's blur truncates after each of its two 1-D passes: it lands up to this many
#: gray levels from the exactly rounded mean (its check allows this; its row says how far).
LIBRARY_BLUR_LEVELS = 3
COPIES = ("cudaMemcpy", "cupy copyto", "chapter 0 copy kernel")
#: The baselines the copy ceiling is taken from (the faster of the two, as in chapter 2);
#: chapter 0's copy kernel is raced against them like any contestant.
CEILINGS = ("cudaMemcpy", "cupy copyto")
RADIUS = 4


def contestant(name: str, fn, check, nbytes: int, role: str | None = None, kernels=(),
               launch: dict | None = None, **kw) -> race.Entry:
    """One entry of a race: `fn()` timed; `check()` -> (Check, the metrics it reports
    beside it) run first; `nbytes` the bytes it must move; `role` ("kernel", "library" or
    "copy") in its params; `launch` its configuration."""
    got = {}

    def chk():
        c, got["metrics"] = check()
        return c
    return race.Entry(name, fn, check=chk, params={"role": role} if role else {},
                      kernels=list(kernels), metrics=lambda: got.get("metrics", {}),
                      bytes=nbytes, launch=dict(launch or {}), **kw)


def check_u8(out, want, fn, levels: int = 0) -> tuple[Check, dict]:
    """Run `fn` twice, `out` poisoned with 0 and then with 255: exact both times, or for a
    library's rounding within `levels` gray levels of the exact reference."""
    worst, mism, rel = 0, 0, 0.0
    for fill in (0, 255):
        out.fill(fill)
        fn()
        rel = max(rel, compare(out, want, "fp32").rel_err)
        d = abs(out.astype(np.int16) - want.astype(np.int16))
        worst = max(worst, int(d.max()))
        mism = max(mism, int((d != 0).sum()))
    metrics = {"max_abs_diff": (worst, "levels")}
    if levels:
        metrics["pixels_differing"] = (mism, "1")
    return Check(worst <= levels, rel, float(levels), mism), metrics


def check_float(out, want, fn) -> tuple[Check, dict]:
    poison(out)
    fn()
    return compare(out, want, "fp32"), {}


def copy_entries(copy_bytes: int) -> list[race.Entry]:
    """The copies of `copy_bytes` (rounded down to 16 bytes, at least 16), each checked
    exactly: cudaMemcpy and CuPy's copyto (a cudaMemcpyAsync for contiguous arrays), the
    copy ceiling (CEILINGS: the faster is the baseline, compared by rate), and chapter 0's
    16-byte copy kernel, a contestant."""
    import cupy as cp

    n = max(4, copy_bytes // 16 * 4)
    src = cp.random.random(n, dtype=cp.float32)
    dst = cp.empty_like(src)
    spec = machine.copy_spec()
    k = get_kernel(spec)
    n4 = src.nbytes // 16
    g = -(-n4 // (256 * spec.template[0]))
    calls = {"cudaMemcpy": lambda: dst.data.copy_from_device(src.data, src.nbytes),
             "cupy copyto": lambda: cp.copyto(dst, src),
             "chapter 0 copy kernel": lambda: launch(k, g, 256, (src, dst, np.int64(n4)))}
    out = []
    for name, fn in calls.items():
        def chk(fn=fn):
            poison(dst)
            fn()
            return compare(dst, src, "exact"), {}
        kernel, ceiling = name == "chapter 0 copy kernel", name in CEILINGS
        out.append(contestant(name, fn, chk, 2 * src.nbytes, "copy", [spec] if kernel else [],
                              {"grid": g, "block": 256} if kernel else {},
                              baseline=race.COPY_KEY if ceiling else None, by_rate=ceiling,
                              self_ratio=ceiling))
    return out


def run_race(ctx, entries: list[race.Entry], copy_bytes: int, params: dict,
             budget_s: float) -> dict:
    """The contestants `entries` and the copies of `copy_bytes` (copy_entries), raced:
    each checked, the correct ones timed interleaved for about `budget_s` seconds; one row
    each, with TB/s over the bytes it must move and, round by round, its rate over the
    copy ceiling's rate in the same round (of_copy; the row's `baseline` names the
    ceiling, whose own row holds its TB/s)."""
    return race.run(ctx, entries + copy_entries(copy_bytes), params=params, budget_s=budget_s)


def free_pool():
    import cupy as cp
    cp.get_default_memory_pool().free_all_blocks()


# ---- VecAdd ----------------------------------------------------------------------------------

def _vecadd_kernels():
    return [ops.vecadd_spec(v) for v in ops.VECADD] + [machine.copy_spec()]


@experiment("images.vecadd", title="VecAdd against CuPy and the copy ceiling",
            small={"sizes": (1, 3, 257, 1000003)}, kernels=_vecadd_kernels,
            reader={"budget_s": 1.0})     # every row, the race 1 s instead of 2.5
def vecadd(ctx, sizes=(1 << 27,), budget_s=2.5):
    """c = a + b on `n` fresh random floats: every variant, CuPy's a + b (into c) and the
    copies of 6n bytes (the 12n bytes VecAdd moves, read + written) interleaved."""
    import cupy as cp

    for n in sizes:
        a = cp.random.random(n, dtype=cp.float32)
        b = cp.random.random(n, dtype=cp.float32)
        c = cp.empty_like(a)
        want = ref.vecadd_ref(a, b)
        entries = []
        for v in ops.VECADD:
            fn, cfg = ops.vecadd_call(a, b, c, v)
            entries.append(contestant(v, fn, lambda fn=fn: check_float(c, want, fn),
                                      ref.vecadd_bytes(n), "kernel", [ops.vecadd_spec(v)], cfg))
        lib = lambda: ops.cupy_add(a, b, c)          # noqa: E731
        entries.append(contestant("CuPy a + b", lib, lambda: check_float(c, want, lib),
                                  ref.vecadd_bytes(n), "library"))
        run_race(ctx, entries, ref.vecadd_bytes(n) // 2, {"n": n}, budget_s)
        a = b = c = want = None
        free_pool()


# ---- RGB -> gray -----------------------------------------------------------------------------

def random_rgb(h: int, w: int):
    import cupy as cp
    return cp.random.randint(0, 256, (h, w, 3), dtype=cp.uint8)


def _gray_kernels():
    return [ops.gray_spec(v) for v in ops.GRAY] + [machine.copy_spec()]


SMALL_SHAPES = ((1, 1), (1, 1001), (1001, 1), (37, 1001), (257, 255), (5, 3))


@experiment("images.gray", title="RGB to gray against CuPy and the copy ceiling",
            small={"shapes": SMALL_SHAPES}, kernels=_gray_kernels,
            reader={"budget_s": 1.0})     # every row, the race 1 s instead of 2.5
def gray(ctx, shapes=((16384, 16384),), budget_s=2.5):
    """uint8 RGB (fresh random pixels) to uint8 gray: every variant, the same luma in CuPy
    array operations, and the copies of 2 bytes per pixel (the 4 bytes a pixel moves)."""
    import cupy as cp

    for h, w in shapes:
        rgb = random_rgb(h, w)
        out = cp.empty((h, w), dtype=cp.uint8)
        want = ref.gray_ref(rgb)
        entries = []
        for v in ops.GRAY:
            fn, cfg = ops.gray_call(rgb, out, v)
            entries.append(contestant(v, fn, lambda fn=fn: check_u8(out, want, fn),
                                      ref.gray_bytes(h, w), "kernel", [ops.gray_spec(v)], cfg))
        lib = lambda: ops.cupy_gray(rgb, out)        # noqa: E731
        entries.append(contestant("CuPy array ops", lib, lambda: check_u8(out, want, lib),
                                  ref.gray_bytes(h, w), "library"))
        run_race(ctx, entries, ref.gray_bytes(h, w) // 2, {"height": h, "width": w}, budget_s)
        rgb = out = want = None
        free_pool()


# ---- the box blur ------------------------------------------------------------------------------

def _blur_kernels():
    return ([ops.blur_spec(v, r) for v in ops.BLUR for r in (1, RADIUS)]
            + [machine.copy_spec()])


def random_gray(h: int, w: int):
    import cupy as cp
    return cp.random.randint(0, 256, (h, w), dtype=cp.uint8)


@experiment("images.blur", title="Box blur against cupyx.scipy.ndimage and the copy ceiling",
            small={"shapes": SMALL_SHAPES + ((130, 250), (64, 121)), "radii": (1, RADIUS)},
            kernels=_blur_kernels,
            reader={"budget_s": 1.0})     # every row, the race 1 s instead of 3
def blur(ctx, shapes=((16384, 16384),), radii=(RADIUS,), budget_s=3.0):
    """The (2R+1)² box blur of a uint8 image (fresh random pixels): every variant,
    cupyx.scipy.ndimage.uniform_filter on the same image, and the copies of 1 byte per
    pixel (the 2 bytes a pixel moves)."""
    import cupy as cp

    for h, w in shapes:
        img = random_gray(h, w)
        out = cp.empty((h, w), dtype=cp.uint8)
        for r in radii:
            want = ref.blur_ref(img, r)
            entries = []
            for v in ops.BLUR:
                if r > ops.MAX_RADIUS[v]:
                    continue
                fn, cfg = ops.blur_call(img, out, r, v)
                entries.append(contestant(v, fn, lambda fn=fn: check_u8(out, want, fn),
                                          ref.blur_bytes(h, w), "kernel", [ops.blur_spec(v, r)],
                                          cfg))
            lib = lambda r=r: ops.cupyx_blur(img, out, r)    # noqa: E731
            entries.append(contestant(
                "cupyx uniform_filter", lib,
                lambda lib=lib: check_u8(out, want, lib, LIBRARY_BLUR_LEVELS),
                ref.blur_bytes(h, w), "library"))
            run_race(ctx, entries, ref.blur_bytes(h, w) // 2,
                     {"height": h, "width": w, "radius": r}, budget_s)
            want = None
        img = out = None
        free_pool()


# ---- the photograph ----------------------------------------------------------------------------

def _photo_kernels():
    return [ops.gray_spec(v) for v in ops.GRAY] + [ops.blur_spec(v, RADIUS) for v in ops.BLUR]


# reader={}: one 600 × 512 photograph through every kernel, checked, untimed: 2 s.
@experiment("images.photo", title="The photograph through every kernel",
            small={}, kernels=_photo_kernels, reader={})
def photo(ctx, radius=RADIUS):
    """Matplotlib's photograph of Grace Hopper (600 × 512 × 3) to gray, then blurred:
    every kernel and library call checked against the exact reference, with the sha256 of
    what it wrote (without a GPU the page shows the reference images, whose sha256 must
    equal the recorded kernels')."""
    import cupy as cp

    img = ref.photo()
    h, w = img.shape[:2]
    rgb = cp.asarray(img)
    g = cp.empty((h, w), dtype=cp.uint8)
    want_g = ref.gray_ref(rgb)
    params = {"image": ref.PHOTO, "height": h, "width": w}
    for v in ops.GRAY:
        fn, cfg = ops.gray_call(rgb, g, v)
        chk, extra = check_u8(g, want_g, fn)
        ctx.row(variant=v, params={**params, "stage": "gray", "radius": 0, "role": "kernel"},
                metrics=extra, check=chk, kernels=[ops.gray_spec(v)], launch=cfg,
                output_sha256=ref.digest(g))
    chk, extra = check_u8(g, want_g, lambda: ops.cupy_gray(rgb, g))
    ctx.row(variant="CuPy array ops", params={**params, "stage": "gray", "radius": 0,
                                               "role": "library"},
            metrics=extra, check=chk, output_sha256=ref.digest(g))
    src = want_g                                   # the exact gray image is the blur's input
    b = cp.empty((h, w), dtype=cp.uint8)
    want_b = ref.blur_ref(src, radius)
    for v in ops.BLUR:
        fn, cfg = ops.blur_call(src, b, radius, v)
        chk, extra = check_u8(b, want_b, fn)
        ctx.row(variant=v, params={**params, "stage": "blur", "radius": radius,
                                   "role": "kernel"},
                metrics=extra, check=chk, kernels=[ops.blur_spec(v, radius)], launch=cfg,
                output_sha256=ref.digest(b))
    chk, extra = check_u8(b, want_b, lambda: ops.cupyx_blur(src, b, radius),
                          LIBRARY_BLUR_LEVELS)
    ctx.row(variant="cupyx uniform_filter", params={**params, "stage": "blur",
                                                    "radius": radius, "role": "library"},
            metrics=extra, check=chk, output_sha256=ref.digest(b))


__all__ = ["RADIUS", "check_u8", "contestant", "run_race", "random_gray", "random_rgb"]
