"""Chapter 5's experiments: every transpose checked bit for bit against NumPy's transpose on
fresh random input (output poisoned first), at shapes that are not multiples of any tile;
then timed round by round next to the copy of the same bytes (cudaMemcpy and chapter 0's
copy kernel) and CuPy's own strided copy (`cupy.copyto(out, a.T)`), all in the same run."""
from __future__ import annotations

import numpy as np

from ... import race
from ...correctness import Check, poison, seed
from ...errors import ConfigError
from ...kernels import blocks_per_sm, capture_launches, checked, get_kernel, launch
from ...registry import experiment
from .. import machine
from . import ops

#: Shapes of the correctness pass: a single element, a row, a column, a little over and
#: under one tile, aligned rows with partial tiles, large and odd.
SHAPES = ((1, 1), (1, 1000), (1000, 1), (33, 31), (132, 200), (1000, 1001), (1024, 4100),
          (8191, 8193))
SMALL_SHAPES = ((1, 1), (1, 37), (37, 1), (33, 31), (132, 200), (67, 130))
#: The ladder: the target case first (8192² float32), then an odd shape and the other types.
CASES = (("float32", 8192, 8192), ("float32", 8191, 8193), ("float64", 8192, 8192),
         ("int32", 8192, 8192))
#: The ladder's entries, (rung, TILE, ROWS): every rung at its default, then the padded
#: rung at the fastest shape the explorer's sweep found for it (a 64 × 64 tile, 64 × 4
#: threads; run 5300aad6c173).
LADDER = tuple((v, None, None) for v in ops.VARIANTS) + (("coarsened", 64, 4),)
#: The explorer's grid, for both tunable rungs (8192² float32).
TILES = (16, 32, 64, 128)
BLOCK_ROWS = (1, 2, 4, 8, 16, 32)
#: The library calls every case is raced against.
BASELINES = ("cudaMemcpy", "copy kernel", "cupy strided copy")


def fresh_host(shape, dtype: str, s: int) -> np.ndarray:
    """Fresh random input on the host: floats uniform in [0, 1), int32 over its whole range."""
    rng = np.random.default_rng(s)
    if dtype == "int32":
        return rng.integers(-2**31, 2**31, size=shape, dtype=np.int32)
    return rng.random(shape, dtype=np.float32 if dtype == "float32" else np.float64)


def check_exact(out, ref) -> Check:
    """Bit-for-bit comparison (rel_err: the fraction of elements that differ; unwritten:
    elements still holding the poison)."""
    import cupy as cp

    n = int(ref.size)
    if tuple(out.shape) != tuple(ref.shape):
        return Check(False, 1.0, 0.0, n)
    if n == 0:
        return Check(True, 0.0, 0.0, 0)
    u = cp.uint32 if out.dtype.itemsize == 4 else cp.uint64
    wrong = int((out.view(u) != ref.view(u)).sum())
    if out.dtype.kind == "f":
        unwritten = int(cp.isnan(out).sum())
    else:
        p = cp.iinfo(out.dtype).min
        unwritten = int(((out == p) & (ref != p)).sum())
    return Check(wrong == 0, wrong / n, 0.0, unwritten)


def inputs(shape, dtype: str, s: int):
    """(a on the GPU, NumPy's transpose of it on the GPU, the host copy's seed)."""
    import cupy as cp

    host = fresh_host(shape, dtype, s)
    ref = cp.asarray(np.ascontiguousarray(host.T))
    return cp.asarray(host), ref


def run_checked(fn, out, ref) -> tuple[Check, list]:
    """Poison `out`, run `fn` once (its launches captured), compare with `ref`."""
    poison(out)
    with capture_launches() as launches:
        checked(fn, "transpose")
    return check_exact(out, ref), launches


def _params(dtype, shape, variant, tile=None, block_rows=None) -> dict:
    if variant in ops.TUNABLE and tile is None:
        tile, block_rows = ops.default_tile(variant, dtype)
    return {"dtype": dtype, "rows": int(shape[0]), "cols": int(shape[1]),
            "tile": tile, "block_rows": block_rows}


def all_specs(dtypes=tuple(ops.DTYPES)):
    return ([ops.spec(v, d) for d in dtypes for v in ops.VARIANTS] + [machine.copy_spec()]
            + [ops.spec(v, d, t, r) for d in dtypes for v, t, r in LADDER
               if t is not None and not ops.config_problem(v, d, t, r)])


# ---- correctness -------------------------------------------------------------------------

@experiment("transpose.check", title="Every rung, every type, shapes that fit no tile",
            small={"shapes": SMALL_SHAPES}, kernels=all_specs,
            # every shape but the 67-million-element one, whose three NumPy references
            # take most of the time (the ladder checks 8191 × 8193 float32 too)
            reader={"shapes": tuple(s for s in SHAPES if s != (8191, 8193))})
