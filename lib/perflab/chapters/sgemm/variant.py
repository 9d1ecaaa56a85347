"""What one rung of the SGEMM ladder is, to the experiments that check and time it: the
lab's `Variant` (perflab.variant) with a precision and the operand checks of C = A @ B.

Every variant computes C = A @ B for row-major float32 matrices, A (M, K), B (K, N),
C (M, N), any positive M, N, K (not only multiples of the tile).

    v = get("06-warptiling")
    v.run(A, B, C, v.params(BM=128, auto_shape=False))   # checked, then enqueued

`run` checks the operands (dtype, layout, shapes) and the parameters once, here, for
every rung, and raises ConfigError with the reason; `enqueue` only puts the kernels on
the current stream (what the timer calls, after one checked `run`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import errors
from ...errors import ConfigError
from ...kernels import KernelSpec
from ...variant import Variant

#: The kernels of this chapter, relative to kernels/.
KDIR = "01-sgemm"


@dataclass(frozen=True, kw_only=True)
class GemmVariant(Variant):
    """A rung of the ladder: the lab's Variant (perflab.variant) with its precision, the
    operand checks of C = A @ B, and the tile parameters auto_shape chooses."""

    precision: str                   # "fp32" | "tf32" | "3xtf32"
    # Parameters that auto_shape=True chooses per problem: given with auto_shape on, they
    # would be ignored, so `params` and `run` refuse them instead.
    auto_keys: tuple[str, ...] = ()

    def params(self, **overrides) -> dict:
        """The default parameters with `overrides`; unknown names and tile parameters that
        auto_shape would replace are refused with the reason."""
        p = super().params(**overrides)
        self._refuse_ignored(p)
        return p

    def _refuse_ignored(self, p: dict) -> None:
        if not p.get("auto_shape"):
            return
        given = {k: p[k] for k in self.auto_keys if p[k] != self.default_params[k]}
        if given:
            shown = ", ".join(f"{k}={v}" for k, v in given.items())
            raise ConfigError(
                f"{self.name}: with auto_shape=True the tile ({', '.join(self.auto_keys)}) "
                f"is chosen per problem, so {shown} would be ignored; pass "
                "auto_shape=False to use the tile you give")

    def check_common(self, params: dict, M: int, N: int, K: int,
                     device: dict | None = None) -> None:
        if min(M, N, K) < 1:
            raise ConfigError(f"{self.name}: M, N, K must be positive, got {M}, {N}, {K}")
        self._refuse_ignored(params)

    def check(self, params: dict, M: int, N: int, K: int, device: dict | None = None) -> None:
        """Raise ConfigError with the reason when `params` cannot run this problem (on
        `device`, when given: its shared-memory and thread limits). The chapter's callers
        pass the device by position, after M, N, K; the core takes it by name."""
        super().check(params, M, N, K, device=device)

    def operands(self, A, B, C) -> tuple[int, int, int]:
        return operands(self.name, A, B, C)


def operands(name: str, A, B, C) -> tuple[int, int, int]:
    """(M, N, K) of C = A @ B, or ConfigError naming what is wrong: every rung reads
    row-major float32 device arrays of matching shapes, each starting on 4 bytes, and C
    must not overlap A or B."""
    for nm, x in (("A", A), ("B", B), ("C", C)):
        dtype = getattr(x, "dtype", None)
        if dtype != np.float32:
            raise ConfigError(f"{name}: {nm} is {dtype}, not float32 (cast it: "
                              f"{nm}.astype(cupy.float32))")
        if getattr(x, "ndim", None) != 2:
            raise ConfigError(f"{name}: {nm} must be a 2-D matrix, got shape {x.shape}")
        if not x.flags.c_contiguous:
            raise ConfigError(f"{name}: {nm} must be C-contiguous (row-major); pass "
                              f"cupy.ascontiguousarray({nm})")
        # Every rung loads and stores whole floats (4-byte accesses at least; the 16-byte
        # paths are chosen only where `aligned` says so): a float32 view that does not
        # start on 4 bytes (a view of a byte buffer) would fault with a misaligned
        # address and lose the CUDA context.
        if x.data.ptr % 4:
            raise ConfigError(f"{name}: {nm} starts {x.data.ptr % 4} bytes past a 4-byte "
                              "boundary (a float32 view of a byte buffer?), and every rung "
                              f"reads whole floats; pass a copy ({nm}.copy())")
    (M, K), (K2, N) = A.shape, B.shape
    if K2 != K:
        raise ConfigError(f"{name}: A is {M}x{K} but B is {K2}x{N}: inner dimensions differ")
    if C.shape != (M, N):
        raise ConfigError(f"{name}: C is {C.shape[0]}x{C.shape[1]}, A @ B is {M}x{N}")
    for nm, x in (("A", A), ("B", B)):
        lo, hi = x.data.ptr, x.data.ptr + x.nbytes
        if lo < C.data.ptr + C.nbytes and C.data.ptr < hi:
            raise ConfigError(f"{name}: C overlaps {nm}; the kernels read {nm} while "
                              "writing C, so C must be a separate array")
    return int(M), int(N), int(K)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def i32(*xs):
    return tuple(np.int32(x) for x in xs)


def aligned(*arrays, cols: tuple[int, ...] = ()) -> bool:
    """The 16-byte path is legal: every array starts on 16 bytes and every row length in
    `cols` (in floats) is a multiple of 4, so every row starts on 16 bytes too."""
    return all(c % 4 == 0 for c in cols) and all(a.data.ptr % 16 == 0 for a in arrays)


def require(cond: bool, name: str, reason: str, short: str | None = None) -> None:
    """ConfigError "`name`: `reason`" unless `cond` (`short`: the reason in a few words)."""
    errors.require(cond, f"{name}: {reason}", short)


def smem_fits(name: str, need: int, device: dict | None, what: str) -> None:
    """Refuse a block whose shared memory exceeds what `device` lets one block opt in to."""
    if device is None:
        return
    limit = int(device["smem_per_block_optin"])
    require(need <= limit, name,
            f"{what} = {need} B of shared memory, over the {limit // 1024} KB "
            f"({limit} B) a block may use on {device.get('name', 'this GPU')}",
            short=f"needs {-(-need // 1024)} KB of shared memory ({limit // 1024} KB here)")


def spec(file: str, fn: str, template: tuple = ()) -> KernelSpec:
    """A kernel of this chapter: `file` under kernels/01-sgemm/."""
    return KernelSpec(f"{KDIR}/{file}", fn, template=template)
