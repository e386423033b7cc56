"""Anthropic Messages with Claude's computer tool.

Beta tool versions `computer_20250124` (anthropic-beta `computer-use-2025-01-24`) and
`computer_20251124` (`computer-use-2025-11-24`, which adds zoom) declare the display as the size of
the image we send, so the model speaks pixels of that image. The GA toolset
`computer_toolset_20260801` (variant=computer_toolset_20260801) needs no beta header; each action
is its own tool name with the same inputs. Keys are xdotool keysyms. A turn without tool calls
ends the task: DONE, or FAIL when the text carries the [INFEASIBLE] marker.
"""
from __future__ import annotations

import base64
from typing import Any

from ..llm import sdk_client
from ..llm.anthropic_client import AnthropicClient, usage_of
from ..llm.base import sampling_of
from .agent import INFEASIBLE, AgentSettings, Call, CallResult, ScreenshotWindow, Shot, Turn, base_prompt
from .commands import Command
from .errors import ToolError
from .geometry import Space
from .keys import combination, xdotool_sequence

BETA_HEADERS = {"computer_20250124": "computer-use-2025-01-24", "computer_20251124": "computer-use-2025-11-24"}
TOOLSET = "computer_toolset_20260801"
TOOL_NAME = "computer"
OMITTED = "(an earlier screenshot, no longer shown)"
CACHE = {"type": "ephemeral"}

_CLICKS = {"left_click": ("left", 1), "right_click": ("right", 1), "middle_click": ("middle", 1),
           "double_click": ("left", 2), "triple_click": ("left", 3)}
_SCROLL = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def image_block(png: bytes) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                        "data": base64.b64encode(png).decode("ascii")}}


def command(action: Any, args: dict[str, Any]) -> Command:
    """A Claude computer action (beta `action` value or GA member name) with its input, as a Command.
    `action` is as the model sent it: any JSON value, of which only the known names are actions."""
    if action in _CLICKS:
        button, clicks = _CLICKS[action]
        points = (_point(args, "coordinate"),) if args.get("coordinate") is not None else ()
        return Command("click", points, button=button, clicks=clicks, modifiers=_modifiers(args))
    if action == "mouse_move":
        return Command("move", (_point(args, "coordinate"),), modifiers=_modifiers(args))
    if action == "left_click_drag":
        return Command("drag", (_point(args, "start_coordinate"), _point(args, "coordinate")),
                       modifiers=_modifiers(args))
    if action in ("left_mouse_down", "left_mouse_up"):
        points = (_point(args, "coordinate"),) if args.get("coordinate") is not None else ()
        return Command(action.removeprefix("left_"), points)
    if action == "type":
        return Command("type", text=_string(args, "text"))
    if action == "key":
        repeat = args.get("repeat") or 1
        if isinstance(repeat, bool) or not isinstance(repeat, int):
            raise ToolError(f"repeat must be a whole number, got {repeat!r:.40}")
        return Command("key", chords=tuple(xdotool_sequence(_string(args, "text"))), repeat=repeat)
    if action == "hold_key":
        return Command("hold_key", chords=(combination(_string(args, "text")),), seconds=_number(args, "duration"))
    if action == "scroll":
        direction = args.get("scroll_direction")
        if direction not in _SCROLL:
            raise ToolError(f"scroll_direction must be up, down, left or right, got {direction!r:.40}")
        amount = args.get("scroll_amount", 3)
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1:
            raise ToolError(f"scroll_amount must be a whole number >= 1, got {amount!r:.40}")
        dx, dy = _SCROLL[direction]
        points = (_point(args, "coordinate"),) if args.get("coordinate") is not None else ()
        return Command("scroll", points, scroll=(dx * amount, dy * amount), modifiers=_modifiers(args))
    if action == "wait":
        return Command("wait", seconds=_number(args, "duration", default=1))
    if action == "screenshot":
        return Command("screenshot")
    if action == "cursor_position":
        return Command("cursor_position")
    if action == "zoom":
        region = args.get("region")
        if not isinstance(region, (list, tuple)) or len(region) != 4:
            raise ToolError(f"zoom needs region [x0, y0, x1, y1], got {region!r:.60}")
        return Command("zoom", region=tuple(region))
    raise ToolError(f"unknown action {action!r}")


def _point(args: dict[str, Any], name: str) -> tuple[float, float]:
    value = args.get(name)
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ToolError(f"{name} must be [x, y], got {value!r:.60}")
    return value[0], value[1]


