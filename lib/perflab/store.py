"""The results store: `results/<device-slug>/<chapter>/<experiment>.json`.

One file per experiment and device, rewritten atomically by each recording. A file is
self-describing: the schema version, the experiment, the parameters it was recorded with,
the provenance of the run (device, date, git commit, CuPy and CUDA versions, run id) and
one row per variant × size. Every row repeats its provenance, names the kernel sources it
ran with their sha256, and carries its metrics with units.

A row is *stale* when the sha256 of one of its kernel sources differs from the source in
kernels/ today: its numbers describe code that no longer exists. A row of a live
experiment that names a file no longer in kernels/ is stale too: the experiment now runs
other code. Only an archived experiment's row (a retired try, kept in git) is held against
the commit that has its code, or else the last commit that had the file: the row is then
not stale but *retired*, and `retired_at` names that commit.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import subprocess
import tempfile
import uuid
from pathlib import Path

from . import paths
from .errors import ResultsError

#: 2: kernel sha256 over the expanded source (perflab.kernels.source_sha256), files under
#: kernels/NN-slug/.
SCHEMA = 2
ROW_KEYS = ("experiment", "variant", "params", "metrics", "correct", "rel_err",
            "kernels", "launch", "provenance")


def results_dir() -> Path:
    return paths.RESULTS


def file_for(slug: str, chapter: str, experiment: str) -> Path:
    return results_dir() / slug / chapter / f"{experiment}.json"


def git_commit() -> dict:
    """The commit the measured tree was at, and whether the tree had local changes."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=paths.ROOT, capture_output=True,
                              text=True, timeout=20)
    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return {"commit": "unknown", "dirty": None}
        dirty = git("status", "--porcelain", "--", "kernels", "lib").stdout.strip() != ""
        return {"commit": head.stdout.strip(), "dirty": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"commit": "unknown", "dirty": None}


def new_run(device: dict, extra: dict | None = None) -> dict:
    """Provenance shared by every row measured in one run (one `run_id`)."""
    if os.environ.get("PERFLAB_GIT_COMMIT"):
        # A copy of the tree measured elsewhere: the caller names the commit it was taken
        # from. It wins over the copy's own .git, which may be absent or older than the
        # files beside it (a copy made from a checkout whose commits came later).
        g = {"commit": os.environ["PERFLAB_GIT_COMMIT"], "dirty": None}
    else:
        g = git_commit()
    return {
        "run_id": os.environ.get("PERFLAB_RUN_ID") or uuid.uuid4().hex[:12],
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": g["commit"],
        "git_dirty": g["dirty"],
        "device": device,
        **(extra or {}),
    }


#: Set to 1 to record rows measured from a tree whose kernels/ or lib/ differ from HEAD.
ALLOW_UNCOMMITTED = "PERFLAB_ALLOW_UNCOMMITTED"


def write(path: Path, experiment: str, chapter: str, params: dict, rows: list[dict]) -> Path:
    """Write one experiment's rows atomically (temp file in the same folder, then rename)."""
    for r in rows:
        missing = [k for k in ROW_KEYS if k not in r]
        if missing:
            raise ResultsError(f"row for {experiment}/{r.get('variant')} lacks {missing}")
    dirty = sorted({str(r["provenance"].get("git_commit")) for r in rows
                    if r.get("provenance", {}).get("git_dirty")})
    if dirty and os.environ.get(ALLOW_UNCOMMITTED) != "1":
        # A row must name a commit that holds the code that measured it.
        raise ResultsError(
            f"not recording {experiment}: kernels/ or lib/ differ from commit "
            f"{', '.join(c[:7] for c in dirty)}. Commit first and record again; or set "
            f"{ALLOW_UNCOMMITTED}=1 to keep such rows, whose stamps then say "
            "'with uncommitted changes'")
    doc = {"schema": SCHEMA, "experiment": experiment, "chapter": chapter,
           "params": params, "rows": rows}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=False, default=_jsonable)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _jsonable(x):
    try:
        import numpy as np
        if isinstance(x, np.generic):
            return x.item()
        if isinstance(x, np.ndarray):
            return x.tolist()
    except ImportError:
        pass
    if isinstance(x, (tuple, set)):
        return list(x)
    raise TypeError(f"{type(x).__name__} is not JSON-serialisable")


