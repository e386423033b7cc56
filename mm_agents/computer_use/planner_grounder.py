"""A planner model names the next action and its target in words; a grounding model finds the point
(the Agent S / JEDI / GTA1 arrangement).

The planner is any of our model clients (--model, base_url, api_key) and acts through one function,
`act`; the grounder is a model on an OpenAI-compatible server (grounder_model, grounder_base_url,
grounder_api_key) asked for the point of each target, which it answers in its declared space
(profiles: pixels of the smart_resized image by default, or coordinates=grid). Any of the usual
point notations is read from its answer: (x, y), [x, y], <point>x y</point>, x=.., y=.., or a
box's centre.
"""
from __future__ import annotations

import re
from typing import Any

from ..llm import create_client, sdk_client
from ..llm.base import ImagePart, Message, TextPart, ToolResult, ToolSpec, sampling_of
from ..llm.openai_client import OpenAIClient, chat_usage
from .agent import AgentSettings, Call, CallResult, ScreenshotWindow, Shot, Turn, base_prompt
from .commands import Command
from .errors import ToolError
from .geometry import Space
from .keys import key_name
from .vllm_chat import image_part

ACT = "act"
POINTER_ACTIONS = ("click", "double_click", "right_click", "move", "scroll", "drag")
SCROLL_CLICKS = 5
_DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
_POINT_PATTERNS = (
    re.compile(r"<point>\s*(-?[\d.]+)[\s,]+(-?[\d.]+)\s*</point>"),
    re.compile(r"[(\[]\s*(-?[\d.]+)\s*,\s*(-?[\d.]+)\s*,\s*(-?[\d.]+)\s*,\s*(-?[\d.]+)\s*[)\]]"),
    re.compile(r"[(\[]\s*(-?[\d.]+)\s*,\s*(-?[\d.]+)\s*[)\]]"),
    re.compile(r"x\s*[=:]\s*(-?[\d.]+)\s*,?\s*y\s*[=:]\s*(-?[\d.]+)", re.IGNORECASE),
)

ACT_TOOL = ToolSpec(name=ACT, description=(
    "Perform the next action on the desktop. Name what to point at in words (target): a grounding model "
    "finds it on the screen, so describe it so it can be found alone (its text, kind and place), "
    "e.g. 'the Save button in the toolbar at the top'."), parameters={
    "type": "object", "required": ["action"], "additionalProperties": False, "properties": {
        "action": {"type": "string", "enum": [*POINTER_ACTIONS, "type", "key", "wait", "done", "fail"]},
        "target": {"type": "string", "description": "What to point at, for click, double_click, right_click, "
                                                    "move, scroll (where) and drag (from where)."},
        "to_target": {"type": "string", "description": "Where a drag ends."},
        "text": {"type": "string", "description": "The text to type; a trailing newline presses Enter."},
        "keys": {"type": "array", "items": {"type": "string"}, "description": "Keys pressed together, for key."},
        "direction": {"type": "string", "enum": list(_DIRECTIONS), "description": "For scroll."},
    }})

PLANNER_PROMPT = """{base}
You act through the act function, one action per call. Name targets in words; never give coordinates. \
Call act with action done when the task is complete, or fail if it cannot be done."""

GROUNDER_PROMPT = "Find this on the screenshot and answer with the point to click as (x,y) in {space}: {target}"