def _string(args: dict[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value:
        raise ToolError(f"{name} must be a non-empty string, got {value!r:.60}")
    return value


def _number(args: dict[str, Any], name: str, default: float | None = None) -> float:
    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ToolError(f"{name} must be a number of seconds, got {value!r:.40}")
    return value


def _modifiers(args: dict[str, Any]) -> tuple[str, ...]:
    text = args.get("text")
    return combination(text) if text else ()


class ClaudeAdapter:
    OPTIONS = ("thinking_budget", "prompt_caching")

    def __init__(self, settings: AgentSettings):
        self.settings = settings
        self.variant = settings.profile.variant
        if self.variant not in BETA_HEADERS and self.variant != TOOLSET:
            raise ValueError(f"claude-computer-use variant must be one of {', '.join([*BETA_HEADERS, TOOLSET])}, "
                             f"got {self.variant!r}")
        self.thinking_budget = settings.options.get("thinking_budget")
        self.caching = bool(settings.options.get("prompt_caching", True))
        self.client = sdk_client(AnthropicClient, settings.model, "anthropic", **settings.client)

    def begin(self, instruction: str, shot: Shot, space: Space) -> None:
        self.space = space
        self.window = ScreenshotWindow(self.settings.profile.history)
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": instruction},
                                                                          image_block(shot.png)]}]
        self.first = True

    def next_turn(self, shot: Shot, results: list[CallResult]) -> Turn:
        if not self.first:
            self.messages.append({"role": "user", "content": self._results(shot, results)})
        self.first = False
        betas = [BETA_HEADERS[self.variant]] if self.variant in BETA_HEADERS else None
        sent: dict[str, Any] = {}

        def create(keep: int) -> Any:
            body = self.body(keep)
            sent.update(sampling_of(body))
            return self.client.create(body, betas=betas)

        response = self.window.send(create)
        content, texts, calls = [], [], []
        for block in response.content:
            if block.type == "text":
                texts.append(block.text)
                content.append({"type": "text", "text": block.text})
            elif block.type == "thinking":
                content.append({"type": "thinking", "thinking": block.thinking, "signature": block.signature})
            elif block.type == "redacted_thinking":
                content.append({"type": "redacted_thinking", "data": block.data})
            elif block.type == "tool_use":
                arguments = block.input if isinstance(block.input, dict) else {}
                content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": arguments})
                calls.append(self._call(block.id, block.name, arguments))
        self.messages.append({"role": "assistant", "content": content})
        text = "\n".join(texts)
        final = None
        if not calls and response.stop_reason in ("end_turn", "stop_sequence"):
            final = "FAIL" if INFEASIBLE in text else "DONE"
        return Turn(text, calls, usage_of(response), final, requests=[(sent, response.model)])

    # -- the request ----------------------------------------------------------------------------------
    def tools(self) -> list[dict[str, Any]]:
        if self.variant == TOOLSET:
            return [{"type": TOOLSET}]
        width, height = self.space.size
        tool = {"type": self.variant, "name": TOOL_NAME, "display_width_px": width, "display_height_px": height,
                "display_number": 1}
        if self.variant == "computer_20251124":
            tool["enable_zoom"] = True
        return [tool]

    def body(self, keep: int) -> dict[str, Any]:
        system: dict[str, Any] = {"type": "text", "text": self.system_prompt()}
        messages = bounded(self.messages, keep)
        if self.caching:
            system["cache_control"] = CACHE
            # The conversation up to the newest user turn is the prefix the next call re-reads.
            user_turns = [m for m in messages if m["role"] == "user"]
            for message in user_turns[-2:]:
                message["content"][-1] = dict(message["content"][-1], cache_control=CACHE)
        body: dict[str, Any] = {"model": self.settings.model, "max_tokens": self.settings.params.max_tokens,
                                "system": [system], "tools": self.tools(), "messages": messages}
        if self.thinking_budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": int(self.thinking_budget)}
        return body

    def system_prompt(self) -> str:
        if self.space.kind == "image" and self.space.size != self.space.screen:
            size = f"Screenshots are {self.space.size[0]}x{self.space.size[1]} pixels; coordinates are pixels of them."
        else:
            size = f"Screenshots are {self.space.size[0]}x{self.space.size[1]} pixels."
        return f"{base_prompt(self.settings.password)}\n{size}"

    def _call(self, call_id: str, name: str, arguments: dict[str, Any]) -> Call:
        call = Call(call_id, name, arguments)
        try:
            if self.variant == TOOLSET:
                call.command = command(name, arguments)
            elif name != TOOL_NAME:
                raise ToolError(f"there is no tool {name!r}; the tool is {TOOL_NAME!r}")
            else:
                call.command = command(arguments.get("action"), arguments)
        except ToolError as e:
            call.error = str(e)
        return call

    def _results(self, shot: Shot, results: list[CallResult]) -> list[dict[str, Any]]:
        if not results:
            return [{"type": "text", "text": "The screen now:"}, image_block(shot.png)]
        blocks = []
        for index, result in enumerate(results):
            content: list[dict[str, Any]] = []
            if result.error is not None:
                content.append({"type": "text", "text": f"Error: {result.error}"})
            elif result.text is not None:
                content.append({"type": "text", "text": result.text})
            if result.image is not None:
                content.append(image_block(result.image))
            elif index == len(results) - 1:
                content.append(image_block(shot.png))   # the screen after the turn's actions
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.call.id, "content": content}
            if result.error is not None:
                block["is_error"] = True
            blocks.append(block)
        return blocks


def bounded(messages: list[dict[str, Any]], keep: int) -> list[dict[str, Any]]:
    """A copy of the conversation in which only the last `keep` images remain; older ones become a line of text."""
    seen = 0
    out: list[dict[str, Any]] = []
    for message in reversed(messages):
        content = []
        for block in reversed(message["content"]):
            if block["type"] == "image":
                seen += 1
                block = block if seen <= keep else {"type": "text", "text": OMITTED}
            elif block["type"] == "tool_result":
                inner = []
                for part in reversed(block["content"]):
                    if part["type"] == "image":
                        seen += 1
                        part = part if seen <= keep else {"type": "text", "text": OMITTED}
                    inner.append(part)
                block = dict(block, content=list(reversed(inner)))
            content.append(block)
        out.append({"role": message["role"], "content": list(reversed(content))})
    return list(reversed(out))
