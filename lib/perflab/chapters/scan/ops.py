"""The scans as Python calls, checked before anything is launched: `scan(x)` on a 1-D
contiguous CuPy array of int32, int64 or float32 (integer sums wrap as C's do). VARIANTS:
"serial" (01), "three-kernel" (02), "single-pass" (03) and "bulk" (16, 9.0+)."""
from __future__ import annotations

import numpy as np

from ... import device
from ...errors import ConfigError, require
from ...kernels import KernelSpec, Plans, blocks_per_sm, get_kernel, launch
from . import CHAPTER

#: dtype name -> C type of the kernels' template parameter
CTYPES = {"int32": "int", "int64": "long long", "float32": "float"}
#: the three scans scan.check, scan.sizes, scan.float_order and scan.profile race
RACED = ("serial", "three-kernel", "single-pass")
#: every variant `scan` accepts
VARIANTS = RACED + ("bulk",)
DEFAULT_BLOCK, DEFAULT_ITEMS = 256, 32          # DEFAULT_ITEMS: for 4-byte values
#: the single pass's look-back (the block or one warp) and grid (persistent or a block a tile)
LOOKBACKS = ("block", "warp")
GRIDS = ("persistent", "per-tile")
DEFAULT_LOOKBACK, DEFAULT_GRID = "warp", "per-tile"     # measured best: scan.lookback
SEED_BLOCK = 256
#: The tile index is an unsigned 32-bit ticket; the epoch takes 30 bits of a status word.
MAX_TILES = (1 << 32) - 1
EPOCH_LIMIT = (1 << 30) - 1


def default_items(dtype, variant: str = "single-pass") -> int:
    """ITEMS_PER_THREAD: 128 bytes a thread for the single pass, 64 for the others."""
    return (128 if variant == "single-pass" else 64) // np.dtype(dtype).itemsize


def vec(dtype) -> int:
    """Elements in one 16-byte vector of `dtype`."""
    return 16 // np.dtype(dtype).itemsize


def check_dtype(dtype: str) -> None:
    require(dtype in CTYPES,
            f"scan: dtype {dtype} is not supported; use one of {', '.join(CTYPES)}")


def check_variant(variant: str) -> None:
    """ConfigError unless `variant` is one of VARIANTS."""
    require(variant in VARIANTS, f"unknown scan variant {variant!r}; known: {', '.join(VARIANTS)}")


def check_tile(dtype: str, block: int, items: int) -> None:
    """ConfigError, naming the rule, for a tile shape the kernels cannot be built with."""
    check_dtype(dtype)
    require(block % 32 == 0 and 32 <= block <= 1024,
            f"block={block}: a block is whole warps, 32 to 1024 threads")
    v = vec(dtype)
    require(items >= v and items % v == 0, f"ITEMS_PER_THREAD={items} with {dtype}: each "
            f"thread loads whole 16-byte vectors, so ITEMS must be a multiple of {v}")
    require(items <= 32, f"ITEMS_PER_THREAD={items}: at most 32 (the registers a thread holds "
            "them in)")


def single_pass_spec(dtype="int32", block=DEFAULT_BLOCK, items=None,
                     inclusive=True, lookback=DEFAULT_LOOKBACK,
                     grid=DEFAULT_GRID) -> KernelSpec:
    items = items or default_items(dtype)
    require(lookback in LOOKBACKS and grid in GRIDS, f"look-back {lookback!r}, grid {grid!r}: "
            f"use one of {LOOKBACKS} and one of {GRIDS}")
    return KernelSpec(f"{CHAPTER}/03_single_pass.cu", "scan_single_pass",
                      template=(CTYPES[dtype], block, items, bool(inclusive),
                                lookback == "block", grid == "persistent"))


#: 16's shape: (scanner warps, reducer warps, tile KiB, stages, sequencer words a lane,
#: pause between polls in ns), one block an SM
BULK = (16, 4, 32, 6, 4, 128)
#: the shapes scan.bulk sweeps, and the diagnostic (no sequencer: every tile scanned alone)
BULK_SWEEP = ((8, 4, 32, 6, 4, 128), (8, 2, 32, 6, 4, 128), (8, 8, 32, 6, 4, 128),
              (16, 4, 32, 6, 4, 128), (16, 8, 32, 6, 4, 128), (4, 2, 32, 6, 4, 128),
              (8, 4, 32, 7, 4, 128), (8, 4, 16, 12, 4, 128), (8, 4, 48, 4, 4, 128),
              (16, 4, 64, 3, 4, 128), (16, 4, 32, 6, 8, 128), (16, 4, 32, 6, 4, 512))
