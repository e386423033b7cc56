"""UI-TARS's text grammar on a Chat Completions server (vLLM).

The model answers `Thought: ...` then `Action: click(start_box='(x,y)')`; several actions may follow
one another. UI-TARS-1.5 speaks pixels of the smart_resized image it was sent; UI-TARS-1 a 0-1000
grid. A box of four numbers means its centre; `<|box_start|>`, `<point>x y</point>` and `[x, y]`
wrappings are all read. `type(content='...\\n')` types and then presses Enter; `finished()` ends the
task as DONE and `call_user()` as FAIL. An answer that cannot be read is one invalid call.
"""
from __future__ import annotations

import ast
import re
from typing import Any

from .agent import Call
from .commands import Command
from .errors import ToolError
from .keys import key_name
from .vllm_chat import TextGrammarAdapter

SCROLL_CLICKS = 5
WAIT_S = 5.0
_CALL_START = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}

PROMPT = """\
You are a GUI agent working on a Linux desktop. You are given a task, your earlier actions and \
screenshots. Output the next action.

## Output Format
```
Thought: ...
Action: ...
```

## Action Space
click(start_box='<|box_start|>(x1,y1)<|box_end|>')
left_double(start_box='<|box_start|>(x1,y1)<|box_end|>')
right_single(start_box='<|box_start|>(x1,y1)<|box_end|>')
drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')
hotkey(key='ctrl c')
type(content='') # To submit what you typed, end content with "\\n".
scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')
wait() # Sleep for 5 seconds and look again.
finished(content='xxx') # The task is done. Escape quotes and newlines in content as \\', \\" and \\n.
call_user() # The task cannot be done, or needs the user's help.

## Note
- Write the Thought part in {language}: a short plan, then the next action and its target in one sentence.
- If a password is asked for, it is "{password}".

## User Instruction
{instruction}"""


def split_calls(text: str) -> list[tuple[str, str | None, str]]:
    """(name, argument source or None when unterminated, raw text) of each call in `text`, in order.
    Raw newlines inside quotes become \\n escapes, so the arguments parse as Python."""
    calls: list[tuple[str, str | None, str]] = []
    position = 0
    while True:
        match = _CALL_START.search(text, position)
        if match is None:
            return calls
        index, depth, quote, source = match.end(), 1, None, []
        while index < len(text):
            char = text[index]
            if quote:
                if char == "\\" and index + 1 < len(text):
                    source.append(text[index:index + 2])
                    index += 2
                    continue
                if char == quote:
                    quote = None
                source.append("\\n" if char == "\n" else char)
            else:
                if char in "'\"":
                    quote = char
                elif char == "(":
                    depth += 1
                elif char == ")":
                    depth -= 1
                    if depth == 0:
                        break
                source.append(char)
            index += 1
        raw = text[match.start():index + 1]
        calls.append((match.group(1), "".join(source) if depth == 0 else None, raw))
        position = index + 1


def arguments(name: str, source: str) -> dict[str, Any]:
    """The keyword (and positional, as "_0", "_1") arguments of one call, all literals."""
    try:
        node = ast.parse(f"f({source})", mode="eval").body
        if not isinstance(node, ast.Call):  # split_calls gives balanced brackets, so never
            raise ValueError("not the arguments of one call")
        keywords = [(keyword.arg, ast.literal_eval(keyword.value)) for keyword in node.keywords]
        values = {name: value for name, value in keywords if name is not None}  # a `**mapping` has no name
        values.update({f"_{i}": ast.literal_eval(arg) for i, arg in enumerate(node.args)})
    except (SyntaxError, ValueError) as e:
        raise ToolError(f"cannot read the arguments of {name}({source[:80]}): {e}") from None
    return values


