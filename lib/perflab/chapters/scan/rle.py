"""Run-length encoding on the scan, and its decoder.

    enc = Encoder(n)                         # buffers for inputs of up to n int32
    values, lengths, count = enc.encode(x)   # on the GPU; count is a 1-element array
    y = decode(values[:r], lengths[:r], n)   # r = int(count[0]); y == x exactly

Encoders (kernels/03-scan/): "fused" (05_rle_fused.cu: heads, scan of the head counts
and scatter in one pass, then 06_run_lengths.cu), "unfused" (04_rle_unfused.cu: a flags
kernel, the single-pass scan of the flags, a scatter kernel, then the lengths),
"pipelined" (09) and "lookahead" (13_rle_lookahead.cu: on the look-ahead single pass,
values and lengths written in the pass, then rle_tails for each tile's last run) and
"chunked" (15_rle_chunked.cu: on the chunked single pass (14), heads counted from memory,
the chunk walked again from L2 one iteration later; then rle_tails over the chunks) and
"bulk" (17_rle_bulk.cu: on the bulk-copy single pass (16), values and lengths written in
one pass, the sequencer's prefix carrying the run count and the last run start;
compute capability 9.0 and later) and "lean" (18_rle_lean.cu: 17 with fewer instructions
a step, several blocks an SM) and "masks" (19_rle_masks.cu: 18 with each head found once,
left in shared memory as masks, and the sequencer's chain shared by several warps) and
"rounds" (20_rle_rounds.cu: no chain; the grid in lockstep rounds, one segment a block a
round, every block reading every block's count) and "reread" (21_rle_reread.cu: 20's
rounds with nothing held in shared memory: each segment read from memory to count its
heads, and again, from L2, to write its runs) and "walk" (22_rle_walk.cu: 21's counters
leave the heads as masks, and the writers walk the bits) and "ballot" (23_rle_ballot.cu:
one pass, each warp's heads found by ballots and staged in shared memory at once;
persistent blocks whose tiles' runs wait in three stages while their prefixes, (heads,
last head), come from a sequencer warp or from look-backs; compute capability 8.0 and
later) and "graph" (24_rle_graph.cu: 23 launched as a CUDA graph, its epoch a word in
device memory that the kernel advances, so a call's arguments stay the same) and "room"
(25_rle_room.cu: 24 with 6 bytes a staged head, so that three blocks an SM leave L1 room
for the walkers' loads in flight).
Runs are maximal: consecutive equal int32 values form one run. Positions and lengths are
int32, so n must be below 2^31.
"""
from __future__ import annotations

import numpy as np

from ...errors import ConfigError
from ...kernels import GraphLaunch, KernelSpec, capturing, get_kernel, launch
from . import CHAPTER
from .ops import (DEFAULT_BLOCK, EPOCH_LIMIT, check_array, check_tile, enqueue, state,
                  status_words)

ENCODERS = ("fused", "unfused")
#: every encoder `encode` takes
ALL = ENCODERS + ("pipelined", "lookahead", "chunked", "bulk", "lean", "masks", "rounds",
                  "reread", "walk", "ballot", "graph", "room")
#: the encoders that need compute capability 9.0 (17 to 21)
SM90 = ("bulk", "lean", "masks", "rounds", "reread", "walk")
#: the encoders whose one pass writes values and lengths (4n read, 8 bytes a run written)
ONE_PASS = ("lookahead", "chunked", "bulk", "lean", "masks", "rounds", "reread", "walk",
            "ballot", "graph", "room")
#: 09_rle_pipelined.cu: the fused encoder on persistent blocks with STAGES tiles loading
#: ahead (block, items, stages); encode(x, "pipelined"), timed in scan.targets.
PIPELINED = (256, 16, 2)
#: 13_rle_lookahead.cu: the encoder on the look-ahead single pass (12) that writes values
#: and lengths in its pass (block of data threads, items, blocks per SM, pause between
#: polls in ns); encode(x, "lookahead"), timed in scan.targets.
LOOKAHEAD = (128, 48, 9, 2048)          # the best of its shapes, run ec22323fbb53
#: 15_rle_chunked.cu: the encoder on the chunked single pass (14): (data warps, 16-byte
#: vectors a lane per batch, batches a chunk, blocks per SM, pause ns, look-back width,
#: super-chunk of the two-level look-back or 0); encode(x, "chunked").
CHUNKED = (8, 8, 1, 3, 256, 8, 32)      # the best of its shapes, run 01ff1856646c
#: the shapes scan.rle_chunked compares
CHUNKED_SHAPES = ((8, 4, 1, 4, 256, 8, 0), (8, 4, 1, 4, 256, 8, 32), (8, 8, 1, 3, 256, 8, 32),
                  (12, 8, 1, 2, 256, 4, 0), (24, 8, 1, 1, 256, 4, 0))
#: 17_rle_bulk.cu: (scanner warps, reducer warps, tile KiB, stages, sequencer words a
#: lane, pause ns) as the bulk-copy scan's (ops.BULK), and the elements a lane takes a step
#: (4, 8 or 16); encode(x, "bulk").
BULK = (16, 4, 32, 6, 4, 128, 8)
#: the shapes scan.rle_bulk compares
BULK_SHAPES = ((16, 4, 32, 6, 4, 128, 4), (16, 4, 32, 6, 4, 128, 8), (16, 4, 32, 5, 4, 128, 16),
               (8, 4, 32, 6, 4, 128, 8), (16, 4, 16, 12, 4, 128, 8), (16, 8, 32, 6, 4, 128, 8),
               (16, 2, 32, 6, 4, 128, 8), (16, 4, 32, 6, 8, 128, 8), (16, 4, 32, 6, 4, 32, 8))
#: 17's diagnostics (DIAG), each with one more part taken away: the scanners' work, the
#: reducers' reading, the scanners' wait for prefixes, the sequencer
BULK_DIAGNOSTICS = {1: "no scanner work", 2: "no reducer reading either",
                    3: "no prefix waits either", 4: "no sequencer either: the ring alone"}
#: 18_rle_lean.cu: 17's shape and the blocks an SM (its registers capped to fit them);
#: encode(x, "lean").
LEAN = (8, 4, 32, 3, 4, 128, 8, 2)
#: the shapes scan.rle_lean compares (17's default shape is the first)
LEAN_SHAPES = ((16, 4, 32, 6, 4, 128, 8, 1), (8, 4, 32, 3, 4, 128, 8, 2),
               (8, 2, 32, 3, 4, 128, 8, 2), (16, 4, 48, 4, 4, 128, 8, 1),
               (8, 4, 32, 2, 4, 128, 16, 2), (4, 2, 16, 4, 4, 128, 8, 3))
