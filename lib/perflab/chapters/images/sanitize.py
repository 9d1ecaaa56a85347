"""compute-sanitizer on chapter 4's kernels, recorded like a measurement: memcheck
(out-of-bounds and misaligned accesses, with one allocation per array so that a stray
access leaves its allocation) and racecheck (shared-memory hazards), each over every
kernel of the chapter at the edge sizes (1 × 1, 1 × N, N × 1, smaller than the blur's
window, odd shapes; both radii).

The sanitized process runs this module's `drive()`: it launches only the lab's kernels, on
inputs made on the host, and checks each output on the host against the exact reference
(no library kernels, whose instrumentation would cost most of the time and test CuPy, not
these kernels). It prints the same tally as `python -m perflab check`."""
from __future__ import annotations

from ... import sanitize as sanitizers

def _kernels():
    from . import ops
    return ([ops.vecadd_spec(v) for v in ops.VECADD] + [ops.gray_spec(v) for v in ops.GRAY]
            + [ops.blur_spec(v, r) for r in SAN_RADII for v in ops.BLUR])


#: The sizes the sanitized pass runs (VecAdd lengths; image shapes; blur radii).
SAN_SIZES = (1, 3, 257, 100003)
SAN_SHAPES = ((1, 1), (1, 1001), (1001, 1), (5, 3), (37, 1001), (257, 255), (130, 250),
              (64, 121))
SAN_RADII = (1, 4)


def drive() -> int:
    """Every kernel at every edge size, checked on the host; prints `N passed, M failed`."""
    import cupy as cp
    import numpy as np

    from . import ops, reference as ref

    cp.cuda.set_allocator(None)          # one cudaMalloc per array: strays leave it
    rng = np.random.default_rng()
    passed = failed = 0

    def tally(what, fn, shape, want):
        """Run fn(out) with out filled with 0, then 255 (NaN for floats): exact both times."""
        nonlocal passed, failed
        ok = True
        for fill in ((np.nan,) if want.dtype == np.float32 else (0, 255)):
            out = cp.asarray(np.full(shape, fill, want.dtype))
            fn(out)
            ok &= bool(np.array_equal(cp.asnumpy(out), want))
        passed, failed = passed + ok, failed + (not ok)
        print(f"{'ok  ' if ok else 'FAIL'} {what}", flush=True)

    for n in SAN_SIZES:
        a, b = (rng.random(n, dtype=np.float32) for _ in range(2))
        da, db = cp.asarray(a), cp.asarray(b)
        for v in ops.VECADD:
            tally(f"vecadd {v} n={n}", lambda o, v=v: ops.vecadd_call(da, db, o, v)[0](), n,
                  a + b)
    for h, w in SAN_SHAPES:
        rgb = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        drgb = cp.asarray(rgb)
        want = ref.gray_ref(rgb)
        for v in ops.GRAY:
            tally(f"gray {v} {h}x{w}", lambda o, v=v: ops.gray_call(drgb, o, v)[0](), (h, w),
                  want)
        img = rng.integers(0, 256, (h, w), dtype=np.uint8)
        dimg = cp.asarray(img)
        for r in SAN_RADII:
            want = ref.blur_ref(img, r)
            for v in ops.BLUR:
                tally(f"blur {v} R={r} {h}x{w}",
                      lambda o, v=v, r=r: ops.blur_call(dimg, o, r, v)[0](), (h, w), want)
    cp.cuda.Device().synchronize()
    print(f"{passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


sanitize = sanitizers.experiment(
    "images.sanitize", drive="perflab.chapters.images.sanitize:drive", kernels=_kernels,
    title="compute-sanitizer memcheck and racecheck, every kernel")
