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
- "GB/s" and "TB/s" from the entry's declared `bytes` (the useful bytes of one call),
  "GFLOP/s" and "TFLOP/s" from its declared `flops`, and any other rate it declares in
  `rates` (a count per call over the time: "Giter/s" from the iterations of one call):
  the core derives rates, a chapter never does;
- "bytes_moved" (B) and "flops" (FLOP): the declared numerators themselves;
- for every baseline key of the race (the `baseline` of one or more entries), the ratio
  B's time / this entry's time round by round, B the fastest entry of that key (by
  median; e.g. the faster of cudaMemcpy and a copy kernel): `<key>` (the median over the
  rounds), `<key>_min`, `<key>_max`, unit "1", and "rounds". A baseline declared
  `by_rate` is compared by rate instead (this entry's bytes / time over B's bytes / time,
  round by round): a copy ceiling measured over other bytes than the contender moves.
  One declared `slower` gives the inverse, this entry's time / B's (how many times
  slower than it); one declared `self_ratio` also carries its own ratio (1), as a table
  of speed-ups lists the base at 1×. The copy's key is "of_copy" (a fraction of the
  copy's speed), a vendor's "x_<vendor>" (how many times as fast as it) or "of_<vendor>"
  where the vendor is the roof. An entry is compared with every key of the race unless
  it names its keys in `against` (a kernel that computes another function than the
  vendor's is compared with the copy alone; `()`: no ratio at all, for a reference timed
  in the same rounds or a baseline beside the fastest of its key);
- with `ahead` (a call that keeps the GPU busy longer than the host takes to enqueue any
  entry: timing.interleaved), each entry's host part and its work alone behind that call
  are timed in the same rounds: "host_ms" and "queued_ms", and every ratio again on each:
  `<key>_host` and `<key>_queued`, with their `_min` and `_max` (how much of a library's
  lead is the host's, and how much the GPU's);
- a baseline declared with `median_as`: its median time in the same rounds, in every
  other row compared with it, under that name (ms): the vendor's own time beside the
  ratio to it;
- what the entry's `derived(metrics)` returns, given the metrics above after the timing,
  timed or not (a fraction of a datasheet rate, a clock read right after the timed runs).
The row itself (not its metrics) names the fastest copy in "baseline" when the race has
entries of the copy's key, and the fastest baseline of any other key in the field
`name_fastest` maps it to ("" when none was timed); an entry with `keep_rounds` keeps
every timed entry's per-round medians ("round_ms": name -> list), which `by_rate_rounds`
compares by rate where only the row's reader knows the work of a call.

Checking and timing. Every entry is checked first, in order; one whose check fails is
written with its check and never timed; one whose `call` is None cannot run here: its
row is written (its extra says why), never checked nor timed. `ctx.timing` False (the
correctness pass): every entry is checked and nothing is timed; so is a race whose only
correct entries are baselines with no row (no baseline is timed with nothing to compare
it with). The rest are timed interleaved by `ctx.time_interleaved`, under one of two
sizings:
- kernels (and other GPU calls) only: one repeat count for every call
  (timing.interleaved_plan: a round of single calls under 0.2 s sized as always, a slower
  one given fewer rounds, repeats and warm-ups);
- with `host` entries (CPU calls: C through cffi, NumPy; checked without the device,
  timed with perf_counter around each call, in the same rounds as the kernels): each
  call its own repeat count (timing.repeats_each: a CPU path takes 100-1000× a kernel's
  time, and one count for all would starve one or drown the other), one warm-up, the
  rounds asked for.
`run(n_repeat=N)` fixes the timed calls of each entry a round instead of sizing them
(with `rounds`). `run(alone=True)` times each entry on its own instead (`ctx.time`: a
shape of a sweep, nothing to compare it with): its row has the times and the rates, no
ratios; no entry of such a race is a baseline, a host call or keeps rounds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .correctness import Check
from .kernels import capture_launches, checked
from .timing import ratio

#: the copy baseline's ratio key: a fraction of the copy's speed, in the same rounds
COPY_KEY = "of_copy"
#: the parts of a call a race with `ahead` also times (timing.interleaved), and their medians
PARTS = ("host", "queued")
PARTS_MS = tuple(f"{p}_ms" for p in PARTS)


