"""The SGEMM ladder: every rung is a `Variant` (see base.py); fp32.py holds the FFMA rungs,
tf32.py the tensor-core rungs."""
from __future__ import annotations

from ..errors import ConfigError
from .base import Variant


def variants() -> list[Variant]:
    from .fp32 import VARIANTS as fp32
    from .tf32 import VARIANTS as tf32
    return list(fp32) + list(tf32)


def get(name: str) -> Variant:
    vs = {v.name: v for v in variants()}
    if name not in vs:
        raise ConfigError(f"unknown SGEMM variant {name!r}; known: {', '.join(vs)}")
    return vs[name]