def read_point(text: str) -> tuple[float, float]:
    for pattern in _POINT_PATTERNS:
        match = pattern.search(text or "")
        if match:
            numbers = [float(n) for n in match.groups()]
            if len(numbers) == 4:
                return (numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2
            return numbers[0], numbers[1]
    raise ToolError(f"the grounding model gave no point for the target: {(text or '')[:120]!r}")


class PlannerGrounderAdapter:
    OPTIONS = ("grounder_model", "grounder_base_url", "grounder_api_key", "model_provider")

    def __init__(self, settings: AgentSettings):
        self.settings = settings
        options = settings.options
        if not options.get("grounder_model") or not options.get("grounder_base_url"):
            raise ValueError("planner-grounder needs --agent-arg grounder_model=NAME and grounder_base_url=URL "
                             "(an OpenAI-compatible server, its /v1 root)")
        self.grounder_model = options["grounder_model"]
        self.planner = create_client(settings.model, provider=options.get("model_provider"), **settings.client)
        self.grounder = sdk_client(OpenAIClient, self.grounder_model, "openai", base_url=options["grounder_base_url"],
                                   api_key=options.get("grounder_api_key"),
                                   max_retries=settings.client["max_retries"], timeout=settings.client["timeout"])

    def begin(self, instruction: str, shot: Shot, space: Space) -> None:
        self.space = space
        self.window = ScreenshotWindow(self.settings.profile.history)
        self.system = Message.text("system", PLANNER_PROMPT.format(base=base_prompt(self.settings.password)))
        self.messages: list[Message] = [Message("user", [TextPart(f"Task: {instruction}"),
                                                         ImagePart(shot.png)])]
        self.first = True
        self.requests: list[tuple[dict[str, Any], str | None]] = []

    def next_turn(self, shot: Shot, results: list[CallResult]) -> Turn:
        if not self.first:
            for result in results:
                text = f"Error: {result.error}" if result.error else "Done."
                self.messages.append(Message("tool", tool_result=ToolResult(result.call.id, ACT, [TextPart(text)],
                                                                            is_error=result.error is not None)))
            self.messages.append(Message("user", [TextPart("The screen now:"), ImagePart(shot.png)]))
        self.first = False
        completion = self.window.send(lambda keep: self.planner.complete([self.system, *self._bounded(keep)],
                                                                         self.settings.params, [ACT_TOOL]))
        self.requests = [(completion.sent, completion.model)]  # and each grounding request (ground)
        self.messages.append(Message("assistant", [TextPart(completion.text)] if completion.text else [],
                                     tool_calls=completion.tool_calls))
        calls: list[Call] = []
        grounder_usage = None
        for tool_call in completion.tool_calls:
            call = Call(tool_call.id, tool_call.name, tool_call.arguments)
            calls.append(call)
            try:
                if tool_call.name != ACT:
                    raise ToolError(f"there is no function {tool_call.name!r}; the function is {ACT!r}")
                action = tool_call.arguments.get("action")
                if action in ("done", "fail") and len(completion.tool_calls) == 1:
                    return Turn(completion.text, [], completion.usage, action.upper(), requests=self.requests)
                call.command, usage = self._command(tool_call.arguments, shot)
                grounder_usage = usage if grounder_usage is None else grounder_usage + usage
            except ToolError as e:
                call.error = str(e)
        final = None
        if not completion.tool_calls:
            final = "FAIL" if "[INFEASIBLE]" in completion.text else "DONE"
        extra = {self.grounder_model: grounder_usage} if grounder_usage is not None else {}
        return Turn(completion.text, calls, completion.usage, final, extra, requests=self.requests)

    def _bounded(self, keep: int) -> list[Message]:
        seen, out = 0, []
        for message in reversed(self.messages):
            parts = []
            for part in reversed(message.content):
                if isinstance(part, ImagePart):
                    seen += 1
                    part = part if seen <= keep else TextPart("(an earlier screenshot, no longer shown)")
                parts.append(part)
            out.append(Message(message.role, list(reversed(parts)), message.tool_calls, message.tool_result))
        return list(reversed(out))

    def _command(self, arguments: dict[str, Any], shot: Shot) -> tuple[Command, Any]:
        action = arguments.get("action")
        usage = None
        if action in POINTER_ACTIONS:
            start, usage = self.ground(arguments.get("target"), shot)
            if action == "drag":
                end, more = self.ground(arguments.get("to_target"), shot)
                return Command("drag", (start, end)), usage + more
            if action == "scroll":
                dx, dy = _DIRECTIONS.get(arguments.get("direction", "down"), (0, 1))
                return Command("scroll", (start,), scroll=(dx * SCROLL_CLICKS, dy * SCROLL_CLICKS)), usage
            button = {"right_click": "right"}.get(action, "left")
            if action == "move":
                return Command("move", (start,)), usage
            return Command("click", (start,), button=button, clicks=2 if action == "double_click" else 1), usage
        if action == "type":
            text = arguments.get("text")
            if not isinstance(text, str) or not text:
                raise ToolError("type needs text")
            return Command("type", text=text), usage
        if action == "key":
            keys = arguments.get("keys")
            if not isinstance(keys, list) or not keys:
                raise ToolError("key needs keys, a list such as [\"ctrl\", \"s\"]")
            return Command("key", chords=(tuple(key_name(k) for k in keys),)), usage
        if action == "wait":
            return Command("wait", seconds=2), usage
        if action in ("done", "fail"):
            return Command(action), usage
        raise ToolError(f"unknown action {action!r}")

    def ground(self, target: Any, shot: Shot) -> tuple[tuple[float, float], Any]:
        if not isinstance(target, str) or not target.strip():
            raise ToolError("this action needs a target: what to point at, in words")
        question = GROUNDER_PROMPT.format(space=self.space.describe(), target=target.strip())
        body = {"model": self.grounder_model, "max_tokens": 128, "temperature": 0.0,
                "messages": [{"role": "user", "content": [image_part(shot.png), {"type": "text", "text": question}]}]}
        response = self.grounder.create_chat(body)
        self.requests.append((sampling_of(body), response.model))
        text = response.choices[0].message.content if response.choices else ""
        return read_point(text), chat_usage(response)
