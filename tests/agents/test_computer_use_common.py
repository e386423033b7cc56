"""The pieces every native computer-use agent shares: image sizes within a model's limits, the map
from model coordinates to screen pixels, vendor key names, and commands as pyautogui code."""
from __future__ import annotations

from typing import get_args

import pytest
from anthropic.types.computer_member_name import COMPUTER_MEMBER_NAME_VALUES
from openai.types.responses.computer_action import ComputerAction

from mm_agents.computer_use import claude, gemini, openai_cua
from mm_agents.computer_use.commands import Command, to_action
from mm_agents.computer_use.errors import ToolError
from mm_agents.computer_use.geometry import ImageLimits, Space, fit_size, smart_resize
from mm_agents.computer_use.keys import combination, key_name, xdotool_sequence
from mm_agents.computer_use.profiles import CLAUDE_LIMITS, ProfileError, profile_for

# --- image sizes -----------------------------------------------------------------------------------

@pytest.mark.parametrize("model, screen, sent", [
    ("claude-sonnet-4-6", (1920, 1080), (1280, 720)),      # 2/3: within 1568 px and 1.15 MP
    ("claude-sonnet-4-5", (1280, 720), (1280, 720)),       # already small enough
    ("claude-sonnet-4-6", (2560, 1600), (1280, 800)),
    ("claude-opus-4-7", (1920, 1080), (1920, 1080)),       # high-resolution vision
])
def test_claude_screenshots_are_downscaled_by_us_within_its_limits(model, screen, sent):
    profile = profile_for("claude-computer-use", model)
    size = fit_size(screen, profile.limits)
    assert size == sent and profile.limits.fits(*size)


def test_an_odd_screen_still_fits_the_limits():
    width, height = fit_size((1917, 1083), CLAUDE_LIMITS)
    assert width * height <= 1_150_000 and max(width, height) <= 1568
    assert width / height == pytest.approx(1917 / 1083, 0.01)


def test_smart_resize_gives_sides_that_are_multiples_of_the_patch_within_the_pixel_budget():
    assert smart_resize(1080, 1920, 28, 100 * 28 * 28, 16384 * 28 * 28) == (1092, 1932)
    height, width = smart_resize(1080, 1920, 28, 3136, 1280 * 28 * 28)
    assert height % 28 == 0 and width % 28 == 0 and height * width <= 1280 * 28 * 28
    assert fit_size((1920, 1080), ImageLimits(patch=32, min_pixels=1024, max_pixels=16384 * 32 * 32)) == (1920, 1088)
    ui_tars_1 = profile_for("ui-tars", "UI-TARS-7B-DPO").limits
    width, height = fit_size((2560, 1440), ui_tars_1)
    assert width * height <= 2700 * 28 * 28 and width % 28 == 0 and height % 28 == 0


# --- coordinates -----------------------------------------------------------------------------------

def test_image_pixels_map_to_the_screen_pixel_under_their_centre():
    space = Space.image((1280, 720), (1920, 1080))
    assert space.to_screen(0, 0) == (0, 0)
    assert space.to_screen(100, 200) == (150, 300)
    assert space.to_screen(1279, 719) == (1919, 1079)
    assert space.to_screen(1280, 720) == (1919, 1079)      # the edge itself is tolerated
    assert space.from_screen(150, 300) == (100, 200)


def test_grid_coordinates_map_over_the_whole_screen():
    space = Space.grid((1920, 1080))
    assert space.to_screen(500, 500) == (960, 540)
    assert space.to_screen(0, 999) == (0, 1079)
    assert space.to_screen(1000, 1000) == (1919, 1079)


@pytest.mark.parametrize("x, y", [(-1, 5), (5, 721), ("12", 3), (float("nan"), 1)])
def test_coordinates_off_the_image_are_a_tool_error(x, y):
    with pytest.raises(ToolError):
        Space.image((1280, 720), (1920, 1080)).to_screen(x, y)


# --- keys ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, name", [
    ("Return", "enter"), ("KP_Enter", "enter"), ("ENTER", "enter"), ("Escape", "esc"), ("ESC", "esc"),
    ("BackSpace", "backspace"), ("Page_Down", "pagedown"), ("ARROWLEFT", "left"), ("CTRL", "ctrl"),
    ("Control", "ctrl"), ("super", "win"), ("CMD", "win"), ("META", "win"), ("SPACE", "space"), ("F5", "f5"),
    ("plus", "+"), ("A", "a"), ("/", "/"), ("Delete", "delete"), ("Tab", "tab"),
])
def test_vendor_key_names_become_pyautogui_names(raw, name):
    assert key_name(raw) == name


