"""Two plans per experiment. The full plan (the function's defaults) is what `make record`
measures and results/ holds; the reader plan (`reader=` at registration) is what a
notebook measures live by default, sized so that a chapter runs in about a minute on an
H200. A reader plan may only narrow the full plan (keep some values of a sequence
parameter, shorten a timing budget), so that every row a reader measures has a recorded
counterpart. Without a GPU, these tests prove that every experiment declares one, that
each is such a subset, that the recorded rows it selects exist, that every page still
has each number its prose quotes on those rows alone, and that `run` picks, records and
captions the plans as it should."""
from __future__ import annotations

import os
import re

import pytest

import perflab
import perflab.chapters
from perflab import lab, paths, registry, store
from perflab.errors import ConfigError
from tests.test_store import make_row, tmp_lab  # noqa: F401  (fixture)

#: Chapters whose reader plans are being written elsewhere: they run their full plan live
#: until then. Exactly the chapters without reader plans (the first test says so).
PENDING: set[str] = set()
#: A glued value that is no number: NaN (as Python or NumPy writes it) or None.
MISSING = re.compile(r"(np\.float\d*\()?-?nan\)?|None")


def _planned():
    return sorted((n, e) for n, e in registry.all_experiments().items() if e.reader is not None)


def _recorded(exp):
    """(slug, recorded document) of every device that recorded `exp`."""
    out = []
    for slug in store.devices():
        path = store.find(exp.name, slug)
        if path is not None:
            out.append((slug, store.load(path)))
    return out


# ---- the repository's plans -------------------------------------------------------------

def test_every_experiment_declares_a_reader_plan():
    lacking: dict[str, list[str]] = {}
    for name, e in registry.all_experiments().items():
        if e.reader is None:
            lacking.setdefault(e.chapter, []).append(name)
    unplanned = {c: sorted(n) for c, n in lacking.items() if c not in PENDING}
    assert not unplanned, ("declare a reader plan (reader={...}, or reader={} where the full "
                           f"plan is quick already) for {unplanned}")
    done = PENDING - set(lacking)
    assert not done, f"{sorted(done)} declare(s) every reader plan now: take it out of PENDING"


@pytest.mark.parametrize("name, exp", _planned(), ids=[n for n, _ in _planned()])
def test_a_reader_plan_narrows_the_full_plan(name, exp):
    registry.narrowed(exp, exp.reader)          # ConfigError where it does not
    assert exp.plan("full") == exp.defaults


@pytest.mark.parametrize("name, exp", _planned(), ids=[n for n, _ in _planned()])
def test_the_rows_of_a_reader_plan_are_recorded(name, exp):
    """Each recorded device's rows of the reader plan: some, and every value the plan
    keeps carried by one (plan_rows raises where a kept value has no row)."""
    docs = _recorded(exp)
    if not docs:        # a new chapter's: its page cannot be built before either
        pytest.skip(f"{name} has no recorded rows yet; on a GPU: {lab.record_command(exp)}")
    for slug, doc in docs:
        rows = registry.plan_rows(exp, doc["rows"], "reader", recorded=doc.get("params"))
        assert rows, f"{name}: none of the rows recorded on {slug} is in the reader plan"


def _pages_of(chapter: str) -> tuple[str, ...]:
    """A chapter's pages: its package's PAGES, or its CHAPTER."""
    pkg = next(p for p in perflab.chapters.discover().values() if p.CHAPTER == chapter)
    return getattr(pkg, "PAGES", (pkg.CHAPTER,))


def _pages() -> list[str]:
    """The pages of the chapters with reader plans."""
    return sorted(p for c in registry.chapters() if c not in PENDING for p in _pages_of(c))


def _quoted(page: str) -> set[str]:
    """The glued names the page's prose quotes ({glue:text}`x`, {glue}`x`)."""
    return set(re.findall(r"\{glue(?::text)?\}`([A-Za-z0-9_]+)", page))


