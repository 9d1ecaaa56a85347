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


def _labelled(points, **kw):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    c = roofline.Ceilings(4.2e12, {"FP32 FMA": 65e12, "TF32 mma.sync": 318e12,
                                   "TF32 wgmma": 486e12})
    fig, ax = plt.subplots(figsize=(7, 4.6))
    roofline.plot(ax, c, points=points, ai_range=(0.5, 5000))
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    boxes = {t.get_text(): t.get_window_extent(r) for t in ax.texts}
    marks = {p[0]: ax.transData.transform((p[1], p[2])) for p in points}
    roofs = [ax.transData.transform(xy) for line in ax.lines[:3] for xy in line.get_xydata()]
    plt.close(fig)
    return boxes, marks, roofs


def test_roofline_labels_pair_with_their_own_marker_and_keep_off_the_roofs():
    # a crowded cluster under the TF32 roofs, like chapter 1's rungs 08-12
    pts = [("08", 210, 216), ("10", 324, 364), ("11", 262, 158), ("12", 143, 126),
           ("09", 211, 72), ("cuBLAS TF32", 394, 397), ("01", 16, 0.5, "C0")]
    boxes, marks, roofs = _labelled(pts)
    assert set(boxes) == {p[0] for p in pts}
    names = list(boxes)
    for i, a in enumerate(names):                      # no two labels overlap
        for b in names[i + 1:]:
            assert not boxes[a].overlaps(boxes[b]), (a, b)
    for name, box in boxes.items():                    # nearest marker is its own
        cx, cy = (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2
        nearest = min(marks, key=lambda m: (marks[m][0] - cx) ** 2 + (marks[m][1] - cy) ** 2)
        assert nearest == name
    clear = [n for n, b in boxes.items() if not any(b.contains(*p) for p in roofs)]
    assert "01" in clear and "12" in clear and "09" in clear   # room around them: used


def test_a_point_may_bring_its_colour():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    roofline.plot(ax, roofline.Ceilings(4e12, {"FP32 FMA": 60e12}),
                  points=[("a", 10, 1, "C3"), ("b", 100, 5)])
    assert ax.texts[0].get_color() == "C3"
    plt.close(fig)
