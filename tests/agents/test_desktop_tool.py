"""The desktop_action tool: structured calls become safe pyautogui code, bad calls become messages for the model."""
from __future__ import annotations

import json
import re

import jsonschema
import pytest

from desktop_env.actions import DRAG_DURATION_S
from mm_agents.desktop_tool import (
    ACTION_TYPES,
    DESKTOP_TOOL,
    PARAMETERS,
    TOOL_NAME,
    ToolArgumentError,
    anthropic_tool_schema,
    format_tool_result,
    openai_tool_schema,
    to_action,
)
from mm_agents.llm.base import ToolSpec

SCREEN = (1280, 720)


class RecordingPyautogui:
    """Stands in for the pyautogui module: records every call instead of touching a screen."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple, dict]] = []

    def __getattr__(self, name: str):
        def record(*args, **kwargs):
            self.calls.append((name, args, kwargs))
        return record


def run(arguments: dict) -> list[tuple[str, tuple, dict]]:
    code = to_action(arguments, SCREEN)
    recorder = RecordingPyautogui()
    # No builtins: the generated code may do nothing but call pyautogui.
    exec(compile(code, "<action>", "exec"), {"__builtins__": {}, "pyautogui": recorder})
    return recorder.calls


# One example per action type (and variant), with the pyautogui calls it must make.
EXAMPLES = [
    ({"action_type": "click", "coordinate": [100, 200]}, [("click", (), {"x": 100, "y": 200})]),
    ({"action_type": "click"}, [("click", (), {})]),
    ({"action_type": "click", "coordinate": [10.9, 20.2], "clicks": 3},
     [("click", (), {"x": 10, "y": 20, "clicks": 3})]),
    ({"action_type": "double_click", "coordinate": [5, 6]}, [("doubleClick", (), {"x": 5, "y": 6})]),
    ({"action_type": "double_click"}, [("doubleClick", (), {})]),
    ({"action_type": "right_click", "coordinate": [0, 0]}, [("rightClick", (), {"x": 0, "y": 0})]),
    ({"action_type": "move", "coordinate": [1279, 719]}, [("moveTo", (1279, 719), {})]),
    ({"action_type": "drag", "coordinate": [300, 400]},
     [("dragTo", (300, 400), {"duration": DRAG_DURATION_S, "button": "left", "mouseDownUp": True})]),
    ({"action_type": "type", "text": "hello"}, [("typewrite", ("hello",), {})]),
    ({"action_type": "key", "key": "enter"}, [("press", ("enter",), {})]),
    ({"action_type": "key", "key": "A"}, [("press", ("A",), {})]),      # case kept: shift+a
    ({"action_type": "key", "key": "Escape"}, [("press", ("escape",), {})]),
    ({"action_type": "key", "key": "Page_Down"}, [("press", ("pagedown",), {})]),
    ({"action_type": "hotkey", "keys": ["ctrl", "s"]}, [("hotkey", ("ctrl", "s"), {})]),
    ({"action_type": "hotkey", "keys": ["Control", "Shift", "T"]}, [("hotkey", ("ctrl", "shift", "T"), {})]),
    ({"action_type": "scroll", "clicks": -5}, [("vscroll", (-5,), {})]),
    ({"action_type": "scroll", "clicks": 3, "coordinate": [640, 360]},
     [("moveTo", (640, 360), {}), ("vscroll", (3,), {})]),
    ({"action_type": "pyautogui", "command": "pyautogui.press('tab')\npyautogui.press('tab')"},
     [("press", ("tab",), {}), ("press", ("tab",), {})]),
]


@pytest.mark.parametrize("arguments, calls", EXAMPLES, ids=[json.dumps(a) for a, _ in EXAMPLES])
def test_each_action_type_becomes_the_pyautogui_calls_it_names(arguments, calls):
    assert run(arguments) == calls


def test_every_action_type_has_an_example():
    covered = {arguments["action_type"] for arguments, _ in EXAMPLES} | {"WAIT", "DONE", "FAIL"}
    assert covered == set(ACTION_TYPES)


@pytest.mark.parametrize("action_type", ["WAIT", "DONE", "FAIL"])
def test_special_action_types_become_the_special_actions(action_type):
    assert to_action({"action_type": action_type}, SCREEN) == action_type
    assert to_action({"action_type": action_type.lower()}, SCREEN) == action_type


NASTY_TEXTS = [
    'it\'s "quoted"\n',
    "'''\"\"\"",
    "C:\\new\\table\\",
    "a literal \\n, not a newline",
    "tab\there\r\nand a line",
    "unicode: héllo – 日本語 🎉 \u200b",
    "'); import os; os.system('rm -rf /'); ('",
    "${HOME} $(whoami) `id` %s {0} {{}}",
    "\x00 nul and \x7f del",
]


@pytest.mark.parametrize("text", NASTY_TEXTS, ids=range(len(NASTY_TEXTS)))
def test_typed_text_reaches_pyautogui_exactly_whatever_it_contains(text):
    assert run({"action_type": "type", "text": text}) == [("typewrite", (text,), {})]


def test_raw_pyautogui_code_passes_through_unchanged_apart_from_outer_whitespace():
    code = "pyautogui.click(1, 2)\ntime.sleep(0.5)"
    assert to_action({"action_type": "pyautogui", "command": f"\n{code}\n"}, SCREEN) == code


def test_arguments_the_action_does_not_use_may_be_null():
    assert run({"action_type": "key", "key": "tab", "coordinate": None, "text": None}) == [("press", ("tab",), {})]


BAD_CALLS = [
    ({}, "action_type is required"),
    ({"action_type": 3}, "action_type is required"),
    ({"action_type": "tap"}, "unknown action_type 'tap'"),
    ({"action_type": "click", "button": "left"}, "unknown argument 'button'"),
    ({"action_type": "type", "text": "x", "coordinate": [1, 2]}, "'coordinate' does not apply to action_type 'type'"),
    ({"action_type": "DONE", "text": "finished"}, "'text' does not apply to action_type 'DONE'"),
    ({"action_type": "move"}, "needs the argument 'coordinate'"),
    ({"action_type": "drag"}, "needs the argument 'coordinate'"),
    ({"action_type": "type"}, "needs the argument 'text'"),
    ({"action_type": "type", "text": ""}, "text must be a non-empty string"),
    ({"action_type": "type", "text": ["a"]}, "text must be a non-empty string"),
    ({"action_type": "key"}, "needs the argument 'key'"),
    ({"action_type": "hotkey"}, "needs the argument 'keys'"),
    ({"action_type": "scroll"}, "needs the argument 'clicks'"),
    ({"action_type": "pyautogui"}, "needs the argument 'command'"),
    ({"action_type": "click", "coordinate": [1280, 10]}, "off the 1280x720 screen"),
    ({"action_type": "click", "coordinate": [10, 720]}, "off the 1280x720 screen"),
    ({"action_type": "click", "coordinate": [-1, 10]}, "off the 1280x720 screen"),
    ({"action_type": "click", "coordinate": [-0.5, 10]}, "off the 1280x720 screen"),
    ({"action_type": "click", "coordinate": [10]}, "coordinate must be a list of two numbers"),
    ({"action_type": "click", "coordinate": [1, 2, 3]}, "coordinate must be a list of two numbers"),
    ({"action_type": "click", "coordinate": ["10", "20"]}, "coordinate must be a list of two numbers"),
    ({"action_type": "click", "coordinate": "10, 20"}, "coordinate must be a list of two numbers"),
    ({"action_type": "click", "coordinate": [True, 5]}, "coordinate must be a list of two numbers"),
    ({"action_type": "click", "coordinate": [float("nan"), 5]}, "coordinate must be a list of two numbers"),
    ({"action_type": "click", "coordinate": [float("inf"), 5]}, "coordinate must be a list of two numbers"),
    ({"action_type": "click", "clicks": 4}, "clicks for click must be 1..3"),
    ({"action_type": "click", "clicks": 1.5}, "clicks must be a whole number"),
    ({"action_type": "scroll", "clicks": 0}, "must not be 0"),
    ({"action_type": "scroll", "clicks": "3"}, "clicks must be a whole number"),
    ({"action_type": "key", "key": "ctrl+s"}, "use action_type 'hotkey' with keys ['ctrl', 's']"),
    ({"action_type": "key", "key": "enterr"}, "'enterr' is not a pyautogui key name"),
    ({"action_type": "key", "key": ""}, "must be a key name"),
    ({"action_type": "key", "key": ["a"]}, "must be a key name"),
    ({"action_type": "hotkey", "keys": "ctrl+s"}, "keys must be a list of key names"),
    ({"action_type": "hotkey", "keys": []}, "keys must be a non-empty list"),
    ({"action_type": "hotkey", "keys": ["ctrl", "sss"]}, "keys[1] 'sss' is not a pyautogui key name"),
    ({"action_type": "pyautogui", "command": "pyautogui.click(1, 2"}, "command is not valid Python"),
    ({"action_type": "pyautogui", "command": "   "}, "command must be non-empty Python code"),
]


@pytest.mark.parametrize("arguments, message", BAD_CALLS, ids=[json.dumps(a) for a, _ in BAD_CALLS])
def test_bad_calls_raise_a_message_for_the_model(arguments, message):
    with pytest.raises(ToolArgumentError) as raised:
        to_action(arguments, SCREEN)
    assert message in str(raised.value)


def test_arguments_that_are_not_an_object_are_rejected():
    with pytest.raises(ToolArgumentError, match="must be a JSON object"):
        to_action(["click"], SCREEN)  # type: ignore[arg-type]


def test_the_screen_edge_is_on_the_screen_and_bounds_follow_the_screen_size():
    assert to_action({"action_type": "move", "coordinate": [1279.9, 719.9]}, SCREEN) == "pyautogui.moveTo(1279, 719)"
    assert to_action({"action_type": "move", "coordinate": [1900, 1000]}, (1920, 1080)) == \
        "pyautogui.moveTo(1900, 1000)"


# --- the result format --------------------------------------------------------------------------

def test_a_tool_result_is_one_json_line_then_text():
    result = format_tool_result(False, 0.0, {"action": "pyautogui.typewrite('a\\nb')", "note": "two\nlines"},
                                {"screenshot_size": [1280, 720]}, "Executed.\nThe screen follows.")
    first, rest = result.split("\n", 1)
    assert json.loads(first) == {"done": False, "reward": 0.0,
                                 "info": {"action": "pyautogui.typewrite('a\\nb')", "note": "two\nlines"},
                                 "obs_summary": {"screenshot_size": [1280, 720]}}
    assert list(json.loads(first)) == ["done", "reward", "info", "obs_summary"]
    assert rest == "Executed.\nThe screen follows."


def test_a_tool_result_survives_values_json_cannot_hold():
    first = format_tool_result(True, None, {"path": __import__("pathlib").Path("/tmp/x")}, None, "").split("\n")[0]
    assert json.loads(first) == {"done": True, "reward": None, "info": {"path": "/tmp/x"}, "obs_summary": None}


# --- the schema and its vendor formats ----------------------------------------------------------

VALID_ARGUMENTS = [arguments for arguments, _ in EXAMPLES] + [{"action_type": t} for t in ("WAIT", "DONE", "FAIL")]


def test_the_parameters_are_a_valid_json_schema_that_accepts_every_valid_call():
    jsonschema.Draft202012Validator.check_schema(PARAMETERS)
    jsonschema.Draft7Validator.check_schema(PARAMETERS)
    validator = jsonschema.Draft202012Validator(PARAMETERS)
    for arguments in VALID_ARGUMENTS:
        validator.validate(arguments)


@pytest.mark.parametrize("arguments", [
    {}, {"action_type": "tap"}, {"action_type": "click", "coordinate": [1]}, {"action_type": "click", "button": "left"},
    {"action_type": "scroll", "clicks": 1.5}, {"action_type": "hotkey", "keys": []},
])
def test_the_schema_rejects_malformed_calls(arguments):
    assert not jsonschema.Draft202012Validator(PARAMETERS).is_valid(arguments)


def test_the_tool_spec_is_the_schema():
    assert isinstance(DESKTOP_TOOL, ToolSpec)
    assert DESKTOP_TOOL.name == TOOL_NAME == "desktop_action"
    assert DESKTOP_TOOL.parameters["properties"]["action_type"]["enum"] == list(ACTION_TYPES)
    assert set(DESKTOP_TOOL.parameters["properties"]) == {"action_type", "coordinate", "text", "key", "keys",
                                                          "clicks", "command"}
    for action_type in ACTION_TYPES:
        assert re.search(rf"^- (.*\b)?{action_type}\b", DESKTOP_TOOL.description, re.MULTILINE), action_type


def test_the_openai_export_has_the_chat_completions_tool_shape():
    pydantic = pytest.importorskip("pydantic")
    chat_types = pytest.importorskip("openai.types.chat")
    schema = openai_tool_schema()
    assert set(schema) == {"type", "function"} and schema["type"] == "function"
    assert set(schema["function"]) == {"name", "description", "parameters"}
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", schema["function"]["name"])
    assert schema["function"]["parameters"] == PARAMETERS and schema["function"]["parameters"]["type"] == "object"
    pydantic.TypeAdapter(chat_types.ChatCompletionFunctionToolParam).validate_python(schema)
    json.dumps(schema)


def test_the_anthropic_export_has_the_messages_tool_shape():
    pydantic = pytest.importorskip("pydantic")
    anthropic_types = pytest.importorskip("anthropic.types")
    schema = anthropic_tool_schema()
    assert set(schema) == {"name", "description", "input_schema"}
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", schema["name"])
    assert schema["input_schema"] == PARAMETERS and schema["input_schema"]["type"] == "object"
    pydantic.TypeAdapter(anthropic_types.ToolParam).validate_python(schema)
    json.dumps(schema)


def test_exports_are_copies_a_caller_may_change():
    openai_tool_schema()["function"]["parameters"]["properties"].clear()
    anthropic_tool_schema()["input_schema"]["required"].append("text")
    assert set(PARAMETERS["properties"]) >= {"action_type", "coordinate"} and PARAMETERS["required"] == ["action_type"]