#: 19_rle_masks.cu: (scanner warps a group, reducer warps, stages, sequencer tiles a lane,
#: sequencer warps, pause ns, blocks an SM, scanner groups); a tile is 1024 int32 a
#: scanner of a group (4 KiB); encode(x, "masks").
MASKS = (4, 2, 4, 4, 4, 128, 3, 1)
#: the shapes scan.rle_masks compares (the default first; then 18's tile and blocks, with
#: four, one and two sequencer warps; two sequencer warps at the default; two scanner
#: groups)
MASKS_SHAPES = ((4, 2, 4, 4, 4, 128, 3, 1), (8, 4, 3, 4, 4, 128, 2, 1),
                (8, 4, 3, 4, 1, 128, 2, 1), (8, 4, 3, 4, 2, 128, 2, 1),
                (4, 2, 4, 4, 2, 128, 3, 1), (4, 2, 4, 4, 4, 128, 2, 2),
                (8, 4, 4, 4, 4, 128, 1, 2))
#: 20_rle_rounds.cu: (counter warps, writer warps, segment KiB, stages, slots of compacted
#: heads, blocks an SM); encode(x, "rounds").
ROUNDS = (16, 8, 32, 2, 10, 1)
#: the shapes scan.rle_rounds compares (the default first; then fewer counters or writers,
#: fewer slots, two blocks an SM)
ROUNDS_SHAPES = ((16, 8, 32, 2, 10, 1), (16, 8, 32, 4, 6, 1), (16, 4, 32, 2, 10, 1),
                 (8, 8, 32, 4, 6, 1), (8, 4, 32, 4, 6, 1), (4, 4, 16, 4, 7, 2))
ROUND_PIECE = 512           # 20: a counter's piece
ROUND_CAP = 128             # 20: the heads a piece compacts (a 16-bit index and a value)
#: 20's diagnostics (DIAG), each with one more part taken away
ROUNDS_DIAGNOSTICS = {1: "no runs written", 2: "no words either, nobody waits",
                      3: "no heads counted either: the ring alone"}
ROUNDS_MAX_SMS = 160        # 20: its poller reads 5 words a lane a round, a block an SM
#: 21_rle_reread.cu: (counter warps, writer warps, segment KiB, slots of segment starts,
#: blocks an SM, prefetch: a counter's next pieces in flight while it counts); encode(x,
#: "reread").
REREAD = (8, 8, 16, 4, 2, 0)          # the best of the probe's shapes
#: the shapes scan.rle_reread compares (the default first)
REREAD_SHAPES = ((8, 8, 16, 4, 2, 0), (8, 8, 32, 4, 1, 1), (8, 8, 32, 4, 1, 0),
                 (16, 8, 32, 4, 1, 1), (8, 8, 32, 8, 1, 1), (8, 4, 16, 4, 2, 1),
                 (4, 4, 16, 4, 2, 1))
REREAD_PIECE = 512          # 21: a piece, 4 chunks of 128 elements
#: 21's diagnostics (DIAG), each with one more part taken away
REREAD_DIAGNOSTICS = {1: "no runs written", 2: "no words either, nobody waits",
                      3: "no heads counted either: the counters' loads alone"}
#: 22_rle_walk.cu: 21's shape (counters, writers, segment KiB, slots, blocks an SM,
#: prefetch); a writer takes units of 1024 elements; encode(x, "walk").
WALK = (8, 4, 16, 4, 2, 0)
#: the shapes scan.rle_walk compares (the default first)
WALK_SHAPES = ((8, 4, 16, 4, 2, 0), (8, 4, 16, 4, 2, 1), (8, 2, 16, 4, 2, 0),
               (4, 4, 16, 4, 2, 1), (8, 8, 32, 4, 1, 1), (16, 8, 32, 4, 1, 1),
               (8, 4, 16, 8, 2, 0))
#: 23_rle_ballot.cu: (walker warps a block, elements a walker's piece, chunks of 32 in
#: flight a lane, heads a walker stages, blocks an SM, predecessors a look-back lane reads
#: a round trip, tiles a sequencer lane takes a round trip or 0 for look-backs); a tile is
#: walkers * piece elements, staged in one of BALLOT_STAGES stages; encode(x, "ballot").
BALLOT = (8, 2048, 16, 384, 3, 1, 2)
BALLOT_STAGES = 3           # 23_rle_ballot.cu's STAGES (a test holds them equal)
#: 25_rle_room.cu: 23's shape (as BALLOT; staged heads 6 bytes each); encode(x, "room").
ROOM = (8, 2048, 16, 288, 3, 1, 2)
#: the shapes scan.rle_ballot compares (the default first; then the sequencer's tiles a
#: lane, look-backs instead of the sequencer, 16 walkers with fewer staged heads, smaller
#: and larger tiles)
BALLOT_SHAPES = ((8, 2048, 16, 384, 3, 1, 2), (8, 2048, 16, 384, 3, 1, 4),
                 (8, 2048, 16, 384, 3, 1, 1), (8, 2048, 16, 384, 3, 1, 0),
                 (8, 2048, 16, 384, 3, 4, 0), (16, 2048, 16, 288, 2, 1, 2),
                 (8, 1024, 16, 256, 3, 1, 2), (8, 4096, 16, 576, 2, 1, 2))
#: 23's diagnostics (DIAG)
BALLOT_DIAGNOSTICS = {1: "no prefixes (no sequencer, no look-back: each tile's runs at a "
                         "place of its own)",
                      2: "no runs written", 3: "neither prefixes nor runs written"}
WALK_UNIT = 1024            # 22: a writer's unit (32 mask words)
MASK_PIECE = 1024           # 19: a scanner's piece (32 mask words)
MASK_CAP = 256              # 19: staged slots a scanner (a 16-bit index and a value)
BULK_HALO = 16
MAX_N = (1 << 31) - 1
DEFAULT_ITEMS = 16          # the encoder keeps flags and positions too: 16 items a thread


def fused_spec(block=DEFAULT_BLOCK, items=DEFAULT_ITEMS) -> KernelSpec:
    return KernelSpec(f"{CHAPTER}/05_rle_fused.cu", "rle_encode_fused",
                      template=("int", block, items))


def pipelined_spec(block=None, items=None, stages=None) -> KernelSpec:
    b, i, s = PIPELINED
    return KernelSpec(f"{CHAPTER}/09_rle_pipelined.cu", "rle_encode_pipelined",
                      template=("int", block or b, items or i, stages or s))


def lookahead_spec(block=None, items=None, min_blocks=None, delay=None) -> KernelSpec:
    b, i, m, d = LOOKAHEAD
    return KernelSpec(f"{CHAPTER}/13_rle_lookahead.cu", "rle_encode_lookahead",
                      template=(block or b, items or i, min_blocks or m,
                                d if delay is None else delay))


