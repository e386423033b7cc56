"""Qwen-VL's `computer_use` function on a Chat Completions server (vLLM).

The function's schema goes in the system prompt inside <tools></tools>; the model answers with
`<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [x, y]}}
</tool_call>`, possibly several. Qwen3-VL speaks a 0-999 grid, Qwen2.5-VL pixels of the
smart_resized image. `terminate` ends the task (status "failure" is FAIL), and so does `answer`.
"""
from __future__ import annotations

import json
import re
from typing import Any

from .agent import Call
from .commands import Command
from .errors import ToolError
from .keys import key_name
from .vllm_chat import TextGrammarAdapter

FUNCTION = "computer_use"
_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_CLICKS = {"left_click": ("left", 1), "right_click": ("right", 1), "middle_click": ("middle", 1),
           "double_click": ("left", 2), "triple_click": ("left", 3)}

ACTIONS = """\
* `key`: press the keys in `keys` together (e.g. ["ctrl", "c"]).
* `type`: type the string `text`.
* `mouse_move`: move the pointer to `coordinate`.
* `left_click`, `right_click`, `middle_click`, `double_click`, `triple_click`: click at `coordinate`.
* `left_click_drag`: press the left button at the pointer and drag to `coordinate`.
* `scroll`: scroll the wheel by `pixels` clicks (positive up, negative down), at `coordinate` if given.
* `hscroll`: scroll sideways by `pixels` clicks (positive right, negative left).
* `wait`: wait `time` seconds.
* `terminate`: end the task with `status` "success" or "failure".
* `answer`: end the task with the answer `text`."""


def schema(resolution: tuple[int, int]) -> dict[str, Any]:
    """The function as Qwen-VL was trained to read it: the resolution it states is the coordinate space
    (1000x1000 for Qwen3-VL's relative grid, the image's own size for Qwen2.5-VL)."""
    return {"type": "function", "function": {
        "name": FUNCTION,
        "description": ("Use a mouse and keyboard to interact with a computer, and take screenshots.\n"
                        f"* The screen's resolution is {resolution[0]}x{resolution[1]}.\n"
                        "* Click the centre of elements, not their edges.\n"
                        f"The action to perform; the available actions are:\n{ACTIONS}"),
        "parameters": {"type": "object", "required": ["action"], "properties": {
            "action": {"type": "string", "enum": ["key", "type", "mouse_move", "left_click", "left_click_drag",
                                                  "right_click", "middle_click", "double_click", "triple_click",
                                                  "scroll", "hscroll", "wait", "terminate", "answer"]},
            "keys": {"type": "array", "description": "Required only by action=key."},
            "text": {"type": "string", "description": "Required only by action=type and action=answer."},
            "coordinate": {"type": "array", "description": "(x, y): the point to act on."},
            "pixels": {"type": "number", "description": "The amount to scroll, for action=scroll and hscroll."},
            "time": {"type": "number", "description": "Seconds to wait, for action=wait."},
            "status": {"type": "string", "enum": ["success", "failure"],
                       "description": "For action=terminate."}}}}}


def command(args: dict[str, Any]) -> Command | str:
    action = args.get("action")
    if action in _CLICKS:
        button, clicks = _CLICKS[action]
        points = (_point(args),) if args.get("coordinate") is not None else ()
        return Command("click", points, button=button, clicks=clicks)
    if action == "mouse_move":
        return Command("move", (_point(args),))
    if action == "left_click_drag":
        return Command("drag", (_point(args),))
    if action == "key":
        keys = args.get("keys")
        if isinstance(keys, str):
            keys = re.split(r"\s*\+\s*", keys)
        if not isinstance(keys, list) or not keys:
            raise ToolError(f"key needs keys, a list such as [\"ctrl\", \"c\"], got {keys!r:.60}")
        return Command("key", chords=(tuple(key_name(k) for k in keys),))
    if action == "type":
        text = args.get("text")
        if not isinstance(text, str) or not text:
            raise ToolError(f"type needs text, got {text!r:.60}")
        return Command("type", text=text)
    if action in ("scroll", "hscroll"):
        amount = args.get("pixels")
        if isinstance(amount, bool) or not isinstance(amount, (int, float)) or amount == 0:
            raise ToolError(f"{action} needs a non-zero number of pixels, got {amount!r:.40}")
        points = (_point(args),) if args.get("coordinate") is not None else ()
        scroll = (int(amount), 0) if action == "hscroll" else (0, -int(amount))
        return Command("scroll", points, scroll=scroll)
    if action == "wait":
        return Command("wait", seconds=args.get("time", 2))
    if action == "terminate":
        return "FAIL" if str(args.get("status", "success")).lower() == "failure" else "DONE"
    if action == "answer":
        return "DONE"
    raise ToolError(f"unknown action {action!r}")


def _point(args: dict[str, Any]) -> tuple[float, float]:
    value = args.get("coordinate")
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ToolError(f"coordinate must be [x, y], got {value!r:.60}")
    return value[0], value[1]


def parse(text: str) -> tuple[list[Call], str | None]:
    blocks = _TOOL_CALL.findall(text)
    if not blocks:
        return [Call("tool_call-1", FUNCTION, text[-200:],
                     error="no <tool_call> found; answer with <tool_call>{\"name\": \"computer_use\", "
                           "\"arguments\": {...}}</tool_call>")], None
    calls: list[Call] = []
    for index, block in enumerate(blocks, 1):
        call = Call(f"tool_call-{index}", FUNCTION, block.strip())
        calls.append(call)
        try:
            payload = json.loads(block.strip())
        except json.JSONDecodeError as e:
            call.error = f"the tool call is not valid JSON ({e.msg} at character {e.pos})"
            continue
        if not isinstance(payload, dict) or not isinstance(payload.get("arguments"), dict):
            call.error = "a tool call is {\"name\": \"computer_use\", \"arguments\": {...}}"
            continue
        call.arguments = payload["arguments"]
        if payload.get("name") != FUNCTION:
            call.error = f"there is no function {payload.get('name')!r}; the function is {FUNCTION!r}"
            continue
        try:
            result = command(payload["arguments"])
        except ToolError as e:
            call.error = str(e)
            continue
        if isinstance(result, str):
            return calls[:-1], result
        call.command = result
    return calls, None


class QwenAdapter(TextGrammarAdapter):
    def prompt(self, instruction: str) -> list[dict[str, Any]]:
        system = ("You are a helpful assistant.\n\n# Tools\n\nYou may call one or more functions to assist with the "
                  "user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n"
                  f"<tools>\n{json.dumps(schema(self.space.size))}\n</tools>\n\n"
                  "For each function call, return a json object with function name and arguments within "
                  "<tool_call></tool_call> XML tags:\n<tool_call>\n"
                  '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>')
        task = (f"The user's task: {instruction}\nThe computer runs a Linux desktop; if a password is asked for, "
                f"it is \"{self.settings.password}\". Think briefly, then make the next tool call.")
        return [{"role": "system", "content": system}, {"role": "user", "content": [{"type": "text", "text": task}]}]

    def parse(self, text: str) -> tuple[list[Call], str | None]:
        return parse(text)