def load(path: Path) -> dict:
    """Read and validate one results file; any damage raises ResultsError naming the file."""
    rel = relative(path)
    if not path.exists():
        raise ResultsError(f"no recorded results at {rel}")
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultsError(f"{rel} is not valid JSON ({exc}); re-record it or restore it "
                           "from git") from None
    problems = []
    if not isinstance(doc, dict):
        problems.append("top level is not an object")
    else:
        if doc.get("schema") != SCHEMA:
            problems.append(f"schema {doc.get('schema')!r} is not {SCHEMA}")
        if not isinstance(doc.get("rows"), list) or not doc["rows"]:
            problems.append("no rows")
        else:
            for i, r in enumerate(doc["rows"]):
                if not isinstance(r, dict):
                    problems.append(f"row {i} is not an object")
                    continue
                missing = [k for k in ROW_KEYS if k not in r]
                if missing:
                    problems.append(f"row {i} lacks {missing}")
                elif r["experiment"] != doc.get("experiment"):
                    problems.append(f"row {i} belongs to {r['experiment']!r}")
                elif not isinstance(r["metrics"], dict) or any(
                        not isinstance(m, dict) or "value" not in m or "unit" not in m
                        for m in r["metrics"].values()):
                    problems.append(f"row {i} has metrics without value/unit")
                elif not isinstance(r["provenance"], dict) or "run_id" not in r["provenance"]:
                    problems.append(f"row {i} has no provenance/run_id")
                if len(problems) > 5:
                    break
    if problems:
        raise ResultsError(f"{rel} is corrupt or hand-edited: " + "; ".join(problems))
    return doc


def relative(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(paths.ROOT))
    except ValueError:
        return str(path)


def devices() -> list[str]:
    """Device slugs that have recorded results."""
    d = results_dir()
    return sorted(p.name for p in d.iterdir() if p.is_dir()) if d.exists() else []


def devices_with(experiment: str) -> list[str]:
    """Device slugs that have recorded results of `experiment` (sorted): every GPU a
    reader has recorded the experiment on, side by side with the lab's own."""
    return [slug for slug in devices() if find(experiment, slug) is not None]


def find(experiment: str, slug: str) -> Path | None:
    """The results file of `experiment` for device `slug`, whatever its chapter folder."""
    hits = sorted((results_dir() / slug).glob(f"*/{experiment}.json"))
    return hits[0] if hits else None


def _git(*args, **kw):
    return subprocess.run(["git", *args], cwd=paths.ROOT, capture_output=True, timeout=60, **kw)


_TREES: dict[tuple[str, str], Path | None] = {}
_TREES_DIR: list[tempfile.TemporaryDirectory] = []


def kernels_at(commit: str) -> Path | None:
    """kernels/ as it was at `commit` (extracted once per process into a temporary folder),
    or None if the commit is not in this repository's history."""
    import io
    import tarfile

    key = (str(paths.ROOT), commit)
    if key not in _TREES:
        full = _git("rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}", text=True)
        if full.returncode != 0 or not full.stdout.strip():
            _TREES[key] = None
            return None
        sha = full.stdout.strip()
        if not _TREES_DIR:
            _TREES_DIR.append(tempfile.TemporaryDirectory(prefix="perflab-kernels-"))
        dest = Path(_TREES_DIR[0].name) / sha
        if not dest.exists():
            arch = _git("archive", "--format=tar", sha, "kernels")
            if arch.returncode != 0:
                _TREES[key] = None
                return None
            with tarfile.open(fileobj=io.BytesIO(arch.stdout)) as t:
                t.extractall(dest, filter="data")
        _TREES[key] = dest / "kernels"
    return _TREES[key]


_RETIRED: dict[tuple[str, str], str | None] = {}


