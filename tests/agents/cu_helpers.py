"""Helpers shared by the computer-use agent tests: screenshots with a known target, and reading
the images a wire request carried."""
from __future__ import annotations

import base64
import io

from PIL import Image

SCREEN = (1920, 1080)


def png(size: tuple[int, int] = SCREEN, colour: tuple[int, int, int] = (40, 40, 40),
        target: tuple[int, int, int, int] | None = None) -> bytes:
    """A screenshot; `target` (left, top, right, bottom) is painted red."""
    image = Image.new("RGB", size, colour)
    if target is not None:
        image.paste((255, 0, 0), target)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def obs(screenshot: bytes) -> dict:
    return {"screenshot": screenshot, "accessibility_tree": None, "terminal": None, "instruction": "task"}


def decode(data: str | bytes) -> Image.Image:
    raw = base64.b64decode(data.split(",", 1)[1] if isinstance(data, str) and data.startswith("data:") else data)
    return Image.open(io.BytesIO(raw)).convert("RGB")


def red_centre(image: Image.Image) -> tuple[float, float]:
    """The centre of the red pixels of an image, in its own pixels: where a model would click."""
    width, height = image.size
    pixels = image.load()
    xs, ys = [], []
    for y in range(0, height):
        for x in range(0, width):
            r, g, b = pixels[x, y]
            if r > 200 and g < 80 and b < 80:
                xs.append(x)
                ys.append(y)
    assert xs, "no red target in the image the model was sent"
    return (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
