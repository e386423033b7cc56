"""What a person's keys, clicks and scrolls in the view become: the pyautogui actions the harness carries
out and records, read off the RFB stream the page sends."""
from __future__ import annotations

import struct

import pytest

from desktop_env.live_view.human_input import HumanInput
from desktop_env.live_view.rfb import ClientStream, KeyEvent, PointerEvent, RFBProtocolError

CTRL, SHIFT, SUPER, RETURN, LEFT = 0xFFE3, 0xFFE1, 0xFFEB, 0xFF0D, 0xFF51


def keys(human: HumanInput, *keysyms: int) -> None:
    for keysym in keysyms:
        human.feed(KeyEvent(True, keysym))
        human.feed(KeyEvent(False, keysym))


def codes(human: HumanInput) -> list[str]:
    return [action.code for action in human.drain()]


def test_typed_characters_are_one_typewrite_and_other_keys_presses():
    human = HumanInput()
    keys(human, *map(ord, "Hi there"), RETURN, LEFT, 0xE9, 0xFFB4, 0xFFAB, 0xFFB2)
    assert codes(human) == ["pyautogui.typewrite('Hi there')", "pyautogui.press('enter')", "pyautogui.press('left')",
                            "pyautogui.typewrite('é4+2')"]


def test_keys_held_with_control_or_super_are_hotkeys_and_super_alone_a_press():
    human = HumanInput()
    human.feed(KeyEvent(True, CTRL))
    keys(human, ord("s"))
    human.feed(KeyEvent(True, SHIFT))
    keys(human, ord("T"))
    human.feed(KeyEvent(False, SHIFT))
    human.feed(KeyEvent(False, CTRL))
    keys(human, SUPER)
    human.feed(KeyEvent(True, SHIFT))
    keys(human, 0xFF09)
    human.feed(KeyEvent(False, SHIFT))
    assert codes(human) == ["pyautogui.hotkey('ctrl', 's')", "pyautogui.hotkey('ctrl', 'shift', 't')",
                            "pyautogui.press('win')", "pyautogui.hotkey('shift', 'tab')"]


def test_clicks_double_clicks_right_clicks_drags_and_scrolls():
    human = HumanInput()
    for buttons in (1, 0, 1, 0):
        human.feed(PointerEvent(buttons, 100, 200))
    human.feed(PointerEvent(4, 300, 300))
    human.feed(PointerEvent(0, 300, 300))
    human.feed(PointerEvent(1, 10, 10))
    human.feed(PointerEvent(1, 50, 60))
    human.feed(PointerEvent(0, 400, 500))
    for _ in range(3):
        human.feed(PointerEvent(16, 640, 400))
        human.feed(PointerEvent(0, 640, 400))
    human.feed(PointerEvent(8, 640, 400))
    assert codes(human) == ["pyautogui.click(100, 200, clicks=2)", "pyautogui.click(300, 300, button='right')",
                            "pyautogui.moveTo(10, 10); pyautogui.dragTo(400, 500, duration=0.5, button='left')",
                            "pyautogui.scroll(-3, x=640, y=400)", "pyautogui.scroll(1, x=640, y=400)"]


def test_a_click_or_scroll_with_ctrl_or_shift_held_holds_them_around_it():
    human = HumanInput()
    human.feed(KeyEvent(True, CTRL))
    human.feed(PointerEvent(1, 10, 20))
    human.feed(PointerEvent(0, 10, 20))
    human.feed(PointerEvent(8, 10, 20))
    human.feed(KeyEvent(False, CTRL))
    human.feed(KeyEvent(True, SHIFT))
    human.feed(PointerEvent(1, 30, 40))
    human.feed(PointerEvent(0, 30, 40))
    human.feed(KeyEvent(False, SHIFT))
    assert codes(human) == [
        "pyautogui.keyDown('ctrl'); pyautogui.click(10, 20); pyautogui.keyUp('ctrl')",
        "pyautogui.keyDown('ctrl'); pyautogui.scroll(1, x=10, y=20); pyautogui.keyUp('ctrl')",
        "pyautogui.keyDown('shift'); pyautogui.click(30, 40); pyautogui.keyUp('shift')"]


def test_a_step_is_taken_once_the_person_pauses_and_keeps_the_times_of_the_input():
    human = HumanInput()
    assert human.take(0.1, 0.2) == []
    keys(human, ord("a"))
    human.feed(PointerEvent(1, 5, 5))
    human.feed(PointerEvent(0, 5, 5))
    taken = human.take(0.1, 2)
    assert [a.code for a in taken] == ["pyautogui.typewrite('a')", "pyautogui.click(5, 5)"]
    assert 0 <= taken[0].seconds <= taken[1].seconds
    assert not human.pending()


def handshake() -> bytes:
    return b"RFB 003.008\n" + b"\x01" + b"\x01"


def test_the_stream_passes_on_the_handshake_and_framebuffer_requests_and_keeps_the_input():
    stream = ClientStream()
    update = b"\x03\x00" + struct.pack(">HHHH", 0, 0, 1280, 800)
    cut = b"\x06\x00\x00\x00" + struct.pack(">I", 3) + b"abc"
    extended_cut = b"\x06\x00\x00\x00" + struct.pack(">i", -4) + b"\x00\x00\x00\x01"
    key = b"\x04\x01\x00\x00" + struct.pack(">I", 0x61)
    pointer = b"\x05\x01" + struct.pack(">HH", 10, 20)
    data = handshake() + update + cut + extended_cut + key + pointer
    items = [item for i in range(len(data)) for item in stream.feed(data[i:i + 1])]  # a byte at a time
    assert [i for i in items if isinstance(i, bytes) and i] == [b"RFB 003.008\n", b"\x01", b"\x01", update]
    assert [i for i in items if not isinstance(i, bytes)] == [KeyEvent(True, 0x61), PointerEvent(1, 10, 20)]


def test_a_message_the_stream_does_not_know_ends_it():
    with pytest.raises(RFBProtocolError, match="type 77"):
        list(ClientStream().feed(handshake() + b"\x4d\x00"))
    with pytest.raises(RFBProtocolError, match="version"):
        list(ClientStream().feed(b"GET / HTTP/1.1\r\n"))