def test_combinations_and_xdotool_sequences():
    assert combination("ctrl+shift+t") == ("ctrl", "shift", "t")
    assert combination("Control+Shift+T") == ("ctrl", "shift", "t")
    assert combination("ctrl+plus") == ("ctrl", "+")
    assert combination("ctrl c", separator=" ") == ("ctrl", "c")
    assert xdotool_sequence("ctrl+a Delete") == [("ctrl", "a"), ("delete",)]
    with pytest.raises(ToolError, match="unknown key 'hyperdrive'"):
        combination("ctrl+hyperdrive")


# --- commands --------------------------------------------------------------------------------------

SPACE = Space.image((1280, 720), (1920, 1080))


@pytest.mark.parametrize("command, code", [
    (Command("click", ((100, 200),)), "pyautogui.click(button='left', x=150, y=300)"),
    (Command("click", ((100, 200),), button="right"), "pyautogui.click(button='right', x=150, y=300)"),
    (Command("click", ((100, 200),), clicks=3), "pyautogui.click(button='left', x=150, y=300, clicks=3)"),
    (Command("click", ((100, 200),), modifiers=("shift",)),
     "pyautogui.keyDown('shift'); pyautogui.click(button='left', x=150, y=300); pyautogui.keyUp('shift')"),
    (Command("drag", ((0, 0), (100, 100))),
     "pyautogui.moveTo(0, 0); pyautogui.dragTo(150, 150, duration=1.0, button='left', mouseDownUp=True)"),
    (Command("drag", ((10, 10),)), "pyautogui.dragTo(15, 15, duration=1.0, button='left', mouseDownUp=True)"),
    (Command("type", text='it\'s "x"\n'), "pyautogui.typewrite('it\\'s \"x\"\\n')"),
    (Command("key", chords=(("ctrl", "s"), ("enter",))), "pyautogui.hotkey('ctrl', 's'); pyautogui.press('enter')"),
    (Command("scroll", ((10, 10),), scroll=(0, 5)), "pyautogui.moveTo(15, 15); pyautogui.vscroll(-5)"),
    (Command("scroll", scroll=(-2, 0)), "pyautogui.hscroll(-2)"),
    (Command("wait", seconds=2), "time.sleep(2.0)"),
    (Command("done"), "DONE"),
    (Command("fail"), "FAIL"),
    (Command("screenshot"), None),
    (Command("zoom", region=(0, 0, 10, 10)), None),
])
def test_commands_become_pyautogui_code_at_screen_pixels(command, code):
    assert to_action(command, SPACE) == code


def test_commands_the_desktop_cannot_do_are_tool_errors():
    with pytest.raises(ToolError, match="no 'back' mouse button"):
        to_action(Command("click", ((1, 1),), button="back"), SPACE)
    with pytest.raises(ToolError, match="drag needs an end point"):
        to_action(Command("drag", ()), SPACE)
    with pytest.raises(ToolError, match="non-zero"):
        to_action(Command("scroll", scroll=(0, 0)), SPACE)


# --- the profile table -----------------------------------------------------------------------------

def test_overrides_replace_the_table_entry():
    profile = profile_for("qwen-vl", "Qwen/Qwen2.5-VL-72B-Instruct",
                          {"coordinates": "grid", "image_size": "1000x600", "history": 2})
    assert (profile.coordinates, profile.image_size, profile.history, profile.variant) == \
        ("grid", (1000, 600), 2, "qwen2.5-vl")
    with pytest.raises(ProfileError, match="coordinates must be one of"):
        profile_for("qwen-vl", "x", {"coordinates": "inches"})
    with pytest.raises(ProfileError, match="image_size"):
        profile_for("qwen-vl", "x", {"image_size": "big"})


@pytest.mark.parametrize("agent, model, variant", [
    ("claude-computer-use", "claude-sonnet-4-5-20250929", "computer_20250124"),
    ("claude-computer-use", "claude-sonnet-4-6", "computer_20251124"),
    ("claude-computer-use", "claude-opus-4-5", "computer_20251124"),
    ("claude-computer-use", "claude-3-7-sonnet-20250219", "computer_20250124"),
    ("openai-computer-use", "computer-use-preview-2025-03-11", "computer_use_preview"),
    ("ui-tars", "ByteDance-Seed/UI-TARS-1.5-7B", "ui-tars-1.5"),
    ("ui-tars", "bytedance-research/UI-TARS-7B-DPO", "ui-tars-1"),
    ("qwen-vl", "Qwen/Qwen3-VL-235B-A22B-Instruct", "qwen3-vl"),
])
def test_the_variant_is_chosen_by_model(agent, model, variant):
    assert profile_for(agent, model).variant == variant


# --- every vendor action has a command (or a clear tool error) -------------------------------------

