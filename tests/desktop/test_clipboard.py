"""Text typed the way UI-TARS, Doubao and OSWorld's own UI-TARS and Agent-S agents type it on the VM:
`pyperclip.copy(text)`, then Ctrl+V. pyperclip finds a copy mechanism in the desktop (xclip, as on the VM)
and the pasted text reaches a GTK app and Chromium, accents and all."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from desktop_env.desktop_env import DesktopEnv

pytestmark = pytest.mark.desktop

TEXT = "Grüße aus Zürich, 42 € (pasted)"
PASTE = f"import pyperclip\npyperclip.copy({TEXT!r})\npyautogui.hotkey('ctrl', 'v')"


@pytest.fixture(scope="module")
def env() -> Iterator[DesktopEnv]:
    env = DesktopEnv(require_a11y_tree=False, warm_spare=False)
    yield env
    env.close()


def launch(command: list[str]) -> dict:
    return {"type": "launch", "parameters": {"command": command}}


def test_text_copied_with_pyperclip_is_pasted_into_gedit(env):
    env.reset({"id": "paste-gedit", "config": [launch(["gedit", "/home/user/pasted.txt"])]})
    _, _, _, info = env.step(PASTE, pause=1)
    assert "action_error" not in info  # pyperclip found its copy mechanism
    env.step("pyautogui.hotkey('ctrl', 's')", pause=2)
    saved = env.controller.get_file("/home/user/pasted.txt")
    assert saved is not None and saved.decode("utf-8").rstrip("\n") == TEXT


def test_text_copied_with_pyperclip_is_pasted_into_chromium(env):
    env.reset({"id": "paste-chromium", "config": [
        # the page shows what the text area holds in its title, which the window manager lists
        launch(["google-chrome", "data:text/html,<title>paste</title><textarea style='width:90vw;height:60vh' "
                                 "oninput='document.title=this.value'></textarea>"])]})
    env.step("pyautogui.click(960, 400)", pause=1)  # into the text area
    _, _, _, info = env.step(PASTE, pause=2)
    assert "action_error" not in info
    windows = env.controller.run_command(["wmctrl", "-l"])["output"]
    assert f"{TEXT} - Google Chrome" in windows or f"{TEXT} - Chromium" in windows, windows
