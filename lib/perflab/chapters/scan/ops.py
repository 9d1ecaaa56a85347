"""The scans of the scan chapter as Python calls, checked before anything is launched.

    out = scan(x)                            # the fastest variant this GPU runs
    out = scan(x, inclusive=False, variant="single-pass", block=256, items=16)

`x` is a 1-D contiguous CuPy array of int32, int64 or float32; `out` (optional) an array of
the same shape and dtype that does not overlap `x`. Integer sums wrap as C's do (modulo
2^32 or 2^64), which is exact; float sums are float32 in the order the kernel adds.

Variants (one idea each, kernels/03-scan/; VARIANTS lists them all, and `scan` refuses
any other string):
  "serial"       01_serial_block.cu: the three kernels the lab started from, one thread
                 per block works
  "three-kernel" 02_three_kernel.cu: reduce, scan the totals, scan the tiles
  "single-pass"  03_single_pass.cu: one pass, decoupled look-back
  "pipelined"    08_single_pass_pipelined.cu: the same look-back, persistent blocks that
                 keep STAGES tiles loading into shared memory (cp.async) ahead of the work
                 (its own experiments, scan.pipeline and scan.targets)
  "staged"       10_single_pass_staged.cu: 03 with the tile waiting in shared memory
                 (cp.async) instead of registers, so more tiles fit on an SM
  "lookahead"    12_single_pass_lookahead.cu: 10 with one more warp that looks back
                 while the tile loads (their sweep is scan.staged; 12's checks and
                 timing at its default are scan.targets, its 1000 back-to-back calls
                 scan.stress)
  "chunked"      14_single_pass_chunked.cu: persistent blocks that reduce a chunk from
                 memory, look back for the previous one meanwhile, then scan that one
                 again from L2 (its sweep is scan.chunked)
  "bulk"         16_single_pass_bulk.cu: tiles bulk-copied into a shared-memory ring, one
                 sequencer warp for the grid turns aggregates into prefixes; compute
                 capability 9.0 and later (its sweep is scan.bulk); the fastest, and
                 the default where it runs (see `default_variant`)
"""
from __future__ import annotations

import numpy as np

from ...errors import ConfigError
from ...kernels import KernelSpec, Plans, get_kernel, launch
from . import CHAPTER

#: dtype name -> C type of the kernels' template parameter
CTYPES = {"int32": "int", "int64": "long long", "float32": "float"}
#: the three scans that scan.check, scan.sizes, scan.float_order and scan.profile race
#: (their recorded rows are these three)
RACED = ("serial", "three-kernel", "single-pass")
#: every variant `scan` accepts
VARIANTS = RACED + ("pipelined", "staged", "lookahead", "chunked", "bulk")
DEFAULT_BLOCK, DEFAULT_ITEMS = 256, 32          # DEFAULT_ITEMS: for 4-byte values
#: The single pass's look-back ("block": every thread reads a predecessor; "warp": one
#: warp, 32 per step) and its grid ("persistent": resident blocks loop over tiles and
#: take their next ticket early; "per-tile": one block per tile).
LOOKBACKS = ("block", "warp")
GRIDS = ("persistent", "per-tile")
DEFAULT_LOOKBACK, DEFAULT_GRID = "warp", "per-tile"     # measured best: scan.lookback
SEED_BLOCK = 256
#: The pipelined single pass (08): (block, items, stages) by default, and the shapes
#: scan.pipeline sweeps. Shared memory: stages * block * items * itemsize bytes a block.
PIPELINED = (256, 32, 2)           # the best of scan.pipeline's first run, 276a08d9a446
PIPELINE_SHAPES = ((256, 16, 1), (256, 32, 1), (256, 16, 2), (256, 16, 3), (256, 16, 4), (256, 32, 2), (256, 32, 3),
                   (128, 32, 4), (512, 16, 3))
#: The tile index is an unsigned 32-bit ticket; the epoch takes 30 bits of a status word.
MAX_TILES = (1 << 32) - 1
EPOCH_LIMIT = (1 << 30) - 1


def default_items(dtype, variant: str = "single-pass") -> int:
    """ITEMS_PER_THREAD by default: for the single pass 128 bytes a thread (32 four-byte
    or 16 eight-byte; the fastest shape of the recorded sweep, scan.tune), for the three
    kernels 64 (at 128 their downsweep spills on sm_89)."""
    return (128 if variant == "single-pass" else 64) // np.dtype(dtype).itemsize


def vec(dtype) -> int:
    """Elements in one 16-byte vector of `dtype` (4 for 4-byte types, 2 for 8-byte)."""
    return 16 // np.dtype(dtype).itemsize


def check_tile(dtype: str, block: int, items: int) -> None:
    """ConfigError, naming the rule, for a tile shape the kernels cannot be built with."""
    if dtype not in CTYPES:
        raise ConfigError(f"scan: dtype {dtype} is not supported; use one of "
                          f"{', '.join(CTYPES)}")
    if block % 32 or not 32 <= block <= 1024:
        raise ConfigError(f"block={block}: a block is whole warps, 32 to 1024 threads")
    v = vec(dtype)
    if items < v or items % v:
        raise ConfigError(f"ITEMS_PER_THREAD={items} with {dtype}: each thread loads whole "
                          f"16-byte vectors, so ITEMS must be a multiple of {v}")
    if items > 32:
        raise ConfigError(f"ITEMS_PER_THREAD={items}: at most 32 (the registers a thread "
                          "holds them in)")


