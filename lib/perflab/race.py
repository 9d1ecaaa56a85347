"""A race: contestants and their baselines declared once, each checked before it is timed,
all timed interleaved in rounds under one sizing policy, and one row each, named one way.

    entries = [
        race.Entry("tiled", lambda a, b: tiled(a, b), sets, check=lambda: check(out, x),
                   kernels=[spec], bytes=8 * n),
        race.copy_of(sets),                                      # baseline "copy": of_copy
        race.Entry("torch.cumsum", tcum, sets, check=..., baseline="x_torch"),
    ]
    rows = race.run(ctx, entries, params={"n": n, "dtype": "int32"})

The rows' metrics:
- the times of the interleaved rounds: median_ms, p20_ms, p80_ms, min_ms, n_timed;
- "GB/s" and "TB/s" from the entry's declared `bytes` (the useful bytes of one call), and
  "TFLOP/s" from its declared `flops`: the core derives rates, a chapter never does;
- for every baseline B of the race (an entry with `baseline`, its key), the ratio B's
  time / this entry's time round by round: `<key>` (the median over the rounds),
  `<key>_min`, `<key>_max`, unit "1". The copy's key is "of_copy" (a fraction of the
  copy's speed), a vendor's "x_<vendor>" (how many times as fast as it).

An entry whose check fails is written with its check and never timed. `ctx.timing` False
(the correctness pass): every entry is checked and nothing is timed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .correctness import Check
from .kernels import capture_launches, checked
from .timing import ratio

#: the copy baseline's ratio key: a fraction of the copy's speed, in the same rounds
COPY_KEY = "of_copy"


@dataclass
class Entry:
    """One contestant (or baseline) of a race.

    `call(*args)` enqueues one call; `sets` are the argument tuples it is timed over,
    rotated (inputs that do not all fit in L2); `check()` runs it once into poisoned
    outputs and returns its Check (None: nothing to check, e.g. a ceiling that writes
    nothing); `params`, `kernels`, `extra` go into its row; `metrics` are fixed metrics of
    its row ({name: (value, unit)}, or a function returning them, called after every
    check has run); `bytes` and `flops`: one call's useful bytes and floating-point
    operations (the rates' numerators); `baseline`: the key of this entry's ratios when it
    is a baseline of the race; `row`: False for an entry timed only to be a baseline."""
    name: str
    call: Callable
    sets: list = field(default_factory=lambda: [()])
    check: Callable[[], Check] | None = None
    params: dict = field(default_factory=dict)
    kernels: list = field(default_factory=list)
    metrics: dict | Callable[[], dict] = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    bytes: int | None = None
    flops: int | None = None
    baseline: str | None = None
    row: bool = True


def copy_of(sets, nbytes: int | None = None, row: bool = True, name: str = "copy") -> Entry:
    """The copy of the input's bytes (cudaMemcpy device to device) as the baseline
    "of_copy": `sets` as the contestants', each (src, dst, ...); the copy moves src into
    dst (`nbytes` of it: all of src by default) and is checked exactly."""
    def call(src, dst, *rest):
        dst.data.copy_from_device(src.data, nbytes or src.nbytes)

    def check():
        from .correctness import compare, poison
        src, dst = sets[0][0], sets[0][1]
        poison(dst)
        call(src, dst)
        n = (nbytes or src.nbytes) // src.itemsize
        return compare(dst.ravel()[:n], src.ravel()[:n], "exact")
    src = sets[0][0]
    return Entry(name, call, sets, check=check, bytes=2 * (nbytes or src.nbytes),
                 baseline=COPY_KEY, row=row)


def metrics_of(t: dict, entry: Entry, res: dict, baselines: list[Entry]) -> dict:
    """An entry's timed metrics from the interleaved result `res` (its times `t`)."""
    m = {k: (t[k], "ms") for k in ("median_ms", "p20_ms", "p80_ms", "min_ms")}
    m["n_timed"] = (t["n_timed"], "1")
    if entry.bytes:
        rate = entry.bytes / (t["median_ms"] * 1e-3)
        m["GB/s"] = (rate / 1e9, "GB/s")
        m["TB/s"] = (rate / 1e12, "TB/s")
    if entry.flops:
        m["TFLOP/s"] = (entry.flops / (t["median_ms"] * 1e-3) / 1e12, "TFLOP/s")
    for b in baselines:
        if b.name != entry.name and b.name in res:
            r = ratio(res, b.name, entry.name)
            m[b.baseline] = (r["ratio"], "1")
            m[b.baseline + "_min"] = (r["ratio_min"], "1")
            m[b.baseline + "_max"] = (r["ratio_max"], "1")
    return m


def run(ctx, entries: list[Entry], *, params: dict | None = None,
        budget_s: float | None = None, rounds: int = 9, **row_extra) -> dict:
    """Check every entry (in order: a later check may use what an earlier one left), time
    the correct ones interleaved with `ctx.time_interleaved`, and write one row each (but
    entries with row=False). `params` and `row_extra` go into every row. Returns
    name -> row (the rows written)."""
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        raise ValueError(f"a race's entries need distinct names: {names}")
    checks, launches = {}, {}
    for e in entries:
        if e.check is None:
            checks[e.name] = None
            launches[e.name] = []
            continue
        with capture_launches() as got:
            checks[e.name] = checked(e.check, f"{e.name} (check)")
        launches[e.name] = got
    calls = {e.name: (e.call, e.sets) for e in entries
             if checks[e.name] is None or checks[e.name].correct}
    res = ctx.time_interleaved(calls, budget_s=budget_s, rounds=rounds) \
        if ctx.timing and calls else {}
    baselines = [e for e in entries if e.baseline]
    rows = {}
    for e in entries:
        if not e.row:
            continue
        metrics = dict(e.metrics() if callable(e.metrics) else e.metrics)
        if e.name in res:
            metrics.update(metrics_of(res[e.name], e, res, baselines))
        rows[e.name] = ctx.row(variant=e.name, params={**(params or {}), **e.params},
                               metrics=metrics, check=checks[e.name], kernels=e.kernels,
                               launch=launches[e.name], **{**row_extra, **e.extra})
    return rows
