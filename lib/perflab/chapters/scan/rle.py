"""Run-length encoding on the scan, and its decoder.
    enc = Encoder(n)                         # buffers for inputs of up to n int32
    values, lengths, count = enc.encode(x)   # on the GPU; count is a 1-element array
    y = decode(values[:r], lengths[:r], n)   # r = int(count[0]); y == x exactly

VARIANTS: "unfused" (04), "fused" (05), "bulk" (17, 9.0+) and "room" (25, 8.0+). Runs are
maximal; positions and lengths are int32 (n < 2^31)."""
from __future__ import annotations

import numpy as np

from ... import device
from ...errors import ConfigError, require
from ...kernels import (GraphLaunch, KernelSpec, PreparedLaunch, blocks_per_sm, capturing,
                        get_kernel, launch)
from . import CHAPTER
from .ops import (DEFAULT_BLOCK, EPOCH_LIMIT, LookbackState, bulk_threads, check_array,
                  check_bulk, check_tile, enqueue, require_bulk_copy, single_pass_spec, state)

VARIANTS = ("unfused", "fused", "bulk", "room")
#: the encoders that need compute capability 9.0 (bulk copies)
SM90 = ("bulk",)
#: the encoders whose one pass writes values and lengths (4n read, 8 bytes a run written)
ONE_PASS = ("bulk", "room")
#: 17_rle_bulk.cu: ops.BULK's shape, and the elements a lane takes a step (4, 8 or 16)
BULK = (16, 4, 32, 6, 4, 128, 8)
#: the shapes scan.rle_bulk compares
BULK_SHAPES = ((16, 4, 32, 6, 4, 128, 4), (16, 4, 32, 6, 4, 128, 8), (16, 4, 32, 5, 4, 128, 16),
               (8, 4, 32, 6, 4, 128, 8), (16, 4, 16, 12, 4, 128, 8), (16, 8, 32, 6, 4, 128, 8),
               (16, 2, 32, 6, 4, 128, 8), (16, 4, 32, 6, 8, 128, 8), (16, 4, 32, 6, 4, 32, 8))
#: 23's and 24's shape (ballot.cuh): (walker warps, a walker's piece, chunks of 32 in
#: flight a lane, heads a walker stages, blocks an SM, look-back width, sequencer tiles a lane)
BALLOT = (8, 2048, 16, 384, 3, 1, 2)
BALLOT_STAGES = 3           # ballot.cuh's STAGES (a test holds them equal)
#: 25_rle_room.cu: BALLOT's form, 6 bytes a staged head
ROOM = (8, 2048, 16, 288, 3, 1, 2)
#: the bytes a staged head takes: 6 in 25 (a 16-bit index), 8 in 24 (a 4-byte one)
HEAD_BYTES = (6, 8)
BULK_HALO = 16
MAX_N = (1 << 31) - 1
DEFAULT_ITEMS = 16          # the encoder keeps flags and positions too: 16 items a thread


def default_variant() -> str:
    """The fastest encoder this GPU runs: "room" (25, compute capability 8.0+), else "fused"."""
    return "room" if int(device.current().compute_capability.split(".")[0]) >= 8 else "fused"


def fused_spec(block=DEFAULT_BLOCK, items=DEFAULT_ITEMS) -> KernelSpec:
    return KernelSpec(f"{CHAPTER}/05_rle_fused.cu", "rle_encode_fused",
                      template=("int", block, items))


def bulk_spec(shape=None) -> KernelSpec:
    sc, rd, kib, st, wd, d, e = shape or BULK
    return KernelSpec(f"{CHAPTER}/17_rle_bulk.cu", "rle_encode_bulk",
                      template=(sc, rd, kib * 1024, st, wd, d, e))


#: 24's and 25's `all_shared` build: its launches take the split with the least L1
ALL_SHARED = ("-DPERFLAB_ALL_SHARED=1",)


