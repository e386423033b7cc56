"""A button release where the pointer already is, without pyautogui's motion to that same place.

pyautogui's X11 backend moves the pointer to (x, y) before each release, also when it is there
already (every click: press at (x, y), then "move" to (x, y), then release). The X server passes
that motion on with the button held, and Chromium 120 (the VM's era of Chrome, vm_chromium.py)
takes a motion between press and release in one of its menus for the start of a drag: the
release then activates nothing, and a recorded click on "Settings" in the ⋮ menu leaves the menu
open. The VM's Chrome, a later 2024 release, activates the item, as every other app here does
with or without that motion. A release with the pointer already at (x, y) is therefore sent
alone; a release elsewhere (the end of a drag) still moves first, as pyautogui does.
"""
from __future__ import annotations

from typing import Any


def release_in_place(pyautogui: Any) -> None:
    """Wraps pyautogui's X11 _mouseUp: no motion when the pointer is at the release's place already."""
    from Xlib import X
    from Xlib.ext.xtest import fake_input

    platform = pyautogui.platformModule
    display = platform._display
    move_then_release = platform._mouseUp

    def release(x: int, y: int, button: Any) -> None:
        pointer = display.screen().root.query_pointer()
        if (pointer.root_x, pointer.root_y) != (x, y):
            move_then_release(x, y, button)
            return
        fake_input(display, X.ButtonRelease, platform.BUTTON_NAME_MAPPING[button])
        display.sync()

    # pyautogui's _click calls the module's _mouseUp by name: replacing the attribute covers clicks too.
    platform._mouseUp = release
