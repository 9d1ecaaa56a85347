"""The one call notebooks make: `run(name, **params)` returns a tidy DataFrame, measured
live on a GPU or replayed from `results/` without one, through the same code path.
(An experiment on host code, target "host", is live wherever C can be built and loaded,
and is recorded under the CPU's slug.)

The DataFrame has one row per variant × size: the parameters as columns, each metric as a
column (units in `df.attrs["units"]`), `correct`, `rel_err`, `run_id`, `stale`; and
`df.attrs["source"]` holding where the numbers came from, which `caption(df)` turns into
the line every figure carries.

Live, `run` measures the experiment's reader plan (registry: sized so that a chapter runs
in about a minute) unless `plan="full"` or PERFLAB_PLAN=full asks for the full plan, the
one results/ holds; keyword parameters override either. A recorded check (registered
with `replay_reader`: the sanitizers, the profilers) is replayed under the reader plan,
live or not, unless the full plan or a parameter is asked for. A replay shows the recorded
full-plan rows, or with PERFLAB_PLAN=reader only those the reader plan would measure.
"""
from __future__ import annotations

import os
import warnings

import pandas as pd

from . import device, registry, store
from .errors import ConfigError, NoGPUError, ResultsError

#: The device whose recordings a build without a GPU replays, unless PERFLAB_DEVICE says.
DEFAULT_REPLAY_DEVICE = "nvidia-h200"


def _strict() -> bool:
    """In CI (or with PERFLAB_STRICT=1) a stale recorded row is an error, not a warning."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes") or \
        os.environ.get("PERFLAB_STRICT", "") == "1"


def replay_device() -> str:
    slug = os.environ.get("PERFLAB_DEVICE")
    if slug:
        return slug
    have = store.devices()
    if DEFAULT_REPLAY_DEVICE in have or not have:
        return DEFAULT_REPLAY_DEVICE
    return have[0]


#: The environment variable that picks the plan `run` measures: "reader" or "full".
PLAN_ENV = "PERFLAB_PLAN"


def plan_for(plan: str | None = None, *, live: bool, recording: bool = False) -> str:
    """The plan a call of `run` measures (live) or shows (replayed): `plan` where given,
    else PERFLAB_PLAN, else the reader plan live and the full plan in a replay or a
    recording. A recording is always of the full plan: results/ hold full-plan rows, which
    the pages, the stale check and the reader plans' tests all read."""
    chosen = plan or os.environ.get(PLAN_ENV) or ("reader" if live and not recording else "full")
    if chosen not in registry.PLANS:
        where = "plan=" if plan else f"{PLAN_ENV}="
        raise ConfigError(f"unknown plan {where}{chosen!r}; the plans are "
                          f"{', '.join(registry.PLANS)} (reader: what a notebook measures "
                          f"live by default; full: what results/ hold)")
    if recording and chosen != "full":
        raise ConfigError("a recording measures the full plan (results/ hold full-plan rows): "
                          f"record with plan='full' or {PLAN_ENV}=full, or measure the "
                          "reader plan without recording")
    return chosen


def record_command(exp: registry.Experiment) -> str:
    return f"python -m perflab record --chapter {exp.chapter}  (or: make record)"


def live_here(exp: registry.Experiment) -> bool:
    """Whether `exp` measures live on this machine: a GPU answers (target "gpu"), or C can
    be built and loaded here (target "host"); PERFLAB_MODE=replay replays either."""
    if exp.target == "host":
        from .host import unavailable
        return os.environ.get("PERFLAB_MODE", "").lower() != "replay" and unavailable() is None
    return device.mode() == "live"


def new_run(exp: registry.Experiment, run_id: str | None = None) -> tuple[dict, str]:
    """(provenance of a live run of `exp`, the slug its results are filed under): the GPU,
    its clocks and versions; or, for host code, the CPU and the C compiler."""
    extra = {"run_id": run_id} if run_id else {}
    if exp.target == "host":
        from .host import cpu_info
        cpu = cpu_info()
        dev = {"name": cpu["model"], "slug": cpu["slug"], "kind": "cpu"}
        return store.new_run(dev, {"host": cpu, **extra}), cpu["slug"]
    info = device.current()
    return store.new_run(info.as_dict(), {"clocks": device.clocks_now(), **extra}), info.slug