def single_pass_spec(dtype="int32", block=DEFAULT_BLOCK, items=None,
                     inclusive=True, lookback=DEFAULT_LOOKBACK,
                     grid=DEFAULT_GRID) -> KernelSpec:
    items = items or default_items(dtype)
    if lookback not in LOOKBACKS or grid not in GRIDS:
        raise ConfigError(f"look-back {lookback!r}, grid {grid!r}: use one of {LOOKBACKS} "
                          f"and one of {GRIDS}")
    return KernelSpec(f"{CHAPTER}/03_single_pass.cu", "scan_single_pass",
                      template=(CTYPES[dtype], block, items, bool(inclusive),
                                lookback == "block", grid == "persistent"))


def check_pipeline(dtype: str, block: int, items: int, stages: int) -> None:
    """ConfigError, naming the rule, for a pipelined shape that cannot be built or run."""
    check_tile(dtype, block, items)
    if block < 64:
        raise ConfigError(f"block={block}: the pipelined scan needs at least 2 warps (the "
                          "last one takes the tickets, the first looks back)")
    if not 1 <= stages <= 8:
        raise ConfigError(f"stages={stages}: 1 to 8 tiles in the ring")
    smem = stages * block * items * np.dtype(dtype).itemsize
    if smem > 200 * 1024:
        raise ConfigError(f"stages={stages}, block={block}, items={items}: {smem} B of "
                          "shared memory a block, more than the 200 KiB allowed here")


def pipelined_spec(dtype="int32", block=None, items=None, stages=None,
                   inclusive=True) -> KernelSpec:
    b, i, st = PIPELINED
    block, stages = block or b, stages or st
    items = items or i * 4 // np.dtype(dtype).itemsize
    return KernelSpec(f"{CHAPTER}/08_single_pass_pipelined.cu", "scan_pipelined",
                      template=(CTYPES[dtype], block, items, stages, bool(inclusive)))


#: (block, items for 4-byte values, blocks per SM) of the staged single pass (10), and
#: its pause between polls of a status word, ns
STAGED = (128, 32, 12)
STAGED_DELAY = 256
#: predecessors a lane of the look-back warp reads per round trip
STAGED_WIDTH = 1
#: (data threads, items for 4-byte values, blocks per SM) and pause of the look-ahead
#: single pass (12), whose blocks have one more warp. The row prefixes wait in the stage,
#: not in registers, so it fits the 32 registers of 12 blocks of 160 threads without a
#: spill on sm_90 (every dtype).
LOOKAHEAD = (96, 48, 12)           # the best of scan.staged, run 4ca76ab03c5c
LOOKAHEAD_DELAY = 2048
#: 12 publishes its AGGREGATE from a plain sum of the rows before scanning them (EARLY;
#: +1.2 to +1.6 points of the copy in scan.staged, run 4ca76ab03c5c)
LOOKAHEAD_EARLY = True
#: the look-ahead shapes of scan.staged: (block, items for 4-byte values, blocks per SM)
#: at LOOKAHEAD_DELAY, bigger tiles among them (fewer look-backs per byte)
LOOKAHEAD_SHAPES = ((128, 32, 12), (128, 32, 11), (96, 32, 16), (128, 40, 11), (128, 48, 9),
                    (128, 44, 10), (96, 48, 12), (192, 32, 8), (256, 32, 6), (128, 64, 6),
                    (64, 64, 14))
#: the scan.staged sweep: (kernel, (block, items, blocks per SM), pause ns, width for
#: 10 / EARLY for 12)
STAGED_SWEEP = (tuple(("staged", (b, i, m), d, w) for b, i, m in ((128, 32, 12), (128, 24, 16))
                      for d, w in ((256, 1), (1024, 1), (4096, 1), (1024, 2), (1024, 4)))
                + (("staged", (256, 32, 6), 1024, 1),)
                + tuple(("lookahead", (128, 32, 12), d, True) for d in (256, 1024, 4096))
                + tuple(("lookahead", shape, LOOKAHEAD_DELAY, True) for shape in LOOKAHEAD_SHAPES)
                + tuple(("lookahead", shape, LOOKAHEAD_DELAY, False)
                        for shape in ((128, 32, 12), (96, 48, 12))))
STAGED_DIAGNOSTIC = ((128, 32, 12), (128, 24, 16))


def check_staged(dtype: str, block: int, items: int, min_blocks: int) -> None:
    """ConfigError, naming the rule, for a staged shape that cannot be built or run."""
    check_tile(dtype, block, items)
    if not 1 <= min_blocks <= 32 or block * min_blocks > 2048:
        raise ConfigError(f"{min_blocks} blocks of {block} threads per SM: 1 to 32 blocks "
                          "and at most 2048 threads an SM")
    smem = block * items * np.dtype(dtype).itemsize
    if smem * min_blocks > 224 * 1024:
        raise ConfigError(f"{min_blocks} tiles of {smem} B: more than the 224 KiB of shared "
                          "memory an SM has for blocks")


def staged_shape(dtype, block=None, items=None, min_blocks=None) -> tuple[int, int, int]:
    """(block, items, blocks per SM) of the staged single pass, defaults filled in: 8-byte
    values get two blocks fewer (at 12 blocks the register cap spills them on sm_90)."""
    b, i, m = STAGED
    size = np.dtype(dtype).itemsize
    return block or b, items or i * 4 // size, min_blocks or (m if size == 4 else m - 2)


