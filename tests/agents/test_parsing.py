"""Turning model answers into actions: code blocks, special codes, JSON, coordinate scaling, set-of-marks tags."""
from __future__ import annotations

import pytest

from mm_agents.parsing import UnknownTag, parse_computer_13, parse_pyautogui, resolve_tags, scale_coordinates


def actions(text: str, **kwargs) -> list:
    return parse_pyautogui(text, **kwargs).actions


def json_actions(text: str, **kwargs) -> list:
    return parse_computer_13(text, screen_size=(1920, 1080), **kwargs).actions


# ------------------------------------------------------------------ pyautogui


def test_one_python_block_is_one_action():
    assert actions("The button is top right.\n```python\npyautogui.click(100, 200)\n```") == \
        ["pyautogui.click(100, 200)"]


def test_several_blocks_are_all_run_in_order():
    text = "```python\npyautogui.click(1, 2)\n```\nthen\n```\npyautogui.typewrite('hi')\n```"
    assert actions(text) == ["pyautogui.click(1, 2)", "pyautogui.typewrite('hi')"]


@pytest.mark.parametrize("text", ["```DONE```", "```\nDONE\n```", "```DONE\n```", "DONE", "`DONE`",
                                  "The task is complete.\n\n**DONE**"])
def test_special_code_alone(text):
    assert actions(text) == ["DONE"]


def test_wait_and_fail():
    assert actions("The page is loading.\n```WAIT```") == ["WAIT"]
    assert actions("There is no such file.\nFAIL") == ["FAIL"]


def test_special_code_after_code_in_the_same_block():
    assert actions("```python\npyautogui.press('enter')\nDONE\n```") == ["pyautogui.press('enter')", "DONE"]


def test_special_code_joined_with_a_semicolon():
    assert actions("```python\npyautogui.click(5, 6); DONE\n```") == ["pyautogui.click(5, 6)", "DONE"]


def test_special_code_after_the_block():
    assert actions("```python\npyautogui.hotkey('ctrl', 's')\n```\nDONE") == ["pyautogui.hotkey('ctrl', 's')", "DONE"]


def test_special_code_between_statements_splits_the_code():
    text = "```python\npyautogui.click(1, 2)\nWAIT\npyautogui.click(3, 4)\n```"
    assert actions(text) == ["pyautogui.click(1, 2)", "WAIT", "pyautogui.click(3, 4)"]


def test_semicolon_joined_code_stays_one_action():
    text = "```python\nimport time; pyautogui.click(1, 2); time.sleep(0.5); pyautogui.press('enter')\n```"
    assert actions(text) == ["import time; pyautogui.click(1, 2); time.sleep(0.5); pyautogui.press('enter')"]


def test_code_without_fences_when_the_whole_answer_is_code():
    text = "pyautogui.click(1, 2); pyautogui.press('enter')\nfor _ in range(2):\n    pyautogui.press('down')"
    assert actions(text) == [text]


def test_code_lines_in_prose_without_fences():
    text = "I will click the field.\npyautogui.click(5, 6)\n`pyautogui.typewrite('abc')`\nThat should do it."
    assert actions(text) == ["pyautogui.click(5, 6)\npyautogui.typewrite('abc')"]


def test_prose_that_only_mentions_code_is_not_code():
    assert actions("I could use pyautogui.click here, but first I need to look around.") == []


def test_block_code_keeps_its_comments_and_layout():
    code = "# open the menu\npyautogui.click(10, 20)  # File\ntime.sleep(1)"
    assert actions(f"```python\n{code}\n```") == [code]


def test_blocks_in_other_languages_are_ignored_with_a_note():
    parsed = parse_pyautogui("```bash\nls -l\n```\n```python\npyautogui.press('f5')\n```")
    assert parsed.actions == ["pyautogui.press('f5')"]
    assert parsed.problems == ["ignored a ```bash block: only Python code is run"]


def test_invalid_python_voids_the_whole_answer():
    parsed = parse_pyautogui("```python\npyautogui.click(1, 2)\n```\n```python\npyautogui.click(1,\n```")
    assert parsed.actions == []
    assert "not valid Python" in parsed.problems[0]
    assert "1 valid action(s) are dropped too" in parsed.problems[-1]


def test_unclosed_fence_runs_to_the_end():
    assert actions("```python\npyautogui.press('tab')") == ["pyautogui.press('tab')"]


def test_unparseable_answer_gives_no_action_and_says_why():
    parsed = parse_pyautogui("I am not sure what to do.")
    assert parsed.actions == []
    assert parsed.problems == ["the answer has no code block, special code or code line"]


