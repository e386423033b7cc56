"""/window_size, /setup/activate_window and /setup/close_window against real windows
(gedit, under GNOME Shell). What the window manager thinks is read back with wmctrl and
xdotool inside the desktop."""
from __future__ import annotations

import time
import uuid

import pytest

pytestmark = pytest.mark.desktop

WINDOW_TIMEOUT_S = 20
FOLDER = "/tmp"  # inside the desktop


def run(desktop, argv: list[str]) -> dict:
    response = desktop.post("/execute", json={"command": argv, "shell": False})
    assert response.status_code == 200, response.text
    return response.json()


def window_titles(desktop) -> list[str]:
    # wmctrl fails with BadWindow when a window closes while it lists them (an app starting
    # maps and drops short-lived windows): try again.
    for _ in range(10):
        result = run(desktop, ["wmctrl", "-l"])
        if result["returncode"] == 0:
            # "<id> <desktop> <host> <title>"; the title may be empty or contain spaces.
            return [(line.split(None, 3) + [""])[3] for line in result["output"].splitlines()]
        time.sleep(0.2)
    pytest.fail(f"wmctrl -l failed: {result}")


def active_title(desktop) -> str:
    result = run(desktop, ["xdotool", "getactivewindow", "getwindowname"])
    return result["output"].strip() if result["returncode"] == 0 else ""


@pytest.fixture
def open_editor(desktop):
    """Opens a gedit window on a new, saved file; returns its full window title.
    Windows still open at the end are closed, and gone before the next test."""
    opened: list[str] = []

    def open_one() -> str:
        name = f"osworld-{uuid.uuid4().hex[:10]}.txt"
        path = f"{FOLDER}/{name}"
        # Saved, so closing it asks nothing; its own process, so its own window rather
        # than a tab in an earlier one.
        created = desktop.post("/setup/upload", data={"file_path": path},
                               files={"file_data": (name, b"hello\n")})
        assert created.status_code == 200, created.text
        response = desktop.post("/setup/launch",
                                json={"command": ["gedit", "--standalone", path]})
        assert response.status_code == 200, response.text
        opened.append(name)
        # The title the loaded file gives: while it loads, under load, gedit has shown it as modified
        # ("*osworld-....txt (/tmp) - gedit") and taken the star off a moment later.
        return desktop.wait_for(
            lambda: next((title for title in window_titles(desktop) if name in title and not title.startswith("*")),
                         None),
            timeout=WINDOW_TIMEOUT_S, what=f"a window titled like {name}, its file loaded")

    yield open_one
    for name in opened:
        desktop.post("/setup/close_window", json={"window_name": name})
    desktop.wait_for(
        lambda: not any(name in title for name in opened for title in window_titles(desktop)),
        timeout=WINDOW_TIMEOUT_S, what="the test's windows to close")
    if opened:
        run(desktop, ["rm", "-f"] + [f"{FOLDER}/{name}" for name in opened])


def test_window_size_by_wm_class(desktop, open_editor):
    open_editor()
    for class_name in ("gedit", "Gedit"):  # instance and class parts, any case
        response = desktop.post("/window_size", data={"app_class_name": class_name})
        assert response.status_code == 200, response.text
        size = response.json()
        assert size["width"] > 0 and size["height"] > 0


def test_window_size_of_a_missing_class_is_404(desktop):
    response = desktop.post("/window_size", data={"app_class_name": "no-such-application"})
    assert response.status_code == 404


def test_activate_window_gives_it_the_focus(desktop, open_editor):
    first, second = open_editor(), open_editor()
    desktop.wait_for(lambda: active_title(desktop) == second,
                     timeout=WINDOW_TIMEOUT_S, what="the newest window to be active")

    # Not strict: a case-insensitive piece of the title.
    fragment = first.split(" ")[0].upper()
    response = desktop.post("/setup/activate_window", json={"window_name": fragment})
    assert response.status_code == 200, response.text
    desktop.wait_for(lambda: active_title(desktop) == first,
                     timeout=WINDOW_TIMEOUT_S, what=f"{first!r} to be active")

    response = desktop.post("/setup/activate_window", json={"window_name": second, "strict": True})
    assert response.status_code == 200, response.text
    desktop.wait_for(lambda: active_title(desktop) == second,
                     timeout=WINDOW_TIMEOUT_S, what=f"{second!r} to be active")


def test_activate_window_strict_needs_the_exact_title(desktop, open_editor):
    title = open_editor()
    response = desktop.post("/setup/activate_window",
                            json={"window_name": title[:-1], "strict": True})
    assert response.status_code == 200 and response.headers["X-OSWorld-Window-Found"] == "0"


def test_activate_window_by_class(desktop, open_editor):
    open_editor()
    response = desktop.post("/setup/activate_window",
                            json={"window_name": "gedit", "by_class": True})
    assert response.status_code == 200, response.text
    desktop.wait_for(lambda: active_title(desktop).endswith("gedit"),
                     timeout=WINDOW_TIMEOUT_S, what="a gedit window to be active")


def test_activate_a_missing_window_answers_as_osworld_and_says_so_in_a_header(desktop):
    response = desktop.post("/setup/activate_window", json={"window_name": "no-such-window-title"})
    assert (response.status_code, response.text) == (200, "Window activated successfully")
    assert response.headers["X-OSWorld-Window-Found"] == "0"


def test_close_window(desktop, open_editor):
    title = open_editor()
    response = desktop.post("/setup/close_window", json={"window_name": title, "strict": True})
    assert response.status_code == 200, response.text
    desktop.wait_for(lambda: title not in window_titles(desktop),
                     timeout=WINDOW_TIMEOUT_S, what=f"{title!r} to close")


def test_close_a_missing_window_answers_as_osworld_and_says_so_in_a_header(desktop):
    response = desktop.post("/setup/close_window", json={"window_name": "no-such-window-title"})
    assert (response.status_code, response.text) == (200, "Window closed successfully.")
    assert response.headers["X-OSWorld-Window-Found"] == "0"
