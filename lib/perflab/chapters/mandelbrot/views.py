"""The pixel grid: a named view of the complex plane and an image size, turned into the
float32 numbers every implementation starts from (x0, y0, dx, dy), with clear errors for
sizes and limits no implementation can serve."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import ConfigError

#: The largest width or height: pixel indices up to 2^24 are exact in float32.
MAX_SIDE = 1 << 24
#: The largest iteration limit (counts are int32).
MAX_ITER = (1 << 31) - 1


@dataclass(frozen=True)
class View:
    name: str
    center: tuple[float, float]
    width: float                  # of the real axis; the height follows the image's aspect
    label: str

    def grid(self, w: int, h: int) -> "Grid":
        check_size(w, h)
        dx = self.width / w
        x0 = self.center[0] - self.width / 2 + dx / 2      # pixel centres
        y0 = self.center[1] - dx * h / 2 + dx / 2
        return Grid(self.name, int(w), int(h), np.float32(x0), np.float32(y0),
                    np.float32(dx), np.float32(dx))


#: The views: the whole set; a patch inside the main cardioid, where every pixel iterates
#: to the limit (no divergence at all); the seahorse valley, where neighbours' escape
#: times differ most.
VIEWS = {v.name: v for v in (
    View("full", (-0.75, 0.0), 3.0, "the whole set"),
    View("cardioid", (-0.25, 0.0), 0.5, "inside the main cardioid: every pixel to the limit"),
    View("seahorse", (-0.7436, 0.1318), 0.004, "the seahorse valley: escape times mixed"),
)}


@dataclass(frozen=True)
class Grid:
    """Pixel (i, j) is c = (x0 + i*dx, y0 + j*dy), each operation rounded to float32."""
    view: str
    w: int
    h: int
    x0: np.float32
    y0: np.float32
    dx: np.float32
    dy: np.float32

    def args(self) -> tuple:
        return (self.x0, self.y0, self.dx, self.dy)


def view(name: str) -> View:
    if name not in VIEWS:
        raise ConfigError(f"unknown view {name!r}; the views are {', '.join(VIEWS)}")
    return VIEWS[name]


def check_size(w, h) -> None:
    for what, v in (("width", w), ("height", h)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise ConfigError(f"image {what} must be a whole number of pixels, not {v!r}")
        if v < 1:
            raise ConfigError(f"image {what} {v} is not positive: an image needs at least "
                              "one pixel in each direction")
        if v > MAX_SIDE:
            raise ConfigError(f"image {what} {v} exceeds 2^24 = {MAX_SIDE}: float32 cannot "
                              "hold every pixel index exactly past that")


def check_iter(max_iter) -> None:
    if not isinstance(max_iter, (int, np.integer)) or isinstance(max_iter, bool):
        raise ConfigError(f"iteration limit must be a whole number, not {max_iter!r}")
    if not 1 <= max_iter <= MAX_ITER:
        raise ConfigError(f"iteration limit {max_iter} is outside 1 .. 2^31 - 1 (counts "
                          "are int32, and a limit under 1 computes nothing)")
