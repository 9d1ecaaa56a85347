"""What one rung of the SGEMM ladder is, to the experiments that check and time it.

Every variant computes C = A @ B for row-major float32 matrices, A (M, K), B (K, N),
C (M, N), any positive M, N, K (not only multiples of the tile). `run` only enqueues
kernels on the current stream: the experiment poisons C, checks, times and records.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..errors import ConfigError
from ..kernels import KernelSpec


@dataclass(frozen=True)
class Variant:
    name: str                        # "03-smem-tiling": file order, used in tables and plots
    label: str                       # "shared-memory tiles 32×32"
    precision: str                   # "fp32" | "tf32" | "3xtf32"
    idea: str                        # one sentence: what this rung changes
    kernels: Callable[[dict], list[KernelSpec]]          # every spec `run` launches
    run: Callable[..., None]         # run(A, B, C, params) -> None, enqueues kernels
    default_params: dict = field(default_factory=dict)
    param_space: dict = field(default_factory=dict)      # name -> allowed values (widget/sweep)
    validate: Callable[[dict, int, int, int], None] | None = None  # raise ConfigError(reason)

    def params(self, **overrides) -> dict:
        unknown = set(overrides) - set(self.default_params)
        if unknown:
            raise ConfigError(f"{self.name}: unknown parameter(s) {sorted(unknown)}; "
                              f"it takes {sorted(self.default_params)}")
        return {**self.default_params, **overrides}

    def check(self, params: dict, M: int, N: int, K: int) -> None:
        """Raise ConfigError with the reason when `params` cannot run this problem."""
        if min(M, N, K) < 1:
            raise ConfigError(f"{self.name}: M, N, K must be positive, got {M}, {N}, {K}")
        if self.validate is not None:
            self.validate(params, M, N, K)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)