#: Where a page or a chapter's code names a chapter's experiments or package: lab.run("slug.
#: (or f"slug.), perflab.chapters.slug, from perflab.chapters import a, b, from ..slug,
#: from .. import a, b.
_NAMES = re.compile(r'lab\.run\(f?"([a-z0-9_]+)\.|perflab\.chapters\.([a-z0-9_]+)'
                    r'|from perflab\.chapters import ([a-z0-9_, ]+)|from \.\.([a-z0-9_]+)'
                    r'|from \.\. import ([a-z0-9_, ]+)')


def _slugs(page: str) -> set[str]:
    """The chapters whose experiments a page may run: those its text names, and those the
    code of the chapters it names names in turn (machine.ceilings(), a report's lab.run)."""
    found = perflab.chapters.discover()
    todo = [(paths.ROOT / "chapters" / f"{page}.md").read_text()]
    seen: set[str] = set()
    while todo:
        for m in _NAMES.finditer(todo.pop()):
            for slug in re.split(r"[, ]+", "".join(g or "" for g in m.groups())):
                if slug in found and slug not in seen:
                    seen.add(slug)
                    pkg = paths.ROOT / "lib" / "perflab" / "chapters" / slug
                    todo += [f.read_text() for f in pkg.glob("*.py")]
    return seen


def _narrowing_slugs() -> set[str]:
    """The chapters with an experiment whose reader plan leaves out some recorded row."""
    out = set()
    for name, exp in _planned():
        for _, doc in _recorded(exp):
            kept = registry.plan_rows(exp, doc["rows"], "reader", recorded=doc.get("params"))
            if len(kept) < len(doc["rows"]):
                out.add(name.split(".")[0])
    return out


@pytest.mark.parametrize("page", _pages())
def test_a_page_keeps_every_number_it_quotes_on_its_reader_plans_rows(page, monkeypatch):
    """The page executed as the book executes it, replaying only the recorded rows that
    the reader plans would measure (PERFLAB_MODE=replay, PERFLAB_PLAN=reader): it runs to
    the end, and every number its prose quotes is there and is a number. (On the full
    plan's rows, none of them is NaN.) Where the reader plans of every chapter the page
    may run keep all their recorded rows, that replay is the full one, which `make book`
    executes: the page is not executed again."""
    import jupytext
    from nbclient import NotebookClient

    path = paths.ROOT / "chapters" / f"{page}.md"
    ran = set(re.findall(r'(?:lab|perflab)\.run\("([^"]+)"', path.read_text()))
    unrecorded = [e.name for e in registry.all_experiments().values()
                  if e.name in ran and not _recorded(e)]
    if unrecorded:      # a new chapter's: `make book` cannot build its page either
        pytest.skip(f"{page}: {unrecorded} have no recorded rows yet")
    if not _slugs(page) & _narrowing_slugs():
        return
    monkeypatch.setenv("PERFLAB_MODE", "replay")
    monkeypatch.setenv("PERFLAB_PLAN", "reader")
    monkeypatch.setenv("PERFLAB_BUILD", "1")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(paths.ROOT / "lib"), os.environ.get("PYTHONPATH", "")]))
    nb = jupytext.read(path)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    glued = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                glued[name] = out.get("data", {}).get("application/papermill.record/text/plain")
    quoted = _quoted(path.read_text())
    assert quoted - set(glued) == set(), f"{page}: not glued on the reader plans' rows"
    nan = sorted(k for k in quoted if glued[k] is None or MISSING.fullmatch(glued[k].strip()))
    assert not nan, f"{page}: NaN on the reader plans' rows (widen those plans): {nan}"


# ---- the machinery, on experiments of its own -------------------------------------------

