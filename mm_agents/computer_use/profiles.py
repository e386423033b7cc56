"""Per-model settings of the native computer-use agents, in one table: the coordinate convention
the model speaks, the largest image it takes (we resize; no vendor is relied on to do it), how
many screenshots stay in the conversation, and the wire variant (tool version or grammar).

`--agent-arg` overrides any of them: coordinates=image|grid, image_size=WxH, history=N,
variant=NAME.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from .geometry import ImageLimits

# Anthropic: before Opus 4.7 at most 1568 px on the long edge and about 1.15 megapixels.
CLAUDE_LIMITS = ImageLimits(max_long_edge=1568, max_pixels=1_150_000)
CLAUDE_HIGH_RES_LIMITS = ImageLimits(max_long_edge=2576, max_pixels=3_750_000)
# OpenAI fits a high-detail image into 2048x2048, then its short side into 768 px.
OPENAI_LIMITS = ImageLimits(max_long_edge=2048, max_short_edge=768)
# Gemini's computer-use model is tuned for screens of about 1440x900.
GEMINI_LIMITS = ImageLimits(max_long_edge=1440, max_pixels=1440 * 900)
# Qwen2.5-VL / UI-TARS: 28 px patches (14 px, merged 2x2); Qwen3-VL: 32 px (16 px, merged 2x2).
UI_TARS_LIMITS = ImageLimits(patch=28, min_pixels=100 * 28 * 28, max_pixels=16384 * 28 * 28)
UI_TARS_1_LIMITS = ImageLimits(patch=28, min_pixels=100 * 28 * 28, max_pixels=2700 * 28 * 28)
QWEN25_LIMITS = ImageLimits(patch=28, min_pixels=4 * 28 * 28, max_pixels=16384 * 28 * 28)
QWEN3_LIMITS = ImageLimits(patch=32, min_pixels=64 * 32 * 32, max_pixels=16384 * 32 * 32)

COORDINATES = ("image", "grid")


@dataclass(frozen=True)
class Profile:
    coordinates: str                  # "image": pixels of the image sent; "grid": 0..999 over the screen
    limits: ImageLimits
    history: int                      # screenshots kept in the conversation
    variant: str                      # the wire variant: tool version, or grammar version
    image_size: tuple[int, int] | None = None   # an exact size to send, overriding the limits


# agent name -> (model-name pattern, profile); the first pattern found in the model's name wins.
PROFILES: dict[str, list[tuple[str, Profile]]] = {
    "claude-computer-use": [
        (r"claude-opus-4-7", Profile("image", CLAUDE_HIGH_RES_LIMITS, 3, "computer_20251124")),
        (r"claude-(opus-4-[56]|sonnet-4-6)", Profile("image", CLAUDE_LIMITS, 3, "computer_20251124")),
        (r"claude-(3|sonnet-4|opus-4|haiku-4)", Profile("image", CLAUDE_LIMITS, 3, "computer_20250124")),
        (r"", Profile("image", CLAUDE_LIMITS, 3, "computer_20251124")),
    ],
    "openai-computer-use": [
        (r"computer-use-preview", Profile("image", OPENAI_LIMITS, 3, "computer_use_preview")),
        (r"", Profile("image", OPENAI_LIMITS, 3, "computer")),
    ],
    "gemini-computer-use": [
        (r"", Profile("grid", GEMINI_LIMITS, 3, "ENVIRONMENT_BROWSER")),
    ],
    "ui-tars": [
        (r"ui-tars-1\.5", Profile("image", UI_TARS_LIMITS, 5, "ui-tars-1.5")),
        (r"ui-tars", Profile("grid", UI_TARS_1_LIMITS, 5, "ui-tars-1")),
        (r"", Profile("image", UI_TARS_LIMITS, 5, "ui-tars-1.5")),
    ],
    "qwen-vl": [
        (r"qwen2\.5-vl", Profile("image", QWEN25_LIMITS, 3, "qwen2.5-vl")),
        (r"", Profile("grid", QWEN3_LIMITS, 3, "qwen3-vl")),
    ],
    # The grounder's space: UI-TARS-1.5-style pixels of a smart_resized image by default.
    "planner-grounder": [
        (r"", Profile("image", UI_TARS_LIMITS, 3, "point")),
    ],
}


class ProfileError(ValueError):
    """An --agent-arg override of a profile that cannot be used; the message names it."""


def profile_for(agent: str, model: str, overrides: dict[str, Any] | None = None) -> Profile:
    name = model.rsplit("/", 1)[-1].lower()
    profile = next(p for pattern, p in PROFILES[agent] if re.search(pattern, name))
    return apply_overrides(profile, overrides or {})


def apply_overrides(profile: Profile, overrides: dict[str, Any]) -> Profile:
    changes: dict[str, Any] = {}
    if overrides.get("coordinates") is not None:
        if overrides["coordinates"] not in COORDINATES:
            raise ProfileError(f"coordinates must be one of {', '.join(COORDINATES)}, got {overrides['coordinates']!r}")
        changes["coordinates"] = overrides["coordinates"]
    if overrides.get("history") is not None:
        history = overrides["history"]
        if isinstance(history, bool) or not isinstance(history, int) or history < 1:
            raise ProfileError(f"history must be a whole number of screenshots >= 1, got {history!r}")
        changes["history"] = history
    if overrides.get("image_size") is not None:
        changes["image_size"] = parse_size(overrides["image_size"])
    if overrides.get("variant") is not None:
        changes["variant"] = str(overrides["variant"])
    return replace(profile, **changes)


def parse_size(value: Any) -> tuple[int, int]:
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", value)
        if match:
            return int(match.group(1)), int(match.group(2))
    elif isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return int(value[0]), int(value[1])
    raise ProfileError(f"image_size must be WIDTHxHEIGHT such as 1280x720, got {value!r}")