def live_context(name: str) -> registry.Context:
    """A context that measures live for experiment `name` on this GPU, with this run's
    provenance: an explorer's live button measures one configuration through it (the
    rows as `frame(ctx.rows, source="live")`), keeping its inputs between presses."""
    exp = registry.get(name)
    return registry.Context(exp, new_run(exp)[0])


class RowBar:
    """A live experiment's progress in a notebook: tqdm's bar (the notebook's widget in
    Jupyter), counting rows as they are measured, shown only once the experiment has
    taken a second, and gone when it ends. A book build shows none: its page is what the
    reader reads."""

    def __init__(self, name: str):
        from tqdm.auto import tqdm
        self.bar = tqdm(desc=name, unit=" rows", delay=1.0, leave=False,
                        disable=os.environ.get("PERFLAB_BUILD") == "1")

    def set_postfix_str(self, text: str, refresh: bool = False) -> None:
        """Context.row calls this for every row it measured."""
        self.bar.update(1)
        self.bar.set_postfix_str(text, refresh=refresh)

    def close(self) -> None:
        self.bar.close()


def run(name: str, *, plan: str | None = None, record: bool = False,
        run_info: dict | None = None, progress=None, **params) -> pd.DataFrame:
    """Measure experiment `name` live (GPU present) or replay its recorded rows. Live, it
    measures plan `plan` (plan_for: the reader plan unless told otherwise) with `params`
    over it; `record` (or PERFLAB_RECORD=1, `make book-record`) writes the rows to
    results/, which takes the full plan."""
    exp = registry.get(name)
    if exp.archived:        # a dropped try's rows: replayed everywhere, and said so
        df = replay(name, **params)
        df.attrs["source"]["note"] = (f"an archived try: its code and kernels are at commit "
                                      f"{exp.archived}")
        return df
    exp.params(params)
    live = live_here(exp)
    recording = live and (record or os.environ.get("PERFLAB_RECORD") == "1")
    chosen = plan_for(plan, live=live, recording=recording)
    if live and chosen == "reader" and exp.replay_reader and not params:
        df = replay(name, device_slug=_recorded_here(exp))   # a recorded check
        df.attrs["source"]["note"] = (f"not measured live in the reader plan: "
                                      f"{exp.replay_reader}; lab.run({name!r}, plan='full') "
                                      f"measures it")
        return df
    missing = exp.requires() if live and exp.requires else None
    if missing:     # a GPU, but not the tool this experiment needs: replay, and say why
        df = replay(name, **params)
        df.attrs["source"]["note"] = f"not measured live: {missing}"
        return df
    if live:
        full = exp.params({**exp.plan(chosen), **params})
        info, slug = new_run(exp) if run_info is None else (run_info, run_info["device"]["slug"])
        bar = RowBar(exp.name) if progress is None else None
        try:
            rows = registry.execute(exp, full, info, progress=progress or bar)
        finally:
            if bar is not None:
                bar.close()
        if recording:
            store.write(store.file_for(slug, exp.chapter, exp.name), exp.name,
                        exp.chapter, full, rows)
        return frame(rows, source="live", plan=_named(exp, chosen))
    return replay(name, plan=chosen, **params)


def _recorded_here(exp: registry.Experiment) -> str | None:
    """The slug of this GPU where it has recorded `exp` (and PERFLAB_DEVICE picks none),
    else None: the replay's own choice."""
    if os.environ.get("PERFLAB_DEVICE") or exp.target != "gpu":
        return None
    try:
        slug = device.current().slug
    except NoGPUError:
        return None
    return slug if store.find(exp.name, slug) else None


def _named(exp: registry.Experiment, plan: str) -> str:
    """The plan a frame names: "full" where the reader plan is the full plan (reader={},
    or none declared yet), so that a caption says "reader plan" only when it was not."""
    return plan if plan == "full" or exp.plan(plan) != exp.plan("full") else "full"


