"""Repository-wide pytest setup.

- The package is importable without installing it (lib/ goes on sys.path), so
  `pytest` works both in .venv and with an existing interpreter (`make test PY=python3`).
- Tests that need a GPU carry ``@pytest.mark.gpu``. `make test` deselects them
  (``-m "not gpu"``). Where they are selected and no GPU answers, they are skipped with
  the reason, except under `make test-gpu` (PERFLAB_REQUIRE_GPU=1), where a missing GPU
  is an error: a GPU run that silently skipped its GPU tests would prove nothing.
"""
from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
os.environ.setdefault("PERFLAB_ROOT", str(ROOT))
# Tests record into temporary folders from whatever tree they run in: the recorder's
# refusal of uncommitted trees is tested on its own (tests/test_store.py).
os.environ.setdefault("PERFLAB_ALLOW_UNCOMMITTED", "1")
if str(ROOT / "lib") not in sys.path:
    sys.path.insert(0, str(ROOT / "lib"))


@functools.lru_cache(maxsize=1)
def _gpu() -> tuple[bool, str]:
    """(present, reason). Asks CuPy, as the lab does; never raises."""
    try:
        from cupy.cuda import runtime
    except Exception as exc:  # CuPy missing or broken
        return False, f"CuPy could not be imported ({exc})"
    try:
        n = runtime.getDeviceCount()
    except Exception as exc:
        return False, f"no usable CUDA driver ({exc})"
    return (n > 0), ("" if n > 0 else "the CUDA driver reports no GPU")


def pytest_report_header(config):
    present, reason = _gpu() if _gpu_tests_selected(config) else (None, "")
    if present is None:
        return "perflab: GPU tests deselected"
    return f"perflab: GPU {'present' if present else 'absent: ' + reason}"


def _gpu_tests_selected(config) -> bool:
    expr = config.getoption("markexpr") or ""
    return "not gpu" not in expr


@pytest.hookimpl(trylast=True)  # after -m has deselected what it deselects
def pytest_collection_modifyitems(config, items):
    gpu_items = [it for it in items if it.get_closest_marker("gpu")]
    if not gpu_items:
        return
    present, reason = _gpu()
    if present:
        return
    if os.environ.get("PERFLAB_REQUIRE_GPU") == "1":
        raise pytest.UsageError(
            f"make test-gpu needs a GPU, and there is none: {reason}. "
            "Use `make test` on a machine without one."
        )
    skip = pytest.mark.skip(reason=f"needs a GPU: {reason}")
    for it in gpu_items:
        it.add_marker(skip)