@pytest.fixture
def demo(monkeypatch, tmp_lab):  # noqa: F811
    """demo.sizes (sizes -> each row's `bytes`, a baseline row beside them) and demo.mnk
    ((M, N, K) -> its rows' M, N, K), both with reader plans; recorded rows of the full
    plan on "demo-gpu"; a run that is live (no GPU needed: the function makes the rows)."""
    monkeypatch.setenv("PERFLAB_DEVICE", "demo-gpu")
    monkeypatch.delenv("PERFLAB_PLAN", raising=False)
    monkeypatch.delenv("PERFLAB_RECORD", raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("PERFLAB_STRICT", raising=False)
    calls = []
    with registry.isolated():
        @registry.experiment("demo.sizes", chapter="00-demo",
                             reader={"sizes": (2, 8), "budget_s": 0.1})
        def sizes(ctx, sizes=(2, 4, 8), budget_s=1.5):
            calls.append({"sizes": tuple(sizes), "budget_s": budget_s})
            for n in sizes:
                ctx.row(variant="kernel", params={"bytes": n}, metrics={"t": (n / 2, "ms")})
            ctx.row(variant="baseline", params={"bytes": 0}, metrics={"t": (1.0, "ms")})

        @registry.experiment("demo.mnk", chapter="00-demo",
                             reader={"sizes": ((64, 64, 64),)})
        def mnk(ctx, sizes=((64, 64, 64), (128, 128, 128), (64, 128, 256))):
            for m, n, k in sizes:
                ctx.row(variant="gemm", params={"M": m, "N": n, "K": k}, metrics={})

        for exp, params in ((registry.get("demo.sizes"), {"sizes": [2, 4, 8], "budget_s": 1.5}),
                            (registry.get("demo.mnk"), None)):
            ctx = registry.Context(exp, make_row()["provenance"])
            exp.func(ctx, **exp.defaults)
            store.write(store.file_for("demo-gpu", "00-demo", exp.name), exp.name, "00-demo",
                        params or exp.defaults, ctx.rows)
        calls.clear()

        def live(on: bool):
            monkeypatch.setattr(lab, "live_here", lambda exp: on)
            monkeypatch.setattr(lab, "new_run", lambda exp, run_id=None: (
                {**make_row()["provenance"], "date": "2026-12-05T00:00:00+00:00"}, "demo-gpu"))
        live(True)
        yield calls, live


def test_live_runs_the_reader_plan_and_says_so(demo):
    calls, _ = demo
    df = perflab.run("demo.sizes")
    assert calls[-1] == {"sizes": (2, 8), "budget_s": 0.1}
    assert df.attrs["source"]["plan"] == "reader"
    assert lab.caption(df) == ("measured live on Demo GPU · 2026-12-05 · run r1 · reader plan "
                               "(python -m perflab record --chapter 00-demo for the full plan)")


def test_a_reader_plan_that_is_the_full_plan_is_named_full(demo):
    _, live = demo
    with registry.isolated():
        @registry.experiment("demo.quick", chapter="00-demo", reader={})
        def quick(ctx, sizes=(2,)):
            ctx.row(variant="kernel", params={"bytes": 2}, metrics={})
        df = perflab.run("demo.quick")
    assert df.attrs["source"]["plan"] == "full" and "plan" not in lab.caption(df)


def test_the_full_plan_on_request(demo, monkeypatch):
    calls, _ = demo
    df = perflab.run("demo.sizes", plan="full")
    assert calls[-1] == {"sizes": (2, 4, 8), "budget_s": 1.5}
    assert df.attrs["source"]["plan"] == "full" and "plan" not in lab.caption(df)
    monkeypatch.setenv("PERFLAB_PLAN", "full")
    perflab.run("demo.sizes")
    assert calls[-1]["sizes"] == (2, 4, 8)
    perflab.run("demo.sizes", plan="reader")            # the argument wins over the variable
    assert calls[-1]["sizes"] == (2, 8)


def test_keyword_parameters_override_either_plan(demo):
    calls, _ = demo
    perflab.run("demo.sizes", sizes=(4,))
    assert calls[-1] == {"sizes": (4,), "budget_s": 0.1}
    perflab.run("demo.sizes", plan="full", budget_s=0.5)
    assert calls[-1] == {"sizes": (2, 4, 8), "budget_s": 0.5}


def test_a_bad_plan_name_is_refused(demo, monkeypatch):
    with pytest.raises(ConfigError, match=r"unknown plan plan='quick'; the plans are reader, full"):
        perflab.run("demo.sizes", plan="quick")
    monkeypatch.setenv("PERFLAB_PLAN", "ful")
    with pytest.raises(ConfigError, match=r"unknown plan PERFLAB_PLAN='ful'"):
        perflab.run("demo.sizes")


def test_a_recording_measures_the_full_plan(demo, monkeypatch):
    calls, _ = demo
    perflab.run("demo.sizes", record=True)
    assert calls[-1]["sizes"] == (2, 4, 8)
    assert store.load(store.find("demo.sizes", "demo-gpu"))["params"]["sizes"] == [2, 4, 8]
    monkeypatch.setenv("PERFLAB_RECORD", "1")            # make book-record
    perflab.run("demo.sizes")
    assert calls[-1]["sizes"] == (2, 4, 8)
    with pytest.raises(ConfigError, match="a recording measures the full plan"):
        perflab.run("demo.sizes", plan="reader")
    exp = registry.get("demo.sizes")
    monkeypatch.setattr(registry, "all_experiments", lambda: {exp.name: exp})
    monkeypatch.setattr(lab.device, "current", lambda: None)
    lab.record()
    assert calls[-1] == {"sizes": (2, 4, 8), "budget_s": 1.5}


def test_a_replay_shows_the_full_plan_or_the_reader_plans_rows(demo, monkeypatch):
    _, live = demo
    live(False)
    full = perflab.run("demo.sizes")
    assert list(full["bytes"]) == [2, 4, 8, 0] and "plan" not in lab.caption(full)
    monkeypatch.setenv("PERFLAB_PLAN", "reader")
    df = perflab.run("demo.sizes")
    assert list(df["bytes"]) == [2, 8, 0]               # the baseline row depends on no size
    assert lab.caption(df).endswith("run r1 · the reader plan's rows")
    assert list(perflab.run("demo.mnk")["M"]) == [64]


def test_plan_rows_reads_tuples_off_several_row_parameters(demo):
    exp = registry.get("demo.mnk")
    rows = store.load(store.find("demo.mnk", "demo-gpu"))["rows"]
    assert registry.row_keys(exp, "sizes", [(64, 64, 64), (128, 128, 128), (64, 128, 256)],
                             [(64, 64, 64)], rows)[0] == ("M", "N", "K")
    exp.reader = {"sizes": ((64, 128, 256), (128, 128, 128))}
    assert [r["params"]["K"] for r in registry.plan_rows(exp, rows)] == [128, 256]


def test_profiler_segments_are_matched_by_the_names_they_give(demo):
    with registry.isolated():
        @registry.experiment("demo.profile", chapter="00-demo",
                             reader={"segments": [{"what": "pair", "variant": "a"}]})
        def profile(ctx, segments=None):
            pass
        exp = registry.get("demo.profile")
    rows = [{"variant": w, "params": {"what": w, "variant": v, "stride": s}}
            for w, v, s in (("pair", "a", None), ("pair", "b", None), ("strided", None, 2))]
    assert [r["params"]["variant"] for r in registry.plan_rows(exp, rows)] == ["a"]


def test_a_reader_plan_that_does_not_narrow_is_refused(demo):
    exp = registry.get("demo.sizes")
    with pytest.raises(ConfigError, match=r"sizes has \[16\], which the full plan's"):
        registry.narrowed(exp, {"sizes": (2, 16)})
    with registry.isolated():
        @registry.experiment("demo.scalar", chapter="00-demo", reader={"n": 8})
        def scalar(ctx, n=64, budget_s=1.0):
            pass
        with pytest.raises(ConfigError, match="is 8 where the full plan has 64"):
            registry.narrowed(registry.get("demo.scalar"), {"n": 8})
        registry.narrowed(registry.get("demo.scalar"), {"budget_s": 0.1})   # timing only


def test_a_reader_plan_is_checked_when_it_is_registered():
    with registry.isolated():
        with pytest.raises(TypeError, match=r"its reader plan sets \['size'\], which it does "
                                            r"not take; it takes \['sizes'\]"):
            @registry.experiment("demo.typo", chapter="00-demo", reader={"size": (1,)})
            def typo(ctx, sizes=(1, 2)):
                pass
        with pytest.raises(ValueError, match=r"parameter \['plan'\] is a keyword of perflab.run"):
            @registry.experiment("demo.clash", chapter="00-demo", reader={})
            def clash(ctx, plan=None):
                pass


def test_an_undeclared_reader_plan_is_the_full_plan():
    with registry.isolated():
        @registry.experiment("demo.pending", chapter="00-demo")
        def pending(ctx, sizes=(1, 2)):
            pass
        exp = registry.get("demo.pending")
        assert exp.reader is None and exp.plan("reader") == exp.plan("full") == {"sizes": (1, 2)}


def test_a_recorded_check_replays_under_the_reader_plan(demo, monkeypatch):
    """An experiment registered with replay_reader (the sanitizers' verdicts, say): live,
    the reader plan shows its recorded rows with the reason; the full plan, or a
    parameter, measures it."""
    calls, _ = demo
    with registry.isolated():
        @registry.experiment("demo.check", chapter="00-demo", reader={},
                             replay_reader="a recorded check, minutes under its tool")
        def check(ctx, tools=("a", "b")):
            calls.append({"tools": tuple(tools)})
            for t in tools:
                ctx.row(variant=t, params={"tool": t}, metrics={"errors": (0, "1")})
        exp = registry.get("demo.check")
        ctx = registry.Context(exp, make_row()["provenance"])
        exp.func(ctx, **exp.defaults)
        store.write(store.file_for("demo-gpu", "00-demo", exp.name), exp.name, "00-demo",
                    exp.defaults, ctx.rows)
        calls.clear()
        df = perflab.run("demo.check")
        assert calls == [] and list(df["variant"]) == ["a", "b"]
        assert df.attrs["source"]["kind"] == "recorded"
        assert ("not measured live in the reader plan: a recorded check, minutes under its "
                "tool; lab.run('demo.check', plan='full') measures it") in lab.caption(df)
        assert perflab.run("demo.check", plan="full").attrs["source"]["kind"] == "live"
        perflab.run("demo.check", tools=("a",))
        assert calls == [{"tools": ("a", "b")}, {"tools": ("a",)}]
        monkeypatch.setenv("PERFLAB_PLAN", "full")
        perflab.run("demo.check")
        assert len(calls) == 3
        with pytest.raises(ValueError, match="reader plan that replays"):
            registry.experiment("demo.bad", chapter="00-demo", reader={"tools": ("a",)},
                                replay_reader="why")(check)


def test_every_sanitizer_is_a_recorded_check():
    """A reader's live run never starts compute-sanitizer: every chapter's sanitize
    experiment replays its recorded verdicts under the reader plan."""
    sanitizers = [e for n, e in registry.all_experiments().items() if n.endswith(".sanitize")]
    assert sanitizers and all(e.replay_reader for e in sanitizers)


def test_every_profiler_is_a_recorded_check():
    """A reader's live run never starts Nsight Compute: every experiment that profiles
    (its requirement is the profiler's) replays its recorded counters under the reader
    plan, with the one reason the core gives."""
    from perflab.profile import REPLAYED
    profilers = [e for n, e in registry.all_experiments().items()
                 if n.rsplit(".", 1)[1].startswith("profile") or n.endswith("_profile")]
    assert len(profilers) >= 10
    missing = [e.name for e in profilers if e.replay_reader != REPLAYED and not e.archived]
    assert not missing, f"profilers a reader's run would start: {missing}"