def replay(name: str, *, plan: str = "full", device_slug: str | None = None,
           **params) -> pd.DataFrame:
    """The recorded rows of `name` (all of them, or those recorded with `params`); with
    `plan="reader"` only those the reader plan would measure (registry.plan_rows)."""
    registry.check_plan(plan)
    exp = registry.get(name)
    slug = device_slug or replay_device()
    path = store.find(name, slug)
    if path is None:
        raise ResultsError(
            f"no recorded results of {name!r} for device {slug!r} under results/{slug}/; "
            f"on a machine with an NVIDIA GPU run: {record_command(exp)}")
    doc = store.load(path)
    if params:
        wanted = exp.params(params)
        recorded = registry.recorded_params(exp, doc.get("params"))
        diff = {k: (wanted[k], recorded.get(k)) for k in params
                if _canon(wanted[k]) != _canon(recorded.get(k))}
        if diff:
            raise ResultsError(
                f"{store.relative(path)} was recorded with other parameters "
                + ", ".join(f"{k}={v[1]!r} (asked {v[0]!r})" for k, v in diff.items())
                + f"; measure them live on a GPU, or re-record: {record_command(exp)}")
    rows = doc["rows"]
    if plan == "reader":
        rows = registry.plan_rows(exp, rows, "reader", recorded=doc.get("params"))
    stale = {id(r): store.stale_kernels(r, exp.archived) for r in rows}
    bad = sorted({f for fs in stale.values() for f in fs})
    if bad:
        msg = (f"{store.relative(path)} holds rows measured with kernel sources that have "
               f"changed since ({', '.join('kernels/' + b for b in bad)}); "
               f"re-record them on a GPU: {record_command(exp)}")
        if _strict():
            raise ResultsError(msg)
        warnings.warn(msg, stacklevel=2)
    df = frame(rows, source="recorded", plan=_named(exp, plan))
    df["stale"] = [bool(stale[id(r)]) for r in rows]
    return df


def _canon(v):
    if isinstance(v, (list, tuple)):
        return [_canon(x) for x in v]
    return v


def frame(rows: list[dict], source: str, plan: str | None = None) -> pd.DataFrame:
    """Rows → a tidy DataFrame: params and metric values as columns; `plan`, the plan the
    rows were measured under (live) or selected by (replayed), goes to attrs["source"]."""
    recs, units, params = [], {}, {}
    for r in rows:
        rec = {"experiment": r["experiment"], "variant": r["variant"]}
        for k, v in r["params"].items():
            rec[k] = tuple(v) if isinstance(v, list) else v
            params[k] = None
        for k, m in r["metrics"].items():
            rec[k] = m["value"]
            units[k] = m["unit"]
        rec["launch"] = r["launch"] if isinstance(r["launch"], list) else None
        rec["correct"] = r["correct"]
        rec["rel_err"] = r["rel_err"]
        rec["run_id"] = r["provenance"]["run_id"]
        for k, v in r.items():
            if k not in store.ROW_KEYS and k not in rec and k != "chapter" \
                    and not isinstance(v, (dict, list)):
                rec[k] = v
        recs.append(rec)
    df = pd.DataFrame.from_records(recs)
    df["stale"] = False
    prov = rows[0]["provenance"] if rows else {}
    run_ids = sorted({r["provenance"]["run_id"] for r in rows})
    df.attrs["units"] = units
    df.attrs["params"] = list(params)      # the columns that are a row's parameters
    df.attrs["source"] = {
        "kind": source,
        "device": prov.get("device", {}).get("name", "?"),
        "slug": prov.get("device", {}).get("slug", "?"),
        "date": prov.get("date", "?"),
        "commit": prov.get("git_commit", "?"),
        "commits": sorted({commit_text(r["provenance"].get("git_commit"),
                                       r["provenance"].get("git_dirty")) for r in rows}),
        "run_ids": run_ids,
        "chapter": rows[0].get("chapter", "?") if rows else "?",
    }
    if plan is not None:
        df.attrs["source"]["plan"] = plan
    df.attrs["provenance"] = prov
    return df


