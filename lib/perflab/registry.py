"""Experiments: plain functions from parameters to rows, registered by name.

    @experiment("slug.copy", small={"sizes": [1 << 20]},
                kernels=lambda: [KernelSpec("NN-slug/copy.cu", "copy_vec4")])
    def copy(ctx, sizes=(1 << 30,)):
        ...
        ctx.row(variant="kernel", params={"bytes": n}, metrics={...}, check=chk, ...)

An experiment lives in a chapter package (perflab.chapters.<slug>): its name starts with
the slug and its chapter is that package's CHAPTER. The same function serves the notebook
(`perflab.run`), `python -m perflab record`, the small-size correctness pass
(`python -m perflab check`, also under compute-sanitizer) and the GPU tests. `ctx.timing` is False in the correctness pass: the function then checks
every kernel and times nothing.

Two plans run it. The full plan, the function's defaults, is what `python -m perflab
record` measures and what results/ holds. The reader plan, `reader={...}` overrides of
those defaults, is what a notebook measures live by default: sized so that a chapter
runs in about a minute, and a subset of the full plan (fewer sizes, strides, radii,
configurations; a shorter timing budget), so that every row a reader measures has a
recorded counterpart and the recorded rows it selects (`plan_rows`) still give the page
every figure and number it quotes. `reader={}` says that the full plan is already quick.

A recorded check (compute-sanitizer's verdicts, a profiler's counters) can take minutes
and says nothing a reader's run needs to re-measure: registered with `replay_reader="why"`
its reader plan replays its recorded rows, live or not, with that reason under them;
`plan="full"` (or PERFLAB_PLAN=full, or any parameter given) runs it live.
"""
from __future__ import annotations

import contextlib
import inspect
import itertools
import math
from dataclasses import dataclass, field
from typing import Callable

from .errors import ConfigError, UnknownExperimentError
from .kernels import KernelSpec

#: The plans an experiment runs under: "reader" (what a notebook measures live by
#: default) and "full" (the function's defaults: what results/ holds).
PLANS = ("reader", "full")
#: Seconds of timing a measurement gets by default (Context.time and, per call,
#: Context.time_interleaved), and the rounds of an interleaved timing.
BUDGET_S = 1.5
ROUNDS = 9
#: Parameters that say how long a measurement is timed, not what is measured: a reader
#: plan may shorten them freely (its rows are the same rows, timed over fewer runs).
TIMING_PARAMS = frozenset({"budget_s", "rounds"})

@dataclass
class Experiment:
    name: str
    chapter: str
    title: str
    func: Callable
    small: dict = field(default_factory=dict)      # parameters of the correctness pass
    kernels: Callable[[], list[KernelSpec]] = list  # every kernel the experiment may launch
    requires: Callable[[], str | None] | None = None  # -> why it cannot run live here, or None
    # A sweep re-runs kernels that other experiments cover, at other tile parameters: the
    # quick correctness pass and the default compile report leave it out.
    sweep: bool = False
    # "gpu": measured live where a GPU answers, recorded under the GPU's slug. "host": C
    # code on the CPU (perflab.host), live wherever a C compiler and cffi are, recorded
    # under the CPU's slug with the CPU in the provenance.
    target: str = "gpu"
    # An archived experiment measured a try whose code and kernels have left the tree (git
    # keeps them at this commit): its recorded rows replay everywhere, live or not, and
    # nothing records or checks it again.
    archived: str | None = None
    # The reader plan: overrides of the defaults that a notebook measures live by default
    # ({} where the full plan is quick already); None only while a chapter's plans are
    # being written (it then runs its full plan live).
    reader: dict | None = None
    # A recorded check a reader's run replays (its reason, shown under its rows): the
    # reader plan shows its recorded rows, live or not; the full plan measures it live.
    replay_reader: str | None = None

    @property
    def defaults(self) -> dict:
        sig = inspect.signature(self.func)
        return {k: p.default for k, p in list(sig.parameters.items())[1:]
                if p.default is not inspect.Parameter.empty}

    def params(self, overrides: dict) -> dict:
        unknown = set(overrides) - set(self.defaults)
        if unknown:
            raise TypeError(f"experiment {self.name!r} takes {sorted(self.defaults)}, "
                            f"not {sorted(unknown)}")
        return {**self.defaults, **overrides}

    def plan(self, name: str) -> dict:
        """The parameters of plan `name`: "full" (the defaults) or "reader" (the reader
        plan's overrides of them; the full plan where none is declared yet)."""
        return self.params((self.reader or {}) if check_plan(name) == "reader" else {})