def retired_at(file: str) -> str | None:
    """For a kernel file that is no longer in kernels/: the last commit of this history
    that has it (a short hash), or None (never committed, or still in the tree)."""
    if (paths.KERNELS / file).exists():
        return None
    key = (str(paths.ROOT), file)
    if key not in _RETIRED:
        # The last commit that touched the file either still has it (then so does HEAD,
        # with the headers it includes as they are now) or deleted it (then its parent is
        # the last tree that had the file and its headers together).
        last = _git("rev-list", "-1", "HEAD", "--", f"kernels/{file}", text=True)
        commit = last.stdout.strip() if last.returncode == 0 else ""
        if commit:
            has = _git("cat-file", "-e", f"{commit}:kernels/{file}").returncode == 0
            commit = _git("rev-parse", "--short=7", "HEAD" if has else f"{commit}^",
                          text=True).stdout.strip()
        _RETIRED[key] = commit[:7] or None
    return _RETIRED[key]


def stale_kernels(row: dict, at: str | None = None) -> list[str]:
    """Kernel files whose source changed since `row` was measured, or that left kernels/.
    `at`: the commit that holds the code of the row's experiment, if it is archived
    (registry.archived); a file that commit has is compared with it, whatever kernels/
    holds now, and a file it lacks with the last commit that had it (`retired_at`): a
    retired kernel is not stale while that commit holds the source that ran. A live
    experiment's row (no `at`) whose file left kernels/ is stale: the experiment no
    longer runs that file."""
    from .kernels import source_sha256

    held = kernels_at(at) if at else None
    out = []
    for k in row.get("kernels", []):
        root = None
        if held is not None and (held / k["file"]).exists():
            root = held
        elif not (paths.KERNELS / k["file"]).exists():
            commit = retired_at(k["file"]) if at else None
            root = kernels_at(commit) if commit else None
            if root is None:
                out.append(k["file"])
                continue
        try:
            now = source_sha256(k["file"], root)
        except Exception:
            now = None
        if now != k["sha256"]:
            out.append(k["file"])
    return sorted(set(out))


def retired_kernels(rows) -> dict[str, str]:
    """{kernel file: the last commit that has it} for the rows' kernels no longer in
    kernels/."""
    out = {}
    for r in rows:
        for k in r.get("kernels", []):
            if not (paths.KERNELS / k["file"]).exists():
                out[k["file"]] = retired_at(k["file"]) or "?"
    return out


def all_stale() -> list[tuple[Path, str, str, list[str]]]:
    """(file, experiment, variant, changed sources) for every stale row in the store (an
    archived experiment's rows held against the commit that has its code)."""
    from .registry import all_experiments
    archived = {name: e.archived for name, e in all_experiments().items() if e.archived}
    out = []
    for path in sorted(results_dir().glob("*/*/*.json")):
        doc = load(path)
        for r in doc["rows"]:
            changed = stale_kernels(r, archived.get(r["experiment"]))
            if changed:
                out.append((path, r["experiment"], r["variant"], changed))
    return out


def provenance_problems(paths_=None) -> list[tuple[Path, str, str, str]]:
    """(file, experiment, variant, problem) for every recorded row whose commit is not in
    this repository's history, or whose kernel sources at that commit do not hash to the
    row's recorded hashes: a reader could not find the code that measured it.

    A commit written "abc1234+wip" or "abc1234-dirty" (or with git_dirty true) is looked
    up as abc1234; its stamp says "with uncommitted changes" in full."""
    from .kernels import source_sha256

    out = []
    for path in sorted(paths_ or results_dir().glob("*/*/*.json")):
        doc = load(path)
        for r in doc["rows"]:
            raw = str(r["provenance"].get("git_commit") or "")
            commit = raw.removesuffix("+wip").removesuffix("-dirty")
            root = kernels_at(commit) if commit and commit != "unknown" else None
            if root is None:
                out.append((path, r["experiment"], r["variant"],
                            f"commit {raw or 'unknown'} is not in this repository's history"))
                continue
            for k in r.get("kernels", []):
                try:
                    then = source_sha256(k["file"], root)
                except Exception:
                    then = None
                if then != k["sha256"]:
                    out.append((path, r["experiment"], r["variant"],
                                f"kernels/{k['file']} at {commit} does not hash to the row's "
                                "sha256"))
    return out