@dataclass
class Entry:
    """One contestant (or baseline) of a race (the module's docstring tells what each field
    does to the rows).

    What runs: `call(*args)` enqueues one call (None: it cannot run here); `sets` are the
    argument tuples it is timed over, rotated (inputs that do not all fit in L2);
    `check()` runs it once into poisoned outputs and returns its Check (None: nothing to
    check, e.g. a ceiling that writes nothing); `host`: a CPU call, checked without the
    device and timed on the host's clock.

    Its row: `variant` where that is not its name (names must be distinct within a race,
    variants need not: one rung at two tile shapes); `params`, `kernels`, `extra` (a dict,
    or a function returning it, called after every check); `metrics`: fixed metrics
    ({name: (value, unit)}, or a function returning them, called after every check);
    `launch`: its launch record where that is not the launches its check captured (a
    configuration declared by hand; {} for a library call); `row`: False for an entry
    timed only to be a baseline; `keep_rounds`: the row keeps every entry's per-round
    medians.

    Its rates: `bytes` and `flops`, one call's useful bytes and floating-point operations;
    `rates`, other rates, {metric: (count per call, unit, scale)} with value count /
    seconds / scale ({"Giter/s": (iterations, "Giter/s", 1e9)}); `derived(metrics)`: more
    metrics from the row's others.

    Its ratios: `baseline`, the key of the ratios to it when it is a baseline of the race
    (several entries may share one: the fastest of them is the baseline); `by_rate`: such
    a baseline compared by rate (bytes / time; both entries declare `bytes`); `slower`:
    one whose ratio is the entry's time over its own; `self_ratio`: one whose own row
    carries its ratio to itself (1); `median_as`: the metric that keeps its median time
    (ms) in the other rows; `against`: the baseline keys this entry's row is compared with
    (None: every key of the race; (): none)."""
    name: str
    call: Callable | None
    sets: list = field(default_factory=lambda: [()])
    check: Callable[[], Check] | None = None
    params: dict = field(default_factory=dict)
    kernels: list = field(default_factory=list)
    metrics: dict | Callable[[], dict] = field(default_factory=dict)
    extra: dict | Callable[[], dict] = field(default_factory=dict)
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
    host: bool = False
    rates: dict = field(default_factory=dict)
    slower: bool = False
    self_ratio: bool = False
    keep_rounds: bool = False


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


def metrics_of(t: dict, entry: Entry, res: dict | None = None,
               baselines: dict[str, Entry] | None = None) -> dict:
    """An entry's timed metrics from the interleaved result `res` (its times `t`);
    `baselines`: key -> the baseline entry of that key (fastest_baselines). Without them
    (a call timed alone, Context.time): its times and its rates."""
    res, baselines = res or {}, baselines or {}
    m = {k: (t[k], "ms") for k in ("median_ms", "p20_ms", "p80_ms", "min_ms", *PARTS_MS)
         if k in t}
    m["n_timed"] = (t["n_timed"], "1")
    if entry.bytes:
        rate = entry.bytes / (t["median_ms"] * 1e-3)
        m["GB/s"] = (rate / 1e9, "GB/s")
        m["TB/s"] = (rate / 1e12, "TB/s")
    if entry.flops:
        flop_rate = entry.flops / (t["median_ms"] * 1e-3)
        m["GFLOP/s"] = (flop_rate / 1e9, "GFLOP/s")
        m["TFLOP/s"] = (flop_rate / 1e12, "TFLOP/s")
    for name, (count, unit, scale) in entry.rates.items():
        m[name] = (count / (t["median_ms"] * 1e-3) / scale, unit)
    for key, b in baselines.items():
        if (b.name == entry.name and not b.self_ratio) or \
                (entry.against is not None and key not in entry.against):
            continue
        scale = 1.0
        if b.by_rate:
            if not (entry.bytes and b.bytes):
                raise ValueError(f"{entry.name!r} against {b.name!r} by rate: both need bytes")
            scale = b.bytes / entry.bytes if b.slower else entry.bytes / b.bytes
        for part in ("", *(p for p in PARTS if f"round_{p}_ms" in t)):
            rounds_of = f"round_{part}_ms" if part else "round_ms"
            r = (ratio(res, entry.name, b.name, rounds_of) if b.slower
                 else ratio(res, b.name, entry.name, rounds_of))
            name = f"{key}_{part}" if part else key
            m[name] = (r["ratio"] * scale, "1")
            m[name + "_min"] = (r["ratio_min"] * scale, "1")
            m[name + "_max"] = (r["ratio_max"] * scale, "1")
            m["rounds"] = (r["rounds"], "1")
        if b.median_as and b.name != entry.name:
            m[b.median_as] = (res[b.name]["median_ms"], "ms")
    return m