def graph_spec(shape=None, all_shared: bool = False) -> KernelSpec:
    """24 (graph.cuh), compiled from 25's file."""
    return KernelSpec(f"{CHAPTER}/25_rle_room.cu", "rle_encode_graph",
                      template=tuple(shape or BALLOT), options=ALL_SHARED if all_shared else ())


def room_spec(shape=None, all_shared: bool = False) -> KernelSpec:
    return KernelSpec(f"{CHAPTER}/25_rle_room.cu", "rle_encode_room",
                      template=tuple(shape or ROOM), options=ALL_SHARED if all_shared else ())


class GraphCall:
    """A graph-launched encoder's calls (24, 25): its graphs (one an input array and size),
    its tile status and its last input: a call on that same array only counts its epoch
    and launches its graph."""

    def __init__(self, run, tile: int, build=None, state=None):
        self.graphs, self.tile = GraphLaunch(run, build=build), tile
        self.state = state if state is not None else LookbackState()
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
        counter, lo, hi, word = st.graph_args(tiles)
        key = (x.data.ptr, n, st.generation)
        self.graphs(key, min(tiles, self.graphs.grid), x, values, lengths, count, n,
                    counter, tiles, lo, hi, word)
        g = self.graphs.get(key)
        self._last = (x, g) if g is not None else (None, None)


def ballot_smem(shape, head_bytes: int = 8) -> int:
    """23's dynamic shared memory: BALLOT_STAGES stages of each walker's staged heads."""
    return BALLOT_STAGES * shape[0] * shape[3] * head_bytes


def room_smem(shape) -> int:
    return ballot_smem(shape, 6)


def ballot_threads(shape) -> int:
    """23's threads: the walkers, the look-back warp, the sequencer's (if any)."""
    return (shape[0] + 1 + (shape[6] > 0)) * 32


def check_ballot_shape(shape, smem=ballot_smem) -> None:
    """ConfigError, naming the rule, for a shape of 23 or 24 (25: `smem`=room_smem)."""
    require(len(shape) == 7, f"ballot encoder shape {shape}: (walker warps, piece, chunks in "
            "flight, staged heads a walker, blocks an SM, look-back width, sequencer tiles a lane)")
    w, piece, batch, cap, mb, width, seq = shape
    require(width in (1, 2, 4, 8), f"look-back width {width}: 1, 2, 4 or 8 predecessors a lane")
    require(seq in (0, 1, 2, 4), f"sequencer {seq}: 0 (look-backs) or 1, 2, 4 tiles a lane")
    require(1 <= w and ballot_threads(shape) <= 1024, f"{w} walker warps a block: 1 to 31 "
            "walker warps, at most 32 warps with the look-back warp and the sequencer's")
    require(batch >= 1 and piece % (32 * batch) == 0 and 32 <= piece <= 65536,
            f"pieces of {piece} elements: whole batches of {batch} chunks of 32, at most 65536")
    require(cap % 32 == 0 and 32 <= cap <= piece,
            f"{cap} staged heads: a multiple of 32, from 32 to the piece ({piece})")
    smem = smem(shape)
    warps = ballot_threads(shape) // 32
    require(1 <= mb <= 32 and mb * (smem + 1024) <= 228 * 1024 and mb * warps <= 64,
            f"{mb} blocks an SM of {warps} warps and {smem} B of shared memory: at most 64 "
            "warps and 228 KiB an SM")


def staging_bytes(shape) -> int:
    """17's staging: a step's values and lengths (2 x 32 x E int32) a scanner."""
    return shape[0] * 2 * 32 * shape[6] * 4


def bulk_smem(shape) -> int:
    """17's dynamic shared memory: the ring (a halo before each tile) and the staging."""
    return shape[3] * (shape[2] * 1024 + BULK_HALO) + staging_bytes(shape)


