"""OpenAI Responses API with the computer-use tools.

`computer_use_preview` declares a display (the size of the image we send, so the model speaks
pixels of that image) and answers with one `action` per `computer_call`; the newer `computer`
tool declares nothing and may batch several `actions` in one call. Every computer_call is answered
by a `computer_call_output` carrying a `computer_screenshot`, with its pending safety checks
acknowledged; the conversation lives on the server (`previous_response_id`) and `truncation:
"auto"` keeps it within the context window. Keys are OpenAI's names (CTRL, ENTER, ARROWLEFT).
"""
from __future__ import annotations

import base64
from typing import Any

from ..llm import sdk_client
from ..llm.base import sampling_of
from ..llm.openai_client import OpenAIClient, responses_usage
from .agent import INFEASIBLE, AgentSettings, Call, CallResult, Shot, Turn, base_prompt
from .commands import Command, wheel_clicks
from .errors import ToolError
from .geometry import Space
from .keys import key_name

BUTTONS = {"left": "left", "right": "right", "wheel": "middle", "back": "back", "forward": "forward"}
VARIANTS = ("computer_use_preview", "computer")
WAIT_S = 2.0


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def command(action: dict[str, Any], space: Space) -> Command:
    kind = action.get("type")
    modifiers = tuple(key_name(k) for k in action.get("keys") or ()) if kind != "keypress" else ()
    if kind == "click":
        button = action.get("button", "left")
        if button not in BUTTONS:
            raise ToolError(f"unknown mouse button {button!r}")
        return Command("click", (_xy(action),), button=BUTTONS[button], modifiers=modifiers)
    if kind == "double_click":
        return Command("click", (_xy(action),), clicks=2, modifiers=modifiers)
    if kind == "move":
        return Command("move", (_xy(action),), modifiers=modifiers)
    if kind == "drag":
        path = action.get("path")
        if not isinstance(path, list) or len(path) < 2:
            raise ToolError(f"drag needs a path of at least two points, got {path!r:.80}")
        return Command("drag", tuple(_xy(point) for point in path), modifiers=modifiers)
    if kind == "scroll":
        right, down = space.distance_to_screen(_number(action, "scroll_x"), _number(action, "scroll_y"))
        return Command("scroll", (_xy(action),), scroll=(wheel_clicks(right), wheel_clicks(down)),
                       modifiers=modifiers)
    if kind == "keypress":
        keys = action.get("keys")
        if not isinstance(keys, list) or not keys:
            raise ToolError(f"keypress needs a list of keys, got {keys!r:.60}")
        return Command("key", chords=(tuple(key_name(k) for k in keys),))
    if kind == "type":
        text = action.get("text")
        if not isinstance(text, str) or not text:
            raise ToolError(f"type needs text, got {text!r:.60}")
        return Command("type", text=text)
    if kind == "wait":
        return Command("wait", seconds=WAIT_S)
    if kind == "screenshot":
        return Command("screenshot")
    raise ToolError(f"unknown action type {kind!r}")


def _number(action: dict[str, Any], name: str) -> float:
    value = action.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ToolError(f"{name} must be a number, got {value!r:.40}")
    return value


def _xy(point: dict[str, Any]) -> tuple[float, float]:
    return _number(point, "x"), _number(point, "y")


class OpenAIComputerUseAdapter:
    OPTIONS = ("reasoning_effort", "reasoning_summary", "environment")

    def __init__(self, settings: AgentSettings):
        self.settings = settings
        self.variant = settings.profile.variant
        if self.variant not in VARIANTS:
            raise ValueError(f"openai-computer-use variant must be one of {', '.join(VARIANTS)}, got {self.variant!r}")
        self.reasoning: dict[str, Any] = {"summary": settings.options.get("reasoning_summary", "concise")}
        if settings.options.get("reasoning_effort"):
            self.reasoning["effort"] = settings.options["reasoning_effort"]
        self.environment = settings.options.get("environment", "linux")
        self.client = sdk_client(OpenAIClient, settings.model, "openai", **settings.client)

    def begin(self, instruction: str, shot: Shot, space: Space) -> None:
        self.space = space
        self.previous: str | None = None
        self.input: list[dict[str, Any]] = [{"role": "user", "content": [
            {"type": "input_text", "text": instruction},
            {"type": "input_image", "image_url": data_url(shot.png), "detail": "high"}]}]

    def next_turn(self, shot: Shot, results: list[CallResult]) -> Turn:
        if self.previous is not None:
            self.input = self._outputs(shot, results)
        body: dict[str, Any] = {"model": self.settings.model, "tools": [self.tool()], "input": self.input,
                                "instructions": base_prompt(self.settings.password), "truncation": "auto",
                                "reasoning": self.reasoning, "max_output_tokens": self.settings.params.max_tokens}
        if self.previous is not None:
            body["previous_response_id"] = self.previous
        response = self.client.create_response(body)
        self.previous = response.id
        texts, calls = [], []
        for item in response.output:
            if item.type == "message":
                texts += [part.text for part in item.content if getattr(part, "type", "") == "output_text"]
            elif item.type == "computer_call":
                calls += self._calls(item)
        text = "\n".join(texts)
        final = None
        if not calls:
            final = "FAIL" if INFEASIBLE in text else "DONE"
        return Turn(text, calls, responses_usage(response), final, requests=[(sampling_of(body), response.model)])

    def tool(self) -> dict[str, Any]:
        if self.variant == "computer":
            return {"type": "computer"}
        width, height = self.space.size
        return {"type": "computer_use_preview", "display_width": width, "display_height": height,
                "environment": self.environment}

    def _calls(self, item: Any) -> list[Call]:
        """One Call per action; a batched computer_call gives several, all with its call_id."""
        checks = [{"id": c.id, "code": c.code, "message": c.message} for c in item.pending_safety_checks or []]
        actions = [a.model_dump(exclude_none=True) for a in (item.actions or [])] if item.actions else \
            [item.action.model_dump(exclude_none=True)] if item.action is not None else []
        if not actions:
            call = Call(item.call_id, "computer_call", {}, error="the computer_call carries no action")
            call.safety_checks = checks
            return [call]
        calls = []
        for index, action in enumerate(actions):
            call = Call(item.call_id, "computer_call", action)
            if index == 0:
                call.safety_checks = checks
            try:
                call.command = command(action, self.space)
            except ToolError as e:
                call.error = str(e)
            calls.append(call)
        return calls

    def _outputs(self, shot: Shot, results: list[CallResult]) -> list[dict[str, Any]]:
        """One computer_call_output per call id (with the screen now), then any errors as a user message."""
        outputs: dict[str, dict[str, Any]] = {}
        errors = []
        for result in results:
            call_id = result.call.id
            if call_id not in outputs:
                outputs[call_id] = {"type": "computer_call_output", "call_id": call_id,
                                    "output": {"type": "computer_screenshot", "image_url": data_url(shot.png)}}
            if result.acknowledged:
                outputs[call_id]["acknowledged_safety_checks"] = result.acknowledged
            if result.image is not None:
                outputs[call_id]["output"]["image_url"] = data_url(result.image)
            if result.error is not None:
                errors.append(f"{result.call.arguments.get('type', 'action')}: {result.error}")
        items = list(outputs.values())
        if errors:
            items.append({"role": "user", "content": [{"type": "input_text", "text":
                          "These actions could not be performed: " + "; ".join(errors)}]})
        if not items:
            items.append({"role": "user", "content": [
                {"type": "input_text", "text": "The screen now:"},
                {"type": "input_image", "image_url": data_url(shot.png), "detail": "high"}]})
        return items