BULK_DIAGNOSTIC = (BULK,)
#: shared memory a block may hold (the H100/H200 limit: 227 KiB), less the ring's words
BULK_SMEM_LIMIT = 227 * 1024 - 1024


def check_bulk(dtype: str, shape, halo: int = 0, extra: int = 0) -> None:
    """ConfigError for a bulk-copy shape (`halo`: bytes before each tile, `extra`: after)."""
    check_dtype(dtype)
    scanners, reducers, kib, stages, width, delay = shape
    require(1 <= scanners <= 16 and 1 <= reducers <= scanners and scanners % reducers == 0,
            f"{scanners} scanners, {reducers} reducers: 1 to 16 scanner warps, a multiple of "
            "the reducer warps")
    require(4 <= kib <= 128 and kib % 4 == 0 and kib * 1024 % (scanners * 512) == 0,
            f"tile {kib} KiB: a multiple of 4 KiB up to 128, whole 512-byte steps of each of "
            f"the {scanners} scanners' pieces")
    require(stages >= 2, f"stages={stages}: two or more")
    require(stages * (kib * 1024 + halo) + extra <= BULK_SMEM_LIMIT,
            f"{stages} stages of {kib} KiB" + (f" and {extra} B" if extra else "")
            + f": more than the {BULK_SMEM_LIMIT // 1024} KiB of shared memory a block may hold")
    require(1 <= width <= 16, f"width={width}: 1 to 16 words a lane of the sequencer")
    require(0 <= delay <= 1_000_000, f"delay={delay} ns: 0 to 1,000,000 ns between two polls")


def bulk_threads(shape) -> int:
    """Threads of a bulk-copy block: scanners, reducers, the producer, the sequencer."""
    return (shape[0] + shape[1] + 2) * 32


def bulk_missing(what: str = "the bulk-copy scan (16) and encoder (17)") -> str | None:
    """Why the current GPU cannot run 16 and 17 (cp.async.bulk), or None."""
    dev = device.current()
    if int(dev.compute_capability.split(".")[0]) < 9:
        return (f"{what} need compute capability 9.0 or later (cp.async.bulk); "
                f"{dev.name} has {dev.compute_capability}: use variant 'single-pass'")
    return None


def require_bulk_copy(what: str = "the bulk-copy scan (16)") -> None:
    why = bulk_missing(what)
    if why:
        raise ConfigError(why.replace(" need ", " needs ", 1))


def bulk_spec(dtype="int32", shape=None, inclusive=True, lookback=True) -> KernelSpec:
    """16 at `shape`; lookback=False: tiles_alone.cu (every tile scanned alone)."""
    sc, rd, kib, st, wd, d = shape or BULK
    file, name = ("16_single_pass_bulk.cu", "scan_bulk") if lookback else \
        ("tiles_alone.cu", "scan_tiles_alone")
    return KernelSpec(f"{CHAPTER}/{file}", name,
                      template=(CTYPES[dtype], sc, rd, kib * 1024, st, wd, d, bool(inclusive)))


def specs(variant: str, dtype="int32", inclusive=True, block=DEFAULT_BLOCK,
          items=None) -> list[KernelSpec]:
    check_variant(variant)
    if variant == "single-pass":
        return [single_pass_spec(dtype, block, items, inclusive)]
    if variant == "bulk":
        return [bulk_spec(dtype, inclusive=inclusive)]
    c, inc = CTYPES[dtype], bool(inclusive)
    if variant == "three-kernel":
        t = (c, block, items or default_items(dtype, "three-kernel"))
        return [KernelSpec(f"{CHAPTER}/02_three_kernel.cu", name, template=tmpl) for name, tmpl in
                (("reduce_tiles", t), ("scan_totals", t), ("scan_tiles", t + (inc,)))]
    return [KernelSpec(f"{CHAPTER}/01_serial_block.cu", name, template=tmpl) for name, tmpl in
            (("seed_reduce", (c,)), ("seed_scan_totals", (c,)), ("seed_downsweep", (c, inc)))]