_REGISTRY: dict[str, Experiment] = {}


def check_plan(name: str) -> str:
    """`name` if it is a plan's name, else a ConfigError that lists the plans."""
    if name not in PLANS:
        raise ConfigError(f"unknown plan {name!r}; the plans are {', '.join(PLANS)}")
    return name


#: Keywords of `perflab.run` itself: no experiment parameter may take one of these names.
RESERVED = frozenset({"plan", "record", "run_info", "progress", "device_slug"})


def experiment(name: str, *, title: str = "", small: dict | None = None,
               kernels: Callable[[], list[KernelSpec]] | None = None,
               requires: Callable[[], str | None] | None = None, sweep: bool = False,
               target: str = "gpu", chapter: str | None = None, reader: dict | None = None,
               replay_reader: str | None = None):
    """Register `func` as experiment `name`. Its chapter is the CHAPTER of the chapter
    package that defines it (`chapter` overrides that, for tests), and `name` must start
    with that package's slug. `reader` is the reader plan (module docstring), checked
    here against the function's parameters so that a misspelt one fails on import;
    `replay_reader` (why) makes it a recorded check that a reader's run replays, whose
    reader plan is then the full plan's rows (reader={})."""
    if target not in ("gpu", "host"):
        raise ValueError(f"experiment {name!r}: target must be 'gpu' or 'host', not {target!r}")
    if replay_reader is not None and reader not in (None, {}):
        raise ValueError(f"experiment {name!r}: a reader plan that replays shows the full "
                         f"plan's rows; give it reader={{}}, not {reader!r}")

    def register(func):
        ch = chapter
        if ch is None:
            from .chapters import chapter_of
            slug, ch = chapter_of(func.__module__)
            if not name.startswith(slug + "."):
                raise ValueError(f"experiment {name!r} of chapter {ch} must be named "
                                 f"'{slug}.<something>'")
        exp = Experiment(name, ch, title or name, func, small or {}, kernels or list,
                         requires, sweep, target,
                         reader=None if reader is None else dict(reader),
                         replay_reader=replay_reader)
        clash = RESERVED & set(exp.defaults)
        if clash:
            raise ValueError(f"experiment {name!r}: parameter {sorted(clash)} is a keyword "
                             f"of perflab.run; name it otherwise")
        unknown = set(reader or {}) - set(exp.defaults)
        if unknown:
            raise TypeError(f"experiment {name!r}: its reader plan sets {sorted(unknown)}, "
                            f"which it does not take; it takes {sorted(exp.defaults)}")
        _REGISTRY[name] = exp
        return func
    return register


def archived(name: str, *, title: str, commit: str, chapter: str | None = None) -> None:
    """Register `name` as archived: the recorded rows of a dropped try, which a page still
    cites, whose experiment, kernels and tests were removed from the tree after `commit`
    (the commit that has them). `perflab.run` replays its rows on every machine, with a
    note naming the commit; `record` and the correctness pass skip it."""
    ch = chapter
    if ch is None:
        from .chapters import chapter_of
        slug, ch = chapter_of(inspect.currentframe().f_back.f_globals["__name__"])
        if not name.startswith(slug + "."):
            raise ValueError(f"experiment {name!r} of chapter {ch} must be named "
                             f"'{slug}.<something>'")

    def gone(ctx, **params):
        raise UnknownExperimentError(
            f"experiment {name!r} is archived: its code and kernels are at commit {commit} "
            f"(git show {commit}); its recorded rows replay instead")

    _REGISTRY[name] = Experiment(name, ch, title, gone, archived=commit, reader={})