def staged_spec(dtype="int32", block=None, items=None, min_blocks=None, inclusive=True,
                lookback=True, delay=None, width=None) -> KernelSpec:
    block, items, min_blocks = staged_shape(dtype, block, items, min_blocks)
    delay = STAGED_DELAY if delay is None else delay
    width = width or STAGED_WIDTH
    if not 0 <= delay <= 1_000_000:
        raise ConfigError(f"delay={delay} ns: 0 to 1,000,000 ns between two polls")
    if not 1 <= width <= 16:
        raise ConfigError(f"width={width}: 1 to 16 predecessors a lane per round trip")
    return KernelSpec(f"{CHAPTER}/10_single_pass_staged.cu", "scan_staged",
                      template=(CTYPES[dtype], block, items, min_blocks, int(delay),
                                int(width), bool(inclusive), bool(lookback)))


def check_lookahead(dtype: str, block: int, items: int, min_blocks: int) -> None:
    """ConfigError, naming the rule, for a look-ahead shape that cannot be built or run.
    Its tile waits in shared memory, not registers: up to 64 items a thread."""
    if dtype not in CTYPES:
        raise ConfigError(f"scan: dtype {dtype} is not supported; use one of "
                          f"{', '.join(CTYPES)}")
    if block % 32 or not 32 <= block <= 992:
        raise ConfigError(f"block={block}: whole warps, 32 to 992 data threads (the "
                          "look-back warp makes one more)")
    v = vec(dtype)
    if items < v or items % v or items > 64:
        raise ConfigError(f"ITEMS_PER_THREAD={items} with {dtype}: whole 16-byte vectors "
                          f"(a multiple of {v}), at most 64")
    if not 1 <= min_blocks <= 32 or (block + 32) * min_blocks > 2048:
        raise ConfigError(f"{min_blocks} blocks of {block} + 32 threads per SM: 1 to 32 "
                          "blocks and at most 2048 threads an SM")
    smem = block * items * np.dtype(dtype).itemsize
    if smem * min_blocks > 224 * 1024:
        raise ConfigError(f"{min_blocks} tiles of {smem} B: more than the 224 KiB of shared "
                          "memory an SM has for blocks")


def lookahead_spec(dtype="int32", block=None, items=None, min_blocks=None, inclusive=True,
                   delay=None, early=None) -> KernelSpec:
    b, i, m = LOOKAHEAD
    block, min_blocks = block or b, min_blocks or m
    items = items or i * 4 // np.dtype(dtype).itemsize
    delay = LOOKAHEAD_DELAY if delay is None else delay
    early = LOOKAHEAD_EARLY if early is None else early
    if not 0 <= delay <= 1_000_000:
        raise ConfigError(f"delay={delay} ns: 0 to 1,000,000 ns between two polls")
    return KernelSpec(f"{CHAPTER}/12_single_pass_lookahead.cu", "scan_lookahead",
                      template=(CTYPES[dtype], block, items, min_blocks, int(delay),
                                bool(inclusive), bool(early)))


#: The chunked single pass (14): (data warps, 16-byte vectors a lane per batch, batches a
#: chunk, blocks per SM); a chunk is warps * vpl * batches * 512 bytes. The best of the
#: second call's shapes (run 01ff1856646c): one block of 24 data warps an SM, 96 KB chunks,
#: 4 words a lane per look-back round trip (132 blocks: the look-back reads few words).
CHUNKED = (24, 8, 1, 1)
CHUNKED_DELAY = 256
#: predecessors a lane of its look-back warp reads per round trip (the nearest PREFIX is
#: about one grid of chunks back: every chunk of the current wave is still being reduced)
CHUNKED_WIDTH = 4
#: L2 policy: 0 plain first read, ld.global.cs second read, st.global.cs; 1 evict_last /
#: evict_first policies; 2 plain everywhere
CHUNKED_POLICY = 0
#: when the second read of the previous chunk is issued: 0 after the block's barrier, 1
#: before it, 2 before the reduction's loads (one batch a chunk only)
CHUNKED_PRELOAD = 0
#: the look-back: 0 one level (CHUNKED_WIDTH words a lane per round trip), S = 2 … 32 two
#: levels over super-chunks of S chunks (lookback_tiered.cuh)
CHUNKED_TIER = 0
#: the shapes scan.chunked sweeps: (warps, vpl, batches, blocks per SM, pause ns, width,
#: policy, preload, tier)
CHUNKED_SWEEP = ((8, 4, 1, 4, 256, 8, 0, 0, 0), (8, 4, 1, 4, 256, 4, 0, 0, 0),
                 (8, 4, 1, 4, 256, 8, 0, 0, 32), (8, 4, 1, 4, 256, 8, 0, 0, 16),
                 (8, 8, 1, 3, 256, 8, 0, 0, 32), (8, 8, 2, 2, 256, 8, 0, 0, 16),
                 (8, 8, 2, 2, 256, 4, 0, 0, 0), (12, 8, 1, 2, 256, 4, 0, 0, 0),
                 (16, 8, 1, 1, 256, 4, 0, 0, 0), (16, 8, 1, 1, 256, 8, 0, 0, 16),
                 (24, 8, 1, 1, 256, 4, 0, 0, 0), (24, 8, 1, 1, 256, 8, 0, 0, 16),
                 (24, 8, 1, 1, 256, 4, 1, 0, 0))
CHUNKED_DIAGNOSTIC = ((24, 8, 1, 1, 256, 4, 0, 0, 0), (8, 4, 1, 4, 256, 8, 0, 0, 0))

