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
"""
from __future__ import annotations

import contextlib
import inspect
import math
from dataclasses import dataclass, field
from typing import Callable

from .errors import UnknownExperimentError
from .kernels import KernelSpec

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


_REGISTRY: dict[str, Experiment] = {}


def experiment(name: str, *, title: str = "", small: dict | None = None,
               kernels: Callable[[], list[KernelSpec]] | None = None,
               requires: Callable[[], str | None] | None = None, sweep: bool = False,
               target: str = "gpu", chapter: str | None = None):
    """Register `func` as experiment `name`. Its chapter is the CHAPTER of the chapter
    package that defines it (`chapter` overrides that, for tests), and `name` must start
    with that package's slug."""
    if target not in ("gpu", "host"):
        raise ValueError(f"experiment {name!r}: target must be 'gpu' or 'host', not {target!r}")

    def register(func):
        ch = chapter
        if ch is None:
            from .chapters import chapter_of
            slug, ch = chapter_of(func.__module__)
            if not name.startswith(slug + "."):
                raise ValueError(f"experiment {name!r} of chapter {ch} must be named "
                                 f"'{slug}.<something>'")
        _REGISTRY[name] = Experiment(name, ch, title or name, func, small or {},
                                     kernels or list, requires, sweep, target)
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

    _REGISTRY[name] = Experiment(name, ch, title, gone, archived=commit)


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
                 budget_s: float = 1.5):
        self.exp = exp
        self.budget_s = budget_s
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
                         rounds: int = 9) -> dict:
        """Time the calls of `calls` (variant -> (fn, args_sets)) alternately, round by
        round (timing.interleaved), so that ratios between them are taken under the same
        clock and power state; `timing.ratio(result, slow, fast)` gives them with their
        spread. One untimed call of each first sizes the rounds to about `budget_s`
        seconds in all."""
        from .kernels import checked
        from .timing import interleaved, once_s

        once = {k: once_s(lambda fn=fn, sets=sets: fn(*sets[0]), f"{self.nvtx_name(k)} (warm-up)")
                for k, (fn, sets) in calls.items()}
        budget_s = self.budget_s * len(calls) if budget_s is None else budget_s
        n = int(min(200, max(3, budget_s / (rounds * max(sum(once.values()), 1e-6)))))
        prefix = f"{self.exp.chapter}/{self.exp.name}"
        return checked(lambda: interleaved(calls, prefix, rounds=rounds, n_repeat=n,
                                           n_warmup=1 if max(once.values()) > 0.05 else 3),
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
