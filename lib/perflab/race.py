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
  "GFLOP/s" and "TFLOP/s" from its declared `flops`: the core derives rates, a chapter
  never does;
- "bytes_moved" (B) and "flops" (FLOP): the declared numerators themselves;
- for every baseline key of the race (the `baseline` of one or more entries), the ratio
  B's time / this entry's time round by round, B the fastest entry of that key (by
  median; e.g. the faster of cudaMemcpy and a copy kernel): `<key>` (the median over the
  rounds), `<key>_min`, `<key>_max`, unit "1", and "rounds". A baseline declared
  `by_rate` is compared by rate instead (this entry's bytes / time over B's bytes / time,
  round by round): a copy ceiling measured over other bytes than the contender moves.
  The copy's key is "of_copy" (a fraction of the copy's speed), a vendor's "x_<vendor>"
  (how many times as fast as it) or "of_<vendor>" where the vendor is the roof;
- "baseline": in the row itself (not a metric), the name of the fastest copy when the
  race has entries of the copy's key;
- a baseline declared with `median_as`: its median time in the same rounds, in every
  other row timed with it, under that name (ms): e.g. the vendor's own time beside the
  ratio to it.

An entry whose check fails is written with its check and never timed. `ctx.timing` False
(the correctness pass): every entry is checked and nothing is timed. An entry may be
compared with some of the race's baselines only (`against`: a kernel that computes
another function than the vendor's is compared with the copy alone). `alone=True` times
each entry on its own (`ctx.time`: a shape of a sweep, nothing to compare it with): its
row has the times and the rates, and no ratios.
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
    is a baseline of the race (several entries may share one: the fastest of them is the
    baseline); `by_rate`: a baseline compared by rate (bytes / time; both entries declare
    `bytes`) rather than by time; `row`: False for an entry timed only to be a baseline;
    `variant`: its row's variant where that is not its name (names must be distinct
    within a race, variants need not: one rung at two tile shapes); `against`: the
    baseline keys its row is compared with (None: every key of the race); `launch`: its
    row's launch record where that is not the launches its check captured (a
    configuration declared by hand; {} for a library call); `derived(metrics)`: more
    metrics of its row from the others (called with them after the timing, timed or not:
    a fraction of a datasheet rate, a clock read right after the timed runs);
    `median_as`: for a baseline, the metric that keeps its median time (ms) of the same
    rounds in the other rows."""
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
    by_rate: bool = False
    row: bool = True
    variant: str | None = None
    against: tuple | None = None
    launch: dict | list | None = None
    derived: Callable[[dict], dict] | None = None
    median_as: str | None = None


def copy_of(sets, nbytes: int | None = None, row: bool = True, name: str = "copy",
            by_rate: bool = False) -> Entry:
    """The copy of the input's bytes (cudaMemcpy device to device) as the baseline
    "of_copy": `sets` as the contestants', each (src, dst, ...); the copy moves src into
    dst (`nbytes` of it: all of src by default) and is checked exactly. `by_rate`: compared
    by rate (a copy of other bytes than the contestants move)."""
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
                 baseline=COPY_KEY, by_rate=by_rate, row=row)


def rate_at(rate, median_ms, ms):
    """A row's rate (its "TB/s" or "TFLOP/s", from its median time) at another of its times
    (p20_ms, p80_ms: the whiskers of a bar): scalars or columns of a frame."""
    return rate * median_ms / ms


def fastest_baselines(entries: list[Entry], res: dict) -> dict[str, Entry]:
    """key -> the entry timed fastest (lowest median) among the baselines of that key."""
    out: dict[str, Entry] = {}
    for e in entries:
        if e.baseline and e.name in res and (
                e.baseline not in out
                or res[e.name]["median_ms"] < res[out[e.baseline].name]["median_ms"]):
            out[e.baseline] = e
    return out


def metrics_of(t: dict, entry: Entry, res: dict, baselines: dict[str, Entry]) -> dict:
    """An entry's timed metrics from the interleaved result `res` (its times `t`);
    `baselines`: key -> the baseline entry of that key (fastest_baselines)."""
    m = {k: (t[k], "ms") for k in ("median_ms", "p20_ms", "p80_ms", "min_ms")}
    m["n_timed"] = (t["n_timed"], "1")
    if entry.bytes:
        rate = entry.bytes / (t["median_ms"] * 1e-3)
        m["GB/s"] = (rate / 1e9, "GB/s")
        m["TB/s"] = (rate / 1e12, "TB/s")
    if entry.flops:
        flop_rate = entry.flops / (t["median_ms"] * 1e-3)
        m["GFLOP/s"] = (flop_rate / 1e9, "GFLOP/s")
        m["TFLOP/s"] = (flop_rate / 1e12, "TFLOP/s")
    for key, b in baselines.items():
        if b.name == entry.name or (entry.against is not None and key not in entry.against):
            continue
        r = ratio(res, b.name, entry.name)
        scale = 1.0
        if b.by_rate:
            if not (entry.bytes and b.bytes):
                raise ValueError(f"{entry.name!r} against {b.name!r} by rate: both need bytes")
            scale = entry.bytes / b.bytes
        m[key] = (r["ratio"] * scale, "1")
        m[key + "_min"] = (r["ratio_min"] * scale, "1")
        m[key + "_max"] = (r["ratio_max"] * scale, "1")
        m["rounds"] = (r["rounds"], "1")
        if b.median_as:
            m[b.median_as] = (res[b.name]["median_ms"], "ms")
    return m


def run(ctx, entries: list[Entry], *, params: dict | None = None,
        budget_s: float | None = None, rounds: int | None = 9, alone: bool = False,
        **row_extra) -> dict:
    """Check every entry (in order: a later check may use what an earlier one left), time
    the correct ones interleaved with `ctx.time_interleaved` (`rounds` None: the
    context's own; with `alone`, each on its own with `ctx.time`, its name the timed
    region's, about `budget_s` seconds each), and write one row each (but entries with
    row=False). `params` and `row_extra` go into every row. Returns name -> row (the rows
    written)."""
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        raise ValueError(f"a race's entries need distinct names: {names}")
    if alone and any(e.baseline for e in entries):
        raise ValueError("entries timed alone are compared with no baseline: "
                         f"{[e.name for e in entries if e.baseline]}")
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
    if not any(e.row for e in entries if e.name in calls):
        calls = {}                 # only baselines timed for others' rows, and none to time
    if not (ctx.timing and calls):
        res = {}
    elif alone:
        res = {k: ctx.time(fn, sets, k, budget_s=budget_s) for k, (fn, sets) in calls.items()}
    else:
        res = ctx.time_interleaved(calls, budget_s=budget_s, rounds=rounds)
    baselines = fastest_baselines(entries, res)
    if COPY_KEY in baselines:
        row_extra = {"baseline": baselines[COPY_KEY].name, **row_extra}
    rows = {}
    for e in entries:
        if not e.row:
            continue
        metrics = dict(e.metrics() if callable(e.metrics) else e.metrics)
        if e.bytes:
            metrics["bytes_moved"] = (e.bytes, "B")
        if e.flops:
            metrics["flops"] = (e.flops, "FLOP")
        if e.name in res:
            metrics.update(metrics_of(res[e.name], e, res, baselines))
        if e.derived is not None:
            metrics.update(e.derived(metrics))
        rows[e.name] = ctx.row(variant=e.variant or e.name, params={**(params or {}), **e.params},
                               metrics=metrics, check=checks[e.name], kernels=e.kernels,
                               launch=launches[e.name] if e.launch is None else e.launch,
                               **{**row_extra, **e.extra})
    return rows
