"""Turning a model's answer into actions, for both action spaces, without ever raising.

pyautogui: every ```python block is an action, in order; a line or statement that is only WAIT,
DONE or FAIL is that special action, inside a block (`pyautogui.click(1, 2); DONE`) or outside;
an answer without fences counts as code when it is clearly code (it parses as Python and calls
pyautogui), else its lines that are.
computer_13: JSON objects (or lists of them) in ```json blocks, or anywhere in an answer without
fences; comments, trailing commas and text after the JSON are tolerated; each action is checked
with desktop_env.actions.validate_action.

One broken action voids the whole answer (an empty action list, which costs the agent a step):
running the rest of a sequence whose first step was dropped would act on the wrong screen.

Coordinates are rewritten here too: `coordinate_factor` maps the model's pixels (on a resized
screenshot) back to the screen's, and `tag_centers` turns set-of-marks tags into points. Code is
rewritten through its syntax tree, replacing only the literal numbers and tag names, so the rest
of the model's code stays exactly as written.
"""
from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from desktop_env.actions import InvalidAction, validate_action

SPECIAL_CODES = ("WAIT", "DONE", "FAIL")
PYTHON_LANGUAGES = ("", "python", "python3", "py")
JSON_LANGUAGES = ("", "json", "jsonc", "json5", "python", "py")

# A line holding nothing but a special code, perhaps in Markdown emphasis or quotes.
_SPECIAL_LINE = re.compile(r"^[\s>*_`'\"]*(WAIT|DONE|FAIL)[\s*_`'\".!]*$")
_LANGUAGE = re.compile(r"[A-Za-z0-9_+.#-]*")
_TAG_NAME = re.compile(r"tag_(\d+)")

# pyautogui function -> (positional indexes of its x and y, their keyword names).
_POINT_ARGUMENTS: dict[str, tuple[tuple[int, int], tuple[str, str]]] = {
    **{name: ((0, 1), ("x", "y")) for name in ("click", "doubleClick", "tripleClick", "rightClick", "middleClick",
                                                "moveTo", "dragTo", "mouseDown", "mouseUp")},
    **{name: ((1, 2), ("x", "y")) for name in ("scroll", "hscroll", "vscroll")},
    # Relative moves are distances in the same pixels, so they scale the same way.
    **{name: ((0, 1), ("xOffset", "yOffset")) for name in ("moveRel", "move", "dragRel", "drag")},
}


@dataclass
class ParsedResponse:
    """The actions found in an answer, and why any part of it was ignored or rejected."""
    actions: list[Any] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class UnknownTag(ValueError):
    """Code names a set-of-marks tag that was not drawn on the screenshot."""


@dataclass
class _Block:
    language: str
    body: str
    code: bool      # a fenced block, or code lines found in an answer without fences; else prose


# ------------------------------------------------------------------ pyautogui


def parse_pyautogui(text: str, coordinate_factor: float = 1.0,
                    tag_centers: Mapping[int, tuple[int, int]] | None = None) -> ParsedResponse:
    """pyautogui code strings and special codes found in `text`, in order.

    Literal coordinates are multiplied by `coordinate_factor`; `tag_N` names become the
    centre of mark N from `tag_centers` (already in screen pixels, so not scaled).
    """
    result = ParsedResponse()
    invalid = False
    pieces: list[tuple[str, str]] = []      # ("code" | "special", text)
    blocks = _split_fences(_normalise_newlines(text))
    if not any(block.code for block in blocks):
        blocks = _unfenced_code(blocks[0].body)
    for block in blocks:
        stripped = block.body.strip()
        special = _special_code(stripped)
        if special:
            pieces.append(("special", special))
        elif not block.code:
            pieces.extend(("special", code) for code in _prose_items(block.body))
        elif block.language not in PYTHON_LANGUAGES:
            result.problems.append(f"ignored a ```{block.language} block: only Python code is run")
        elif stripped:
            try:
                pieces.extend(_split_specials(stripped))
            except SyntaxError as e:
                invalid = True
                where = f", line {e.lineno}" if e.lineno else ""
                result.problems.append(f"a code block is not valid Python ({e.msg}{where}): {stripped[:200]!r}")
    for kind, piece in pieces:
        if kind == "special":
            result.actions.append(piece)
            continue
        try:
            code = piece if coordinate_factor == 1 else scale_coordinates(piece, coordinate_factor, result.problems)
            result.actions.append(resolve_tags(code, tag_centers) if tag_centers is not None else code)
        except UnknownTag as e:
            invalid = True
            result.problems.append(str(e))
    return _finish(result, invalid, "the answer has no code block, special code or code line")