# -- a plan's share of the recorded rows -------------------------------------------------
#
# A reader plan narrows the full plan: it keeps some of the values of a sequence parameter
# (sizes, strides, radii, views, configurations) and may shorten a timing budget. The rows
# it would measure are then those recorded rows that carry no value it dropped, which is
# how a replay shows what a reader's run covers (PERFLAB_PLAN=reader) and how the tests
# prove, without a GPU, that every figure and number of a page survives the reader plan.
# A row names its parameters its own way (`sizes` become each row's `bytes`, `(M, N, K)`
# its M, N and K), so the row parameter that carries each value is found from the rows.

_MISSING = object()


class _Named(tuple):
    """A dict value of a sequence parameter (a profiler's segment, say): its sorted
    (name, value) pairs. It names the row parameters it produced, so a row is its row
    when every one of those names the row carries has that value."""

    def matches(self, vals: dict) -> bool:
        carried = [(k, v) for k, v in self if k in vals]
        return bool(carried) and all(vals[k] == v for k, v in carried)


def _canon(v):
    """A parameter value as a hashable, comparable one: lists and tuples alike (JSON
    gives lists), dicts as their sorted items."""
    if isinstance(v, (list, tuple)):
        return tuple(_canon(x) for x in v)
    if isinstance(v, dict):
        return _Named(sorted((k, _canon(x)) for k, x in v.items()))
    return v


def _not_narrowing(exp: Experiment, name: str, why: str) -> ConfigError:
    return ConfigError(
        f"experiment {exp.name!r}: the reader plan's {name} {why}; a reader plan may keep "
        f"some values of a sequence parameter, or shorten a timing parameter "
        f"({', '.join(sorted(TIMING_PARAMS))}), so that every row it measures is one of "
        f"the full plan's")


def recorded_params(exp: Experiment, recorded: dict | None) -> dict:
    """The parameters a results file says its rows were measured with, over the defaults
    (a file older than a parameter was measured at its default), without any the
    experiment no longer takes (a parameter renamed since: the profilers' `plan`, now
    `segments`)."""
    return {**exp.defaults, **{k: v for k, v in (recorded or {}).items() if k in exp.defaults}}


def narrowed(exp: Experiment, overrides: dict, recorded: dict | None = None) -> dict:
    """The parameters that `overrides` narrow, against the plan the rows were recorded
    with (`recorded`, the defaults where None): name -> (the recorded values, or None
    where that value is None, "all of them", so the rows say which; the values kept).
    A timing parameter, or an override equal to the recorded value, narrows nothing.
    Raises ConfigError where an override is no narrowing: a single value changed, or a
    value the recorded plan does not have."""
    base = recorded_params(exp, recorded)
    exp.params(overrides)
    out = {}
    for name, value in overrides.items():
        full = base[name]
        if name in TIMING_PARAMS or _canon(value) == _canon(full):
            continue
        if not isinstance(value, (list, tuple)):
            raise _not_narrowing(exp, name, f"is {value!r} where the full plan has {full!r}")
        kept = [_canon(x) for x in value]
        if full is None:
            out[name] = (None, kept)
            continue
        if not isinstance(full, (list, tuple)):
            raise _not_narrowing(exp, name, f"is {value!r} where the full plan has {full!r}")
        values = [_canon(x) for x in full]
        extra = [x for x in kept if x not in values]
        if extra:
            raise _not_narrowing(exp, name, f"has {list(extra)!r}, which the full plan's "
                                            f"{list(full)!r} does not")
        out[name] = (values, kept)
    return out


def _row_values(row: dict) -> dict:
    """A row's parameters, canonical, with its variant (unless a parameter has that name)."""
    return {"variant": row["variant"], **{k: _canon(v) for k, v in row["params"].items()}}