def by_rate_rounds(round_ms: dict, name: str, work: float, base: str,
                   base_work: float) -> list:
    """Round by round, `name`'s rate over `base`'s (the work of one call over that round's
    median time), from the per-round medians a row kept (Entry.keep_rounds): a comparison
    by rate whose work only its reader knows (instructions counted in the SASS)."""
    return [(work / (a * 1e-3)) / (base_work / (b * 1e-3))
            for a, b in zip(round_ms[name], round_ms[base])]


def run(ctx, entries: list[Entry], *, params: dict | None = None,
        budget_s: float | None = None, rounds: int | None = 9, alone: bool = False,
        name_fastest: dict | None = None, ahead=None, n_repeat: int | None = None,
        **row_extra) -> dict:
    """Check every entry (in order: a later check may use what an earlier one left), time
    the correct ones interleaved with `ctx.time_interleaved` (`rounds` None: the
    context's own; the host entries named to it; with `alone`, each on its own with
    `ctx.time`, its name the timed region's, about `budget_s` seconds each), and write one
    row each (but entries with row=False); `ahead` and `n_repeat` as the module says.
    `params` and `row_extra` go into every row;
    `name_fastest` (key -> field): every row names the fastest baseline of that key in
    that field ("" if none was timed). Returns name -> row (the rows written)."""
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        raise ValueError(f"a race's entries need distinct names: {names}")
    if alone and any(e.baseline or e.host or e.keep_rounds for e in entries):
        raise ValueError("entries timed alone are compared with no baseline, run on the "
                         "device and keep no rounds: "
                         f"{[e.name for e in entries if e.baseline or e.host or e.keep_rounds]}")
    if (ahead is not None or n_repeat is not None) and (alone or any(e.host for e in entries)):
        raise ValueError("`ahead` and `n_repeat` time device calls interleaved: not with "
                         "entries timed alone or host calls")
    checks, launches = {}, {}
    for e in entries:
        if e.check is None or e.call is None:
            checks[e.name] = None
            launches[e.name] = []
            continue
        with capture_launches() as got:
            checks[e.name] = e.check() if e.host else checked(e.check, f"{e.name} (check)")
        launches[e.name] = got
    calls = {e.name: (e.call, e.sets) for e in entries if e.call is not None
             and (checks[e.name] is None or checks[e.name].correct)}
    if not any(e.row for e in entries if e.name in calls):
        calls = {}                 # only baselines timed for others' rows, and none to time
    host = [e.name for e in entries if e.host and e.name in calls]
    if not (ctx.timing and calls):
        res = {}
    elif alone:
        res = {k: ctx.time(fn, sets, k, budget_s=budget_s) for k, (fn, sets) in calls.items()}
    elif host:
        res = ctx.time_interleaved(calls, budget_s=budget_s, rounds=rounds, host=host)
    else:
        fixed = {k: v for k, v in (("ahead", ahead), ("n_repeat", n_repeat)) if v is not None}
        res = ctx.time_interleaved(calls, budget_s=budget_s, rounds=rounds, **fixed)
    baselines = fastest_baselines(entries, res)
    if COPY_KEY in baselines:
        row_extra = {"baseline": baselines[COPY_KEY].name, **row_extra}
    for key, fld in (name_fastest or {}).items():
        row_extra = {fld: baselines[key].name if key in baselines else "", **row_extra}
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
        extra = e.extra() if callable(e.extra) else e.extra
        if e.keep_rounds:
            extra = {**extra, "round_ms": {k: v["round_ms"] for k, v in res.items()}}
        rows[e.name] = ctx.row(variant=e.variant or e.name, params={**(params or {}), **e.params},
                               metrics=metrics, check=checks[e.name], kernels=e.kernels,
                               launch=launches[e.name] if e.launch is None else e.launch,
                               **{**row_extra, **extra})
    return rows