class LookbackState:
    """The single-pass kernels' tile status on one device and stream: ticket counter,
    status words (and flags and values for 8-byte sums, hi words for 16 and 17, the epoch
    word of 24 and 25) and the epoch. Never cleared between calls: it grows zeroed
    (`generation` counts that), and after 2^30 - 1 calls restarts from 1 over zeroes."""

    def __init__(self):
        import cupy as cp
        self.counter = cp.zeros(1, dtype=cp.uint32)
        self.words, self.words_hi, self.aggregate, self.prefix = (
            cp.zeros(1, dtype=cp.uint64) for _ in range(4))
        self.flags = cp.zeros(1, dtype=cp.uint32)
        self.word = cp.ones(1, dtype=cp.uint32)
        self.epoch = self.generation = 0

    def _fit(self, tiles: int, *names) -> None:
        """Arrays `names` (of one size) replaced by zeroed ones of at least `tiles`."""
        import cupy as cp
        size = getattr(self, names[0]).size
        if size < tiles:
            for nm in names:
                setattr(self, nm, cp.zeros(max(tiles, 2 * size), dtype=getattr(self, nm).dtype))
            self.generation += 1

    def _next_epoch(self) -> None:
        self.epoch += 1
        if self.epoch > EPOCH_LIMIT:
            for a in (self.words, self.flags, self.aggregate, self.prefix, self.words_hi):
                a.fill(0)
            self.word.fill(1)
            self.epoch = 1

    def args(self, tiles: int, wide: bool) -> tuple:
        self._fit(tiles, *(("flags", "aggregate", "prefix") if wide else ("words",)))
        self._next_epoch()
        return (self.counter, self.words, self.flags, self.aggregate, self.prefix,
                np.uint32(self.epoch))

    def split_args(self, tiles: int) -> tuple:
        """(counter, lo words, hi words, epoch) for 16 and 17 (SplitStatus)."""
        self._fit(tiles, "words_hi")
        counter, words, _, _, _, epoch = self.args(tiles, False)
        return counter, words, self.words_hi, epoch

    def graph_args(self, tiles: int) -> tuple:
        """(counter, lo words, hi words, epoch word) for 24 and 25 (rle.GraphCall)."""
        self._fit(tiles, "words", "words_hi")
        self._next_epoch()
        return self.counter, self.words, self.words_hi, self.word


_STATE: dict = {}


def state() -> LookbackState:
    import cupy as cp
    key = (cp.cuda.Device().id, cp.cuda.get_current_stream().ptr)
    if key not in _STATE:
        _STATE[key] = LookbackState()
    return _STATE[key]


def check_array(x, name="x", dtypes=CTYPES):
    import cupy as cp
    require(isinstance(x, cp.ndarray),
            f"{name} must be a CuPy array on the GPU, not {type(x).__name__}")
    require(x.ndim == 1, f"{name} has shape {x.shape}: scan a 1-D array (ravel it first)")
    require(str(x.dtype) in dtypes, f"{name} has dtype {x.dtype}; supported: {', '.join(dtypes)}")
    require(x.flags.c_contiguous, f"{name} is not contiguous: pass a contiguous array (x.copy())")
    require(not x.size or x.data.ptr % 16 == 0, f"{name} starts at an address that is not a "
            "multiple of 16 bytes (a slice?): the kernels load 16-byte vectors; pass a copy")


_PLANS = Plans()


