"""The memory chapter's experiments: latency by working set (the staircase), what each
load cache operator does, the RTX 4000 Ada portfolio's probe, shared-memory banks,
coalescing, and bytes in flight.

Every kernel is checked before its time counts: a chase must end where the host says a
walk of that length ends and visit the indices the host expects; a copy must equal its
source element for element; the bank kernel must return 16 · reps · word for every thread.
"""
from __future__ import annotations

import numpy as np

from ...correctness import Check, compare, poison
from ...device import clocks_now, current
from ...kernels import KernelSpec, blocks_per_sm, get_kernel, launch
from ...race import COPY_KEY, Entry
from ...race import run as run_race
from ...registry import experiment
from .. import machine
from . import CHAPTER
from .latency import (OPS, STEPS, chase_spec, chain_holds_cycle, flush_l2,
                      make_chain, probe, probe_spec, smem_chase_spec, smem_walk, walk,
                      warm_steps)

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


def staircase_sizes(lo: int = 2 * KiB, hi: int = 8 * GiB) -> tuple[int, ...]:
    """Powers of two from `lo` to `hi` with 1.5× and (from 8 MiB to 128 MiB, where the
    L2 and its two halves end) 1.25× and 1.75× points between."""
    out = []
    p = lo
    while p <= hi:
        out.append(p)
        fr = (1.25, 1.5, 1.75) if 8 * MiB <= p < 128 * MiB else (1.5,)
        out += [int(p * f) for f in fr if p * f <= hi]
        p *= 2
    return tuple(out)


STAIRCASE = staircase_sizes()
#: The reader plan's staircase: sizes in every plateau's window (L1 4–64 KiB, near L2
#: 1–8 MiB, far L2 28–40 MiB, HBM 256 MiB–1 GiB and 2–8 GiB) and around each place where
#: the staircase leaves a plateau on the reference GPU (L1 after 192 KiB, near L2 after
#: 16 MiB, HBM from 48–64 MiB): the figure keeps its steps, the page every plateau and
#: edge. Past 128 MiB a chain has 2^20 slots, each size seconds of walks: two of them.
READER_STAIRCASE = (4 * KiB, 16 * KiB, 64 * KiB, 128 * KiB, 192 * KiB, 256 * KiB, 1 * MiB,
                    4 * MiB, 8 * MiB, 16 * MiB, 20 * MiB, 24 * MiB, 28 * MiB, 32 * MiB,
                    40 * MiB, 48 * MiB, 56 * MiB, 64 * MiB, 1 * GiB, 8 * GiB)
#: The explorer's grid: working set × stride of a strided (not random) chase.
EXPLORE_SIZES = (16 * KiB, 128 * KiB, 1 * MiB, 16 * MiB, 48 * MiB, 256 * MiB, 1 * GiB,
                 4 * GiB)
EXPLORE_STRIDES = (8, 32, 128, 1 * KiB, 64 * KiB, 2 * MiB)
#: Operator working sets: one inside L1, one inside L2 only, one far past L2.
OPERATOR_SIZES = (16 * KiB, 4 * MiB, 1 * GiB)


def _chains(sizes, **kw):
    """A fresh chain for each working set that fits this GPU (a quarter of its memory at
    most), freed before the next is made."""
    import cupy as cp

    dev = current()
    for ws in sizes:
        if ws > dev.total_mem_bytes // 4:
            continue
        yield make_chain(ws, **kw)
        cp.get_default_memory_pool().free_all_blocks()


def _chase_row(ctx, ch, op, repeat=None, variant=None, extra=None):
    flush_l2(current())
    cyc, ns, chk = walk(ch, op)
    if not chain_holds_cycle(ch):
        chk = Check(False, float("nan"), 0.0, 1)
    params = {"bytes": ch.ws_bytes, "slot_bytes": ch.slot_bytes, "op": op, **(extra or {})}
    if repeat is not None:
        params["repeat"] = repeat
    metrics = {"slots": (ch.slots, "1"), "warm_steps": (warm_steps(ch), "1"),
               "steps": (STEPS, "1")}
    if chk.correct:
        metrics.update({"cycles": (cyc, "cycles"), "ns": (ns, "ns"),
                        "clock_ghz": (cyc / ns if ns else float("nan"), "GHz")})
    ctx.row(variant=variant or ch.pattern, params=params, metrics=metrics, check=chk,
            kernels=[chase_spec(op)], launch={"grid": 1, "block": 1})


