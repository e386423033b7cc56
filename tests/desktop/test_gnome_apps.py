"""The VM's GNOME apps, opened the ways an agent opens them on the VM, inside a real desktop."""
from __future__ import annotations

import json
import re

import pytest

from desktop_env.providers.local.build import vm_desktop
from desktop_env.providers.local.build.vm_settings import installed_settings

pytestmark = pytest.mark.desktop

WINDOW_TIMEOUT_S = 60


def window_classes(desktop) -> str:
    return desktop.shell("wmctrl -lx")["output"]


def wait_for_window(desktop, pattern: str) -> str:
    return desktop.wait_for(lambda: re.search(pattern, window_classes(desktop), re.M), timeout=WINDOW_TIMEOUT_S,
                            what=f"a window matching {pattern!r}").group(0)


def test_ctrl_alt_t_opens_gnome_terminal(desktop):
    desktop.execute("pyautogui.hotkey('ctrl', 'alt', 't')")
    try:
        wait_for_window(desktop, r"gnome-terminal-server\.Gnome-terminal")
    finally:
        desktop.shell("pkill -x gnome-terminal-")


def test_xdg_open_of_the_home_folder_opens_it_in_files_and_returns(desktop):
    reply = desktop.shell("timeout 20 xdg-open ~; echo exit=$?")
    try:
        assert "exit=0" in reply["output"]
        assert wait_for_window(desktop, r"org\.gnome\.Nautilus.*\bHome$")
    finally:
        desktop.shell("pkill -x nautilus")


def test_a_text_file_opens_in_gedit(desktop):
    desktop.shell("echo 'shopping list' > ~/Documents/list.txt; timeout 20 xdg-open ~/Documents/list.txt")
    try:
        assert wait_for_window(desktop, r"gedit\.Gedit .*list\.txt")
    finally:
        desktop.shell("pkill -x gedit; rm -f ~/Documents/list.txt")


# Each panel by its name on the command line, and a label only that panel has. Screen Lock is "lock" in
# Settings 41 (Ubuntu 22.04's, vm_settings.py, when installed), whose rows name themselves to no one, and
# "screen" in Debian 12's Settings 43.
SETTINGS_41 = installed_settings() is not None
SCREEN_LOCK_PANEL = ("lock", "Screen Lock") if SETTINGS_41 else ("screen", "Blank Screen Delay")
# Settings 41's panels whose content is not in the accessibility tree read here: shown is
# the panel Settings keeps as its current one, at the dconf key 41 and 43 share.
PANELS_41_WITHOUT_TREE = {"background", "display", "power"}


@pytest.mark.parametrize("panel, label", [
    ("background", "Style"), ("default-apps", "Web"), ("universal-access", "Large Text"),
    ("keyboard", "Input Sources"), ("display", "Night Light"), ("notifications", "Do Not Disturb"),
    SCREEN_LOCK_PANEL, ("power", "Screen Blank"),
])
def test_gnome_settings_opens_its_panels(desktop, panel, label):
    desktop.shell(f"(gnome-control-center {panel} >/dev/null 2>&1 &)")
    try:
        def panel_shown():
            if SETTINGS_41 and panel in PANELS_41_WITHOUT_TREE:
                current = desktop.shell("dconf read /org/gnome/control-center/last-panel")["output"].strip()
                return current == f"'{panel}'" and "gnome-control-center" in window_classes(desktop)
            tree = desktop.get("/accessibility").json()["AT"]
            start = tree.find('<application name="gnome-control-center"')
            return start >= 0 and f'<label name="{label}"' in tree[start:]
        desktop.wait_for(panel_shown, timeout=WINDOW_TIMEOUT_S, what=f"Settings' {panel} panel")
    finally:
        desktop.shell("pkill -x gnome-control-c; sleep 0.5")


def test_the_apps_gnome_lists_are_the_vms_whatever_the_host_has(desktop):
    listing = desktop.shell("/usr/bin/python3 -c \"import json; from gi.repository import Gio; "
                            "print(json.dumps(sorted(a.get_id() for a in Gio.AppInfo.get_all())))\"")["output"]
    apps = json.loads(listing)
    assert apps and all(vm_desktop.app_entry_allowed(app) for app in apps), apps
    assert {"google-chrome.desktop", "org.gnome.Terminal.desktop", "org.gnome.gedit.desktop"} <= set(apps)