def check_chunked(dtype: str, warps: int, vpl: int, batches: int, min_blocks: int) -> None:
    """ConfigError, naming the rule, for a chunked shape that cannot be built or run."""
    if dtype not in CTYPES:
        raise ConfigError(f"scan: dtype {dtype} is not supported; use one of "
                          f"{', '.join(CTYPES)}")
    if not 1 <= warps <= 31:
        raise ConfigError(f"warps={warps}: 1 to 31 data warps (the look-back warp makes "
                          "one more)")
    if not 1 <= vpl <= 16:
        raise ConfigError(f"vpl={vpl}: 1 to 16 16-byte vectors a lane per batch")
    if not 1 <= batches <= 64:
        raise ConfigError(f"batches={batches}: 1 to 64 batches a chunk")
    if not 1 <= min_blocks <= 32 or (warps + 1) * 32 * min_blocks > 2048:
        raise ConfigError(f"{min_blocks} blocks of {(warps + 1) * 32} threads per SM: 1 to "
                          "32 blocks and at most 2048 threads an SM")


def chunk_elems(dtype, warps, vpl, batches) -> int:
    return warps * vpl * batches * 32 * vec(dtype)


def chunked_spec(dtype="int32", warps=None, vpl=None, batches=None, min_blocks=None,
                 inclusive=True, delay=None, width=None, policy=None, preload=None,
                 lookback=True, tier=None) -> KernelSpec:
    w, v, bt, m = CHUNKED
    delay = CHUNKED_DELAY if delay is None else delay
    width = width or CHUNKED_WIDTH
    policy = CHUNKED_POLICY if policy is None else policy
    if not 0 <= delay <= 1_000_000:
        raise ConfigError(f"delay={delay} ns: 0 to 1,000,000 ns between two polls")
    if not 1 <= width <= 16:
        raise ConfigError(f"width={width}: 1 to 16 predecessors a lane per round trip")
    if policy not in (0, 1, 2):
        raise ConfigError(f"policy={policy}: 0, 1 or 2")
    preload = CHUNKED_PRELOAD if preload is None else preload
    if preload not in (0, 1, 2) or (preload and (batches or bt) != 1):
        raise ConfigError(f"preload={preload}: 0, 1 or 2, and 1 or 2 only with one batch "
                          "a chunk")
    tier = CHUNKED_TIER if tier is None else tier
    check_tier(tier)
    return KernelSpec(f"{CHAPTER}/14_single_pass_chunked.cu", "scan_chunked",
                      template=(CTYPES[dtype], warps or w, vpl or v, batches or bt,
                                min_blocks or m, int(delay), int(width), int(policy),
                                int(preload), int(tier), bool(inclusive), bool(lookback)))


#: The bulk-copy single pass (16): (scanner warps, reducer warps, tile KiB, stages,
#: sequencer words a lane per round trip, pause between polls in ns). One block an SM; the
#: ring holds stages x tile KiB of shared memory. The default: one of the two best shapes
#: of the second diagnostic run (4f8e0785c1be), the one with the smaller tile, with the
#: sequencer reading 4 words a lane a round (better than 8 for 16 and 17 in the runs of
#: notes, sixth try).
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
    """ConfigError, naming the rule, for a bulk-copy shape that cannot be built or run
    (`halo`: bytes before each stage's tile; `extra`: shared memory past the ring)."""
    if dtype not in CTYPES:
        raise ConfigError(f"scan: dtype {dtype} is not supported; use one of "
                          f"{', '.join(CTYPES)}")
    scanners, reducers, kib, stages, width, delay = shape
    if not 1 <= scanners <= 16 or not 1 <= reducers <= scanners or scanners % reducers:
        raise ConfigError(f"{scanners} scanners, {reducers} reducers: 1 to 16 scanner warps, "
                          "a multiple of the reducer warps")
    if not 4 <= kib <= 128 or kib % 4 or kib * 1024 % (scanners * 512):
        raise ConfigError(f"tile {kib} KiB: a multiple of 4 KiB up to 128, whole 512-byte "
                          f"steps of each of the {scanners} scanners' pieces")
    if stages < 2:
        raise ConfigError(f"stages={stages}: two or more")
    if stages * (kib * 1024 + halo) + extra > BULK_SMEM_LIMIT:
        raise ConfigError(f"{stages} stages of {kib} KiB" + (f" and {extra} B" if extra else "")
                          + f": more than the {BULK_SMEM_LIMIT // 1024} KiB of shared memory "
                          "a block may hold")
    if not 1 <= width <= 16:
        raise ConfigError(f"width={width}: 1 to 16 words a lane of the sequencer")
    if not 0 <= delay <= 1_000_000:
        raise ConfigError(f"delay={delay} ns: 0 to 1,000,000 ns between two polls")


def bulk_threads(shape) -> int:
    """Threads of a bulk-copy block: scanners, reducers, the producer, the sequencer."""
    return (shape[0] + shape[1] + 2) * 32


def bulk_missing(what: str = "the bulk-copy scan (16) and encoder (17)") -> str | None:
    """Why the current GPU cannot run 16 and 17 (they need compute capability 9.0 or
    later, for cp.async.bulk), or None when it can."""
    from ...device import current
    dev = current()
    if int(dev.compute_capability.split(".")[0]) < 9:
        return (f"{what} need compute capability 9.0 or later (cp.async.bulk); "
                f"{dev.name} has {dev.compute_capability}: use variant 'chunked'")
    return None


def require_bulk_copy(what: str = "the bulk-copy scan (16)") -> None:
    """ConfigError unless the current GPU has bulk copies (compute capability 9.0+)."""
    why = bulk_missing(what)
    if why:
        raise ConfigError(why.replace(" need ", " needs ", 1))


