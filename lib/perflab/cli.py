"""The lab's command line.

  python -m perflab device                   what GPU is here, live or replay, and why
  python -m perflab list                     the experiments, by chapter
  python -m perflab record [--chapter C]     measure on the GPU and rewrite results/<device>/
  python -m perflab show EXP [--device S] [--json]   print recorded rows
  python -m perflab stale                    list stale recorded rows; exit 1 if any
  python -m perflab provenance               rows whose commit does not hold their kernels
  python -m perflab execute [--chapter C] [--record]   execute chapters as a reader does, timed
  python -m perflab check [--chapter C]      every kernel's correctness check, small sizes
  python -m perflab sanitize                 `check` under compute-sanitizer memcheck + racecheck
  python -m perflab compile-report [...]     offline NVRTC resource report (no GPU needed)
  python -m perflab new-chapter NN SLUG TITLE  a new chapter's files, from the template
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

from .errors import PerflabError


def _device(args) -> int:
    from . import device
    m = device.mode()
    print(f"mode: {m}")
    if m == "live":
        for k, v in device.current().as_dict().items():
            print(f"  {k:22s} {v}")
        for k, v in device.clocks_now().items():
            print(f"  {k:22s} {v}")
    else:
        print(f"  why: {device.why_replay()}")
    return 0


def _list(args) -> int:
    from . import registry
    for name, e in sorted(registry.all_experiments().items(), key=lambda x: (x[1].chapter, x[0])):
        note = f"  (archived: its code is at commit {e.archived})" if e.archived else ""
        print(f"{e.chapter:14s} {name:22s} {e.title}{note}")
    return 0


def _record(args) -> int:
    from . import lab
    for p in lab.record(args.chapter, args.experiment or None):
        print(f"wrote {p}")
    return 0


def _show(args) -> int:
    from . import lab, registry, store
    import pandas as pd

    exp = registry.get(args.experiment)
    slug = args.device or lab.replay_device()
    path = store.find(exp.name, slug)
    if path is None:
        raise PerflabError(f"no recorded results of {exp.name!r} for {slug!r}")
    doc = store.load(path)
    if args.json:
        print(json.dumps(doc["rows"], indent=1))
        return 0
    df = lab.frame(doc["rows"], "recorded")
    print(f"# {store.relative(path)} — {lab.caption(df)}")
    with pd.option_context("display.width", 200, "display.max_columns", 40,
                           "display.max_rows", 500):
        print(df.drop(columns=["experiment", "stale"]).to_string(index=False))
    return 0


def _stale(args) -> int:
    from . import store
    rows = store.all_stale()
    if not rows:
        n = len(list(store.results_dir().glob("*/*/*.json")))
        print(f"no stale rows ({n} results files checked)")
        return 0
    chapters = set()
    for path, exp, variant, files in rows:
        chapters.add(path.parent.name)
        print(f"STALE {store.relative(path)}: {exp}/{variant} (changed: {', '.join(files)})")
    print("re-record on a machine with an NVIDIA GPU: "
          + "; ".join(f"python -m perflab record --chapter {c}" for c in sorted(chapters)))
    return 1


def _provenance(args) -> int:
    """Every recorded row must name a commit of this history whose kernel sources hash to
    the row's: list the results files with rows that do not, and why (exit 1 if any)."""
    from collections import Counter

    from . import store
    problems = store.provenance_problems()
    if not problems:
        n = len(list(store.results_dir().glob("*/*/*.json")))
        print(f"every row names a commit that holds its kernels ({n} results files checked)")
        return 0
    for (path, why), n in sorted(Counter((store.relative(p), w) for p, _, _, w in problems).items()):
        print(f"{path}: {n} row(s): {why}")
    chapters = sorted({p.parent.name for p, *_ in problems})
    print(f"{len(problems)} row(s); re-record from a committed tree on a machine with an NVIDIA "
          "GPU: " + "; ".join(f"python -m perflab record --chapter {c}" for c in chapters))
    return 1


def _execute(args) -> int:
    from .execute import execute
    rows = execute(args.chapter or None, timeout=args.timeout, record=args.record,
                   plan=args.plan)
    return 0 if all(r["correct"] for r in rows) else 1