@pytest.mark.parametrize("text", ["", "```", "``````", "```python\n```", "{", "``` ```\n```json\n{[}\n```",
                                  "\r\n\r\n", "DONE DONE", "```python\n\x00\n```", "tag_1", "\ufeff```py\n1/0\n```",
                                  "```python\npyautogui.click(" + "-" * 100_000 + "1, 2)\n```",
                                  "x" + "+x" * 200_000, "```json\n" + "[" * 100_000 + "]" * 100_000 + "\n```",
                                  '{"action_type": ' + "[" * 5_000 + "]" * 5_000 + "}"])
def test_never_raises(text):
    parse_pyautogui(text, coordinate_factor=2.0, tag_centers={})
    parse_computer_13(text, screen_size=(10, 10), coordinate_factor=2.0, tag_centers={})


# ------------------------------------------------------------------ coordinate scaling


@pytest.mark.parametrize("code, scaled", [
    ("pyautogui.click(100, 200)", "pyautogui.click(200, 400)"),
    ("pyautogui.click(x=100, y=200, button='right')", "pyautogui.click(x=200, y=400, button='right')"),
    ("pyautogui.click((100, 200), clicks=2)", "pyautogui.click((200, 400), clicks=2)"),
    ("pyautogui.doubleClick(10.5, 20)", "pyautogui.doubleClick(21, 40)"),
    ("pyautogui.rightClick(1, 2)", "pyautogui.rightClick(2, 4)"),
    ("pyautogui.moveTo(5, 6, duration=0.5)", "pyautogui.moveTo(10, 12, duration=0.5)"),
    ("pyautogui.dragTo(5, 6, 1.0, button='left')", "pyautogui.dragTo(10, 12, 1.0, button='left')"),
    ("pyautogui.mouseDown(5, 6, button='left'); pyautogui.mouseUp(7, 8)",
     "pyautogui.mouseDown(10, 12, button='left'); pyautogui.mouseUp(14, 16)"),
    ("pyautogui.scroll(-5, 100, 200)", "pyautogui.scroll(-5, 200, 400)"),
    ("pyautogui.scroll(3, x=100, y=200)", "pyautogui.scroll(3, x=200, y=400)"),
    ("pyautogui.scroll(-5)", "pyautogui.scroll(-5)"),
    ("pyautogui.moveRel(-10, 5)", "pyautogui.moveRel(-20, 10)"),
    ("pyautogui.click()", "pyautogui.click()"),
    ("pyautogui.typewrite('100, 200'); pyautogui.press('enter')",
     "pyautogui.typewrite('100, 200'); pyautogui.press('enter')"),
    ("for y in (100, 200):\n    pyautogui.click(50, 300)  # row\n",
     "for y in (100, 200):\n    pyautogui.click(100, 600)  # row\n"),
])
def test_scale_coordinates(code, scaled):
    assert scale_coordinates(code, 2.0) == scaled


def test_scaling_finds_positions_after_non_ascii_text_on_the_same_line():
    code = "pyautogui.typewrite('Grüße, 日本'); pyautogui.click(10, 20)"
    assert scale_coordinates(code, 3.0) == "pyautogui.typewrite('Grüße, 日本'); pyautogui.click(30, 60)"


def test_coordinates_that_are_not_literals_are_reported():
    notes: list[str] = []
    assert scale_coordinates("x = 5\npyautogui.click(x, 10)", 2.0, notes) == "x = 5\npyautogui.click(x, 20)"
    assert notes == ["pyautogui.click: coordinate 'x' is not a literal number, so it was not scaled to the screen"]


def test_parse_pyautogui_scales_and_then_resolves_tags():
    text = "```python\npyautogui.click(tag_2)\npyautogui.moveTo(100, 50)\n```"
    assert actions(text, coordinate_factor=2.0, tag_centers={2: (700, 300)}) == \
        ["pyautogui.click(700, 300)\npyautogui.moveTo(200, 100)"]


# ------------------------------------------------------------------ set-of-marks tags


def test_tag_as_argument_becomes_two_coordinates():
    assert resolve_tags("pyautogui.click(tag_3, button='right')", {3: (960, 540)}) == \
        "pyautogui.click(960, 540, button='right')"


def test_tag_elsewhere_becomes_a_point():
    assert resolve_tags("x, y = tag_3\npyautogui.dragTo(x, y)", {3: (1, 2)}) == "x, y = (1, 2)\npyautogui.dragTo(x, y)"


def test_unknown_tag():
    with pytest.raises(UnknownTag, match="tag_9.*tag_1 to tag_3"):
        resolve_tags("pyautogui.click(tag_9)", {1: (0, 0), 2: (0, 0), 3: (0, 0)})
    parsed = parse_pyautogui("```python\npyautogui.click(tag_9)\n```", tag_centers={1: (0, 0)})
    assert parsed.actions == [] and "tag_9" in parsed.problems[0]


# ------------------------------------------------------------------ computer_13


def test_json_block():
    assert json_actions('Save it.\n```json\n{"action_type": "CLICK", "parameters": {"x": 100, "y": 200}}\n```') == \
        [{"action_type": "CLICK", "parameters": {"x": 100, "y": 200}}]