def bulk_spec(dtype="int32", shape=None, inclusive=True, lookback=True) -> KernelSpec:
    sc, rd, kib, st, wd, d = shape or BULK
    return KernelSpec(f"{CHAPTER}/16_single_pass_bulk.cu", "scan_bulk",
                      template=(CTYPES[dtype], sc, rd, kib * 1024, st, wd, d, bool(inclusive),
                                bool(lookback)))


def check_tier(tier: int) -> None:
    if tier != 0 and not 2 <= tier <= 32:
        raise ConfigError(f"tier={tier}: 0 (one-level look-back) or 2 to 32 chunks a "
                          "super-chunk")


def status_words(chunks: int, tier: int) -> int:
    """Status words a chunked call uses: one a chunk, and one a super-chunk of `tier`."""
    return chunks + (-(-chunks // tier) if tier else 0)


def pipelined_smem(dtype, block, items, stages) -> int:
    return stages * block * items * np.dtype(dtype).itemsize


def three_kernel_specs(dtype="int32", block=DEFAULT_BLOCK, items=None,
                       inclusive=True) -> list[KernelSpec]:
    items = items or default_items(dtype, "three-kernel")
    f = f"{CHAPTER}/02_three_kernel.cu"
    c = CTYPES[dtype]
    return [KernelSpec(f, "reduce_tiles", template=(c, block, items)),
            KernelSpec(f, "scan_totals", template=(c, block, items)),
            KernelSpec(f, "scan_tiles", template=(c, block, items, bool(inclusive)))]


def serial_specs(dtype="int32", inclusive=True) -> list[KernelSpec]:
    f = f"{CHAPTER}/01_serial_block.cu"
    c = CTYPES[dtype]
    return [KernelSpec(f, "seed_reduce", template=(c,)),
            KernelSpec(f, "seed_scan_totals", template=(c,)),
            KernelSpec(f, "seed_downsweep", template=(c, bool(inclusive)))]


def specs(variant: str, dtype="int32", inclusive=True, block=DEFAULT_BLOCK,
          items=None) -> list[KernelSpec]:
    if variant == "single-pass":
        return [single_pass_spec(dtype, block, items, inclusive)]
    if variant == "pipelined":
        return [pipelined_spec(dtype, inclusive=inclusive)]
    if variant == "staged":
        return [staged_spec(dtype, inclusive=inclusive)]
    if variant == "lookahead":
        return [lookahead_spec(dtype, inclusive=inclusive)]
    if variant == "chunked":
        return [chunked_spec(dtype, inclusive=inclusive)]
    if variant == "bulk":
        return [bulk_spec(dtype, inclusive=inclusive)]
    if variant == "three-kernel":
        return three_kernel_specs(dtype, block, items, inclusive)
    if variant == "serial":
        return serial_specs(dtype, inclusive)
    raise ConfigError(f"unknown scan variant {variant!r}; known: {', '.join(VARIANTS)}")


class LookbackState:
    """The tile status of the single-pass kernels on one device and stream: the ticket
    counter, the status words (and for 8-byte values the flags and the two value arrays;
    for the bulk-copy kernels a second array of words), and the epoch that tells this
    call's words from older ones. It is never cleared between calls; when it grows it is
    allocated zeroed, and after 2^30 - 1 calls the epoch starts again from 1 over zeroed
    arrays."""

    def __init__(self):
        import cupy as cp
        self.counter = cp.zeros(1, dtype=cp.uint32)
        self.words = cp.zeros(1, dtype=cp.uint64)
        self.flags = cp.zeros(1, dtype=cp.uint32)
        self.aggregate = cp.zeros(1, dtype=cp.uint64)
        self.prefix = cp.zeros(1, dtype=cp.uint64)
        self.words_hi = cp.zeros(1, dtype=cp.uint64)     # the bulk-copy kernels' hi words
        self.epoch = 0

    def args(self, tiles: int, wide: bool) -> tuple:
        """(counter, words, flags, aggregate, prefix, epoch) for a call over `tiles` tiles."""
        import cupy as cp
        if wide and self.flags.size < tiles:
            size = max(tiles, 2 * self.flags.size)
            self.flags = cp.zeros(size, dtype=cp.uint32)
            self.aggregate = cp.zeros(size, dtype=cp.uint64)
            self.prefix = cp.zeros(size, dtype=cp.uint64)
        if not wide and self.words.size < tiles:
            self.words = cp.zeros(max(tiles, 2 * self.words.size), dtype=cp.uint64)
        self.epoch += 1
        if self.epoch > EPOCH_LIMIT:
            for a in (self.words, self.flags, self.aggregate, self.prefix, self.words_hi):
                a.fill(0)
            self.epoch = 1
        return (self.counter, self.words, self.flags, self.aggregate, self.prefix,
                np.uint32(self.epoch))

    def split_args(self, tiles: int) -> tuple:
        """(counter, lo words, hi words, epoch) for a call of the bulk-copy kernels (16,
        17) over `tiles` tiles: one tagged word a tile for 4-byte values, two (lo, hi) for
        8-byte ones (sequencer.cuh's SplitStatus)."""
        import cupy as cp
        if self.words_hi.size < tiles:
            self.words_hi = cp.zeros(max(tiles, 2 * self.words_hi.size), dtype=cp.uint64)
        counter, words, _, _, _, epoch = self.args(tiles, False)
        return counter, words, self.words_hi, epoch


_STATE: dict = {}


def state() -> LookbackState:
    """The look-back state of the current device and stream (made on first use)."""
    import cupy as cp
    key = (cp.cuda.Device().id, cp.cuda.get_current_stream().ptr)
    if key not in _STATE:
        _STATE[key] = LookbackState()
    return _STATE[key]


def check_array(x, name="x", dtypes=CTYPES):
    """ConfigError unless `x` is a 1-D C-contiguous CuPy array of a supported dtype whose
    data is 16-byte aligned."""
    import cupy as cp
    if not isinstance(x, cp.ndarray):
        raise ConfigError(f"{name} must be a CuPy array on the GPU, not {type(x).__name__}")
    if x.ndim != 1:
        raise ConfigError(f"{name} has shape {x.shape}: scan a 1-D array (ravel it first)")
    if str(x.dtype) not in dtypes:
        raise ConfigError(f"{name} has dtype {x.dtype}; supported: {', '.join(dtypes)}")
    if not x.flags.c_contiguous:
        raise ConfigError(f"{name} is not contiguous: pass a contiguous array (x.copy())")
    if x.size and x.data.ptr % 16:
        raise ConfigError(f"{name} starts at an address that is not a multiple of 16 bytes "
                          "(a slice?): the kernels load 16-byte vectors; pass a copy")


def _overlap(a, b) -> bool:
    if a.size == 0 or b.size == 0:
        return False
    a0, b0 = a.data.ptr, b.data.ptr
    return a0 < b0 + b.nbytes and b0 < a0 + a.nbytes


_PLANS = Plans()


def _plan(variant, dtype, n, inclusive, block, items, lookback=DEFAULT_LOOKBACK,
          grid=DEFAULT_GRID, stages=None):
    items = items or default_items(dtype, variant)

    def build():
        if variant == "pipelined":
            check_pipeline(dtype, block, items, stages)
            tiles = -(-n // (block * items))
            if tiles > MAX_TILES - (1 << 20):
                raise ConfigError(f"n={n}: {tiles} tiles exceed the 32-bit tile ticket; "
                                  "use a larger tile (block × items)")
            k = get_kernel(pipelined_spec(dtype, block, items, stages, inclusive))
            smem = pipelined_smem(dtype, block, items, stages)
            from ...device import current
            from ...kernels import blocks_per_sm
            per_sm = blocks_per_sm(k, block, smem)
            if per_sm < 1:
                raise ConfigError(f"pipelined {block}x{items}x{stages}: no block fits on an "
                                  f"SM ({smem} B shared memory, {k.num_regs} registers)")
            return [k], (tiles, min(tiles, current().sms * per_sm), smem)
        if variant == "lookahead":
            check_lookahead(dtype, block, items, stages[0])
            tiles = -(-n // (block * items))
            if tiles > MAX_TILES - (1 << 20):
                raise ConfigError(f"n={n}: {tiles} tiles exceed the 32-bit tile ticket; "
                                  "use a larger tile (block × items)")
            k = get_kernel(lookahead_spec(dtype, block, items, stages[0], inclusive, stages[1],
                                          stages[2]))
            smem = block * items * np.dtype(dtype).itemsize
            k.preferred_shared_memory_carveout = 100
            return [k], (tiles, tiles, smem)
        if variant in ("chunked", "chunked-nolookback"):
            w, v, bt, m, d, wd, pol, pre, tier = stages
            check_chunked(dtype, w, v, bt, m)
            chunks = -(-n // chunk_elems(dtype, w, v, bt))
            if chunks > MAX_TILES - (1 << 20):
                raise ConfigError(f"n={n}: {chunks} chunks exceed the 32-bit ticket; use a "
                                  "larger chunk")
            k = get_kernel(chunked_spec(dtype, w, v, bt, m, inclusive, d, wd, pol, pre,
                                        variant == "chunked", tier))
            from ...device import current
            from ...kernels import blocks_per_sm
            per_sm = blocks_per_sm(k, (w + 1) * 32)
            if per_sm < 1:
                raise ConfigError(f"chunked {w}x{v}x{bt}: no block fits on an SM "
                                  f"({k.num_regs} registers)")
            return [k], (chunks, min(chunks, current().sms * min(m, per_sm)), 0)
        if variant in ("bulk", "bulk-nolookback"):
            check_bulk(dtype, stages)
            require_bulk_copy()
            tile = stages[2] * 1024 // np.dtype(dtype).itemsize
            tiles = -(-n // tile)
            if tiles > MAX_TILES - (1 << 20):
                raise ConfigError(f"n={n}: {tiles} tiles exceed the 32-bit ticket; use a "
                                  "larger tile")
            k = get_kernel(bulk_spec(dtype, stages, inclusive, variant == "bulk"))
            smem = stages[3] * stages[2] * 1024
            from ...device import current
            from ...kernels import blocks_per_sm
            if blocks_per_sm(k, bulk_threads(stages), smem) < 1:
                raise ConfigError(f"bulk {stages}: no block fits on an SM ({smem} B shared "
                                  f"memory, {k.num_regs} registers)")
            return [k], (tiles, min(tiles, current().sms), smem)
        if variant in ("staged", "staged-nolookback"):
            check_staged(dtype, block, items, stages[0])
            tiles = -(-n // (block * items))
            if tiles > MAX_TILES - (1 << 20):
                raise ConfigError(f"n={n}: {tiles} tiles exceed the 32-bit tile ticket; "
                                  "use a larger tile (block × items)")
            k = get_kernel(staged_spec(dtype, block, items, stages[0], inclusive,
                                       variant == "staged", stages[1], stages[2]))
            smem = block * items * np.dtype(dtype).itemsize
            k.preferred_shared_memory_carveout = 100     # all of L1 that can be, as shared
            return [k], (tiles, tiles, smem)
        if variant == "single-pass":
            check_tile(dtype, block, items)
            tiles = -(-n // (block * items))
            if tiles > MAX_TILES - (1 << 20):
                raise ConfigError(f"n={n}: {tiles} tiles exceed the 32-bit tile ticket; "
                                  "use a larger tile (block × items)")
            k = get_kernel(single_pass_spec(dtype, block, items, inclusive, lookback, grid))
            blocks = tiles
            if grid == "persistent":
                from ...device import current
                from ...kernels import blocks_per_sm
                blocks = min(tiles, current().sms * max(1, blocks_per_sm(k, block)))
            return [k], (tiles, blocks)
        if variant == "three-kernel":
            check_tile(dtype, block, items)
            tiles = -(-n // (block * items))
            if tiles > (1 << 31) - 1:
                raise ConfigError(f"n={n}: {tiles} tiles exceed the grid's 2^31 - 1 blocks")
            return [get_kernel(s) for s in three_kernel_specs(dtype, block, items, inclusive)], tiles
        if variant == "serial":
            if dtype not in CTYPES:
                check_tile(dtype, SEED_BLOCK, 16)
            tiles = -(-n // SEED_BLOCK)
            if tiles > (1 << 31) - 1:
                raise ConfigError(f"n={n}: {tiles} blocks exceed the grid's 2^31 - 1 blocks")
            return [get_kernel(s) for s in serial_specs(dtype, inclusive)], tiles
        raise ConfigError(f"unknown scan variant {variant!r}; known: {', '.join(VARIANTS)}")
    return _PLANS.get((variant, dtype, n, bool(inclusive), block, items, lookback, grid,
                       stages), build)


_WORK: dict = {}


def _totals(dtype, tiles):
    """A reusable array of `tiles` tile totals (three-kernel and serial)."""
    import cupy as cp
    key = (cp.cuda.Device().id, dtype)
    a = _WORK.get(key)
    if a is None or a.size < tiles:
        a = _WORK[key] = cp.empty(max(tiles, 1), dtype=dtype)
    return a


def default_variant() -> str:
    """The variant `scan` runs when none is named: the fastest this GPU supports.

    - "bulk" (16) where the GPU has bulk copies (compute capability 9.0 and later): on the
      H200 it reached 0.87 of the copy and 1.5× torch.cumsum at 2^28 int32, the fastest
      scan of the chapter (scan.targets), on every dtype.
    - "single-pass" (03) elsewhere. 12 ("lookahead") and 14 ("chunked") were a few points
      of the copy faster than 03 on the H200, but they were measured only there, and 14
      falls well below 03 on int64 (two-word status); 03 is the plain single pass the
      lab keeps as its portable default.
    """
    return "bulk" if bulk_missing() is None else "single-pass"


def check_variant(variant: str) -> None:
    """ConfigError unless `variant` is one of VARIANTS."""
    if variant not in VARIANTS:
        raise ConfigError(f"unknown scan variant {variant!r}; known: {', '.join(VARIANTS)}")


def scan(x, out=None, *, inclusive: bool = True, variant: str | None = None,
         block: int | None = None, items: int | None = None):
    """The inclusive (or exclusive) prefix sum of `x` into `out` (made if None); returns
    `out`. Checks every argument first (ConfigError with the reason), an unknown
    `variant` at every size, the empty input included.

    `variant` is one of VARIANTS; by default (None) the fastest this GPU supports:
    "bulk" (16, compute capability 9.0 and later), else "single-pass" (03); see
    `default_variant` for the measurements and the reason. `block` and `items` shape the
    tile of "single-pass", "three-kernel" and "serial" only; given without a variant,
    they name the single pass."""
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
        if out.shape != x.shape or out.dtype != x.dtype:
            raise ConfigError(f"out has shape {out.shape} and dtype {out.dtype}; it must "
                              f"match x ({x.shape}, {x.dtype})")
        if _overlap(x, out):
            raise ConfigError("out overlaps x: in-place scans are not supported, pass a "
                              "separate output array")
    enqueue(x, out, inclusive, variant, block, items)
    return out


def _launch_tiles(kernel, tiles, blocks, threads, x, out, smem=0) -> None:
    """Launch a single pass over `tiles` tiles with this stream's tile status (a new
    epoch): the arguments every look-back kernel of this chapter takes."""
    counter, words, flags, agg, pre, epoch = state().args(tiles, vec(str(x.dtype)) == 2)
    launch(kernel, blocks, threads,
           (x, out, np.int64(x.size), counter, np.uint32(tiles), words, flags, agg, pre,
            epoch), shared_mem=smem)


def enqueue_pipelined(x, out, inclusive=True, block=None, items=None, stages=None) -> None:
    """Launch the pipelined single pass (08) without the argument checks of `scan`."""
    n = x.size
    if n == 0:
        return
    dtype = str(x.dtype)
    b, i, st = PIPELINED
    block, stages = block or b, stages or st
    items = items or i * 4 // x.itemsize
    kernels, (tiles, blocks, smem) = _plan("pipelined", dtype, n, inclusive, block, items,
                                           stages=stages)
    _launch_tiles(kernels[0], tiles, blocks, block, x, out, smem)


def enqueue_staged(x, out, inclusive=True, block=None, items=None, min_blocks=None,
                   lookback=True, delay=None, width=None) -> None:
    """Launch the staged single pass (10) without the argument checks of `scan`.
    lookback=False: the diagnostic that scans every tile alone (not a scan of x)."""
    n = x.size
    if n == 0:
        return
    dtype = str(x.dtype)
    block, items, min_blocks = staged_shape(dtype, block, items, min_blocks)
    delay = STAGED_DELAY if delay is None else delay
    kernels, (tiles, blocks, smem) = _plan("staged" if lookback else "staged-nolookback",
                                           dtype, n, inclusive, block, items,
                                           stages=(min_blocks, delay,
                                                   width or STAGED_WIDTH))
    _launch_tiles(kernels[0], tiles, blocks, block, x, out, smem)


def enqueue_lookahead(x, out, inclusive=True, block=None, items=None, min_blocks=None,
                      delay=None, early=None) -> None:
    """Launch the look-ahead single pass (12): `block` data threads and the look-back warp."""
    n = x.size
    if n == 0:
        return
    dtype = str(x.dtype)
    b, i, m = LOOKAHEAD
    block, min_blocks = block or b, min_blocks or m
    items = items or i * 4 // x.itemsize
    delay = LOOKAHEAD_DELAY if delay is None else delay
    early = LOOKAHEAD_EARLY if early is None else bool(early)
    kernels, (tiles, blocks, smem) = _plan("lookahead", dtype, n, inclusive, block, items,
                                           stages=(min_blocks, delay, early))
    _launch_tiles(kernels[0], tiles, blocks, block + 32, x, out, smem)


def enqueue_chunked(x, out, inclusive=True, warps=None, vpl=None, batches=None,
                    min_blocks=None, delay=None, width=None, policy=None, preload=None,
                    lookback=True, tier=None) -> None:
    """Launch the chunked single pass (14): persistent blocks of `warps` data warps and
    the look-back warp. lookback=False: the diagnostic that scans every chunk alone."""
    n = x.size
    if n == 0:
        return
    dtype = str(x.dtype)
    w, v, bt, m = CHUNKED
    shape = (warps or w, vpl or v, batches or bt, min_blocks or m,
             CHUNKED_DELAY if delay is None else delay, width or CHUNKED_WIDTH,
             CHUNKED_POLICY if policy is None else policy,
             CHUNKED_PRELOAD if preload is None else preload,
             CHUNKED_TIER if tier is None else tier)
    kernels, (chunks, blocks, _) = _plan("chunked" if lookback else "chunked-nolookback",
                                         dtype, n, inclusive, shape[0], shape[1],
                                         stages=shape)
    counter, words, flags, agg, pre, epoch = state().args(status_words(chunks, shape[8]),
                                                          vec(dtype) == 2)
    launch(kernels[0], blocks, (shape[0] + 1) * 32,
           (x, out, np.int64(n), counter, np.uint32(chunks), words, flags, agg, pre, epoch))


def enqueue_bulk(x, out, inclusive=True, shape=None, lookback=True) -> None:
    """Launch the bulk-copy single pass (16): one block an SM of scanner and reducer warps,
    a producer and the sequencer. lookback=False: the diagnostic that scans every tile
    alone."""
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
    if variant == "pipelined":
        return enqueue_pipelined(x, out, inclusive, None, items)
    if variant == "staged":
        return enqueue_staged(x, out, inclusive, None, items)
    if variant == "lookahead":
        return enqueue_lookahead(x, out, inclusive, None, items)
    if variant == "chunked":
        return enqueue_chunked(x, out, inclusive)
    if variant == "bulk":
        return enqueue_bulk(x, out, inclusive)
    dtype = str(x.dtype)
    items = items or default_items(dtype, variant)
    kernels, tiles = _plan(variant, dtype, n, inclusive, block, items, lookback, grid)
    nn = np.int64(n)
    if variant == "single-pass":
        tiles, blocks = tiles
        _launch_tiles(kernels[0], tiles, blocks, block, x, out)
    elif variant == "three-kernel":
        totals = _totals(dtype, tiles)
        launch(kernels[0], tiles, block, (x, totals, nn))
        launch(kernels[1], 1, block, (totals, np.int64(tiles)))
        launch(kernels[2], tiles, block, (x, totals, out, nn))
    else:
        totals = _totals(dtype, tiles)
        launch(kernels[0], tiles, SEED_BLOCK, (x, totals, nn))
        launch(kernels[1], 1, SEED_BLOCK, (totals, np.int64(tiles)))
        launch(kernels[2], tiles, SEED_BLOCK, (x, totals, out, nn))


def traffic_bytes(variant: str, n: int, itemsize: int, block=DEFAULT_BLOCK,
                  items=None) -> int:
    items = items or (128 if variant == "single-pass" else 64) // itemsize
    """The bytes a variant moves to and from device memory, by its design (input read,
    output written, totals, tile status)."""
    data = n * itemsize
    if variant == "pipelined":
        b, i, _ = PIPELINED
        items, block = i * 4 // itemsize, b
    if variant in ("staged", "lookahead"):
        b, i, _ = STAGED if variant == "staged" else LOOKAHEAD
        items, block = i * 4 // itemsize, b
    if variant == "chunked":
        w, v, bt, _ = CHUNKED
        block, items = w * 32, v * bt * 16 // itemsize
    if variant == "bulk":
        block, items = BULK[0] * 32, BULK[2] * 1024 // BULK[0] // 32 // itemsize
    if variant in ("single-pass", "pipelined", "staged", "lookahead", "chunked", "bulk"):
        tiles = -(-n // (block * items))
        status = tiles * (8 if itemsize == 4 else 20) * 2     # written twice, read back
        return 2 * data + status
    tile = SEED_BLOCK if variant == "serial" else block * items
    tiles = -(-n // tile)
    return 3 * data + 4 * tiles * itemsize