def _tiles(n: int, tile: int, limit: int, what: str) -> int:
    tiles = -(-n // tile)
    require(tiles <= limit, f"n={n}: {tiles} {what}")
    return tiles


def _plan(variant, dtype, n, inclusive, block, items, lookback=DEFAULT_LOOKBACK,
          grid=DEFAULT_GRID, stages=None):
    """(kernels, launch geometry) of one call shape, built once."""
    items = items or default_items(dtype, variant)

    def build():
        ticket = MAX_TILES - (1 << 20)
        if variant in ("bulk", "bulk-nolookback"):
            check_bulk(dtype, stages)
            require_bulk_copy()
            tiles = _tiles(n, stages[2] * 1024 // np.dtype(dtype).itemsize, ticket,
                           "tiles exceed the 32-bit ticket; use a larger tile")
            k = get_kernel(bulk_spec(dtype, stages, inclusive, variant == "bulk"))
            smem = stages[3] * stages[2] * 1024
            if blocks_per_sm(k, bulk_threads(stages), smem) < 1:
                raise ConfigError(f"bulk {stages}: no block fits on an SM ({smem} B shared "
                                  f"memory, {k.num_regs} registers)")
            return [k], (tiles, min(tiles, device.current().sms), smem)
        check_variant(variant)
        if variant == "serial":
            check_dtype(dtype)
            tiles = _tiles(n, SEED_BLOCK, (1 << 31) - 1, "blocks exceed the grid's 2^31 - 1 blocks")
            return [get_kernel(s) for s in specs(variant, dtype, inclusive)], tiles
        check_tile(dtype, block, items)
        if variant == "three-kernel":
            tiles = _tiles(n, block * items, (1 << 31) - 1,
                           "tiles exceed the grid's 2^31 - 1 blocks")
            return [get_kernel(s) for s in specs(variant, dtype, inclusive, block, items)], tiles
        tiles = _tiles(n, block * items, ticket, "tiles exceed the 32-bit tile ticket; use a "
                       "larger tile (block × items)")
        k = get_kernel(single_pass_spec(dtype, block, items, inclusive, lookback, grid))
        blocks = tiles
        if grid == "persistent":
            blocks = min(tiles, device.current().sms * max(1, blocks_per_sm(k, block)))
        return [k], (tiles, blocks)
    return _PLANS.get((variant, dtype, n, bool(inclusive), block, items, lookback, grid,
                       stages), build)


#: 01's and 02's tile totals: one buffer a device and dtype, grown when a call needs more
_WORK: dict = {}


def default_variant() -> str:
    """The fastest variant this GPU runs: "bulk" (16, 9.0+), else "single-pass" (03)."""
    return "bulk" if bulk_missing() is None else "single-pass"


def scan(x, out=None, *, inclusive: bool = True, variant: str | None = None,
         block: int | None = None, items: int | None = None):
    """The inclusive (or exclusive) prefix sum of `x` into `out` (made if None); returns
    `out`. Every argument is checked first (ConfigError with the reason), at every size.
    `variant`: one of VARIANTS, by default `default_variant()` ("bulk" where it runs);
    `block` and `items` shape the other three's tile, and alone name the single pass."""
    if variant is None:
        variant = "single-pass" if (block, items) != (None, None) else default_variant()
    check_variant(variant)
    block = block or DEFAULT_BLOCK
    import cupy as cp
    check_array(x)
    if out is None:
        out = cp.empty_like(x)
    else:
        check_array(out, "out")
        require(out.shape == x.shape and out.dtype == x.dtype, f"out has shape {out.shape} and "
                f"dtype {out.dtype}; it must match x ({x.shape}, {x.dtype})")
        a0, b0 = x.data.ptr, out.data.ptr
        require(not (x.size and out.size and a0 < b0 + out.nbytes and b0 < a0 + x.nbytes),
                "out overlaps x: in-place scans are not supported, pass a separate output array")
    enqueue(x, out, inclusive, variant, block, items)
    return out


def enqueue_bulk(x, out, inclusive=True, shape=None, lookback=True) -> None:
    """Launch 16 (lookback=False: tiles_alone.cu) without `scan`'s checks."""
    n = x.size
    if n == 0:
        return
    dtype = str(x.dtype)
    shape = tuple(shape or BULK)
    kernels, (tiles, blocks, smem) = _plan("bulk" if lookback else "bulk-nolookback", dtype,
                                           n, inclusive, shape[0], shape[1], stages=shape)
    counter, lo, hi, epoch = state().split_args(tiles)
    launch(kernels[0], blocks, bulk_threads(shape),
           (x, out, np.int64(n), counter, np.uint32(tiles), lo, hi, epoch), shared_mem=smem)


def enqueue(x, out, inclusive=True, variant="single-pass", block=DEFAULT_BLOCK,
            items=None, lookback=DEFAULT_LOOKBACK, grid=DEFAULT_GRID) -> None:
    """Launch the scan without the argument checks of `scan` (the timed call)."""
    n = x.size
    if n == 0:
        return
    if variant == "bulk":
        return enqueue_bulk(x, out, inclusive)
    dtype = str(x.dtype)
    items = items or default_items(dtype, variant)
    kernels, tiles = _plan(variant, dtype, n, inclusive, block, items, lookback, grid)
    nn = np.int64(n)
    if variant == "single-pass":        # this stream's tile status, a new epoch
        tiles, blocks = tiles
        counter, words, flags, agg, pre, epoch = state().args(tiles, vec(dtype) == 2)
        launch(kernels[0], blocks, block, (x, out, nn, counter, np.uint32(tiles), words,
                                           flags, agg, pre, epoch))
        return
    threads = block if variant == "three-kernel" else SEED_BLOCK
    import cupy as cp
    key = (cp.cuda.Device().id, dtype)
    totals = _WORK.get(key)
    if totals is None or totals.size < tiles:
        totals = _WORK[key] = cp.empty(max(tiles, 1), dtype=dtype)
    launch(kernels[0], tiles, threads, (x, totals, nn))
    launch(kernels[1], 1, threads, (totals, np.int64(tiles)))
    launch(kernels[2], tiles, threads, (x, totals, out, nn))


def traffic_bytes(variant: str, n: int, itemsize: int, block=DEFAULT_BLOCK,
                  items=None) -> int:
    """The bytes 01, 02 or 03 moves to and from device memory, by its design."""
    items = items or (128 if variant == "single-pass" else 64) // itemsize
    data = n * itemsize
    if variant == "single-pass":
        tiles = -(-n // (block * items))
        status = tiles * (8 if itemsize == 4 else 20) * 2     # written twice, read back
        return 2 * data + status
    tile = SEED_BLOCK if variant == "serial" else block * items
    tiles = -(-n // tile)
    return 3 * data + 4 * tiles * itemsize