def chunked_spec(shape=None) -> KernelSpec:
    return KernelSpec(f"{CHAPTER}/15_rle_chunked.cu", "rle_encode_chunked",
                      template=tuple(shape or CHUNKED))


def bulk_spec(shape=None, diag: int = 0) -> KernelSpec:
    sc, rd, kib, st, wd, d, e = shape or BULK
    return KernelSpec(f"{CHAPTER}/17_rle_bulk.cu", "rle_encode_bulk",
                      template=(sc, rd, kib * 1024, st, wd, d, e, int(diag)))


def lean_spec(shape=None, diag: int = 0) -> KernelSpec:
    sc, rd, kib, st, wd, d, e, mb = shape or LEAN
    return KernelSpec(f"{CHAPTER}/18_rle_lean.cu", "rle_encode_lean",
                      template=(sc, rd, kib * 1024, st, wd, d, e, mb, int(diag)))


def masks_spec(shape=None, diag: int = 0) -> KernelSpec:
    sc, rd, stg, wd, sq, d, mb, g = shape or MASKS
    return KernelSpec(f"{CHAPTER}/19_rle_masks.cu", "rle_encode_masks",
                      template=(sc, rd, stg, wd, sq, d, mb, g, int(diag)))


def masks_smem(shape) -> int:
    """19's dynamic shared memory: the ring (a halo before each tile), a mask word for 32
    elements of each stage, and each scanner's staging (MASK_CAP slots of a 16-bit index
    and a 4-byte value)."""
    sc, stg, g = shape[0], shape[2], shape[7]
    tile = sc * MASK_PIECE * 4
    return stg * (BULK_HALO + tile) + stg * tile // 32 + sc * g * 6 * MASK_CAP


def masks_threads(shape) -> int:
    """19's threads: the scanner groups, reducers, the producer, the sequencer warps."""
    return (shape[0] * shape[7] + shape[1] + 1 + shape[4]) * 32


def check_masks_shape(shape) -> None:
    """ConfigError, naming the rule, for an encoder shape of 19 that cannot be built."""
    if len(shape) != 8:
        raise ConfigError(f"masks encoder shape {shape}: (scanners a group, reducers, stages, "
                          "sequencer tiles a lane, sequencer warps, pause ns, blocks an SM, "
                          "scanner groups)")
    sc, rd, stg, wd, sq, d, mb, g = shape
    if not 1 <= g <= 4 or stg % g:
        raise ConfigError(f"{g} scanner groups and {stg} stages: 1 to 4 groups, the stages a "
                          "multiple of them (each stage always goes to the same group)")
    if not 1 <= sc <= 16 or rd < 1 or sc % rd:
        raise ConfigError(f"{sc} scanners and {rd} reducers: 1 to 16 scanners, a multiple "
                          "of the reducers")
    if stg < 2:
        raise ConfigError(f"{stg} stages: two or more")
    if not 1 <= wd <= 8 or not 1 <= sq <= 4:
        raise ConfigError(f"sequencer of {sq} warps, {wd} tiles a lane: 1 to 4 warps, "
                          "1 to 8 tiles a lane")
    if d < 0:
        raise ConfigError(f"pause {d} ns: 0 or more")
    if masks_threads(shape) > 1024:
        raise ConfigError(f"{masks_threads(shape)} threads a block: at most 1024")
    smem = masks_smem(shape)
    if not 1 <= mb <= 8 or mb * (smem + 1024) > 228 * 1024:
        raise ConfigError(f"{mb} blocks an SM of {smem} B of shared memory: 1 to 8 blocks, "
                          "all of them within the SM's 228 KiB (1 KiB of it reserved a block)")


def rounds_spec(shape=None, diag: int = 0) -> KernelSpec:
    c, w, kib, stg, sl, mb = shape or ROUNDS
    return KernelSpec(f"{CHAPTER}/20_rle_rounds.cu", "rle_encode_rounds",
                      template=(c, w, kib * 256, stg, sl, mb, int(diag)))