def _under(vals: dict, key: tuple):
    """A row's value under `key`: one row parameter, or a tuple of several."""
    if len(key) == 1:
        return vals.get(key[0], _MISSING)
    got = tuple(vals.get(k, _MISSING) for k in key)
    return _MISSING if _MISSING in got else got


def row_keys(exp: Experiment, name: str, full: list | None, kept: list,
             rows: list[dict]) -> list[tuple]:
    """The row parameter(s) that may carry experiment parameter `name`'s values in
    `rows`: one row parameter whose values include every kept value (`bytes` for
    `sizes`), or, for values that are tuples, one row parameter per position (`M`, `N`,
    `K` for `(M, N, K)`). The best of them: those that carry the most of the recorded
    values and the fewest others (several where the rows cannot tell them apart, as
    (M, N, K) and (N, M, K) over square sizes). ConfigError where no row carries a kept
    value."""
    table = [_row_values(r) for r in rows]
    keys = list(dict.fromkeys(k for v in table for k in v))
    seen = {(k,): {v[k] for v in table if k in v} for k in keys}
    cands = [k for k, vs in seen.items() if set(kept) <= vs]
    if not cands and kept and all(isinstance(x, tuple) for x in kept) \
            and len({len(x) for x in kept}) == 1 and len(kept[0]) > 1:
        per = [[k for k in keys if {x[i] for x in kept} <= seen[(k,)]]
               for i in range(len(kept[0]))]
        for combo in itertools.product(*per):
            if len(set(combo)) == len(combo):
                vs = {_under(v, combo) for v in table} - {_MISSING}
                if set(kept) <= vs:
                    seen[combo] = vs
                    cands.append(combo)
    if not cands:
        raise ConfigError(f"experiment {exp.name!r}: no recorded row carries the reader "
                          f"plan's {name} values {kept!r}")
    ref = set(full) if full is not None else set(kept)

    def score(c):
        return (-len(ref & seen[c]), len(seen[c] - ref))
    best = min(score(c) for c in cands)
    return [c for c in cands if score(c) == best]


def _dropper(exp: Experiment, name: str, full: list | None, kept: list, rows: list[dict]):
    """A test of a row's values: whether the plan that keeps `kept` of `name`'s values
    (out of `full`; None: all the rows show) would not measure the row."""
    table = [_row_values(r) for r in rows]
    if kept and all(isinstance(x, _Named) for x in kept):
        lost = [x for x in kept if not any(x.matches(v) for v in table)]
        if lost:
            raise ConfigError(f"experiment {exp.name!r}: no recorded row carries the reader "
                              f"plan's {name} value {dict(lost[0])!r}")
        gone = None if full is None else [x for x in full if x not in kept]

        def dropped(vals):
            if any(x.matches(vals) for x in kept):
                return False
            return any(x.matches(vals) for x in gone) if gone is not None else \
                any(k in vals for x in kept for k, _ in x)
        return dropped
    tests = []
    for key in row_keys(exp, name, full, kept, rows):
        values = set(full) if full is not None else {_under(v, key) for v in table} - {_MISSING}
        tests.append(lambda vals, key=key, gone=values - set(kept): _under(vals, key) in gone)
    if len({tuple(t(v) for v in table) for t in tests}) > 1:
        raise ConfigError(f"experiment {exp.name!r}: the rows cannot tell which of their "
                          f"parameters carry the reader plan's {name}; they would keep "
                          f"different rows")
    return tests[0]


def plan_rows(exp: Experiment, rows: list[dict], plan: str = "reader",
              recorded: dict | None = None) -> list[dict]:
    """Those of `rows` (measured under the parameters `recorded`, the defaults where
    None: the full plan) that plan `plan` would measure: the rows that carry none of the
    values the plan drops. Rows that do not depend on a narrowed parameter (a baseline,
    a clock reading) stay."""
    overrides = (exp.reader or {}) if check_plan(plan) == "reader" else {}
    droppers = [_dropper(exp, name, full, kept, rows)
                for name, (full, kept) in narrowed(exp, overrides, recorded).items()]
    return [r for r in rows if not any(d(_row_values(r)) for d in droppers)]


