"""Chapter 1, tiled SGEMM (chapters/01-sgemm.md): a ladder of kernels, one idea per rung
(kernels/01-sgemm/01..12), each checked against a float64 reference and timed next to
cuBLAS in the same run.

    from perflab.chapters import sgemm
    v = sgemm.get("06-warptiling")
    v.run(A, B, C, v.params())             # checked, then enqueued on the stream

Modules: variant (what a rung is: the lab's Variant, perflab.variant, with a precision and
the operand checks), simple (01-05), warptile (06), splitk (07), tensor (08, 09), hopper
(10), tcsplitk (11), hopper3x (12), experiments (ladder, sweep, split-K, chunks, profile),
report (tables and figures), explorer (the tile-size explorer), profiling (the ncu child).
"""
from __future__ import annotations

CHAPTER = "01-sgemm"
TITLE = "Tiled SGEMM: from DRAM to registers to tensor cores"

from ...errors import ConfigError  # noqa: E402
from ...variant import Variant  # noqa: E402
from .variant import GemmVariant  # noqa: E402


def variants() -> list[GemmVariant]:
    """The rungs, in ladder order."""
    from . import hopper, hopper3x, simple, splitk, tcsplitk, tensor, warptile
    return (list(simple.VARIANTS) + [warptile.VARIANT, splitk.VARIANT] + list(tensor.VARIANTS)
            + [hopper.VARIANT, tcsplitk.VARIANT, hopper3x.VARIANT])


def get(name: str) -> GemmVariant:
    vs = {v.name: v for v in variants()}
    if name not in vs:
        raise ConfigError(f"unknown SGEMM variant {name!r}; known: {', '.join(vs)}")
    return vs[name]


from . import experiments  # noqa: E402  (registers sgemm.*)
from .experiments import Problem, baselines, configs, measure, run_variant  # noqa: E402

__all__ = ["CHAPTER", "TITLE", "Variant", "GemmVariant", "variants", "get", "Problem",
           "baselines", "configs", "measure", "run_variant"]

#: the package's own modules beyond the roles of perflab.chapters (module -> role)
PARTS = {
    "simple": "rungs 01-05",
    "warptile": "rung 06",
    "splitk": "rung 07",
    "tensor": "rungs 08 and 09",
    "hopper": "rung 10",
    "tcsplitk": "rung 11",
    "hopper3x": "rung 12",
}
