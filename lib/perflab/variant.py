"""What a variant is: one rung of a chapter's ladder, one idea, to the experiments that
check and time it, the explorers that offer its parameters and the pages that name it.

    v = chapter.get("some-rung")
    p = v.params(TILE=16)              # the defaults with TILE=16; an unknown name: ConfigError
    v.reason(p, *problem, device=dev)  # why it cannot run this problem here, or None
    v.run(*operands, p)                # operands and parameters checked, then enqueued

A variant has a name (file order: tables, plots and recorded rows use it), a label (what
a page calls it), the one idea it adds, its kernels (`kernels(params, ...)`: every
KernelSpec `enqueue` launches), its default parameters and the values an explorer or a
sweep offers for each (`param_space`), and `validate`, the reasons a configuration cannot
run a problem. `problem` is whatever a chapter's variants are sized by: (M, N, K) for a
matrix product, (shape, radius) for a stencil; `operands` derives it from the arrays a
reader passes, checking them.

A chapter subclasses Variant for what its rungs share: how operands are checked
(`operands`), what every rung refuses before its own `validate` (`check_common`), how a
given parameter is read (`cast`), and any fields of its own.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import ConfigError
from .kernels import KernelSpec


@dataclass(frozen=True, kw_only=True)
class Variant:
    name: str                        # file order: used in tables, plots and recorded rows
    label: str                       # what the page calls it
    idea: str = ""                   # one sentence: what this rung changes
    # kernels(params, ...) -> every KernelSpec `enqueue` launches (a chapter whose kernels
    # are compiled for part of the problem, a stencil's radius, takes that after params).
    kernels: Callable[..., list[KernelSpec]] | None = None
    # enqueue(*operands, params): launches on the current stream, no checks (what a timer
    # calls after one checked `run`).
    enqueue: Callable[..., None] | None = None
    default_params: dict = field(default_factory=dict)
    param_space: dict = field(default_factory=dict)      # name -> allowed values (explorer/sweep)
    # validate(params, *problem, device) raises ConfigError(reason); `device` is a device
    # dict (DeviceInfo.as_dict() or a recorded row's) or None when no device is known.
    validate: Callable[..., None] | None = None

    def __post_init__(self) -> None:
        # The variant's own copies (a module's DEFAULTS and PARAM_SPACE stay as they are),
        # every allowed value a list.
        object.__setattr__(self, "default_params", dict(self.default_params))
        object.__setattr__(self, "param_space", {k: list(v) for k, v in self.param_space.items()})

    # ---- parameters -----------------------------------------------------------------

    def cast(self, name: str, value: Any) -> Any:
        """A given parameter as the kernels take it (as given, unless a chapter says)."""
        return value

    def params(self, **overrides) -> dict:
        """The default parameters with `overrides`; a name the variant does not take is
        refused with ConfigError, naming the ones it does."""
        unknown = set(overrides) - set(self.default_params)
        if unknown:
            raise ConfigError(f"{self.name}: unknown parameter(s) {sorted(unknown)}; "
                              f"it takes {sorted(self.default_params) or 'none'}")
        return {**self.default_params, **{k: self.cast(k, v) for k, v in overrides.items()}}

    # ---- can it run? ----------------------------------------------------------------

    def check_common(self, params: dict, *problem, device: dict | None = None) -> None:
        """What every variant of a chapter refuses before its own `validate` (a chapter's
        subclass says; nothing here)."""

    def check(self, params: dict, *problem, device: dict | None = None) -> None:
        """Raise ConfigError with the reason when `params` cannot run `problem` (on
        `device`, when given: its shared-memory and thread limits)."""
        missing = set(self.default_params) - set(params)
        if missing:
            raise ConfigError(f"{self.name}: parameter(s) {sorted(missing)} missing; "
                              f"use {self.name}.params(...) to start from the defaults")
        self.check_common(params, *problem, device=device)
        if self.validate is not None:
            self.validate(params, *problem, device)

    def reason(self, params: dict, *problem, device: dict | None = None) -> str | None:
        """Why `params` cannot run `problem` (on `device`, when given), or None: it can."""
        try:
            self.check(params, *problem, device=device)
        except ConfigError as exc:
            return str(exc)
        return None

    # ---- running --------------------------------------------------------------------

    def operands(self, *arrays) -> tuple:
        """The problem `arrays` pose (what `check` takes after the parameters), or
        ConfigError naming what is wrong with them; a chapter's subclass says."""
        raise NotImplementedError(f"{type(self).__name__} does not say how its operands "
                                  "are checked")

    def run(self, *operands_then_params) -> None:
        """run(*operands, params): check the operands and the parameters, then enqueue the
        kernels (a launch the GPU cannot run is refused by perflab.kernels.launch, naming
        the limit)."""
        *arrays, params = operands_then_params
        problem = self.operands(*arrays)
        self.check(params, *problem)
        self.enqueue(*arrays, params)


__all__ = ["Variant"]