def commit_text(commit, dirty=None) -> str:
    """A recorded row's commit as a reader should see it: the whole short hash, and
    "with uncommitted changes" where the measured tree differed from it (the row says
    so with `git_dirty`, or older rows with a "+wip" / "-dirty" suffix)."""
    c = str(commit or "unknown")
    for suffix in ("+wip", "-dirty"):
        if c.endswith(suffix):
            c, dirty = c[: -len(suffix)], True
    if len(c) >= 7 and all(ch in "0123456789abcdef" for ch in c):
        c = c[:7]
    return f"{c} with uncommitted changes" if dirty else c


def caption(df: pd.DataFrame) -> str:
    """'measured live on NVIDIA H200 · 2026-11-29 · run …[ · reader plan (how to run the
    full one)]' or 'recorded on … · date · commit 4d9039a[ with uncommitted changes] ·
    run …', never cut short: a page says which plan ran without a word of its own."""
    s = df.attrs.get("source", {})
    date = str(s.get("date", "?"))[:10]
    runs = ", ".join(s.get("run_ids", []))
    if s.get("kind") == "live":
        plan = (f" · reader plan (python -m perflab record --chapter {s.get('chapter', '?')}"
                " for the full plan)" if s.get("plan") == "reader" else "")
        return f"measured live on {s.get('device')} · {date} · run {runs}{plan}"
    commits = s.get("commits") or [commit_text(s.get("commit"))]
    commit = ("commit " if len(commits) == 1 else "commits ") + ", ".join(commits)
    stale = " · STALE rows present" if "stale" in df and df["stale"].any() else ""
    note = f" ({s['note']})" if s.get("note") else ""
    plan = " · the reader plan's rows" if s.get("plan") == "reader" else ""
    return (f"recorded on {s.get('device')} · {date} · {commit} · run {runs}{plan}{stale}"
            f"{note}")


def captions(*dfs: pd.DataFrame) -> str:
    """The captions of several frames, each source once, in order: a figure that shows a
    live machine beside a recorded one names both, and a frame that holds recorded rows in
    place of the ones this GPU could not run (`sidebyside.fill_not_run`) names the
    recording after its own line."""
    lines = []
    for df in dfs:
        lines.append(caption(df))
        lines += [b["caption"] for b in df.attrs.get("borrowed", [])]
    return "\n".join(dict.fromkeys(lines))


def record(chapter: str | None = None, experiments: list[str] | None = None,
           out_slug: str | None = None) -> list:
    """Measure every experiment (of one chapter) live, one run id for all, and write them."""
    import uuid

    from tqdm.auto import tqdm

    exps = [e for e in registry.all_experiments().values()
            if not e.archived and (chapter is None or e.chapter == chapter)
            and (not experiments or e.name in experiments)]
    if not exps:
        known = ", ".join(registry.chapters())
        raise registry.UnknownExperimentError(
            f"no experiments for chapter {chapter!r}; chapters: {known}")
    if any(e.target == "gpu" for e in exps):
        device.current()                 # no GPU: say so before anything is measured
    run_id = os.environ.get("PERFLAB_RUN_ID") or uuid.uuid4().hex[:12]
    written = []
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        bar = tqdm(exps, desc="record", unit="experiment", mininterval=5)
        for exp in bar:
            bar.set_description(exp.name)
            missing = exp.requires() if exp.requires else None
            if exp.target == "host" and not live_here(exp):
                from .host import unavailable
                missing = unavailable() or "PERFLAB_MODE=replay"
            if missing:
                bar.write(f"skipped {exp.name}: {missing}; its recorded rows stay as they are")
                continue
            full = exp.plan("full")
            run_info, slug = new_run(exp, run_id)
            rows = registry.execute(exp, full, run_info, progress=bar)
            path = store.file_for(out_slug or slug, exp.chapter, exp.name)
            store.write(path, exp.name, exp.chapter, full, rows)
            written.append(path)
    return written


def check_all(chapter: str | None = None, quick: bool = False) -> list[dict]:
    """The correctness pass: every experiment at its small parameters, nothing timed (host
    experiments only where C can be built here)."""
    rows = []
    for exp in registry.all_experiments().values():
        if (chapter and exp.chapter != chapter) or (quick and exp.sweep) or exp.archived:
            continue
        if exp.target == "host" and not live_here(exp):
            continue
        rows += registry.execute(exp, exp.params(exp.small), new_run(exp)[0], timing=False)
    return rows
