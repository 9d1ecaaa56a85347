"""Where the lab's files live. The package is installed from the repository (editable),
so the repository root is found from this file, or from PERFLAB_ROOT when set."""
from __future__ import annotations

import os
from pathlib import Path


def repo_root() -> Path:
    env = os.environ.get("PERFLAB_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "kernels").is_dir() and (parent / "_toc.yml").exists():
            return parent
    raise RuntimeError(
        "cannot find the lab's repository root (a folder with kernels/ and _toc.yml) "
        f"above {here}; set PERFLAB_ROOT"
    )


ROOT = repo_root()
KERNELS = ROOT / "kernels"
RESULTS = ROOT / "results"
