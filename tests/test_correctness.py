"""The correctness helper: relative error in float64, NaN (an unwritten element) fails."""
from __future__ import annotations

import math

import numpy as np
import pytest

from perflab.correctness import compare, seed


def test_exact_and_tolerances():
    ref = np.random.default_rng().standard_normal((33, 17))
    assert compare(ref.astype(np.float32), ref, "fp32").correct
    noisy = ref * (1 + 1e-3 * np.random.default_rng().standard_normal(ref.shape))
    c = compare(noisy, ref, "fp32")
    assert not c.correct and 5e-4 < c.rel_err < 2e-3
    assert compare(noisy, ref, "tf32").correct


def test_unwritten_element_fails():
    ref = np.ones((8, 8))
    out = ref.copy()
    out[3, 4] = np.nan
    c = compare(out, ref, "tf32")
    assert not c.correct and c.unwritten == 1 and math.isnan(c.rel_err)


def test_shape_and_precision_errors():
    with pytest.raises(ValueError, match="shape"):
        compare(np.ones(3), np.ones(4), "fp32")
    with pytest.raises(ValueError, match="unknown precision"):
        compare(np.ones(3), np.ones(3), "fp8")


def test_seed_is_a_fresh_32_bit_value():
    seeds = {seed() for _ in range(8)}
    assert len(seeds) > 1 and all(isinstance(s, int) and 0 <= s < 2**32 for s in seeds)