def check(ctx, shapes=SHAPES, dtypes=tuple(ops.DTYPES)):
    """Each rung on fresh random input of each shape and type, output poisoned, compared
    bit for bit with NumPy's transpose."""
    import cupy as cp

    for dtype in dtypes:
        for shape in shapes:
            s = seed()
            a, ref = inputs(shape, dtype, s)
            out = cp.empty((shape[1], shape[0]), dtype=a.dtype)
            for v in ops.VARIANTS:
                chk, launches = run_checked(ops.plan(a, out, v), out, ref)
                ctx.row(variant=v, params=_params(dtype, shape, v), metrics={}, check=chk,
                        kernels=[ops.spec(v, dtype)], launch=launches, seed=s)
            del a, ref, out
            cp.get_default_memory_pool().free_all_blocks()


# ---- the ladder, raced against the copy and CuPy's strided copy ---------------------------

def baselines(a, out, dst) -> dict:
    """The copy of the same bytes into `dst` (cudaMemcpy, and chapter 0's copy kernel where
    the bytes are whole 16-byte vectors) and CuPy's own transpose, a strided copy of a.T
    into `out`. (`cupy.copyto` between two contiguous arrays is itself a cudaMemcpy.)"""
    import cupy as cp

    calls = {"cudaMemcpy": lambda: dst.data.copy_from_device(a.data, a.nbytes)}
    if a.nbytes % 16 == 0:
        spec = machine.copy_spec()
        k, n4 = get_kernel(spec), a.nbytes // 16
        grid = max(1, -(-n4 // (256 * spec.template[0])))
        calls["copy kernel"] = lambda: launch(k, grid, 256, (a, dst, np.int64(n4)))
    calls["cupy strided copy"] = lambda: cp.copyto(out, a.T)
    return calls


#: the ratio key of each library call in a race: the copies of the same bytes (the faster
#: of them is the roof: × copy) and CuPy's strided copy (× strided)
KEYS = {"cudaMemcpy": race.COPY_KEY, "copy kernel": race.COPY_KEY, "cupy strided copy": "x_strided"}


def exact_check(fn, out, ref):
    """A race entry's check: `out` poisoned, `fn` run once, compared bit for bit with `ref`
    (the race records the launches)."""
    def check():
        poison(out)
        checked(fn, "transpose")
        return check_exact(out, ref)
    return check


def entry_name(variant: str, tile: int | None, block_rows: int | None) -> str:
    """A ladder entry's name in a race: the rung, and its tile where it is not the default."""
    return variant if tile is None else f"{variant} {tile}x{block_rows}"


def ladder_race(a, out, dst, ref, entries=LADDER) -> list[race.Entry]:
    """One case's race: every entry (rung, TILE, ROWS) that this type allows, checked bit for
    bit against NumPy's transpose `ref` in `out`, then the library calls (`baselines`), the
    copies checked against `a` in `dst`; each row's variant is its rung. Bytes moved = 2 ×
    rows × cols × itemsize; 0 FLOPs."""
    dtype, shape, nbytes = str(a.dtype), tuple(a.shape), 2 * a.nbytes
    flops = {"flops": (0, "FLOP")}
    out_entries = []
    for v, t, r in entries:
        if t is not None and ops.config_problem(v, dtype, t, r):
            continue                  # e.g. a 64-wide padded tile of float64: too big
        fn = ops.plan(a, out, v, t, r)
        out_entries.append(race.Entry(entry_name(v, t, r), fn, check=exact_check(fn, out, ref),
                                      params=_params(dtype, shape, v, t, r),
                                      kernels=[ops.spec(v, dtype, t, r)], metrics=flops,
                                      bytes=nbytes, variant=v))
    for name, fn in baselines(a, out, dst).items():
        strided = name == "cupy strided copy"
        out_entries.append(race.Entry(
            name, fn, check=exact_check(fn, out, ref) if strided else exact_check(fn, dst, a),
            params=_params(dtype, shape, name),
            kernels=[machine.copy_spec()] if name == "copy kernel" else [], metrics=flops,
            bytes=nbytes, baseline=KEYS[name], self_ratio=True, launch={}))
    return out_entries


@experiment("transpose.ladder", title="The ladder against the copy and CuPy's strided copy",
            small={"cases": (("float32", 33, 31), ("float64", 132, 200), ("int32", 1, 1000))},
            kernels=all_specs,
            reader={"budget_s": 0.6})     # every case (the page quotes each), raced 0.6 s
def ladder(ctx, cases=CASES, budget_s=2.5, entries=LADDER):
    """For each (dtype, rows, cols): every entry (rung, TILE, ROWS) and the three library
    calls checked against NumPy's transpose (the copies against the input), then timed
    interleaved (ladder_race). Bytes moved = 2 × rows × cols × itemsize; 0 FLOPs."""
    import cupy as cp

    for i, (dtype, m, n) in enumerate(cases):
        s = seed()
        a, ref = inputs((m, n), dtype, s)
        out = cp.empty((n, m), dtype=a.dtype)
        dst = cp.empty_like(a)
        race.run(ctx, ladder_race(a, out, dst, ref, entries),
                 budget_s=budget_s if i == 0 else budget_s / 2, seed=s)
        del a, ref, out, dst
        cp.get_default_memory_pool().free_all_blocks()


# ---- the explorer's sweep: TILE x rows of threads ------------------------------------------

def tile_reason(variant: str, tile: int, block_rows: int, dtype: str = "float32") -> str | None:
    return ops.config_problem(variant, dtype, tile, block_rows)


def tile_specs():
    return [ops.spec(v, "float32", t, r) for v in ops.TUNABLE for t in TILES for r in BLOCK_ROWS
            if tile_reason(v, t, r) is None]


def inflight_bytes(variant: str, dtype: str, tile: int, per_sm: int) -> int:
    """Bytes one SM has in flight when each of its resident blocks has issued every load
    of its tile before the barrier: blocks per SM × tile bytes."""
    return per_sm * tile * tile * ops.itemsize(dtype)


def tile_one(ctx, a, out, dst, ref, variant: str, tile: int, block_rows: int) -> dict:
    """One tile shape: the reason it cannot run, or checked and raced against cudaMemcpy
    (5 rounds, 0.3 s): its row."""
    import cupy as cp

    dtype = str(a.dtype)
    params = _params(dtype, a.shape, variant, tile, block_rows)
    why = tile_reason(variant, tile, block_rows, dtype)
    if why:
        return ctx.row(variant=variant, params=params, metrics={}, invalid=why)
    spec = ops.spec(variant, dtype, tile, block_rows)

    def metrics():                     # read once the check has launched the kernel
        k = get_kernel(spec)
        block = ops.geometry(variant, dtype, a.shape, tile, block_rows)[1]
        threads = block[0] * block[1] if a.size else 0
        per_sm = blocks_per_sm(k, threads) if threads else 0
        return {"threads": (threads, "1"), "blocks_per_sm": (per_sm, "1"),
                "inflight_per_sm": (inflight_bytes(variant, dtype, tile, per_sm), "B"),
                "registers": (k.num_regs, "1")}
    try:
        fn = ops.plan(a, out, variant, tile, block_rows)
        rows = race.run(ctx, [
            race.Entry(variant, fn, check=exact_check(fn, out, ref), params=params,
                       kernels=[spec], metrics=metrics, bytes=2 * a.nbytes),
            race.Entry("cudaMemcpy", lambda: dst.data.copy_from_device(a.data, a.nbytes),
                       bytes=2 * a.nbytes, baseline=race.COPY_KEY, row=False)],
            budget_s=0.3, rounds=5)
    except ConfigError as exc:         # a launch this GPU refuses (threads, registers)
        return ctx.row(variant=variant, params=params, metrics={}, invalid=str(exc))
    cp.cuda.Device().synchronize()
    return rows[variant]


@experiment("transpose.tiles", title="TILE × rows of threads, both tunable rungs",
            small={"shape": (132, 200)}, sweep=True, kernels=tile_specs,
            # 16-, 32- and 64-wide tiles at 4 to 32 rows of threads: the shapes the page
            # quotes, and the fastest and slowest of each rung on the reference GPU
            reader={"tiles": (16, 32, 64), "block_rows": (4, 8, 16, 32)})
def tiles(ctx, shape=(8192, 8192), variants=ops.TUNABLE, tiles=TILES, block_rows=BLOCK_ROWS):
    """Every (TILE, ROWS) of the padded 05 and wide 06 rungs at `shape` float32: the
    reason it cannot run, or its check and its speed as a fraction of cudaMemcpy."""
    import cupy as cp

    s = seed()
    a, ref = inputs(tuple(shape), "float32", s)
    out = cp.empty((shape[1], shape[0]), dtype=a.dtype)
    dst = cp.empty_like(a)
    for v in variants:
        for t in tiles:
            for r in block_rows:
                tile_one(ctx, a, out, dst, ref, v, t, r)
    del a, ref, out, dst
    cp.get_default_memory_pool().free_all_blocks()


__all__ = ["BASELINES", "BLOCK_ROWS", "CASES", "KEYS", "LADDER", "SHAPES", "TILES", "all_specs",
           "check", "check_exact", "entry_name", "exact_check", "fresh_host", "inflight_bytes",
           "ladder", "ladder_race", "tile_one", "tile_reason", "tiles"]
