"""Latency: one thread, dependent loads (kernels/02-memory/chase.cu, smem_chase.cu), and
the RTX 4000 Ada portfolio's probe that timed something else (seed_probe.cu, a name kept
because recorded rows hold its path).

A chain is a single cycle through `m` slots `slot_bytes` apart in a buffer of
`ws_bytes`: each slot holds the address of the next one. The host keeps the order, so it
can say where a walk of any length ends and what the addresses it visited add up to, and
the GPU's answer is checked against that before its time counts.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...correctness import Check
from ...errors import ConfigError
from ...kernels import KernelSpec, checked, get_kernel, launch
from . import CHAPTER

#: The load operators of loads.cuh, by the template value the kernels take.
OPS = {"plain": 0, "ca": 1, "cg": 2, "cv": 3, "nc": 4}
#: Bytes between slots of a random chain up to MAX_SLOTS slots: one 128-byte line each,
#: so the lines the walk touches are the whole buffer.
LINE = 128
MAX_SLOTS = 1 << 20
#: Where the cycle is short enough, it is walked once in full before the timed steps (so
#: they find the buffer wherever it settles, and the walk visits every slot): a random
#: chain always (at most MAX_SLOTS), a strided one over at most WARM_BYTES (past the L2 of
#: any current GPU) if that is at most MAX_WARM steps.
WARM_BYTES = 64 << 20
MAX_WARM = 1 << 24
STEPS = 8192


def chase_spec(op: str = "plain") -> KernelSpec:
    if op not in OPS:
        raise ConfigError(f"unknown load operator {op!r}; the kernels have {', '.join(OPS)}")
    return KernelSpec(f"{CHAPTER}/chase.cu", "chase", template=(OPS[op],))


def probe_spec(op: str, wait: bool) -> KernelSpec:
    return KernelSpec(f"{CHAPTER}/seed_probe.cu", "seed_probe", template=(OPS[op], wait))


def smem_chase_spec() -> KernelSpec:
    return KernelSpec(f"{CHAPTER}/smem_chase.cu", "smem_chase")


@dataclass
class Chain:
    """A cycle of `slots` slots laid out in a device buffer of 8-byte pointers, walked from
    its first slot. A random chain keeps its visiting order (`order`, element indices); a
    strided one visits slot k at element k · stride / 8 and needs no list."""
    buf: object            # cupy uint64 array of ws_bytes / 8 elements
    order: np.ndarray | None
    ws_bytes: int
    slot_bytes: int
    pattern: str
    slots: int = 0

    def __post_init__(self):
        if self.order is not None:
            self.slots = len(self.order)

    @property
    def base(self) -> int:
        return int(self.buf.data.ptr) if self.buf is not None else 0

    def at(self, pos) -> np.ndarray:
        """Element indices of the slots at walk positions `pos` (taken modulo the cycle)."""
        pos = np.asarray(pos, dtype=np.int64) % self.slots
        return self.order[pos] if self.order is not None else pos * (self.slot_bytes // 8)

    @property
    def start(self) -> int:
        return int(self.at(0))

    def expect(self, warm: int, steps: int) -> tuple[int, int]:
        """(last address, sum of the addresses visited, mod 2^64) of a walk that starts at
        the first slot and takes `warm` + `steps` steps."""
        idx = self.at(np.arange(1, warm + steps + 1)).astype(np.uint64)
        total = int((np.uint64(self.base) * np.uint64(len(idx))
                     + np.uint64(8) * idx.sum(dtype=np.uint64)))
        return self.base + 8 * int(self.at(warm + steps)), total % (1 << 64)


def slots_for(ws_bytes: int, stride: int | None = None) -> tuple[int, int]:
    """(slots, bytes between them) of a chain over `ws_bytes`: a random chain has one slot
    per 128-byte line (at most MAX_SLOTS, spread evenly); a strided chain, `stride` bytes."""
    if ws_bytes < LINE or ws_bytes % 8:
        raise ConfigError(f"a working set of {ws_bytes} bytes is too small or not a "
                          "multiple of 8 bytes (the chain holds 8-byte pointers)")
    if stride is None:
        m = min(ws_bytes // LINE, MAX_SLOTS)
        return m, (ws_bytes // m) // 8 * 8
    if stride % 8 or stride <= 0 or stride > ws_bytes // 2 or ws_bytes % stride:
        raise ConfigError(f"stride {stride} B must be a positive multiple of 8 bytes (one "
                          f"pointer) that divides the working set ({ws_bytes} B) at least twice")
    return ws_bytes // stride, stride


def make_chain(ws_bytes: int, *, stride: int | None = None, rng=None) -> Chain:
    """A random single cycle over the slots of `ws_bytes` (stride None), or the strided
    cycle 0 → stride → 2·stride → … → 0. Elements off the chain hold 0xFFFF…FF, not an
    address: a walk that left its chain would fault, not time something else."""
    import cupy as cp

    m, slot = slots_for(ws_bytes, stride)
    e = slot // 8
    buf = cp.full(ws_bytes // 8, 0xFFFFFFFFFFFFFFFF, dtype=cp.uint64)
    base = cp.uint64(buf.data.ptr)
    if stride is None:
        order = (rng or np.random.default_rng()).permutation(m).astype(np.int64) * e
        nxt = cp.asarray(np.roll(order, -1).astype(np.uint64))
        buf[cp.asarray(order)] = base + cp.uint64(8) * nxt
        return Chain(buf, order, ws_bytes, slot, "random")
    k = cp.arange(1, m + 1, dtype=cp.uint64)
    k[-1] = 0
    buf[::e] = base + cp.uint64(8 * e) * k
    return Chain(buf, None, ws_bytes, slot, "strided", slots=m)


def chain_holds_cycle(ch: Chain) -> bool:
    """The buffer on the GPU links every slot of the chain to the next one and the last
    back to the first: one cycle through all of them."""
    import cupy as cp

    base = cp.uint64(ch.base)
    if ch.order is None:
        e = ch.slot_bytes // 8
        k = cp.arange(1, ch.slots + 1, dtype=cp.uint64) % cp.uint64(ch.slots)
        return bool(cp.all(ch.buf[::e] == base + cp.uint64(8 * e) * k))
    if len(np.unique(ch.order)) != ch.slots:
        return False
    got = ch.buf[cp.asarray(ch.order)].get()
    want = np.uint64(ch.base) + np.uint64(8) * np.roll(ch.order, -1).astype(np.uint64)
    return bool(np.array_equal(got, want))


def warm_steps(ch: Chain) -> int:
    """A full lap first where the cycle is short enough (see WARM_BYTES); else 256 steps."""
    if ch.slots <= MAX_SLOTS or (ch.ws_bytes <= WARM_BYTES and ch.slots <= MAX_WARM):
        return ch.slots
    return 256


def flush_l2(dev) -> None:
    """Write a buffer of 4 × L2 so that no line of a chain stays in L2 from its set-up."""
    import cupy as cp

    junk = cp.empty(max(4 * int(dev.l2_bytes), 1 << 24) // 4, dtype=cp.uint32)
    junk.fill(1)
    del junk


def walk(ch: Chain, op: str = "plain", steps: int = STEPS, warm: int | None = None):
    """One launch of chase<op> over `ch`: (cycles per load, ns per load, Check)."""
    import cupy as cp

    k = get_kernel(chase_spec(op))
    warm = warm_steps(ch) if warm is None else warm
    out = cp.full(4, 0xFFFFFFFFFFFFFFFF, dtype=cp.uint64)
    first = ch.buf[ch.start:]                   # the first slot, as a pointer argument
    checked(lambda: launch(k, 1, 1, (first, np.int32(warm), np.int32(steps), out)),
            f"chase<{op}>")
    cyc, ns, last, total = (int(x) for x in out.get())
    want_last, want_sum = ch.expect(warm, steps)
    ok = last == want_last and total == want_sum
    return cyc / steps, ns / steps, Check(ok, 0.0 if ok else float("nan"), 0.0, 0 if ok else 1)


def smem_walk(n: int, steps: int = STEPS, rng=None):
    """The shared-memory chase over a random cycle of `n` 4-byte slots: (cycles per load,
    Check)."""
    import cupy as cp

    rng = rng or np.random.default_rng()
    order = rng.permutation(n).astype(np.int64)
    nxt = np.empty(n, dtype=np.uint32)
    nxt[order] = np.roll(order, -1)
    out = cp.full(3, 0xFFFFFFFFFFFFFFFF, dtype=cp.uint64)
    k = get_kernel(smem_chase_spec())
    checked(lambda: launch(k, 1, 256, (cp.asarray(nxt), np.int32(n), np.uint32(order[0]),
                                       np.int32(steps), out), shared_mem=4 * n),
            "smem_chase")
    cyc, last, total = (int(x) for x in out.get())
    pos = np.arange(n + 1, n + steps + 1) % n
    want_last, want_sum = int(order[(n + steps) % n]), int(order[pos].sum())
    ok = last == want_last and total == want_sum
    return cyc / steps, Check(ok, 0.0 if ok else float("nan"), 0.0, 0 if ok else 1)


def probe(buf, op: str, wait: bool, n: int = 1024, stride_words: int = LINE // 4):
    """The portfolio's probe: clock, one 4-byte load, clock, `n` times `stride_words` apart (at
    most what `buf` holds), run twice (the second run finds the lines the first brought
    in). Returns (mean cycles between the clock reads, Check: the loaded values' sum)."""
    import cupy as cp

    words = buf.view(cp.uint32)
    n = min(n, words.size // stride_words)
    k = get_kernel(probe_spec(op, wait))
    out = cp.zeros(2, dtype=cp.uint64)
    for _ in range(2):
        checked(lambda: launch(k, 1, 1, (words, np.int32(n), np.int32(stride_words), out)),
                f"seed_probe<{op},{wait}>")
    total, sink = (int(x) for x in out.get())
    idx = np.arange(n, dtype=np.int64) * stride_words
    want = int(words[cp.asarray(idx)].get().astype(np.int64).sum()) % (1 << 32)
    ok = sink % (1 << 32) == want
    return total / n, Check(ok, 0.0 if ok else float("nan"), 0.0, 0 if ok else 1)
