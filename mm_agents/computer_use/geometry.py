"""What the model sees and where its coordinates land: image sizes within a vendor's limits, and
the map from the model's coordinates back to screen pixels.

A model speaks either pixels of the image it was sent (`Space.image`) or a grid laid over the
whole screen, 0..999 (`Space.grid`). Either way a model coordinate names a cell; the click goes
to the screen pixel under that cell's centre, so a downscaled image loses no accuracy beyond
its own resolution.
"""
from __future__ import annotations

import io
import math
from dataclasses import dataclass
from fractions import Fraction

from PIL import Image

from .errors import ToolError

GRID = 1000          # a 0..999 grid (Gemini, Qwen3-VL); UI-TARS-1's 0..1000 is the same grid, its 1000 the edge


@dataclass(frozen=True)
class ImageLimits:
    """The largest image a model takes whole. `patch`: the sides must be multiples of it (Qwen-style
    smart_resize, which also keeps the pixel count within min_pixels..max_pixels)."""
    max_long_edge: int | None = None
    max_short_edge: int | None = None
    max_pixels: int | None = None
    patch: int | None = None
    min_pixels: int | None = None

    def fits(self, width: int, height: int) -> bool:
        return ((self.max_long_edge is None or max(width, height) <= self.max_long_edge)
                and (self.max_short_edge is None or min(width, height) <= self.max_short_edge)
                and (self.max_pixels is None or width * height <= self.max_pixels))


def smart_resize(height: int, width: int, factor: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """(height, width) with both sides multiples of `factor`, the aspect ratio nearly kept and the
    pixel count within [min_pixels, max_pixels]: the resize Qwen-VL's image processor applies, so
    an image already this size reaches the model unchanged."""
    if max(height, width) / min(height, width) > 200:
        raise ValueError(f"aspect ratio of {width}x{height} is beyond 200")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


# Scale factors tried first: simple fractions keep both sides whole for common screens (1920x1080 at
# 2/3 is 1280x720), so every model pixel covers the same number of screen pixels.
_SIMPLE_SCALES = sorted({Fraction(n, d) for d in range(1, 9) for n in range(1, d + 1)}, reverse=True)


def fit_size(screen: tuple[int, int], limits: ImageLimits) -> tuple[int, int]:
    """The size of the image to send for a screen of `screen` pixels."""
    width, height = screen
    if limits.patch:
        h, w = smart_resize(height, width, limits.patch, limits.min_pixels or limits.patch ** 2,
                            limits.max_pixels or width * height * 4)
        return w, h
    if limits.fits(width, height):
        return width, height
    for fraction in _SIMPLE_SCALES:
        scaled_width, scaled_height = width * fraction, height * fraction
        if scaled_width.denominator == 1 and scaled_height.denominator == 1 \
                and limits.fits(int(scaled_width), int(scaled_height)):
            return int(scaled_width), int(scaled_height)
    scale = 1.0
    if limits.max_long_edge:
        scale = min(scale, limits.max_long_edge / max(width, height))
    if limits.max_short_edge:
        scale = min(scale, limits.max_short_edge / min(width, height))
    if limits.max_pixels:
        scale = min(scale, math.sqrt(limits.max_pixels / (width * height)))
    return max(1, math.floor(width * scale)), max(1, math.floor(height * scale))


def resize_png(png: bytes, size: tuple[int, int]) -> bytes:
    image = Image.open(io.BytesIO(png))
    if image.size == tuple(size):
        return png
    buffer = io.BytesIO()
    image.convert("RGB").resize(size, Image.Resampling.LANCZOS).save(buffer, format="PNG")
    return buffer.getvalue()


def png_size(png: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(png)) as image:
        return image.size


@dataclass(frozen=True)
class Space:
    """The model's coordinate space over a screen: `size` model units across and down."""
    size: tuple[int, int]
    screen: tuple[int, int]
    kind: str                 # "image" or "grid"

    @classmethod
    def image(cls, image_size: tuple[int, int], screen: tuple[int, int]) -> Space:
        return cls(_pair(image_size), _pair(screen), "image")

    @classmethod
    def grid(cls, screen: tuple[int, int]) -> Space:
        return cls((GRID, GRID), _pair(screen), "grid")

    def describe(self) -> str:
        if self.kind == "grid":
            return "a 0-999 grid over the screen"
        return f"pixels of the {self.size[0]}x{self.size[1]} screenshot"

    def to_screen(self, x: float, y: float) -> tuple[int, int]:
        """The screen pixel under the centre of model cell (x, y); ToolError when it is off the screen."""
        for value, name in ((x, "x"), (y, "y")):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ToolError(f"coordinate {name} must be a number, got {value!r:.40}")
        (w, h), (sw, sh) = self.size, self.screen
        # The edge value itself is tolerated: UI-TARS-1 counts 0..1000 and models round up at the border.
        if not (0 <= x <= w and 0 <= y <= h):
            raise ToolError(f"coordinate ({x}, {y}) is outside {self.describe()} (x 0..{w - 1}, y 0..{h - 1})")
        return (min(sw - 1, int((math.floor(x) + 0.5) * sw / w)),
                min(sh - 1, int((math.floor(y) + 0.5) * sh / h)))

    def from_screen(self, x: int, y: int) -> tuple[int, int]:
        """The model cell holding screen pixel (x, y)."""
        (w, h), (sw, sh) = self.size, self.screen
        return min(w - 1, int(x * w / sw)), min(h - 1, int(y * h / sh))

    def distance_to_screen(self, dx: float, dy: float) -> tuple[float, float]:
        (w, h), (sw, sh) = self.size, self.screen
        return dx * sw / w, dy * sh / h


def _pair(size: tuple[int, int]) -> tuple[int, int]:
    # A fresh tuple even when handed a list (a size read from JSON), so that equal Spaces compare equal.
    width, height = size
    return width, height