def _finish(result: ParsedResponse, invalid: bool, nothing_found: str) -> ParsedResponse:
    """One invalid action voids the whole answer: running the rest could act on the wrong screen."""
    if invalid:
        if result.actions:
            result.problems.append(f"the answer's {len(result.actions)} valid action(s) are dropped too")
        result.actions = []
    elif not result.actions and not result.problems:
        result.problems.append(nothing_found)
    return result


def _unfenced_code(text: str) -> list[_Block]:
    """An answer without fences: all of it if it is clearly code, else its code lines and special lines."""
    stripped = text.strip()
    try:
        if _calls_pyautogui_or_time(_parse_python(stripped)):
            return [_Block("python", stripped, code=True)]
    except SyntaxError:
        pass  # prose with some code lines in it, handled line by line below
    blocks: list[_Block] = []
    for line in text.split("\n"):
        candidate = line.strip().strip("`").strip()
        if _is_code_line(candidate):
            if blocks and blocks[-1].code:
                blocks[-1].body += "\n" + candidate
            else:
                blocks.append(_Block("python", candidate, code=True))
        elif _SPECIAL_LINE.match(line):
            blocks.append(_Block("", line, code=False))
    return blocks


def _is_code_line(line: str) -> bool:
    if not line:
        return False
    try:
        return _calls_pyautogui_or_time(_parse_python(line))
    except SyntaxError:
        return False


def _parse_python(code: str) -> ast.Module:
    """ast.parse, with every way it can refuse the input reported as a SyntaxError."""
    try:
        return ast.parse(code)
    except (ValueError, MemoryError, RecursionError) as e:  # null bytes, absurd nesting
        raise SyntaxError(f"{type(e).__name__}: {e}") from e


def _calls_pyautogui_or_time(tree: ast.AST) -> bool:
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and isinstance(node.func.value, ast.Name) and node.func.value.id in ("pyautogui", "time")
               for node in ast.walk(tree))


def _split_specials(code: str) -> list[tuple[str, str]]:
    """The code cut at top-level statements that are only WAIT/DONE/FAIL (raises SyntaxError).

    Each piece keeps everything between the cuts, comments included.
    """
    tree = _parse_python(code)
    pieces: list[tuple[str, str]] = []
    start, statements = 0, 0
    for statement in tree.body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Name) \
                and statement.value.id in SPECIAL_CODES:
            begin, end = _span(code, statement)
            if statements:
                pieces.append(("code", _trim(code[start:begin])))
            pieces.append(("special", statement.value.id))
            start, statements = end, 0
        else:
            statements += 1
    if statements:
        pieces.append(("code", _trim(code[start:])))
    return pieces


def _trim(code: str) -> str:
    # What separated a piece from a special code: blank lines and the `;` of `click(); DONE`.
    return code.strip(" \t\n;")


# ------------------------------------------------------------------ code rewriting


def scale_coordinates(code: str, factor: float, notes: list[str] | None = None) -> str:
    """`code` with the literal coordinates of pyautogui pointer calls multiplied by `factor` (rounded).

    Coordinates that are not literal numbers (variables, expressions) cannot be scaled; each
    one is described in `notes` when given. Raises SyntaxError when `code` is not Python.
    """
    tree = _parse_python(code)
    edits: list[tuple[ast.expr, str]] = []
    for call in ast.walk(tree):
        name = _pyautogui_function(call)
        if name not in _POINT_ARGUMENTS or not isinstance(call, ast.Call):
            continue
        (x_index, y_index), keywords = _POINT_ARGUMENTS[name]
        for index, argument in enumerate(call.args):
            if index == x_index and isinstance(argument, (ast.Tuple, ast.List)) and len(argument.elts) == 2:
                for element in argument.elts:  # pyautogui also takes the point as one (x, y) argument
                    _scale_literal(code, element, factor, edits, notes, name)
            elif index in (x_index, y_index):
                _scale_literal(code, argument, factor, edits, notes, name)
        for keyword in call.keywords:
            if keyword.arg in keywords:
                _scale_literal(code, keyword.value, factor, edits, notes, name)
    return _apply_edits(code, edits)


