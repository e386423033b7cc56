"""Helpers shared by the computer-use agent tests: screenshots with a known target, and reading
the images a wire request carried."""
from __future__ import annotations

import base64
import io

import numpy
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
    text = data.split(",", 1)[1] if isinstance(data, str) and data.startswith("data:") else data
    if isinstance(text, bytes):
        text = text.decode("ascii")
    # google-genai sends the bytes inside function responses URL-safe and unpadded
    raw = base64.urlsafe_b64decode(text.replace("+", "-").replace("/", "_") + "=" * (-len(text) % 4))
    return Image.open(io.BytesIO(raw)).convert("RGB")


def red_centre(image: Image.Image) -> tuple[float, float]:
    """The centre of the red pixels of an image, in its own pixels: where a model would click."""
    pixels = numpy.asarray(image)
    ys, xs = numpy.nonzero((pixels[:, :, 0] > 200) & (pixels[:, :, 1] < 80) & (pixels[:, :, 2] < 80))
    assert len(xs), "no red target in the image the model was sent"
    return (int(xs.min()) + int(xs.max())) / 2, (int(ys.min()) + int(ys.max())) / 2


def last_image(body) -> Image.Image:
    """The last image a request carried, whatever the wire format: Anthropic's source.data, OpenAI's data
    URLs, Gemini's inlineData (also inside function responses)."""
    found: list[str] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            mime = node.get("media_type", node.get("mimeType", node.get("mime_type", "")))
            if isinstance(node.get("data"), str) and str(mime).startswith("image/"):
                found.append(node["data"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, str) and node.startswith("data:image/"):
            found.append(node)

    walk(body)
    assert found, "the request carried no image"
    return decode(found[-1])