def test_json_with_comments_trailing_commas_and_trailing_text():
    text = ('```json\n// the save button\n{"action_type": "CLICK", "parameters": {"x": 1, "y": 2,},} '
            '/* left */ and then wait\n```\nI expect a dialog.')
    assert json_actions(text) == [{"action_type": "CLICK", "parameters": {"x": 1, "y": 2}}]


def test_comment_markers_inside_strings_are_text():
    text = '```json\n{"action_type": "TYPING", "parameters": {"text": "a # b // c /* d */"}}\n```'
    assert json_actions(text) == [{"action_type": "TYPING", "parameters": {"text": "a # b // c /* d */"}}]


def test_a_list_and_several_objects_in_order_then_a_special_code():
    text = ('```json\n[{"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "a"]}},\n'
            ' {"action_type": "PRESS", "parameters": {"key": "Delete"}}]\n'
            '{"action_type": "TYPING", "text": "x"}\n```\nDONE')
    assert json_actions(text) == [{"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "a"]}},
                                  {"action_type": "PRESS", "parameters": {"key": "delete"}},
                                  {"action_type": "TYPING", "parameters": {"text": "x"}}, "DONE"]


def test_python_style_dict():
    assert json_actions("```json\n{'action_type': 'MOUSE_UP', 'parameters': {'button': 'left'}}\n```") == \
        [{"action_type": "MOUSE_UP", "parameters": {"button": "left"}}]


def test_json_without_fences_in_order_with_special_lines():
    text = 'First I press enter: {"action_type": "PRESS", "parameters": {"key": "enter"}}, and then\nDONE'
    assert json_actions(text) == [{"action_type": "PRESS", "parameters": {"key": "enter"}}, "DONE"]


@pytest.mark.parametrize("text", ['```json\n{"action_type": "DONE"}\n```', "```\nDONE\n```", 'DONE',
                                  '```json\n"DONE"\n```', '```json\n{"action_type": "DONE", "parameters": {}}\n```'])
def test_special_codes_are_bare_strings(text):
    assert json_actions(text) == ["DONE"]


@pytest.mark.parametrize("action, reason", [
    ('{"action_type": "CLICK", "parameters": {"x": 5000, "y": 200}}', "off the 1920x1080 screen"),
    ('{"action_type": "PRESS", "parameters": {"key": "hyper"}}', "not a pyautogui key name"),
    ('{"action_type": "JUMP"}', "unknown action type"),
    ('{"action_type": "CLICK", "parameters": {"x": 10}}', "given without 'y'"),
    ('{"action_type": "CLICK", "parameters": {"x": 1 "y": 2}}', "not valid JSON"),
])
def test_invalid_actions_give_no_action(action, reason):
    parsed = parse_computer_13(f"```json\n[{{\"action_type\": \"WAIT\"}}, {action}]\n```", screen_size=(1920, 1080))
    assert parsed.actions == []
    assert reason in " ".join(parsed.problems)


def test_json_block_without_json_is_invalid():
    parsed = parse_computer_13("```json\nclick the button\n```")
    assert parsed.actions == [] and "holds no JSON action" in parsed.problems[0]


def test_computer_13_coordinates_are_scaled_before_validation():
    text = '```json\n{"action_type": "MOVE_TO", "parameters": {"x": 480, "y": 270}}\n```'
    assert json_actions(text, coordinate_factor=2.0) == [{"action_type": "MOVE_TO", "parameters": {"x": 960, "y": 540}}]
    flat = '```json\n{"action_type": "DRAG_TO", "x": 1000, "y": 10}\n```'
    assert json_actions(flat, coordinate_factor=2.0) == []  # 2000 is off a 1920-wide screen


@pytest.mark.parametrize("tag", ["2", "tag_2", 2])
def test_computer_13_tag_parameter(tag):
    text = f'```json\n{{"action_type": "DOUBLE_CLICK", "parameters": {{"tag": {tag!r}}}}}\n```'.replace("'", '"')
    assert json_actions(text, coordinate_factor=2.0, tag_centers={2: (640, 480)}) == \
        [{"action_type": "DOUBLE_CLICK", "parameters": {"x": 640, "y": 480}}]


def test_computer_13_tag_errors():
    one = {1: (5, 5)}
    assert "not drawn" in parse_computer_13('{"action_type": "CLICK", "parameters": {"tag": 4}}',
                                            tag_centers=one).problems[0]
    assert "only valid with set-of-marks" in parse_computer_13('{"action_type": "CLICK", "parameters": {"tag": 1}}'
                                                               ).problems[0]
    assert "not both" in parse_computer_13('{"action_type": "CLICK", "parameters": {"tag": 1, "x": 1, "y": 1}}',
                                           tag_centers=one).problems[0]
