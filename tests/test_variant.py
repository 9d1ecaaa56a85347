"""The lab's one Variant (perflab.variant): checked parameters, the reason a configuration
cannot run, and a `run` that checks operands and parameters before it enqueues anything."""
from __future__ import annotations

import dataclasses

import pytest

from perflab.errors import ConfigError
from perflab.kernels import KernelSpec
from perflab.variant import Variant


def _tile_fits(p, n, device):
    if n % p["TILE"]:
        raise ConfigError(f"TILE={p['TILE']} does not divide n={n}")
    if device is not None and p["TILE"] > device["max_tile"]:
        raise ConfigError(f"TILE={p['TILE']} is over this device's {device['max_tile']}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Scale(Variant):
    """A toy chapter's variant: its problem is n, the length of its one operand."""

    def operands(self, x):
        if not isinstance(x, list):
            raise ConfigError(f"{self.name}: x must be a list, got {type(x).__name__}")
        return (len(x),)

    def check_common(self, params, n, device=None):
        if n < 1:
            raise ConfigError(f"{self.name}: x is empty")


def _variant(launched: list, **kw) -> Scale:
    return Scale(name="01-scale", label="scale by two", idea="one thread per element",
                 kernels=lambda p: [KernelSpec("toy/scale.cu", "scale", template=(p["TILE"],))],
                 enqueue=lambda x, p: launched.append((list(x), dict(p))),
                 default_params={"TILE": 4}, param_space={"TILE": (2, 4, 8)},
                 validate=_tile_fits, **kw)


def test_params_start_from_the_defaults_and_refuse_unknown_names():
    v = _variant([])
    assert v.params() == {"TILE": 4}
    assert v.params(TILE=8) == {"TILE": 8}
    with pytest.raises(ConfigError, match=r"01-scale: unknown parameter\(s\) \['TILES'\]; "
                                          r"it takes \['TILE'\]"):
        v.params(TILES=8)
    bare = Scale(name="00-none", label="no parameters")
    with pytest.raises(ConfigError, match="it takes none"):
        bare.params(TILE=8)


def test_defaults_and_space_are_the_variants_own_copies():
    defaults = {"TILE": 4}
    v = Scale(name="x", label="x", default_params=defaults, param_space={"TILE": (2, 4)})
    assert v.param_space == {"TILE": [2, 4]}
    v.default_params["TILE"] = 99
    assert defaults == {"TILE": 4}


def test_cast_reads_given_parameters():
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Ints(Scale):
        def cast(self, name, value):
            return int(value)

    v = Ints(name="i", label="i", default_params={"TILE": 4})
    assert v.params(TILE="8") == {"TILE": 8}


def test_reason_says_why_a_configuration_cannot_run():
    v = _variant([])
    assert v.reason(v.params(), 16) is None
    assert v.reason(v.params(TILE=8), 12) == "TILE=8 does not divide n=12"
    assert v.reason(v.params(TILE=8), 16, device={"max_tile": 4}) == \
        "TILE=8 is over this device's 4"
    # what every variant of the chapter refuses comes before the variant's own validate
    assert v.reason(v.params(), 0) == "01-scale: x is empty"
    # parameters not built from the defaults
    assert "parameter(s) ['TILE'] missing" in v.reason({}, 16)
    with pytest.raises(ConfigError, match="does not divide"):
        v.check(v.params(TILE=8), 12)


def test_run_checks_operands_and_parameters_before_it_enqueues():
    launched = []
    v = _variant(launched)
    v.run([1.0] * 8, v.params())
    assert launched == [([1.0] * 8, {"TILE": 4})]
    with pytest.raises(ConfigError, match="x must be a list"):
        v.run((1.0,) * 8, v.params())
    with pytest.raises(ConfigError, match="does not divide"):
        v.run([1.0] * 6, v.params())
    with pytest.raises(ConfigError, match="x is empty"):
        v.run([], v.params())
    assert len(launched) == 1
    assert v.kernels(v.params(TILE=2)) == [KernelSpec("toy/scale.cu", "scale", template=(2,))]


def test_a_variant_without_operand_checks_does_not_run_unchecked():
    v = Variant(name="bare", label="bare", enqueue=lambda *a: pytest.fail("launched"))
    with pytest.raises(NotImplementedError, match="operands"):
        v.run([1.0], {})


def test_every_chapter_variant_is_the_core_variant():
    from perflab.chapters import sgemm
    from perflab.chapters.convolution import variants as conv
    from perflab.chapters.matmul import variants as matmul

    for v in [*sgemm.variants(), *matmul.VARIANTS, *conv.VARIANTS.values()]:
        assert isinstance(v, Variant), v.name
        with pytest.raises(ConfigError, match="unknown parameter"):
            v.params(NOT_A_PARAMETER=1)
