"""The roofline arithmetic every chapter's plot relies on."""
from __future__ import annotations

import numpy as np
import pytest

from perflab import roofline


def test_attainable_is_min_of_roofs():
    bw, peak = 4e12, 60e12                      # ridge at 15 FLOP/B
    got = roofline.attainable([1, 15, 100], peak, bw)
    np.testing.assert_allclose(got, [4e12, 60e12, 60e12])


def test_ridge():
    c = roofline.Ceilings(4e12, {"FP32 FMA": 62e12})
    assert c.ridge("FP32 FMA") == pytest.approx(15.5)


def test_rejects_nonpositive_intensity():
    with pytest.raises(ValueError):
        roofline.attainable([0.0], 1.0, 1.0)


def test_gemm_intensity():
    # 4096^3: 2*4096^3 FLOP over 3*4096^2*4 B = 4096/6 FLOP/B
    assert roofline.gemm_intensity(4096, 4096, 4096) == pytest.approx(4096 / 6)
    # skinny 128x128x32768 is dominated by reading A and B
    ai = roofline.gemm_intensity(128, 128, 32768)
    assert ai == pytest.approx(2 * 128 * 128 * 32768 / (4 * (2 * 128 * 32768 + 128 * 128)))