def point(value: Any) -> tuple[float, float]:
    """A point from '(x,y)', '<|box_start|>(x,y)<|box_end|>', '<point>x y</point>', '[x, y]' or a box's centre."""
    numbers = [float(n) for n in _NUMBER.findall(str(value))] if not isinstance(value, (list, tuple)) else \
        [float(n) for n in value]
    if len(numbers) == 2:
        return numbers[0], numbers[1]
    if len(numbers) == 4:
        return (numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2
    raise ToolError(f"cannot read a point from {value!r:.60}: expected (x,y) or a box (x1,y1,x2,y2)")


def _where(args: dict[str, Any], *names: str) -> tuple[float, float]:
    for name in names:
        if args.get(name) is not None:
            return point(args[name])
    raise ToolError(f"the action needs {names[0]}")


def command(name: str, args: dict[str, Any]) -> Command | str:
    """A Command, or "DONE" / "FAIL" for the calls that end the task."""
    if name in ("click", "left_single"):
        return Command("click", (_where(args, "start_box", "point", "_0"),))
    if name == "left_double":
        return Command("click", (_where(args, "start_box", "point", "_0"),), clicks=2)
    if name == "left_triple":
        return Command("click", (_where(args, "start_box", "point", "_0"),), clicks=3)
    if name == "right_single":
        return Command("click", (_where(args, "start_box", "point", "_0"),), button="right")
    if name in ("hover", "mouse_move", "move_to"):
        return Command("move", (_where(args, "start_box", "point", "_0"),))
    if name in ("drag", "select"):
        return Command("drag", (_where(args, "start_box", "start_point"), _where(args, "end_box", "end_point")))
    if name in ("hotkey", "press"):
        keys = args.get("key", args.get("hotkey", args.get("_0")))
        if not isinstance(keys, str) or not keys.strip():
            raise ToolError(f"{name} needs key='...', got {keys!r:.40}")
        return Command("key", chords=(tuple(key_name(k) for k in re.split(r"[\s+]+", keys.strip()) if k),))
    if name == "type":
        content = args.get("content", args.get("_0"))
        if not isinstance(content, str):
            raise ToolError(f"type needs content='...', got {content!r:.40}")
        return Command("type", text=content)
    if name == "scroll":
        direction = str(args.get("direction", "down")).strip().lower()
        if direction not in _DIRECTIONS:
            raise ToolError(f"direction must be up, down, left or right, got {direction!r:.40}")
        dx, dy = _DIRECTIONS[direction]
        points = (_where(args, "start_box", "point"),) if args.get("start_box") or args.get("point") else ()
        return Command("scroll", points, scroll=(dx * SCROLL_CLICKS, dy * SCROLL_CLICKS))
    if name == "wait":
        return Command("wait", seconds=WAIT_S)
    if name == "finished":
        return "DONE"
    if name == "call_user":
        return "FAIL"
    raise ToolError(f"unknown action {name!r}")


def parse(text: str) -> tuple[list[Call], str | None]:
    action_part = text.rsplit("Action:", 1)[1] if "Action:" in text else ""
    found = split_calls(action_part)
    if not found:
        why = "no 'Action:' line" if not action_part else "no action call after 'Action:'"
        return [Call("action-1", "answer", text[-200:], error=f"{why}; answer with Thought: ... Action: ...")], None
    calls: list[Call] = []
    for index, (name, source, raw) in enumerate(found, 1):
        call = Call(f"action-{index}", name, raw)
        calls.append(call)
        try:
            if source is None:
                raise ToolError(f"the call {raw[:60]!r} is not closed")
            result = command(name, arguments(name, source))
        except ToolError as e:
            call.error = str(e)
            continue
        if isinstance(result, str):
            return calls[:-1], result
        if result.kind == "type" and result.text.endswith("\n"):
            # UI-TARS submits with a trailing newline: type the text, then press Enter.
            call.command = Command("type", text=result.text.rstrip("\n")) if result.text.rstrip("\n") else None
            enter = Call(call.id, name, raw, command=Command("key", chords=(("enter",),)))
            if call.command is None:
                calls[-1] = enter
            else:
                calls.append(enter)
            continue
        call.command = result
    return calls, None


class UITarsAdapter(TextGrammarAdapter):
    def prompt(self, instruction: str) -> list[dict[str, Any]]:
        text = PROMPT.format(language=self.language, password=self.settings.password, instruction=instruction)
        return [{"role": "user", "content": [{"type": "text", "text": text}]}]

    def parse(self, text: str) -> tuple[list[Call], str | None]:
        return parse(text)
