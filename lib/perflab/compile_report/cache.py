"""The on-disk compile cache: one file per compiled kernel instantiation.

It lives in `$PERFLAB_CACHE_DIR/compile` when that is set, else in
`$XDG_CACHE_HOME/perflab/compile`, else in `~/.cache/perflab/compile`. An entry is the
zlib-compressed JSON of what was compiled (the ptxas log among it), a NUL byte, then the
cubin: about 10 KB for a big SGEMM kernel (its cubin is 25 KB to 85 KB), so every cubin is
kept, and the SASS the book shows needs no compile either. An entry is written to a
temporary file and renamed into place, so a reader never sees half of one; one that does
not decompress, parse or name its own key is treated as missing (compiled again).
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zlib
from pathlib import Path

#: Changes whenever the entry format or what the key covers changes.
FORMAT = "perflab-compile-1"

_SUFFIX = ".z"


def directory() -> Path:
    """Where the entries are (read from the environment at every call)."""
    if os.environ.get("PERFLAB_CACHE_DIR"):
        return Path(os.environ["PERFLAB_CACHE_DIR"]) / "compile"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "perflab" / "compile"


def key(*parts) -> str:
    """sha256 of FORMAT and `parts` (anything JSON can write)."""
    return hashlib.sha256(json.dumps([FORMAT, *parts], sort_keys=True).encode()).hexdigest()


def _path(k: str) -> Path:
    return directory() / f"{k}{_SUFFIX}"


def load(k: str) -> tuple[dict, bytes] | None:
    """(meta, blob) of entry `k`, or None when it is missing or unreadable."""
    try:
        raw = zlib.decompress(_path(k).read_bytes())
        head, blob = raw.split(b"\0", 1)
        meta = json.loads(head)
    except (OSError, zlib.error, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("key") != k:
        return None
    return meta, blob


def store(k: str, meta: dict, blob: bytes) -> None:
    """Write entry `k` atomically. A cache that cannot be written is no error: the
    kernels are then compiled again next time."""
    data = zlib.compress(json.dumps({**meta, "key": k}).encode() + b"\0" + blob)
    try:
        directory().mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory(), prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, _path(k))
        finally:
            if os.path.exists(tmp):     # not renamed: the write failed
                os.unlink(tmp)
    except OSError:
        pass


def clear() -> None:
    """Remove every entry."""
    for p in directory().glob(f"*{_SUFFIX}"):
        p.unlink(missing_ok=True)