def resolve_tags(code: str, centers: Mapping[int, tuple[int, int]]) -> str:
    """`code` with each `tag_N` replaced by the centre of mark N.

    As a positional argument the tag becomes two arguments (`click(tag_3)` -> `click(960, 540)`),
    which is how every pyautogui function takes a point; anywhere else a tuple `(960, 540)`.
    Raises UnknownTag for a tag that has no mark, SyntaxError when `code` is not Python.
    """
    tree = _parse_python(code)
    positional = {id(argument) for node in ast.walk(tree) if isinstance(node, ast.Call) for argument in node.args}
    edits: list[tuple[ast.expr, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
            continue
        match = _TAG_NAME.fullmatch(node.id)
        if not match:
            continue
        number = int(match.group(1))
        if number not in centers:
            shown = f"tag_1 to tag_{max(centers)}" if centers else "no tags"
            raise UnknownTag(f"the code uses {node.id}, but the screenshot showed {shown}")
        x, y = centers[number]
        edits.append((node, f"{x}, {y}" if id(node) in positional else f"({x}, {y})"))
    return _apply_edits(code, edits)


def _pyautogui_function(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "pyautogui":
        return node.func.attr
    return None


def _number(node: ast.AST) -> float | None:
    """The value of a literal number, or of a negated one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _number(node.operand)
        if value is not None:
            return -value if isinstance(node.op, ast.USub) else value
    return None


def _scale_literal(code: str, node: ast.expr, factor: float, edits: list[tuple[ast.expr, str]],
                   notes: list[str] | None, function: str) -> None:
    value = _number(node)
    if value is not None:
        edits.append((node, str(round(value * factor))))
    elif notes is not None and not (isinstance(node, ast.Name) and _TAG_NAME.fullmatch(node.id)) \
            and not (isinstance(node, ast.Constant) and node.value is None):
        notes.append(f"pyautogui.{function}: coordinate {_segment(code, node)!r} is not a literal number, "
                     "so it was not scaled to the screen")


def _apply_edits(code: str, edits: list[tuple[ast.expr, str]]) -> str:
    spans = sorted(((*_span(code, node), replacement) for node, replacement in edits), reverse=True)
    for start, end, replacement in spans:
        code = code[:start] + replacement + code[end:]
    return code


def _segment(code: str, node: ast.expr) -> str:
    start, end = _span(code, node)
    return code[start:end]


def _span(code: str, node: ast.expr | ast.stmt) -> tuple[int, int]:
    """The string indices where a parsed node's source starts and ends."""
    # ast.parse sets the end positions; only nodes built by hand lack them.
    assert node.end_lineno is not None and node.end_col_offset is not None
    return _offset(code, node.lineno, node.col_offset), _offset(code, node.end_lineno, node.end_col_offset)


def _offset(code: str, lineno: int, col_offset: int) -> int:
    """The string index of an AST position (1-based line, UTF-8 byte column)."""
    start = 0
    for _ in range(lineno - 1):
        start = code.index("\n", start) + 1
    end = code.find("\n", start)
    line = code[start:] if end < 0 else code[start:end]
    return start + len(line.encode("utf-8")[:col_offset].decode("utf-8"))


# ------------------------------------------------------------------ computer_13


def parse_computer_13(text: str, screen_size: tuple[int, int] | None = None, coordinate_factor: float = 1.0,
                      tag_centers: Mapping[int, tuple[int, int]] | None = None) -> ParsedResponse:
    """Validated computer_13 action dicts and special codes (as bare strings) found in `text`, in order.

    x and y are multiplied by `coordinate_factor` before validation against `screen_size`;
    a `"tag": N` parameter stands for x and y at the centre of mark N (from `tag_centers`).
    """
    result = ParsedResponse()
    invalid = False
    candidates: list[Any] = []
    blocks = _split_fences(_normalise_newlines(text))
    has_fences = any(block.code for block in blocks)
    for block in blocks:
        stripped = block.body.strip()
        special = _special_code(stripped.strip("\"'"))
        if special:
            candidates.append(special)
        elif not block.code:
            # Without fences, JSON objects naming an action_type anywhere in the answer are actions.
            candidates.extend(_prose_items(block.body, json_key=None if has_fences else "action_type"))
        elif block.language not in JSON_LANGUAGES:
            result.problems.append(f"ignored a ```{block.language} block: actions are JSON")
        elif stripped:
            values = [value for _, _, value in _json_values(stripped)]
            if not values:
                invalid = True
                result.problems.append(f"a code block holds no JSON action: {stripped[:200]!r}")
            candidates.extend(values)
    for candidate in candidates:
        for action in candidate if isinstance(candidate, list) else [candidate]:
            try:
                result.actions.append(_computer_13_action(action, screen_size, coordinate_factor, tag_centers))
            except (InvalidAction, UnknownTag, _UndecodableJSON) as e:
                invalid = True
                result.problems.append(str(e))
    return _finish(result, invalid, "the answer has no JSON action or special code")


class _UndecodableJSON(ValueError):
    pass


def _computer_13_action(action: Any, screen_size: tuple[int, int] | None, factor: float,
                        tag_centers: Mapping[int, tuple[int, int]] | None) -> dict[str, Any] | str:
    if isinstance(action, _UndecodableJSON):
        raise action
    if isinstance(action, str) and _special_code(action.strip()):
        return action.strip()
    if isinstance(action, Mapping):
        action = _place_tag(_scale_action(action, factor), tag_centers)
    normalised = validate_action(action, screen_size)
    if normalised["action_type"] in SPECIAL_CODES:
        return normalised["action_type"]
    return normalised


def _parameters(action: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(a copy of the action, the dict in it that holds the parameters): they may sit beside action_type."""
    copy = dict(action)
    if isinstance(copy.get("parameters"), Mapping):
        copy["parameters"] = dict(copy["parameters"])
        return copy, copy["parameters"]
    return copy, copy


def _scale_action(action: Mapping[str, Any], factor: float) -> dict[str, Any]:
    copy, parameters = _parameters(action)
    if factor != 1:
        for name in ("x", "y"):
            value = parameters.get(name)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                parameters[name] = round(value * factor)
    return copy


def _place_tag(action: dict[str, Any], tag_centers: Mapping[int, tuple[int, int]] | None) -> dict[str, Any]:
    copy, parameters = _parameters(action)
    if "tag" not in parameters:
        return copy
    tag = parameters.pop("tag")
    kind = action.get("action_type")
    if tag_centers is None:
        raise InvalidAction(f"{kind}: parameter 'tag' is only valid with set-of-marks observations")
    if "x" in parameters or "y" in parameters:
        raise InvalidAction(f"{kind}: give either 'tag' or x and y, not both (tag={tag!r})")
    number = _mark_number(tag)
    if number is None:
        raise InvalidAction(f"{kind}: parameter 'tag' must be a mark number, got {tag!r}")
    if number not in tag_centers:
        shown = f"1 to {max(tag_centers)}" if tag_centers else "none"
        raise UnknownTag(f"{kind}: tag {number} was not drawn on the screenshot (marks: {shown})")
    parameters["x"], parameters["y"] = tag_centers[number]
    return copy


def _mark_number(tag: Any) -> int | None:
    """3, "3" and "tag_3" all name mark 3."""
    if type(tag) is int:
        return tag
    if isinstance(tag, str):
        match = _TAG_NAME.fullmatch(tag.strip())
        if match or tag.strip().isdigit():
            return int(match.group(1) if match else tag.strip())
    return None


def _json_values(text: str, require: str | None = None) -> list[tuple[int, int, Any]]:
    """(start, end, value) of every top-level JSON object or array in `text`; a span that does not
    decode has an _UndecodableJSON as its value. With `require`, only objects mentioning that key."""
    values: list[tuple[int, int, Any]] = []
    index = 0
    while index < len(text):
        if text[index] not in "{[" or require is not None and text[index] != "{":
            index += 1
            continue
        scanned = _scan_json(text, index)
        if scanned is None:
            index += 1
            continue
        end, cleaned = scanned
        if require is None or f'"{require}"' in cleaned or f"'{require}'" in cleaned:
            values.append((index, end, _decode(cleaned)))
        index = end
    return values


def _decode(span: str) -> Any:
    try:
        return json.loads(span)
    except (ValueError, RecursionError):
        pass  # not strict JSON: try it as a Python literal (single quotes, True, None)
    try:
        return ast.literal_eval(span)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _UndecodableJSON(f"not valid JSON: {span[:200]!r}")


def _scan_json(text: str, start: int) -> tuple[int, str] | None:
    """From the bracket at `start`: (index after its match, the span without comments and trailing
    commas), or None if it is never closed. Strings may use either quote."""
    closers = {"{": "}", "[": "]"}
    stack: list[str] = []
    out: list[str] = []
    index = start
    while index < len(text):
        char = text[index]
        if char in "\"'":
            end = _string_end(text, index)
            if end is None:
                return None
            out.append(text[index:end])
            index = end
            continue
        if text.startswith("//", index) or char == "#":
            newline = text.find("\n", index)
            index = len(text) if newline < 0 else newline
            continue
        if text.startswith("/*", index):
            close = text.find("*/", index + 2)
            if close < 0:
                return None
            index = close + 2
            continue
        if char in closers:
            stack.append(closers[char])
        elif char in "}]":
            if not stack or stack.pop() != char:
                return None
            while out and (out[-1].isspace() or out[-1] == ","):
                if out.pop() == ",":  # a trailing comma before the closing bracket
                    break
            out.append(char)
            if not stack:
                return index + 1, "".join(out)
            index += 1
            continue
        out.append(char)
        index += 1
    return None


def _string_end(text: str, start: int) -> int | None:
    quote = text[start]
    index = start + 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == quote:
            return index + 1
        if text[index] == "\n":
            return None
        index += 1
    return None


# ------------------------------------------------------------------ Markdown


def _normalise_newlines(text: str) -> str:
    return (text or "").replace("\r\n", "\n").replace("\r", "\n")


def _split_fences(text: str) -> list[_Block]:
    """Prose and ``` blocks in order; an unclosed last fence runs to the end of the answer."""
    parts = text.split("```")
    blocks = []
    for index, part in enumerate(parts):
        if index % 2 == 0:
            blocks.append(_Block("", part, code=False))
        else:
            blocks.append(_fenced_block(part))
    return blocks


def _fenced_block(raw: str) -> _Block:
    first, newline, rest = raw.partition("\n")
    if newline and _LANGUAGE.fullmatch(first.strip()):
        language, body = first.strip().lower(), rest
        if not body.strip() and language.upper() in SPECIAL_CODES:  # ```DONE\n```
            language, body = "", language.upper()
        return _Block(language, body, code=True)
    word, space, remainder = raw.strip().partition(" ")
    if space and word.lower() in PYTHON_LANGUAGES + JSON_LANGUAGES:  # ```python pyautogui.click(1, 2)```
        return _Block(word.lower(), remainder, code=True)
    return _Block("", raw, code=True)


def _special_code(text: str) -> str | None:
    return text if text in SPECIAL_CODES else None


def _prose_items(prose: str, json_key: str | None = None) -> list[Any]:
    """Special codes on lines of their own and, with `json_key`, JSON objects naming that key, in order."""
    items: list[tuple[int, Any]] = []
    spans: list[tuple[int, int]] = []
    if json_key is not None:
        for start, end, value in _json_values(prose, require=json_key):
            items.append((start, value))
            spans.append((start, end))
    offset = 0
    for line in prose.split("\n"):
        match = _SPECIAL_LINE.match(line)
        if match and not any(start <= offset < end for start, end in spans):
            items.append((offset, match.group(1)))
        offset += len(line) + 1
    return [value for _, value in sorted(items, key=lambda item: item[0])]