@experiment("memory.latency", title="Latency staircase: a random chase, working set by working set",
            small={"sizes": (4 * KiB, 3 * MiB, 200 * MiB), "repeats": 1},
            kernels=lambda: [chase_spec("plain"), smem_chase_spec()],
            reader={"sizes": READER_STAIRCASE})
def latency(ctx, sizes=STAIRCASE, repeats=3):
    """One thread, STEPS dependent loads over a random single cycle of 128-byte slots
    (at most 2^20 slots, spread evenly past 128 MiB), after a full warm walk where the
    cycle is short enough to be reused. `repeats` launches per size give the spread. And
    the shared-memory chase over 1024 slots."""
    rng = np.random.default_rng()
    for ch in _chains(sizes, rng=rng):
        for r in range(repeats):
            _chase_row(ctx, ch, "plain", repeat=r)
    for r in range(repeats):
        cyc, chk = smem_walk(1024, rng=rng)
        ctx.row(variant="shared", params={"bytes": 4096, "slot_bytes": 4, "op": "ld.shared",
                                          "repeat": r},
                metrics={"cycles": (cyc, "cycles"), "steps": (STEPS, "1")} if chk.correct
                else {"steps": (STEPS, "1")},
                check=chk, kernels=[smem_chase_spec()], launch={"grid": 1, "block": 256})
    clk = clocks_now()
    if clk:
        ctx.row(variant="clocks", params={"bytes": 0, "slot_bytes": 0, "op": "-", "repeat": 0},
                metrics={k: (v, "MHz" if k.endswith("mhz") else "W") for k, v in clk.items()})


@experiment("memory.stride_chase", title="Latency by working set and stride (the explorer's grid)",
            small={"sizes": (16 * KiB, 1 * MiB), "strides": (8, 128)}, sweep=True,
            kernels=lambda: [chase_spec("plain")],
            # one working set per level (L1, near L2, past L2, HBM) at every stride: the
            # explorer's grid, a quarter of the chains (each one a full warm walk)
            reader={"sizes": (16 * KiB, 1 * MiB, 48 * MiB, 1 * GiB)})
def stride_chase(ctx, sizes=EXPLORE_SIZES, strides=EXPLORE_STRIDES):
    """The classic strided chase: slot i points to slot i + 1, `stride` bytes on; a
    stride under a line reuses each line stride/128 of the time, one over a page leaves
    every load to find its own page."""
    for ws in sizes:
        for s in strides:
            if s > ws // 2 or ws % s:
                continue
            for ch in _chains((ws,), stride=s):
                _chase_row(ctx, ch, "plain", extra={"stride": s})


@experiment("memory.operators", title="What each ld.global cache operator does",
            small={"sizes": (16 * KiB, 3 * MiB)},
            kernels=lambda: [chase_spec(o) for o in OPS]
            + [probe_spec(o, w) for o in OPS for w in (False, True)],
            # reader={}: three working sets, one per level, which the page's operator
            # table sets side by side; untimed chases, about 9 s on the reference GPU
            reader={})
def operators(ctx, sizes=OPERATOR_SIZES):
    """Every operator (plain, .ca, .cg, .cv, .nc) through the random chase at each working
    set; then the portfolio's probe (clock, one load, clock) with and without waiting for the
    value, on the same buffers."""
    dev = current()
    for ch in _chains(sizes, rng=np.random.default_rng()):
        for op in OPS:
            _chase_row(ctx, ch, op, variant="chase")
        for op in OPS:
            for wait in (False, True):
                flush_l2(dev)
                per_load, chk = probe(ch.buf, op, wait)
                ctx.row(variant="seed-probe",
                        params={"bytes": ch.ws_bytes, "slot_bytes": 128, "op": op, "wait": wait},
                        metrics={"cycles": (per_load, "cycles")} if chk.correct else {},
                        check=chk, kernels=[probe_spec(op, wait)],
                        launch={"grid": 1, "block": 1})


# ---- shared-memory banks -------------------------------------------------------------------

def banks_spec(pad: bool) -> KernelSpec:
    return KernelSpec(f"{CHAPTER}/smem_banks.cu", "smem_banks", template=(pad,))