def rounds_smem(shape) -> int:
    """20's dynamic shared memory: the ring (a halo before each segment) and the slots of
    compacted heads (ROUND_CAP a piece, a 2-byte index and a 4-byte value each)."""
    kib, stg, sl = shape[2:5]
    return stg * (BULK_HALO + kib * 1024) + sl * (kib * 256 // ROUND_PIECE) * ROUND_CAP * 6


def rounds_threads(shape) -> int:
    """20's threads: the counters, the writers, the poller, the producer."""
    return (shape[0] + shape[1] + 2) * 32


def check_rounds_shape(shape) -> None:
    """ConfigError, naming the rule, for an encoder shape of 20 that cannot be built."""
    if len(shape) != 6:
        raise ConfigError(f"rounds encoder shape {shape}: (counters, writers, segment KiB, "
                          "stages, slots, blocks an SM)")
    c, w, kib, stg, sl, mb = shape
    pieces = kib * 256 // ROUND_PIECE
    if kib % 2 or not 1 <= pieces <= 32:
        raise ConfigError(f"segments of {kib} KiB: whole pieces of {ROUND_PIECE} int32 "
                          "(2 KiB), 1 to 32 of them")
    if c < 1 or pieces % c or not 1 <= w <= pieces:
        raise ConfigError(f"{c} counters and {w} writers for {pieces} pieces: the pieces a "
                          "multiple of the counters, 1 writer to one a piece")
    if not 2 <= stg <= 16 or not 2 <= sl <= 16:
        raise ConfigError(f"{stg} stages and {sl} slots: 2 to 16 each")
    if rounds_threads(shape) > 1024:
        raise ConfigError(f"{rounds_threads(shape)} threads a block: at most 1024")
    smem = rounds_smem(shape)
    if not 1 <= mb <= 8 or mb * (smem + 1024) > 228 * 1024:
        raise ConfigError(f"{mb} blocks an SM of {smem} B of shared memory: 1 to 8 blocks, "
                          "all of them within the SM's 228 KiB (1 KiB of it reserved a block)")


def reread_spec(shape=None, diag: int = 0) -> KernelSpec:
    c, w, kib, sl, mb, pf = shape or REREAD
    return KernelSpec(f"{CHAPTER}/21_rle_reread.cu", "rle_encode_reread",
                      template=(c, w, kib * 256, sl, mb, pf, int(diag)))


def reread_smem(shape, unit: int = REREAD_PIECE) -> int:
    """21's (22's, with unit=WALK_UNIT) dynamic shared memory: each writer's staging area
    (a piece's or unit's heads, a 2-byte index and a 4-byte value each)."""
    return shape[1] * unit * 6


def reread_threads(shape) -> int:
    """21's and 22's threads: the counters, the writers, the poller."""
    return (shape[0] + shape[1] + 1) * 32


def check_reread_shape(shape, unit: int = REREAD_PIECE, what: str = "re-read") -> None:
    """ConfigError, naming the rule, for an encoder shape of 21 (or of 22: unit=WALK_UNIT,
    the writers' unit) that cannot be built."""
    if len(shape) != 6:
        raise ConfigError(f"{what} encoder shape {shape}: (counters, writers, segment KiB, "
                          "slots, blocks an SM, prefetch)")
    c, w, kib, sl, mb, pf = shape
    pieces, units = kib * 256 // REREAD_PIECE, kib * 256 // unit
    if kib * 256 % unit or not 1 <= pieces <= 32:
        raise ConfigError(f"segments of {kib} KiB: whole units of {unit} int32 "
                          f"({unit // 256} KiB), 1 to 32 pieces of {REREAD_PIECE}")
    wname = "pieces" if unit == REREAD_PIECE else "units"
    for role, k, m, name in (("counters", c, pieces, "pieces"), ("writers", w, units, wname)):
        if k < 1 or m % k or m // k > 4:
            raise ConfigError(f"{k} {role} for {m} {name}: the {name} a multiple of the "
                              f"{role}, at most 4 {name} each")
    if not 2 <= sl <= 16:
        raise ConfigError(f"{sl} slots: 2 to 16")
    if pf not in (0, 1):
        raise ConfigError(f"prefetch {pf}: 0 or 1")
    if reread_threads(shape) > 1024:
        raise ConfigError(f"{reread_threads(shape)} threads a block: at most 1024")
    smem = reread_smem(shape, unit)
    if not 1 <= mb <= 8 or mb * (smem + 1024) > 228 * 1024:
        raise ConfigError(f"{mb} blocks an SM of {smem} B of shared memory: 1 "
                          "to 8 blocks, all of them within the SM's 228 KiB")


def walk_spec(shape=None, diag: int = 0) -> KernelSpec:
    c, w, kib, sl, mb, pf = shape or WALK
    return KernelSpec(f"{CHAPTER}/22_rle_walk.cu", "rle_encode_walk",
                      template=(c, w, kib * 256, sl, mb, pf, int(diag)))


def check_walk_shape(shape) -> None:
    """ConfigError, naming the rule, for an encoder shape of 22 that cannot be built."""
    check_reread_shape(shape, WALK_UNIT, "mask-walk")


def ballot_spec(shape=None, diag: int = 0) -> KernelSpec:
    w, piece, batch, cap, mb, width, seq = shape or BALLOT
    return KernelSpec(f"{CHAPTER}/23_rle_ballot.cu", "rle_encode_ballot",
                      template=(w, piece, batch, cap, mb, width, seq, int(diag)))


#: a kernel built with this option is compiled on its own (the same code): its launches
#: take all of an SM's L1 that can be shared memory (`all_shared` of 24 and 25)
ALL_SHARED = ("-DPERFLAB_ALL_SHARED=1",)


def graph_spec(shape=None, diag: int = 0, all_shared: bool = False) -> KernelSpec:
    w, piece, batch, cap, mb, width, seq = shape or BALLOT
    return KernelSpec(f"{CHAPTER}/24_rle_graph.cu", "rle_encode_graph",
                      template=(w, piece, batch, cap, mb, width, seq, int(diag)),
                      options=ALL_SHARED if all_shared else ())


def room_spec(shape=None, diag: int = 0, all_shared: bool = False) -> KernelSpec:
    return KernelSpec(f"{CHAPTER}/25_rle_room.cu", "rle_encode_room",
                      template=tuple(shape or ROOM) + (int(diag),),
                      options=ALL_SHARED if all_shared else ())


class GraphState:
    """24's own tile status: its ticket counter, its two status words a tile and the word
    that holds the next call's epoch, which the kernel advances once a call. The host
    counts the calls (each advances the word by one) and, before an epoch could pass
    EPOCH_LIMIT, zeroes the status words and sets the word back to 1. `generation` changes
    whenever an array is replaced, so a graph built over the old ones is not used again."""

    def __init__(self):
        import cupy as cp
        self.counter = cp.zeros(1, dtype=cp.uint32)
        self.lo = cp.zeros(1, dtype=cp.uint64)
        self.hi = cp.zeros(1, dtype=cp.uint64)
        self.word = cp.ones(1, dtype=cp.uint32)
        self.epoch = 0                  # the epoch of the last call (the word holds the next)
        self.generation = 0

    def args(self, tiles: int) -> tuple:
        """(counter, lo words, hi words, epoch word) for a call over `tiles` tiles."""
        if self.lo.size < tiles:
            import cupy as cp
            size = max(tiles, 2 * self.lo.size)
            self.lo = cp.zeros(size, dtype=cp.uint64)
            self.hi = cp.zeros(size, dtype=cp.uint64)
            self.generation += 1
        self.epoch += 1
        if self.epoch > EPOCH_LIMIT:
            self.lo.fill(0)
            self.hi.fill(0)
            self.word.fill(1)
            self.epoch = 1
        return self.counter, self.lo, self.hi, self.word


class GraphCall:
    """The calls of a graph-launched encoder (24, 25): its graphs (GraphLaunch, one for
    each input array and size, built at its first call), its tile status (GraphState) and
    the input of its last call. A call with that same array object (so the same pointer and
    size) only counts its epoch and launches that array's graph: the fewest host steps a
    call can take (the Python of a call is part of its time). Holding the last input keeps
    it alive until a call with another. (`build`, `state`: GraphLaunch's graph builder and
    the tile status, a GraphState by default.)"""

    def __init__(self, run, tile: int, build=None, state=None):
        self.graphs, self.tile = GraphLaunch(run, build=build), tile
        self.state = state if state is not None else GraphState()
        self._last = (None, None)

    def __call__(self, x, values, lengths, count) -> None:
        st = self.state
        last_x, g = self._last
        if x is last_x and st.epoch < EPOCH_LIMIT and not capturing():
            st.epoch += 1
            g.launch()
            return
        n = x.size
        tiles = -(-n // self.tile)
        counter, lo, hi, word = st.args(tiles)
        key = (x.data.ptr, n, st.generation)
        self.graphs(key, min(tiles, self.graphs.grid), x, values, lengths, count, n,
                    counter, tiles, lo, hi, word)
        g = self.graphs.get(key)
        self._last = (x, g) if g is not None else (None, None)


def ballot_smem(shape) -> int:
    """23's dynamic shared memory: BALLOT_STAGES stages of each walker's staged heads, a
    4-byte value and a 4-byte index each."""
    return BALLOT_STAGES * shape[0] * shape[3] * 8


def room_smem(shape) -> int:
    """25's dynamic shared memory: BALLOT_STAGES stages of each walker's staged heads, a
    4-byte value and a 2-byte index each."""
    return BALLOT_STAGES * shape[0] * shape[3] * 6


def check_room_shape(shape) -> None:
    """ConfigError, naming the rule, for a shape of 25 that cannot be built."""
    check_ballot_shape(shape, room_smem)


def ballot_threads(shape) -> int:
    """23's threads: the walkers, the look-back warp, the sequencer's warp (if any)."""
    return (shape[0] + 1 + (shape[6] > 0)) * 32


def check_ballot_shape(shape, smem=ballot_smem) -> None:
    """ConfigError, naming the rule, for a shape of 23 (or 24, or of 25 with its `smem`)
    that cannot be built."""
    if len(shape) != 7:
        raise ConfigError(f"ballot encoder shape {shape}: (walker warps, piece, chunks in "
                          "flight, staged heads a walker, blocks an SM, look-back width, "
                          "sequencer tiles a lane)")
    w, piece, batch, cap, mb, width, seq = shape
    if width not in (1, 2, 4, 8):
        raise ConfigError(f"look-back width {width}: 1, 2, 4 or 8 predecessors a lane")
    if seq not in (0, 1, 2, 4):
        raise ConfigError(f"sequencer {seq}: 0 (look-backs) or 1, 2, 4 tiles a lane")
    if not 1 <= w or ballot_threads(shape) > 1024:
        raise ConfigError(f"{w} walker warps a block: 1 to 31 walker warps, at most 32 warps "
                          "with the look-back warp and the sequencer's")
    if batch < 1 or piece % (32 * batch) or not 32 <= piece <= 65536:
        raise ConfigError(f"pieces of {piece} elements: whole batches of {batch} chunks of "
                          "32, at most 65536")
    if cap % 32 or not 32 <= cap <= piece:
        raise ConfigError(f"{cap} staged heads: a multiple of 32, from 32 to the piece "
                          f"({piece})")
    smem = smem(shape)
    warps = ballot_threads(shape) // 32
    if not 1 <= mb <= 32 or mb * (smem + 1024) > 228 * 1024 or mb * warps > 64:
        raise ConfigError(f"{mb} blocks an SM of {warps} warps and {smem} B of shared "
                          "memory: at most 64 warps and 228 KiB an SM")


def check_lean_shape(shape) -> None:
    """ConfigError, naming the rule, for an encoder shape of 18 that cannot be built."""
    if len(shape) != 8:
        raise ConfigError(f"lean encoder shape {shape}: (scanners, reducers, tile KiB, stages, "
                          "sequencer width, pause ns, elements a lane, blocks an SM)")
    check_bulk_shape(shape[:7])
    mb = shape[7]
    if not 1 <= mb <= 8 or mb * bulk_smem(shape[:7]) > 227 * 1024:
        raise ConfigError(f"{mb} blocks an SM of {bulk_smem(shape[:7])} B of shared memory: "
                          "1 to 8 blocks, all of them within the SM's 227 KiB")


def staging_bytes(shape) -> int:
    """17's staging area: a step's values and lengths (2 x 32 x E int32) a scanner."""
    return shape[0] * 2 * 32 * shape[6] * 4


def bulk_smem(shape) -> int:
    """17's dynamic shared memory: the ring (a halo before each tile) and the staging."""
    return shape[3] * (shape[2] * 1024 + BULK_HALO) + staging_bytes(shape)


def check_bulk_shape(shape) -> None:
    """ConfigError, naming the rule, for an encoder shape (17) that cannot be built."""
    from .ops import check_bulk
    if len(shape) != 7:
        raise ConfigError(f"bulk encoder shape {shape}: (scanners, reducers, tile KiB, "
                          "stages, sequencer width, pause ns, elements a lane)")
    sc, kib, e = shape[0], shape[2], shape[6]
    check_bulk("int32", shape[:6], BULK_HALO, staging_bytes(shape))
    if e not in (4, 8, 16) or kib * 256 // sc % (32 * e):
        raise ConfigError(f"{e} elements a lane: 4, 8 or 16, and each scanner's piece "
                          f"({kib * 256 // sc} elements) whole steps of 32 x {e}")


def tails_spec() -> KernelSpec:
    return KernelSpec(f"{CHAPTER}/13_rle_lookahead.cu", "rle_tails")


def unfused_specs() -> list[KernelSpec]:
    f = f"{CHAPTER}/04_rle_unfused.cu"
    return [KernelSpec(f, "head_flags", template=("int",)),
            KernelSpec(f, "scatter_runs", template=("int",))]


def lengths_spec() -> KernelSpec:
    return KernelSpec(f"{CHAPTER}/06_run_lengths.cu", "run_lengths")


def decode_specs() -> list[KernelSpec]:
    f = f"{CHAPTER}/07_rle_decode.cu"
    return [KernelSpec(f, "mark_run_heads"), KernelSpec(f, "gather_runs", template=("int",))]


def all_specs() -> list[KernelSpec]:
    from .ops import single_pass_spec
    return ([fused_spec()] + unfused_specs() + [lengths_spec()] + decode_specs()
            + [single_pass_spec("int32", inclusive=False), single_pass_spec("int32")])


def check_input(x) -> None:
    check_array(x, "x", dtypes=("int32",))
    if x.size > MAX_N:
        raise ConfigError(f"n={x.size}: run positions and lengths are int32 here, so the "
                          f"encoder takes at most 2^31 - 1 elements; split the input")


class Encoder:
    """Output buffers (worst case: n runs) for encoding inputs of up to `n` int32."""

    def __init__(self, n: int, block: int = DEFAULT_BLOCK, items: int = DEFAULT_ITEMS):
        import cupy as cp
        if n > MAX_N:
            raise ConfigError(f"n={n}: run positions and lengths are int32 here, so the "
                              "encoder takes at most 2^31 - 1 elements; split the input")
        check_tile("int32", block, items)
        self.n, self.block, self.items = n, block, items
        size = max(n, 1)
        self.values = cp.empty(size, dtype=cp.int32)
        self.starts = cp.empty(size, dtype=cp.int32)
        self.lengths = cp.empty(size, dtype=cp.int32)
        self.count = cp.zeros(1, dtype=cp.int32)
        self._flags = self._pos = None
        self._gr = self._rm = None          # 24's and 25's GraphCall, made at their first call
        self._fused = get_kernel(fused_spec(block, items))
        self._lengths = get_kernel(lengths_spec())
        from ...device import current
        self._len_grid = current().sms * 8

    def encode(self, x, variant: str = "fused", check: bool = True):
        """(values, lengths, count): the first count[0] entries of values and lengths are
        the runs of x, in order. Nothing waits for the host."""
        if check:
            check_input(x)
            if x.size > self.n:
                raise ConfigError(f"x has {x.size} elements; this encoder was made for at "
                                  f"most {self.n}")
            if variant not in ALL:
                raise ConfigError(f"unknown encoder {variant!r}; known: {', '.join(ALL)}")
        n = x.size
        if n == 0:
            self.count.fill(0)
            return self.values, self.lengths, self.count
        if variant == "room":
            self._room(x)
            return self.values, self.lengths, self.count
        if variant == "graph":
            self._graph(x)
            return self.values, self.lengths, self.count
        if variant == "lookahead":
            self._lookahead(x)
            return self.values, self.lengths, self.count
        if variant == "chunked":
            self._chunked(x)
            return self.values, self.lengths, self.count
        if variant == "bulk":
            self._bulk(x)
            return self.values, self.lengths, self.count
        if variant == "lean":
            self._lean(x)
            return self.values, self.lengths, self.count
        if variant == "masks":
            self._masks(x)
            return self.values, self.lengths, self.count
        if variant == "rounds":
            self._rounds(x)
            return self.values, self.lengths, self.count
        if variant == "reread":
            self._reread(x)
            return self.values, self.lengths, self.count
        if variant == "walk":
            self._walk(x)
            return self.values, self.lengths, self.count
        if variant == "ballot":
            self._ballot(x)
            return self.values, self.lengths, self.count
        if variant == "pipelined":
            self._pipelined(x)
        elif variant == "fused":
            tiles = -(-n // (self.block * self.items))
            counter, words, _, _, _, epoch = state().args(tiles, False)
            launch(self._fused, tiles, self.block,
                   (x, self.values, self.starts, self.count, np.int64(n), counter,
                    np.uint32(tiles), words, epoch))
        else:
            self._unfused(x)
        launch(self._lengths, self._len_grid, 256,
               (self.starts, self.count, self.lengths, np.int64(n)))
        return self.values, self.lengths, self.count

    def _pipelined(self, x) -> None:
        from ...device import current
        from ...kernels import blocks_per_sm
        from .ops import pipelined_smem
        n = x.size
        b, i, s = PIPELINED
        if getattr(self, "_pipe", None) is None:
            k = get_kernel(pipelined_spec())
            smem = pipelined_smem("int32", b, i, s)
            self._pipe = (k, smem, current().sms * max(1, blocks_per_sm(k, b, smem)))
        k, smem, grid = self._pipe
        tiles = -(-n // (b * i))
        counter, words, _, _, _, epoch = state().args(tiles, False)
        launch(k, min(tiles, grid), b,
               (x, self.values, self.starts, self.count, np.int64(n), counter,
                np.uint32(tiles), words, epoch), shared_mem=smem)

    def _lookahead(self, x, shape=None) -> None:
        """13: values and lengths in one pass, then rle_tails over the tiles. `shape`:
        (block, items, blocks per SM, pause ns), LOOKAHEAD by default, fixed at the first
        call."""
        import cupy as cp
        n = x.size
        if getattr(self, "_la", None) is None:
            b, i, m, d = shape or LOOKAHEAD
            k = get_kernel(lookahead_spec(b, i, m, d))
            k.preferred_shared_memory_carveout = 100
            size = max(1, -(-self.n // (b * i)))
            self._la = (k, get_kernel(tails_spec()), b, i, cp.empty(size, dtype=cp.int32),
                        cp.empty(size, dtype=cp.int32))
        k, k_tails, b, i, tail_pos, tail_start = self._la
        tiles = -(-n // (b * i))
        counter, words, _, _, _, epoch = state().args(tiles, False)
        launch(k, tiles, b + 32,
               (x, self.values, self.lengths, self.starts, tail_pos, tail_start,
                self.count, np.int64(n), counter, np.uint32(tiles), words, epoch),
               shared_mem=b * i * 4)
        launch(k_tails, max(1, min(-(-tiles // 256), 1024)), 256,
               (tail_pos, tail_start, self.starts, self.count, self.lengths,
                np.uint32(tiles), np.int64(n)))

    def _chunked(self, x, shape=None) -> None:
        """15: values and lengths in one persistent pass over chunks, then rle_tails over
        the chunks. `shape`: CHUNKED by default, fixed at the first call."""
        import cupy as cp
        from ...device import current
        from ...kernels import blocks_per_sm
        n = x.size
        if getattr(self, "_ch", None) is None:
            shape = tuple(shape or CHUNKED)
            w, v, bt, m = shape[:4]
            k = get_kernel(chunked_spec(shape))
            chunk = w * v * bt * 128
            size = max(1, -(-self.n // chunk))
            grid = current().sms * max(1, min(m, blocks_per_sm(k, (w + 1) * 32)))
            self._ch = (k, get_kernel(tails_spec()), chunk, (w + 1) * 32, grid, shape[6],
                        cp.empty(size, dtype=cp.int32), cp.empty(size, dtype=cp.int32))
        k, k_tails, chunk, threads, grid, tier, tail_pos, tail_start = self._ch
        chunks = -(-n // chunk)
        counter, words, _, _, _, epoch = state().args(status_words(chunks, tier), False)
        launch(k, min(chunks, grid), threads,
               (x, self.values, self.lengths, self.starts, tail_pos, tail_start,
                self.count, np.int64(n), counter, np.uint32(chunks), words, epoch))
        launch(k_tails, max(1, min(-(-chunks // 256), 1024)), 256,
               (tail_pos, tail_start, self.starts, self.count, self.lengths,
                np.uint32(chunks), np.int64(n)))

    def _bulk(self, x, shape=None, diag: int = 0) -> None:
        """17: values, lengths and the count in one pass. `shape`: BULK by default, fixed
        at the first call (and `diag`, a diagnostic that is not an encoder)."""
        if getattr(self, "_bk", None) is None:
            shape = tuple(shape or BULK)
            check_bulk_shape(shape)
            self._bk = self._one_pass(bulk_spec(shape, diag), bulk_smem(shape), shape, 1,
                                      "the bulk-copy encoder (17)")
        self._launch_one_pass(self._bk, x)

    def _lean(self, x, shape=None, diag: int = 0) -> None:
        """18: as _bulk, with shape[7] blocks an SM. `shape`: LEAN by default, fixed at the
        first call (and `diag`, a diagnostic that is not an encoder)."""
        if getattr(self, "_ln", None) is None:
            shape = tuple(shape or LEAN)
            check_lean_shape(shape)
            self._ln = self._one_pass(lean_spec(shape, diag), bulk_smem(shape[:7]), shape,
                                      shape[7], "the lean encoder (18)")
        self._launch_one_pass(self._ln, x)

    def _masks(self, x, shape=None, diag: int = 0) -> None:
        """19: as _lean, the heads found once. `shape`: MASKS by default, fixed at the
        first call (and `diag`, a diagnostic that is not an encoder)."""
        if getattr(self, "_mk", None) is None:
            shape = tuple(shape or MASKS)
            check_masks_shape(shape)
            self._mk = self._one_pass(masks_spec(shape, diag), masks_smem(shape), shape,
                                      shape[6], "the mask encoder (19)",
                                      threads=masks_threads(shape), tile=shape[0] * MASK_PIECE)
        self._launch_one_pass(self._mk, x)

    def _rounds(self, x, shape=None, diag: int = 0) -> None:
        """20: one cooperative launch, every block resident. `shape`: ROUNDS by default,
        fixed at the first call (and `diag`, a diagnostic that is not an encoder)."""
        if getattr(self, "_rd", None) is None:
            from ...device import current
            shape = tuple(shape or ROUNDS)
            check_rounds_shape(shape)
            if current().sms > ROUNDS_MAX_SMS:
                raise ConfigError(f"{current().sms} SMs: the rounds encoder's poller reads "
                                  f"the words of at most {ROUNDS_MAX_SMS} SMs' blocks a round")
            self._rd = self._one_pass(rounds_spec(shape, diag), rounds_smem(shape), shape,
                                      shape[5], "the rounds encoder (20)",
                                      threads=rounds_threads(shape), tile=shape[2] * 256,
                                      cooperative=True)
        self._launch_one_pass(self._rd, x)

    def _reread(self, x, shape=None, diag: int = 0) -> None:
        """21: as _rounds, each segment read twice. `shape`: REREAD by default, fixed at
        the first call (and `diag`, a diagnostic that is not an encoder)."""
        if getattr(self, "_rr", None) is None:
            shape = tuple(shape or REREAD)
            check_reread_shape(shape)
            self._rr = self._rounds_pass(reread_spec(shape, diag), reread_smem(shape), shape,
                                         "the re-read encoder (21)")
        self._launch_one_pass(self._rr, x)

    def _walk(self, x, shape=None, diag: int = 0) -> None:
        """22: as _reread, the heads left as masks for the writers. `shape`: WALK by
        default, fixed at the first call (and `diag`, a diagnostic that is not an
        encoder)."""
        if getattr(self, "_wk", None) is None:
            shape = tuple(shape or WALK)
            check_walk_shape(shape)
            self._wk = self._rounds_pass(walk_spec(shape, diag), reread_smem(shape, WALK_UNIT),
                                         shape, "the mask-walk encoder (22)")
        self._launch_one_pass(self._wk, x)

    def _ballot(self, x, shape=None, diag: int = 0) -> None:
        """23: one launch of persistent blocks (shape[4] an SM), tiles by ticket; any GPU
        of compute capability 8.0. `shape`: BALLOT by default, fixed at the first call (and
        `diag`, a diagnostic that is not an encoder)."""
        if getattr(self, "_bl", None) is None:
            shape = tuple(shape or BALLOT)
            check_ballot_shape(shape)
            self._bl = self._one_pass(ballot_spec(shape, diag), ballot_smem(shape), shape,
                                      shape[4], "the ballot encoder (23)",
                                      threads=ballot_threads(shape), tile=shape[0] * shape[1],
                                      bulk=False)
        self._launch_one_pass(self._bl, x)

    def _graph(self, x, shape=None, diag: int = 0, all_shared: bool = False) -> None:
        """24: 23 launched as a CUDA graph (GraphCall), its tile status and epoch word its
        own. `shape`: BALLOT by default, fixed at the first call (and `diag`, one of 23's
        diagnostics; `all_shared`: its SMs split with the least L1, an experiment's)."""
        if self._gr is None:
            self._gr = self._graph_call(graph_spec, ballot_smem, check_ballot_shape,
                                        shape or BALLOT, diag, all_shared,
                                        "the graph-launched encoder (24)")
        self._gr(x, self.values, self.lengths, self.count)

    def _room(self, x, shape=None, diag: int = 0, all_shared: bool = False) -> None:
        """25: 24 with 6 bytes a staged head (GraphCall), its tile
        status and epoch word its own. `shape`: ROOM by default, fixed at the first call
        (and `diag`, one of 23's diagnostics; `all_shared` as _graph's)."""
        if self._rm is None:
            self._rm = self._graph_call(room_spec, room_smem, check_room_shape,
                                        shape or ROOM, diag, all_shared,
                                        "the roomy encoder (25)")
        self._rm(x, self.values, self.lengths, self.count)

    def graph_call(self, mode: str):
        """The GraphCall of encoder `mode` ("graph", "room"), or None before its first
        call (or for an encoder that is not launched as a graph)."""
        return {"graph": self._gr, "room": self._rm}.get(mode)

    def _graph_call(self, spec, smem, check, shape, diag: int, all_shared: bool,
                    what: str) -> GraphCall:
        """The GraphCall of 24 or 25 (`spec`, `smem`, `check`: their KernelSpec, shared
        memory and shape check) at `shape`; with `all_shared`, its kernel (compiled apart)
        asks for the split of the SM's memory with the most shared memory and least L1."""
        shape = tuple(shape)
        check(shape)
        run, tile = self._one_pass(spec(shape, diag, all_shared), smem(shape), shape,
                                   shape[4], what, threads=ballot_threads(shape),
                                   tile=shape[0] * shape[1], bulk=False, kinds="ppppqpIppp")
        if all_shared:
            run.kernel.preferred_shared_memory_carveout = 100
        return GraphCall(run, tile)

    def _rounds_pass(self, spec, smem: int, shape, what: str) -> tuple:
        """The prepared cooperative launch of 21 or 22 (shape[4] blocks an SM)."""
        from ...device import current
        if current().sms > ROUNDS_MAX_SMS:
            raise ConfigError(f"{current().sms} SMs: {what}'s poller reads the words of at "
                              f"most {ROUNDS_MAX_SMS} SMs' blocks a round")
        return self._one_pass(spec, smem, shape, shape[4], what, threads=reread_threads(shape),
                              tile=shape[2] * 256, cooperative=True)

    @staticmethod
    def _one_pass(spec, smem: int, shape, blocks: int, what: str, threads=None,
                  tile=None, cooperative: bool = False, bulk: bool = True,
                  kinds: str = "ppppqpIppI") -> tuple:
        """(prepared launch, tile) of a one-pass encoder (17 … 24) with `blocks` blocks
        an SM (threads and tile: 17's and 18's by default; `kinds`: its arguments', the
        epoch last); ConfigError where they do not fit, or where `bulk` and the GPU has no
        bulk copies (17 … 22)."""
        from ...device import current
        from ...kernels import PreparedLaunch, blocks_per_sm
        from .ops import bulk_threads, require_bulk_copy
        if bulk:
            require_bulk_copy(what)
        k = get_kernel(spec)
        threads = threads or bulk_threads(shape)
        fit = blocks_per_sm(k, threads, smem)
        if fit < blocks:
            raise ConfigError(f"{what}, shape {shape}: {fit} of its {blocks} blocks an SM fit "
                              f"({k.num_regs} registers a thread, {smem} B of shared memory)")
        return (PreparedLaunch(k, current().sms * blocks, threads, kinds, smem,
                               cooperative=cooperative), tile or shape[2] * 256)

    def _launch_one_pass(self, cached, x) -> None:
        """One launch through its prepared argument buffer: the Python around a launch is
        part of every call's time, and these calls are tens of microseconds."""
        run, tile = cached
        n = x.size
        tiles = -(-n // tile)
        counter, lo, hi, epoch = state().split_args(tiles)
        run(min(tiles, run.grid), x, self.values, self.lengths, self.count, n, counter, tiles,
            lo, hi, epoch)

    def _unfused(self, x) -> None:
        import cupy as cp
        n = x.size
        if self._flags is None or self._flags.size < n:
            self._flags = cp.empty(self.n, dtype=cp.int32)
            self._pos = cp.empty(self.n, dtype=cp.int32)
        flags, pos = self._flags[:n], self._pos[:n]
        k_flags, k_scatter = (get_kernel(s) for s in unfused_specs())
        launch(k_flags, -(-n // (4 * 256)), 256, (x, flags, np.int64(n)))
        enqueue(flags, pos, inclusive=False)
        launch(k_scatter, -(-n // 256), 256,
               (x, flags, pos, self.values, self.starts, self.count, np.int64(n)))


def traffic_bytes(variant: str, n: int, runs: int) -> int:
    """Bytes each encoder moves by design (4-byte values, starts and lengths)."""
    out = 4 * runs + 4 * runs                    # values and starts written
    lengths = 4 * runs + 4 * runs                # starts read, lengths written
    if variant == "fused":
        return 4 * n + out + lengths
    if variant in ONE_PASS:                      # values, lengths in the pass
        return 4 * n + 8 * runs
    # flags: read x, write flags; scan: read and write; scatter: read x, flags, positions
    return (4 * n + 4 * n) + (8 * n) + 12 * n + out + lengths


def decode(values, lengths, n: int):
    """x from its runs: offsets = exclusive scan of the lengths, a mark at every run's
    first index (but the first run's), an inclusive scan of the marks gives each element
    its run, then a gather. `values` and `lengths` hold exactly the runs."""
    import cupy as cp
    runs = values.size
    if lengths.size != runs:
        raise ConfigError(f"{runs} values but {lengths.size} lengths")
    out = cp.empty(n, dtype=values.dtype)
    if n == 0:
        return out
    if runs == 0:
        raise ConfigError(f"no runs to decode into {n} elements")
    lengths = cp.ascontiguousarray(lengths, dtype=cp.int32)
    offsets = cp.empty_like(lengths)
    enqueue(lengths, offsets, inclusive=False)
    marks = cp.zeros(n, dtype=cp.int32)
    run = cp.empty_like(marks)
    k_mark, k_gather = (get_kernel(s) for s in decode_specs())
    if runs > 1:
        launch(k_mark, -(-(runs - 1) // 256), 256, (offsets, np.int64(runs), marks))
    enqueue(marks, run, inclusive=True)
    launch(k_gather, -(-n // 256), 256, (cp.ascontiguousarray(values), run, out, np.int64(n)))
    return out


def numpy_steps(x: np.ndarray) -> dict:
    """The encoder's steps on the CPU (NumPy), the chapter's reference: `flags` (1 where
    an element starts a run), `positions` (the exclusive scan of the flags: a run's slot
    in the output, read at its head), `heads` (each run's first index), `values` and
    `lengths` (the output). The run-length page draws its worked example from these."""
    x = np.asarray(x)
    n = x.size
    flags = np.ones(n, dtype=np.int64)
    if n:
        flags[1:] = x[1:] != x[:-1]
    positions = np.cumsum(flags) - flags
    heads = np.flatnonzero(flags)
    return {"flags": flags, "positions": positions, "heads": heads, "values": x[heads],
            "lengths": np.diff(np.append(heads, n)).astype(np.int64)}


def numpy_encode(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The CPU encoder (NumPy) that scan.rle times: (values, lengths), the same as
    `numpy_steps` gives (a test holds them equal) without the steps it does not need."""
    n = x.size
    if n == 0:
        return x[:0], np.zeros(0, dtype=np.int64)
    heads = np.flatnonzero(np.concatenate(([True], x[1:] != x[:-1])))
    return x[heads], np.diff(np.append(heads, n))


def reference(x):
    """(values, lengths) of `x` computed with CuPy (for checking the encoders): head flags,
    their CUB scan, a scatter of each head's index (non-heads to a spare slot)."""
    import cupy as cp
    n = x.size
    if n == 0:
        return x[:0], cp.zeros(0, dtype=cp.int64)
    head = cp.ones(n, dtype=cp.int64)
    head[1:] = (x[1:] != x[:-1])
    pos = cp.cumsum(head) - 1
    runs = int(pos[-1]) + 1
    starts = cp.empty(runs + 1, dtype=cp.int64)
    starts[cp.where(head == 1, pos, runs)] = cp.arange(n, dtype=cp.int64)
    starts[runs] = n
    return x[starts[:-1]], cp.diff(starts)


def make_runs(n: int, kind: str, rng):
    """An int32 input of n elements made of runs: "short" (lengths 1-15), "long"
    (100-10000), "mixed" (90 % short, 10 % long), "equal" (one run), "distinct" (n runs).
    Adjacent runs always differ."""
    import cupy as cp
    if kind == "equal":
        return cp.full(n, int(rng.integers(-2**31, 2**31 - 1)), dtype=cp.int32)
    if kind == "distinct":
        return (cp.arange(n, dtype=cp.int64) * 7919 + int(rng.integers(0, 2**31))
                ).astype(cp.int32)
    lo, hi = {"short": (1, 16), "long": (100, 10001), "mixed": (1, 16)}[kind]
    mean = (lo + hi) / 2 if kind != "mixed" else 0.9 * 8 + 0.1 * 5050
    m = int(n / mean * 1.2) + 16
    rs = cp.random.RandomState(int(rng.integers(0, 2**31)))
    lengths = rs.randint(lo, hi, m).astype(cp.int64)
    if kind == "mixed":
        long_ = rs.randint(100, 10001, m).astype(cp.int64)
        lengths = cp.where(rs.random_sample(m) < 0.1, long_, lengths)
    while int(lengths.sum()) < n:
        lengths = cp.concatenate((lengths, lengths))
    starts = cp.cumsum(lengths)[:-1]
    starts = starts[starts < n]
    marks = cp.zeros(n, dtype=cp.int32)
    marks[starts] = 1
    run = cp.cumsum(marks, dtype=cp.int64)
    # adjacent values differ: a running sum of nonzero steps, wrapped to int32
    steps = rs.randint(1, 1 << 20, starts.size + 1).astype(cp.int64)
    values = cp.cumsum(steps).astype(cp.int32)
    return values[run]