def check_bulk_shape(shape) -> None:
    """ConfigError, naming the rule, for a shape of 17 that cannot be built."""
    require(len(shape) == 7, f"bulk encoder shape {shape}: (scanners, reducers, tile KiB, "
            "stages, sequencer width, pause ns, elements a lane)")
    sc, kib, e = shape[0], shape[2], shape[6]
    check_bulk("int32", shape[:6], BULK_HALO, staging_bytes(shape))
    require(e in (4, 8, 16) and kib * 256 // sc % (32 * e) == 0, f"{e} elements a lane: 4, 8 "
            f"or 16, and each scanner's piece ({kib * 256 // sc} elements) whole steps of 32 x {e}")


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
    return ([fused_spec()] + unfused_specs() + [lengths_spec()] + decode_specs()
            + [single_pass_spec("int32", inclusive=False), single_pass_spec("int32")])


def check_size(n: int) -> None:
    require(n <= MAX_N, f"n={n}: run positions and lengths are int32 here, so the encoder "
            "takes at most 2^31 - 1 elements; split the input")


class Encoder:
    """Output buffers (worst case: n runs) for encoding inputs of up to `n` int32."""

    def __init__(self, n: int, block: int = DEFAULT_BLOCK, items: int = DEFAULT_ITEMS):
        import cupy as cp
        check_size(n)
        check_tile("int32", block, items)
        self.n, self.block, self.items = n, block, items
        size = max(n, 1)
        self.values, self.starts, self.lengths = (cp.empty(size, dtype=cp.int32) for _ in range(3))
        self.count = cp.zeros(1, dtype=cp.int32)
        self._flags = self._pos = None
        self._prepared = {}                 # (variant, head bytes) -> its launch, made once
        self._fused = get_kernel(fused_spec(block, items))
        self._lengths = get_kernel(lengths_spec())
        self._len_grid = device.current().sms * 8

    def poison(self) -> None:
        """Fill the outputs with values no encoder writes."""
        self.values.fill(np.iinfo(np.int32).min)
        self.lengths.fill(-1)
        self.count.fill(-1)

    def encode(self, x, variant: str | None = None, check: bool = True, *, shape=None,
               all_shared: bool = False, head_bytes: int = 6):
        """(values, lengths, count): the first count[0] entries are the runs of x; nothing
        waits for the host. `variant`: one of VARIANTS, by default the fastest this GPU runs
        (`default_variant`). `shape`, `all_shared`, `head_bytes` (8: 24) fix a one-pass
        encoder at its first call; check=False skips the argument checks."""
        variant = default_variant() if variant is None else variant
        if check:
            check_array(x, "x", dtypes=("int32",))
            check_size(x.size)
            require(x.size <= self.n,
                    f"x has {x.size} elements; this encoder was made for at most {self.n}")
            require(variant in VARIANTS,
                    f"unknown encoder {variant!r}; known: {', '.join(VARIANTS)}")
            require(head_bytes in HEAD_BYTES and (head_bytes == 6 or variant == "room"),
                    f"head_bytes={head_bytes}: 6 or 8, and only for 'room'")
        n = x.size
        if n == 0:
            self.count.fill(0)
            return self.values, self.lengths, self.count
        if variant in ONE_PASS:
            key = (variant, head_bytes)
            if key not in self._prepared:
                self._prepared[key] = self._prepare(variant, shape, all_shared, head_bytes)
            run = self._prepared[key]
            if variant == "bulk":       # through its prepared argument buffer: the Python
                run, tile = run         # around a launch is part of every call's time
                tiles = -(-n // tile)
                counter, lo, hi, epoch = state().split_args(tiles)
                run(min(tiles, run.grid), x, self.values, self.lengths, self.count, n,
                    counter, tiles, lo, hi, epoch)
            else:
                run(x, self.values, self.lengths, self.count)
            return self.values, self.lengths, self.count
        if variant == "fused":
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

    def _prepare(self, variant, shape, all_shared, head_bytes):
        """17's PreparedLaunch and tile, or 24's and 25's GraphCall (ConfigError: no fit)."""
        if variant == "bulk":
            shape = tuple(shape or BULK)
            check_bulk_shape(shape)
            what, kinds = "the bulk-copy encoder (17)", "ppppqpIppI"
            require_bulk_copy(what)
            spec, smem, blocks, threads = (bulk_spec(shape), bulk_smem(shape), 1,
                                           bulk_threads(shape))
        else:
            room = head_bytes == 6
            shape = tuple(shape or (ROOM if room else BALLOT))
            check_ballot_shape(shape, room_smem if room else ballot_smem)
            what = "the roomy encoder (25)" if room else "the graph-launched encoder (24)"
            kinds = "ppppqpIppp"
            spec = (room_spec if room else graph_spec)(shape, all_shared)
            smem, blocks, threads = ballot_smem(shape, head_bytes), shape[4], ballot_threads(shape)
        k = get_kernel(spec)
        fit = blocks_per_sm(k, threads, smem)
        if fit < blocks:
            raise ConfigError(f"{what}, shape {shape}: {fit} of its {blocks} blocks an SM fit "
                              f"({k.num_regs} registers a thread, {smem} B of shared memory)")
        run = PreparedLaunch(k, device.current().sms * blocks, threads, kinds, smem)
        if variant == "bulk":
            return run, shape[2] * 256
        if all_shared:
            run.kernel.preferred_shared_memory_carveout = 100
        return GraphCall(run, shape[0] * shape[1])

    def graph_call(self, head_bytes: int = 6):
        """The GraphCall of "room" (24's: head_bytes=8), or None before its first call."""
        return self._prepared.get(("room", head_bytes))

    def _unfused(self, x) -> None:
        import cupy as cp
        n = x.size
        if self._flags is None or self._flags.size < n:
            self._flags, self._pos = (cp.empty(self.n, dtype=cp.int32) for _ in range(2))
        flags, pos = self._flags[:n], self._pos[:n]
        k_flags, k_scatter = (get_kernel(s) for s in unfused_specs())
        launch(k_flags, -(-n // (4 * 256)), 256, (x, flags, np.int64(n)))
        enqueue(flags, pos, inclusive=False)
        launch(k_scatter, -(-n // 256), 256,
               (x, flags, pos, self.values, self.starts, self.count, np.int64(n)))


def traffic_bytes(variant: str, n: int, runs: int) -> int:
    """Bytes each encoder moves by design (4-byte values, starts and lengths)."""
    out = lengths = 8 * runs        # values and starts written; starts read, lengths written
    if variant == "fused":
        return 4 * n + out + lengths
    if variant in ONE_PASS:                      # values, lengths in the pass
        return 4 * n + 8 * runs
    # flags: read x, write flags; scan: read and write; scatter: read x, flags, positions
    return (4 * n + 4 * n) + (8 * n) + 12 * n + out + lengths


def decode(values, lengths, n: int):
    """x from exactly its runs: the lengths' exclusive scan, marks, their scan, a gather."""
    import cupy as cp
    runs = values.size
    require(lengths.size == runs, f"{runs} values but {lengths.size} lengths")
    out = cp.empty(n, dtype=values.dtype)
    if n == 0:
        return out
    require(runs != 0, f"no runs to decode into {n} elements")
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
    """The encoder's steps in NumPy: `flags`, `positions`, `heads`, `values`, `lengths`."""
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
    """The CPU encoder scan.rle times: `numpy_steps`'s (values, lengths), nothing else."""
    n = x.size
    if n == 0:
        return x[:0], np.zeros(0, dtype=np.int64)
    heads = np.flatnonzero(np.concatenate(([True], x[1:] != x[:-1])))
    return x[heads], np.diff(np.append(heads, n))


def reference(x):
    """(values, lengths) of `x` with CuPy, the encoders' check."""
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
    """n int32 in runs: "short" (1-15), "long" (100-10000), "mixed", "equal", "distinct"."""
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