def _check(args) -> int:
    from . import lab
    if os.environ.get("PERFLAB_NO_POOL") == "1":
        # Under compute-sanitizer: one cudaMalloc per array, so an out-of-bounds access
        # lands outside an allocation instead of inside CuPy's pooled chunk.
        import cupy
        cupy.cuda.set_allocator(None)
    rows = lab.check_all(args.chapter, quick=args.quick)
    bad = [r for r in rows if r["correct"] is False]
    for r in rows:
        status = "ok  " if r["correct"] else ("FAIL" if r["correct"] is False else "-   ")
        print(f"{status} {r['experiment']:18s} {r['variant']:28s} {r['params']} "
              f"rel_err={r['rel_err']}")
    print(f"{len(rows) - len(bad)} passed, {len(bad)} failed")
    return 1 if bad else 0


def _sanitize(args) -> int:
    tool = shutil.which("compute-sanitizer")
    if tool is None:
        raise PerflabError("compute-sanitizer is not on PATH (it ships with the CUDA toolkit)")
    status = 0
    for t in ("memcheck", "racecheck"):
        cmd = [tool, "--tool", t, "--error-exitcode", "3", "--print-limit", "20",
               sys.executable, "-m", "perflab", "check"]
        if args.chapter:
            cmd += ["--chapter", args.chapter]
        if args.quick:
            cmd += ["--quick"]
        print("$", " ".join(cmd), flush=True)
        rc = subprocess.call(cmd, env={**os.environ, "PERFLAB_NO_POOL": "1"})
        print(f"{t}: {'clean' if rc == 0 else f'FAILED (exit {rc})'}", flush=True)
        status = status or rc
    return 1 if status else 0


def _new_chapter(args) -> int:
    from . import paths, scaffold
    for p in scaffold.new_chapter(args.number, args.slug, args.title):
        print(f"wrote {p.relative_to(paths.ROOT)}")
    print("add the page to _toc.yml, under the part it belongs to:\n"
          + scaffold.toc_line(args.number, args.slug))
    return 0


def _compile_report(rest: list[str]) -> int:
    from . import compile_report
    return compile_report.main(rest)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m perflab", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("device").set_defaults(fn=_device)
    sub.add_parser("list").set_defaults(fn=_list)
    r = sub.add_parser("record")
    r.add_argument("--chapter")
    r.add_argument("--experiment", action="append")
    r.set_defaults(fn=_record)
    s = sub.add_parser("show")
    s.add_argument("experiment")
    s.add_argument("--device")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=_show)
    sub.add_parser("stale").set_defaults(fn=_stale)
    sub.add_parser("provenance").set_defaults(fn=_provenance)
    x = sub.add_parser("execute", help="execute the chapters in a Jupyter kernel, timed")
    x.add_argument("--chapter", action="append", help="a chapter file's name, NN-name (repeatable; default all)")
    x.add_argument("--record", action="store_true", help="write results/<slug>/99-execution/")
    x.add_argument("--timeout", type=int, default=1800, help="seconds per cell")
    x.add_argument("--plan", choices=("reader", "full"),
                   help="the plan to measure live or replay (default: as a reader's run: the "
                        "reader plans live, the full plan's rows replayed)")
    x.set_defaults(fn=_execute)
    c = sub.add_parser("check")
    c.add_argument("--chapter")
    c.add_argument("--quick", action="store_true",
                   help="skip the tile-size sweeps (every rung is still checked)")
    c.set_defaults(fn=_check)
    z = sub.add_parser("sanitize")
    z.add_argument("--chapter")
    z.add_argument("--quick", action="store_true",
                   help="skip the tile-size sweeps (every rung is still checked)")
    z.set_defaults(fn=_sanitize)
    n = sub.add_parser("new-chapter", help="a new chapter's files, from the template")
    n.add_argument("number", type=int)
    n.add_argument("slug")
    n.add_argument("title")
    n.set_defaults(fn=_new_chapter)
    sub.add_parser("compile-report", add_help=False,
                   help="offline NVRTC report; `compile-report --help` for its options")
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["compile-report"]:      # its own options (see compile_report.main)
        return _compile_report(argv[1:])
    args = p.parse_args(argv)
    try:
        return args.fn(args)
    except PerflabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
