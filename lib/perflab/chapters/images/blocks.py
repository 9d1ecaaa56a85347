"""Block shape: chapter 4's 2-D kernels (the per-pixel gray conversion, the naive and the
tiled blur) at every block of a grid of shapes, each checked, then timed on its own; the
explorer's rows (explorer.py)."""
from __future__ import annotations

from ... import race
from ...registry import experiment
from . import ops, reference as ref
from .experiments import RADIUS, contestant, free_pool, check_u8, random_gray, random_rgb

BLOCK_X = (8, 16, 32, 64, 128, 256, 512, 1024)
BLOCK_Y = (1, 2, 4, 8, 16, 32)
#: The kernels whose 2-D block the explorer varies: (row variant, call kind, ops variant).
BLOCK_KERNELS = (("gray per-pixel", "gray", "per-pixel"), ("blur naive", "blur", "naive"),
                 ("blur tiled", "blur", "tiled"))


def block_shapes() -> list[tuple[int, int]]:
    """Every (bx, by) of the grid that a GPU can run (at most 1024 threads)."""
    return [(x, y) for x in BLOCK_X for y in BLOCK_Y if x * y <= 1024]


def block_reason(bx: int, by: int) -> str | None:
    """Why a block shape cannot run (ops.check_block's answer), or None."""
    from ...errors import refusal
    return refusal(ops.check_block, (bx, by))


def _blocks_kernels():
    return [ops.gray_spec("per-pixel"), ops.blur_spec("naive", RADIUS),
            ops.blur_spec("tiled", RADIUS)]


def block_row(ctx, kernel: str, bx: int, by: int, rgb, img, g, out, want, radius: int,
              budget_s: float) -> dict:
    """One block shape of one kernel: checked, then timed on its own (a race of one,
    ctx.time), one row; its median also in µs."""
    variant, kind, v = next(k for k in BLOCK_KERNELS if k[0] == kernel)
    h, w = img.shape
    if kind == "gray":
        fn, cfg = ops.gray_call(rgb, g, v, (bx, by))
        check = lambda: check_u8(g, want["gray"], fn)          # noqa: E731
        nbytes, spec = ref.gray_bytes(h, w), ops.gray_spec(v)
    else:
        fn, cfg = ops.blur_call(img, out, radius, v, (bx, by))
        check = lambda: check_u8(out, want["blur"], fn)        # noqa: E731
        nbytes, spec = ref.blur_bytes(h, w), ops.blur_spec(v, radius)
    entry = contestant(f"{variant}/{bx}x{by}", fn, check, nbytes, kernels=[spec], launch=cfg,
                       variant=variant)
    row = race.run(ctx, [entry], params={"kernel": variant, "bx": bx, "by": by, "height": h,
                                         "width": w, "radius": radius if kind == "blur" else 0},
                   budget_s=budget_s, alone=True)[entry.name]
    m = row["metrics"]
    if "median_ms" in m:
        m["median_us"] = {"value": m["median_ms"]["value"] * 1e3, "unit": "us"}
    return row


@experiment("images.blocks", title="Block shape: the 2-D kernels at every block of the grid",
            small={"shape": (37, 1001), "blocks": ((8, 1), (32, 8), (1024, 1), (16, 32))},
            sweep=True, kernels=_blocks_kernels,
            # reader={}: each shape is timed for 0.05 s already, and the page quotes the
            # best, the worst and the shares within 10 % of the best of all 33 shapes
            reader={})
def blocks(ctx, shape=(8192, 8192), blocks=None, radius=RADIUS, budget_s=0.05, kernels=None):
    """The per-pixel gray kernel and the naive and tiled blurs at every block shape (fresh
    random pixels), each checked, then timed on its own; `of_best` is a shape's rate over
    the best shape's of the same kernel."""
    import cupy as cp

    h, w = shape
    rgb = random_rgb(h, w)
    img = random_gray(h, w)
    g = cp.empty((h, w), dtype=cp.uint8)
    out = cp.empty((h, w), dtype=cp.uint8)
    want = {"gray": ref.gray_ref(rgb), "blur": ref.blur_ref(img, radius)}
    for kernel, _, _ in BLOCK_KERNELS:
        if kernels is not None and kernel not in kernels:
            continue
        rows = [block_row(ctx, kernel, bx, by, rgb, img, g, out, want, radius, budget_s)
                for bx, by in (blocks or block_shapes())]
        timed = [r for r in rows if "TB/s" in r["metrics"]]
        best = max((r["metrics"]["TB/s"]["value"] for r in timed), default=None)
        for r in timed:                  # each shape against this kernel's best shape
            r["metrics"]["of_best"] = {"value": r["metrics"]["TB/s"]["value"] / best, "unit": "1"}
    rgb = img = g = out = want = None
    free_pool()