CLAUDE_ACTIONS = {
    "key": {"text": "ctrl+shift+Escape"}, "hold_key": {"text": "shift", "duration": 1}, "type": {"text": "x"},
    "cursor_position": {}, "mouse_move": {"coordinate": [1, 2]}, "left_mouse_down": {}, "left_mouse_up": {},
    "left_click": {"coordinate": [1, 2]}, "left_click_drag": {"start_coordinate": [1, 2], "coordinate": [3, 4]},
    "right_click": {"coordinate": [1, 2]}, "middle_click": {}, "double_click": {"coordinate": [1, 2]},
    "triple_click": {"coordinate": [1, 2]}, "scroll": {"scroll_direction": "left", "scroll_amount": 2},
    "wait": {"duration": 1}, "screenshot": {}, "zoom": {"region": [0, 0, 10, 10]},
}


def test_every_claude_computer_action_has_a_command():
    assert set(CLAUDE_ACTIONS) == set(COMPUTER_MEMBER_NAME_VALUES)
    codes = {name: to_action(claude.command(name, args), SPACE) for name, args in CLAUDE_ACTIONS.items()}
    assert codes["hold_key"] == "pyautogui.keyDown('shift'); time.sleep(1.0); pyautogui.keyUp('shift')"
    assert codes["left_mouse_down"] == "pyautogui.mouseDown(button='left')"
    assert codes["key"] == "pyautogui.hotkey('ctrl', 'shift', 'esc')"
    assert codes["scroll"] == "pyautogui.hscroll(-2)"
    assert codes["middle_click"] == "pyautogui.click(button='middle')"
    assert [n for n, code in codes.items() if code is None] == ["cursor_position", "screenshot", "zoom"]


def test_every_openai_action_has_a_command():
    types = {cls.model_fields["type"].annotation.__args__[0] for cls in get_args(get_args(ComputerAction)[0])}
    actions = {"click": {"button": "wheel", "x": 1, "y": 1}, "double_click": {"x": 1, "y": 1},
               "drag": {"path": [{"x": 1, "y": 1}, {"x": 2, "y": 2}, {"x": 3, "y": 3}]},
               "keypress": {"keys": ["ALT", "F4"]}, "move": {"x": 1, "y": 1, "keys": ["SHIFT"]},
               "screenshot": {}, "scroll": {"x": 1, "y": 1, "scroll_x": -120, "scroll_y": 0},
               "type": {"text": "x"}, "wait": {}}
    assert set(actions) == types
    same = Space.image((1920, 1080), (1920, 1080))
    codes = {kind: to_action(openai_cua.command({"type": kind, **args}, same), same) for kind, args in actions.items()}
    assert codes["click"] == "pyautogui.click(button='middle', x=1, y=1)"
    assert codes["keypress"] == "pyautogui.hotkey('alt', 'f4')"
    assert codes["scroll"] == "pyautogui.moveTo(1, 1); pyautogui.hscroll(-2)"     # 120 px: about 2 wheel clicks
    assert codes["drag"] == ("pyautogui.moveTo(1, 1); pyautogui.mouseDown(button='left'); "
                             "pyautogui.moveTo(2, 2, duration=0.3); pyautogui.moveTo(3, 3, duration=0.3); "
                             "pyautogui.mouseUp(button='left')")
    assert codes["move"] == "pyautogui.keyDown('shift'); pyautogui.moveTo(1, 1); pyautogui.keyUp('shift')"


def test_every_gemini_function_has_a_command_or_a_clear_error():
    grid = Space.grid((1920, 1080))
    functions = {"click_at": {"x": 1, "y": 1}, "hover_at": {"x": 1, "y": 1},
                 "type_text_at": {"x": 1, "y": 1, "text": "a", "clear_before_typing": False, "press_enter": False},
                 "key_combination": {"keys": "Control+Alt+T"}, "scroll_document": {"direction": "up"},
                 "scroll_at": {"x": 1, "y": 1, "direction": "right"},
                 "drag_and_drop": {"x": 1, "y": 1, "destination_x": 9, "destination_y": 9}, "wait_5_seconds": {}}
    codes = {name: [to_action(c, grid) for c in gemini.commands(name, args, grid)] for name, args in functions.items()}
    assert codes["key_combination"] == ["pyautogui.hotkey('ctrl', 'alt', 't')"]
    assert codes["type_text_at"] == ["pyautogui.click(button='left', x=2, y=1)", "pyautogui.typewrite('a')"]
    assert codes["scroll_document"] == ["pyautogui.moveTo(960, 540); pyautogui.vscroll(10)"]
    assert codes["scroll_at"] == ["pyautogui.moveTo(2, 1); pyautogui.hscroll(31)"]
    for name in gemini.BROWSER_ONLY:
        with pytest.raises(ToolError, match="not a browser"):
            gemini.commands(name, {}, grid)