def conflict_degree(stride: int, pad: bool, banks: int = 32) -> int:
    """Passes a warp needs when lane l reads word l·stride (plus one pad word per 32): the
    most distinct words that fall in one bank."""
    words = [l * stride for l in range(32)]
    if pad:
        words = [w + w // 32 for w in words]
    per_bank: dict[int, set] = {}
    for w in words:
        per_bank.setdefault(w % banks, set()).add(w)
    return max(len(s) for s in per_bank.values())


BANK_STRIDES = tuple(range(1, 33))
#: The reader plan's strides: every conflict degree (1, 2, 4, 8, 16, 32 ways), odd strides
#: (no conflict), and 31 and 32 that the page quotes padded and unpadded.
READER_BANK_STRIDES = (1, 2, 3, 4, 5, 8, 12, 16, 24, 31, 32)


@experiment("memory.banks", title="Shared-memory bandwidth by stride, with and without padding",
            small={"strides": (1, 2, 3, 32), "reps": 4},
            kernels=lambda: [banks_spec(False), banks_spec(True)],
            reader={"strides": READER_BANK_STRIDES})
def banks(ctx, strides=BANK_STRIDES, reps=256):
    """Lane l of every warp reads word l·stride, 16·reps times; the GPU full (every SM at
    its occupancy limit). Bytes = threads × 16·reps × 4 (what was asked for)."""
    import cupy as cp

    dev = current()
    block = 256
    for pad in (False, True):
        spec = banks_spec(pad)
        k = get_kernel(spec)
        per_sm = blocks_per_sm(k, block)
        grid = dev.sms * per_sm
        out = cp.empty(grid * block, dtype=cp.uint32)
        lane = np.arange(grid * block) % 32
        for s in strides:
            w = lane * s
            if pad:
                w = w + w // 32
            want = cp.asarray(((16 * reps * w) % (1 << 32)).astype(np.uint32))

            def call(s=s, k=k, grid=grid, out=out):
                launch(k, grid, block, (np.int32(s), np.int32(reps), out))

            def check(call=call, out=out, want=want):
                poison(out)
                call()
                ok = bool(cp.all(out == want))
                return Check(ok, 0.0 if ok else float("nan"), 0.0, 0 if ok else 1)
            nbytes = grid * block * 16 * reps * 4
            variant = "padded" if pad else "plain"
            run_race(ctx, [Entry(f"{variant}/stride{s}", call, check=check, variant=variant,
                                 params={"stride": s}, kernels=[spec], bytes=nbytes,
                                 metrics={"bytes_loaded": (nbytes, "B"),
                                          "predicted_degree": (conflict_degree(s, pad), "1")},
                                 launch={"grid": grid, "block": block, "blocks_per_sm": per_sm})],
                     budget_s=0.25, alone=True)
        out = None


# ---- coalescing and the streaming copy ---------------------------------------------------

def coalescing_specs() -> list[KernelSpec]:
    return [KernelSpec(f"{CHAPTER}/coalescing.cu", n)
            for n in ("copy_interleaved", "copy_runs", "copy_strided")]


def stream_spec(k: int, blocked: bool) -> KernelSpec:
    return KernelSpec(f"{CHAPTER}/stream.cu", "stream_copy", template=(k, blocked))


STREAM_K = (1, 2, 4, 8)
LAYOUTS = {False: "grid-strided", True: "blocked"}
#: Streaming configurations raced against the copy ceiling: (K, threads per block,
#: blocks per SM), each in both layouts.
STREAM_CONFIGS = ((4, 512, 4), (8, 256, 4), (8, 512, 2), (4, 1024, 2), (2, 1024, 2))


def _stream_specs():
    return [stream_spec(k, b) for k in STREAM_K for b in LAYOUTS]
STRIDES = (1, 2, 4, 8, 16, 32)


def _baselines(src, dst):
    """The copy ceiling's two library paths over the same bytes."""
    import cupy as cp
    return {"cudaMemcpy": lambda: dst.data.copy_from_device(src.data, src.nbytes),
            "cupy copyto": lambda: cp.copyto(dst, src)}


def resident(k: int, blocked: bool, threads: int, per_sm: int) -> bool:
    """Whether `per_sm` blocks of `threads` threads of stream_copy<k> fit on one SM at once
    (registers and threads), so that the warps counted are the warps in flight."""
    return blocks_per_sm(get_kernel(stream_spec(k, blocked)), threads) >= per_sm


def _stream_call(dev, src, dst, k, blocked, threads, per_sm):
    kern = get_kernel(stream_spec(k, blocked))
    grid = dev.sms * per_sm
    n4 = src.nbytes // 16
    return (lambda: launch(kern, grid, threads, (src, dst, np.int64(n4), np.int32(0)))), \
        {"grid": grid, "block": threads, "blocks_per_sm": per_sm}


#: the library copies of every copy race: the faster of them is the ceiling (× copy)
COPIES = ("cudaMemcpy", "cupy copyto")


def race(ctx, calls, src, dst, params_of, kernels_of, launch_of, budget_s):
    """Every copy of `calls` checked element for element against `src` (output poisoned
    first), then the correct ones raced (about `budget_s` seconds in all), the library
    copies (COPIES) the baseline: one row each, with its ratio to the faster of them,
    round by round (of_copy). Bytes moved = 2 × src.nbytes. Returns name -> row."""
    def exact(fn):
        def check():
            poison(dst)
            fn()
            return compare(dst, src, "exact")
        return check
    entries = [Entry(k, fn, check=exact(fn), params=params_of(k), kernels=kernels_of(k),
                     launch=launch_of(k), bytes=2 * src.nbytes,
                     baseline=COPY_KEY if k in COPIES else None, self_ratio=k in COPIES)
               for k, fn in calls.items()]
    return run_race(ctx, entries, budget_s=budget_s, rounds=None)


@experiment("memory.coalescing", title="Coalescing: the portfolio's pair, a stride sweep, the best streaming copy",
            small={"n": 1000003, "stride_n": 100003, "big": 1 << 22},
            kernels=lambda: coalescing_specs() + _stream_specs() + [machine.copy_spec()],
            reader={"budget_s": 2.5})     # every row; the two races a quarter as long
def coalescing(ctx, n=1 << 26, stride_n=1 << 24, big=1 << 30, budget_s=10.0):
    """(1) The portfolio's pair: `n` floats copied by the same threads, interleaved or in runs,
    raced against cudaMemcpy of the same bytes. (2) out[i] = in[i·stride] for `stride_n`
    outputs. (3) Streaming copies of `big` bytes against the copy ceiling, interleaved.
    The two races share `budget_s` seconds of timing, 2 : 3."""
    import cupy as cp

    dev = current()
    specs = {s.name: s for s in coalescing_specs()}
    kin, kruns, kstr = (get_kernel(specs[n_]) for n_ in ("copy_interleaved", "copy_runs",
                                                         "copy_strided"))
    # (1) the pair
    src = cp.random.random(n, dtype=cp.float32)
    dst = cp.empty_like(src)
    block = 256
    grid = dev.sms * 8
    run = -(-n // (grid * block))
    calls = {"interleaved": lambda: launch(kin, grid, block, (src, dst, np.int64(n))),
             "per-thread runs": lambda: launch(kruns, grid, block,
                                               (src, dst, np.int64(n), np.int64(run))),
             **_baselines(src, dst)}
    spec_of = {"interleaved": [specs["copy_interleaved"]], "per-thread runs": [specs["copy_runs"]]}
    race(ctx, calls, src, dst,
         lambda k: {"part": "pair", "bytes": int(src.nbytes), "stride": 1},
         lambda k: spec_of.get(k, []),
         lambda k: {"grid": grid, "block": block, "run": run} if k in spec_of else {},
         budget_s=0.4 * budget_s)
    src = dst = None
    # (2) strides
    for s in STRIDES:
        src = cp.random.random(stride_n * s, dtype=cp.float32)
        dst = cp.empty(stride_n, dtype=cp.float32)
        g = -(-stride_n // block)

        def call(src=src, dst=dst, s=s, g=g):
            launch(kstr, g, block, (src, dst, np.int64(stride_n), np.int32(s)))

        def check(call=call, src=src, dst=dst, s=s):
            poison(dst)
            call()
            return compare(dst, src[::s][:stride_n], "exact")
        useful = 8 * stride_n
        run_race(ctx, [Entry(f"strided/{s}", call, check=check, variant="strided",
                             params={"part": "stride", "bytes": useful // 2, "stride": s},
                             kernels=[specs["copy_strided"]], bytes=useful,
                             metrics={"predicted_fetch_per_useful": ((4 * min(s, 8) + 4) / 8, "1")},
                             launch={"grid": g, "block": block})],
                 alone=True)
        src = dst = None
        cp.get_default_memory_pool().free_all_blocks()
    # (3) the streaming copy against the ceiling
    src = cp.random.random(big // 4, dtype=cp.float32)
    dst = cp.empty_like(src)
    calls, launches, kspec = dict(_baselines(src, dst)), {}, {}
    for blocked, layout in LAYOUTS.items():
        for k, threads, per_sm in STREAM_CONFIGS:
            if not resident(k, blocked, threads, per_sm):
                continue
            name = f"{layout} K={k} {threads}x{per_sm}"
            calls[name], launches[name] = _stream_call(dev, src, dst, k, blocked, threads,
                                                       per_sm)
            kspec[name] = [stream_spec(k, blocked)]
    # the machine chapter's copy kernel: one trip per thread, 4 vectors, blocks in order
    c0 = get_kernel(machine.copy_spec())
    n4, u = src.nbytes // 16, machine.copy_spec().template[0]
    g0 = -(-n4 // (256 * u))
    calls["chapter 0 copy_vec4"] = lambda: launch(c0, g0, 256, (src, dst, np.int64(n4)))
    launches["chapter 0 copy_vec4"], kspec["chapter 0 copy_vec4"] = \
        {"grid": g0, "block": 256}, [machine.copy_spec()]
    race(ctx, calls, src, dst,
         lambda k: {"part": "stream", "bytes": int(src.nbytes), "stride": 1},
         lambda k: kspec.get(k, []), lambda k: launches.get(k, {}), budget_s=0.6 * budget_s)


#: Little's law: resident warps per SM × independent 16-byte loads per thread.
WARPS_PER_SM = (1, 2, 4, 8, 16, 32, 64)


def inflight_launch(warps: int) -> tuple[int, int]:
    """(threads per block, blocks per SM) that make `warps` resident warps per SM."""
    return (warps * 32, 1) if warps <= 32 else (1024, warps // 32)


@experiment("memory.inflight", title="Little's law: copy bandwidth against bytes in flight",
            small={"nbytes": 1 << 22, "warps": (1, 64), "ks": (1, 8)},
            kernels=_stream_specs,
            # every configuration (the figure's curve; the images chapter reads 4-32 KB in
            # flight from it), raced for 3 s instead of 12
            reader={"budget_s": 3.0})
def inflight(ctx, nbytes=1 << 28, warps=WARPS_PER_SM, ks=STREAM_K, budget_s=12.0):
    """stream_copy<K> with one grid of `warps` resident warps on every SM, in both layouts:
    reads in flight per SM = warps × 32 × K × 16 bytes. All configurations and cudaMemcpy
    interleaved, for about `budget_s` seconds in all."""
    import cupy as cp

    dev = current()
    src = cp.random.random(nbytes // 4, dtype=cp.float32)
    dst = cp.empty_like(src)
    calls, launches, kspec, params = dict(_baselines(src, dst)), {}, {}, {}
    for blocked, layout in LAYOUTS.items():
        for w in warps:
            threads, per_sm = inflight_launch(w)
            for k in ks:
                if not resident(k, blocked, threads, per_sm):   # K=8 at 64 warps: registers
                    continue
                name = f"{layout} w={w} K={k}"
                calls[name], launches[name] = _stream_call(dev, src, dst, k, blocked,
                                                           threads, per_sm)
                kspec[name] = [stream_spec(k, blocked)]
                params[name] = {"layout": layout, "warps_per_sm": w, "K": k,
                                "inflight_per_sm": w * 32 * k * 16, "bytes": int(src.nbytes)}
    race(ctx, calls, src, dst,
         lambda k: params.get(k, {"layout": "library", "warps_per_sm": 0, "K": 0,
                                  "inflight_per_sm": 0, "bytes": int(src.nbytes)}),
         lambda k: kspec.get(k, []), lambda k: launches.get(k, {}), budget_s=budget_s)
