"""Gemini generateContent with the ComputerUse tool.

The model calls predefined functions (click_at, type_text_at, key_combination, scroll_at,
drag_and_drop, ...) with coordinates on a 0-999 grid over the screen; the browser-only ones
(open_web_browser, navigate, search, go_back, go_forward) are excluded from the tool. Each call is
answered by a function response whose parts carry the screenshot after it; a call whose
`safety_decision` requires confirmation is acknowledged with `safety_acknowledgement: "true"` (or
ends the task as FAIL). A turn without calls ends the task.
"""
from __future__ import annotations

from typing import Any

from google.genai import types

from ..llm import LLMError, sdk_client
from ..llm.google_client import GoogleClient, config_sampling, usage_of
from .agent import INFEASIBLE, AgentSettings, Call, CallResult, ScreenshotWindow, Shot, Turn, base_prompt
from .commands import Command, wheel_clicks
from .errors import ToolError
from .geometry import GRID, Space
from .keys import combination

BROWSER_ONLY = ("open_web_browser", "navigate", "search", "go_back", "go_forward")
SCROLL_DOCUMENT_CLICKS = 10
DEFAULT_MAGNITUDE = 800
_DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def commands(name: str, args: dict[str, Any], space: Space) -> list[Command]:
    """The commands one predefined function performs, in order."""
    if name == "click_at":
        return [Command("click", (_xy(args),))]
    if name == "hover_at":
        return [Command("move", (_xy(args),))]
    if name == "type_text_at":
        text = args.get("text")
        if not isinstance(text, str):
            raise ToolError(f"type_text_at needs text, got {text!r:.60}")
        steps = [Command("click", (_xy(args),))]
        if args.get("clear_before_typing", True):
            steps += [Command("key", chords=(("ctrl", "a"),)), Command("key", chords=(("backspace",),))]
        if text:
            steps.append(Command("type", text=text))
        if args.get("press_enter", True):
            steps.append(Command("key", chords=(("enter",),)))
        return steps
    if name == "key_combination":
        keys = args.get("keys")
        if not isinstance(keys, str):
            raise ToolError(f"key_combination needs keys such as 'Control+C', got {keys!r:.60}")
        return [Command("key", chords=(combination(keys),))]
    if name == "scroll_document":
        dx, dy = _direction(args)
        centre = (GRID // 2, GRID // 2) if space.kind == "grid" else (space.size[0] // 2, space.size[1] // 2)
        return [Command("scroll", (centre,), scroll=(dx * SCROLL_DOCUMENT_CLICKS, dy * SCROLL_DOCUMENT_CLICKS))]
    if name == "scroll_at":
        dx, dy = _direction(args)
        magnitude = args.get("magnitude", DEFAULT_MAGNITUDE)
        if isinstance(magnitude, bool) or not isinstance(magnitude, (int, float)) or magnitude <= 0:
            raise ToolError(f"magnitude must be a positive number, got {magnitude!r:.40}")
        right, down = space.distance_to_screen(dx * magnitude, dy * magnitude)
        return [Command("scroll", (_xy(args),), scroll=(wheel_clicks(right), wheel_clicks(down)))]
    if name == "drag_and_drop":
        return [Command("drag", (_xy(args), _xy(args, "destination_x", "destination_y")))]
    if name == "wait_5_seconds":
        return [Command("wait", seconds=5)]
    if name in BROWSER_ONLY:
        raise ToolError(f"{name} is not available: this is a desktop, not a browser; open apps from the screen")
    raise ToolError(f"unknown function {name!r}")


def _xy(args: dict[str, Any], x: str = "x", y: str = "y") -> tuple[float, float]:
    if x not in args or y not in args:
        raise ToolError(f"the call needs {x} and {y} (0-999)")
    return args[x], args[y]


def _direction(args: dict[str, Any]) -> tuple[int, int]:
    direction = args.get("direction")
    if direction not in _DIRECTIONS:
        raise ToolError(f"direction must be up, down, left or right, got {direction!r:.40}")
    return _DIRECTIONS[direction]


class GeminiComputerUseAdapter:
    OPTIONS = ("excluded_functions",)

    def __init__(self, settings: AgentSettings):
        self.settings = settings
        self.environment = settings.profile.variant
        self.excluded = list(settings.options.get("excluded_functions") or BROWSER_ONLY)
        self.client = sdk_client(GoogleClient, settings.model, "google", **settings.client)

    def begin(self, instruction: str, shot: Shot, space: Space) -> None:
        self.space = space
        self.window = ScreenshotWindow(self.settings.profile.history)
        self.contents: list[types.Content] = [types.Content(role="user", parts=[
            types.Part(text=instruction), _image(shot.png)])]
        self.first = True

    def next_turn(self, shot: Shot, results: list[CallResult]) -> Turn:
        if not self.first:
            self.contents.append(self._responses(shot, results))
        self.first = False
        params = self.settings.params
        config = types.GenerateContentConfig(
            system_instruction=base_prompt(self.settings.password), max_output_tokens=params.max_tokens,
            temperature=params.temperature, top_p=params.top_p,
            tools=[types.Tool(computer_use=types.ComputerUse(environment=types.Environment(self.environment),
                                                             excluded_predefined_functions=self.excluded))])
        response = self.window.send(lambda keep: self.client.generate(bounded(self.contents, keep), config))
        if not response.candidates:
            feedback = response.prompt_feedback
            reason = feedback.block_reason if feedback and feedback.block_reason else "no reason given"
            raise LLMError(f"google model {self.settings.model!r}: no candidates in the response (blocked: {reason})")
        content = response.candidates[0].content or types.Content(role="model", parts=[])
        self.contents.append(content)
        texts, calls = [], []
        for index, part in enumerate(content.parts or []):
            if part.function_call is not None:
                calls += self._calls(part.function_call, index)
            elif part.text and not part.thought:
                texts.append(part.text)
        text = "\n".join(texts)
        final = None if calls else ("FAIL" if INFEASIBLE in text else "DONE")
        return Turn(text, calls, usage_of(response), final,
                    requests=[(config_sampling(config), response.model_version)])

    def _calls(self, function_call: types.FunctionCall, index: int) -> list[Call]:
        args = dict(function_call.args or {})
        decision = args.pop("safety_decision", None)
        call_id = function_call.id or f"{function_call.name}#{index}"
        checks = [decision] if isinstance(decision, dict) and decision.get("decision") == "require_confirmation" else []
        try:
            steps = commands(function_call.name or "", args, self.space)
        except ToolError as e:
            return [Call(call_id, function_call.name or "", args, error=str(e), safety_checks=checks)]
        calls = [Call(call_id, function_call.name or "", args, command=step) for step in steps]
        calls[0].safety_checks = checks
        return calls

    def _responses(self, shot: Shot, results: list[CallResult]) -> types.Content:
        """One function response per call (in call order), each with the screen now."""
        responses: dict[str, dict[str, Any]] = {}
        for result in results:
            entry = responses.setdefault(result.call.id, {"name": result.call.name, "response": {"output": "done"}})
            if result.acknowledged:
                entry["response"]["safety_acknowledgement"] = "true"
            if result.error is not None:
                entry["response"] = {"error": result.error, **({"safety_acknowledgement": "true"}
                                                               if result.acknowledged else {})}
        if not responses:
            return types.Content(role="user", parts=[types.Part(text="The screen now:"), _image(shot.png)])
        parts = [types.Part(function_response=types.FunctionResponse(
            id=None if "#" in call_id else call_id, name=entry["name"], response=entry["response"],
            parts=[types.FunctionResponsePart(inline_data=types.FunctionResponseBlob(mime_type="image/png",
                                                                                     data=shot.png))]))
            for call_id, entry in responses.items()]
        return types.Content(role="user", parts=parts)


def _image(png: bytes) -> types.Part:
    return types.Part(inline_data=types.Blob(mime_type="image/png", data=png))


def bounded(contents: list[types.Content], keep: int) -> list[types.Content]:
    """The conversation with screenshots only in the last `keep` turns that carry one."""
    carrying = [i for i, c in enumerate(contents) if c.role == "user" and any(
        p.inline_data is not None or (p.function_response is not None and p.function_response.parts)
        for p in c.parts or [])]
    old = set(carrying[:-keep]) if keep else set(carrying)
    out = []
    for index, content in enumerate(contents):
        if index not in old:
            out.append(content)
            continue
        parts = []
        for part in content.parts or []:
            if part.inline_data is not None:
                parts.append(types.Part(text="(an earlier screenshot, no longer shown)"))
            elif part.function_response is not None:
                parts.append(types.Part(function_response=part.function_response.model_copy(update={"parts": None})))
            else:
                parts.append(part)
        out.append(types.Content(role=content.role, parts=parts))
    return out