def _load_all() -> None:
    from .chapters import discover
    discover()


@contextlib.contextmanager
def isolated():
    """A registry of its own for the block (tests, a throwaway chapter): the chapters'
    experiments, and whatever the block registers, which is forgotten after it."""
    global _REGISTRY
    _load_all()
    saved = _REGISTRY
    _REGISTRY = dict(saved)
    try:
        yield
    finally:
        _REGISTRY = saved


def all_experiments() -> dict[str, Experiment]:
    _load_all()
    return dict(_REGISTRY)


def get(name: str) -> Experiment:
    exps = all_experiments()
    if name not in exps:
        raise UnknownExperimentError(
            f"unknown experiment {name!r}; known experiments: {', '.join(sorted(exps))}")
    return exps[name]


def chapters() -> list[str]:
    return sorted({e.chapter for e in all_experiments().values()})


def kernel_specs(full: bool = False) -> list[KernelSpec]:
    """The kernel instantiations the experiments launch (for the compile report): those of
    every experiment but the sweeps, or with `full` every instantiation any may launch."""
    seen: dict[tuple, KernelSpec] = {}
    for e in all_experiments().values():
        if e.sweep and not full:
            continue
        for s in e.kernels():
            seen.setdefault((s.file, s.name_expression, s.options), s)
    return list(seen.values())


class Context:
    """What an experiment function writes its rows through."""

    def __init__(self, exp: Experiment, run: dict, *, timing: bool = True, progress=None,
                 budget_s: float = BUDGET_S, rounds: int = ROUNDS):
        self.exp = exp
        self.budget_s = budget_s
        self.rounds = rounds
        self.run = run
        self.timing = timing
        self.rows: list[dict] = []
        self._progress = progress

    # -- measuring ---------------------------------------------------------------
    def nvtx_name(self, variant: str) -> str:
        return f"{self.exp.chapter}/{self.exp.name}/{variant}"

    def time(self, fn, args_sets, variant: str, *, budget_s: float | None = None) -> dict:
        """Median time of `fn(*args)` over rotated `args_sets` (see timing.benchmark).

        One untimed call first sizes the run: a slow kernel gets one warm-up and a few
        repeats, a fast one many, all within about `budget_s` seconds.
        """
        from .kernels import checked
        from .timing import benchmark, once_s, repeats_for

        once = once_s(lambda: fn(*args_sets[0]), f"{self.nvtx_name(variant)} (warm-up)")
        budget_s = self.budget_s if budget_s is None else budget_s
        n_repeat, n_warmup = repeats_for(once, budget_s)
        return checked(lambda: benchmark(fn, args_sets, self.nvtx_name(variant),
                                         n_repeat=n_repeat, n_warmup=n_warmup,
                                         max_duration=budget_s * 2),
                       self.nvtx_name(variant))

    def time_interleaved(self, calls: dict, *, budget_s: float | None = None,
                         rounds: int | None = None, host=(), ahead=None,
                         n_repeat: int | None = None) -> dict:
        """Time the calls of `calls` (variant -> (fn, args_sets)) alternately, round by
        round (timing.interleaved), so that ratios between them are taken under the same
        clock and power state; `timing.ratio(result, slow, fast)` gives them with their
        spread. One untimed call of each first sizes `rounds` rounds (self.rounds where
        None; fewer where a round of single calls is slow) to about `budget_s` seconds in
        all (timing.interleaved_plan): one repeat count for every call.

        The calls named in `host` run on the CPU and are timed on the host's clock. A race
        with any of them is sized per call instead: each call its own count
        (timing.repeats_each: a CPU path takes 100-1000x a kernel's time), one warm-up, and
        the rounds asked for; one of host calls only needs no GPU.

        `ahead` (GPU calls only): each call's host part and its work alone behind `ahead()`
        are timed too (timing.interleaved's "host_ms" and "queued_ms", with their rounds).
        `n_repeat`: every call runs that many timed times a round, in `rounds` rounds
        (self.rounds where None), after its untimed call and two warm-ups: a measurement
        whose design fixes its counts instead of a budget."""
        from .kernels import checked
        from .timing import host_once_s, interleaved, interleaved_plan, once_s, repeats_each

        if host and (ahead is not None or n_repeat is not None):
            raise ValueError("host calls are sized per call and timed on the host's clock: "
                             "no `ahead` or `n_repeat` with them")
        budget_s = self.budget_s * len(calls) if budget_s is None else budget_s
        prefix = f"{self.exp.chapter}/{self.exp.name}"
        if host:
            rounds = self.rounds if rounds is None else rounds
            once = {k: host_once_s(lambda fn=fn, sets=sets: fn(*sets[0])) if k in host else
                    once_s(lambda fn=fn, sets=sets: fn(*sets[0]), f"{self.nvtx_name(k)} (warm-up)")
                    for k, (fn, sets) in calls.items()}

            def run():
                return interleaved(calls, prefix, rounds=rounds, host=host, n_warmup=1,
                                   n_repeat=repeats_each(once, budget_s, rounds))
            return run() if set(calls) <= set(host) else checked(run, prefix)
        once = {k: once_s(lambda fn=fn, sets=sets: fn(*sets[0]), f"{self.nvtx_name(k)} (warm-up)")
                for k, (fn, sets) in calls.items()}
        rounds = self.rounds if rounds is None else rounds
        if n_repeat is None:
            rounds, n, warmup = interleaved_plan(once, budget_s, rounds)
        else:
            n, warmup = n_repeat, 2
        return checked(lambda: interleaved(calls, prefix, rounds=rounds, n_repeat=n,
                                           n_warmup=warmup, ahead=ahead),
                       prefix)

    # -- recording ---------------------------------------------------------------
    def time_host(self, fn, *, budget_s: float | None = None) -> dict:
        """Median time of `fn()` on the CPU (perflab.host.auto_benchmark), within about
        `budget_s` seconds."""
        from .host import auto_benchmark
        return auto_benchmark(fn, budget_s=self.budget_s if budget_s is None else budget_s)

    def row(self, *, variant: str, params: dict, metrics: dict, check=None,
            kernels: list = (), launch: dict | list | None = None, **extra) -> dict:
        """Record one row. `metrics` maps a name to (value, unit); `kernels` holds the
        KernelSpecs it ran, or for host code `HostSource.kernel_entry(function)` dicts."""
        from .kernels import source_sha256

        r = {
            "experiment": self.exp.name,
            "chapter": self.exp.chapter,
            "variant": variant,
            "params": dict(params),
            "metrics": {k: {"value": _num(v), "unit": u} for k, (v, u) in metrics.items()},
            "correct": None if check is None else bool(check.correct),
            "rel_err": None if check is None else _num(check.rel_err),
            "tolerance": None if check is None else check.tolerance,
            "kernels": [s if isinstance(s, dict) else
                        {"file": s.file, "name": s.name_expression,
                         "options": s.recorded_options, "sha256": source_sha256(s.file)}
                        for s in kernels],
            "launch": launch or {},
            "provenance": self.run,
            **extra,
        }
        self.rows.append(r)
        if self._progress is not None:
            self._progress.set_postfix_str(f"{variant} {params}"[:60], refresh=False)
        return r


def _num(v):
    """A JSON-safe number: NaN and infinities (a failed check) are stored as null."""
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def execute(exp: Experiment, params: dict, run: dict, *, timing: bool = True,
            progress=None) -> list[dict]:
    """Run one experiment live and return its rows."""
    ctx = Context(exp, run, timing=timing, progress=progress)
    exp.func(ctx, **params)
    return ctx.rows
