"""Where the local desktop starts, checked inside a real one: what an agent sees and what
OSWorld's tasks read on the VM (Ubuntu 22.04's GNOME: see desktop_env/providers/local/build/vm_desktop.py)."""
from __future__ import annotations

import io
import re
import shutil
import subprocess

import pytest
from PIL import Image

from desktop_env.providers.local.build import vm_desktop
from desktop_env.providers.local.build.ubuntu_fonts import fonts_dir
from desktop_env.providers.local.build.vscode import installed_vscode
from mm_agents.observations import visible_nodes

pytestmark = pytest.mark.desktop

# GIO launches an app entry by its desktop id, as GNOME Shell's dock and app grid do.
LAUNCH_BY_ID = ("/usr/bin/python3 -c \"from gi.repository import Gio; "
                "Gio.DesktopAppInfo.new('google-chrome.desktop').launch([], None)\"")


def gsettings(desktop, schema: str, key: str) -> str:
    return desktop.shell(f"gsettings get {schema} {key}")["output"].strip()


@pytest.mark.parametrize("opener", ["xdg-open http://127.0.0.1:9/", LAUNCH_BY_ID])
def test_chrome_opened_from_a_link_or_the_dock_runs_as_the_google_chrome_shim_does(desktop, opener):
    desktop.shell("pkill chrome; sleep 1")
    desktop.shell(f"({opener} >/dev/null 2>&1 &)")
    try:
        command = desktop.wait_for(lambda: desktop.shell("pgrep -a -x chromium | head -1")["output"].strip(),
                                   timeout=60, what="Chromium to start")
        assert "--force-renderer-accessibility" in command and ".config/google-chrome" in command
        # The shim is Chromium's parent, so `pkill chrome` (OSWorld's tasks) closes it.
        assert desktop.shell("pgrep -x google-chrome")["output"].strip()
    finally:
        desktop.shell("pkill chrome; sleep 1")


def test_the_window_manager_is_gnome_shell(desktop):
    assert "Name: GNOME Shell" in desktop.shell("wmctrl -m")["output"]


def test_themes_are_ubuntus_yaru(desktop):
    for key in ("gtk-theme", "icon-theme", "cursor-theme"):
        assert gsettings(desktop, "org.gnome.desktop.interface", key) == "'Yaru'"


# What the XSETTINGS daemon publishes on the root window's selection, as a GTK app reads it.
READ_XSETTINGS = ("python3 -c \"from Xlib import display; d = display.Display(); "
                  "owner = d.get_selection_owner(d.intern_atom('_XSETTINGS_S0')); "
                  "prop = owner.get_full_property(d.intern_atom('_XSETTINGS_SETTINGS'), 0); "
                  "print(bytes(prop.value))\"")


def test_gtk_apps_are_told_the_theme_over_xsettings(desktop):
    published = desktop.shell(READ_XSETTINGS)["output"]
    assert "Net/ThemeName" in published and "Yaru" in published


@pytest.mark.skipif(not fonts_dir().is_dir(), reason="Ubuntu's fonts are not fetched (no npm): osworld env setup")
def test_the_fonts_are_ubuntus(desktop):
    assert gsettings(desktop, "org.gnome.desktop.interface", "font-name") == "'Ubuntu 11'"
    assert desktop.shell("fc-match -f '%{family}' 'Ubuntu'; echo; fc-match -f '%{family}' 'Ubuntu Mono'")[
        "output"].split("\n")[:2] == ["Ubuntu", "Ubuntu Mono"]


def test_the_dock_has_the_vms_favourites_on_the_left_fixed_and_full_height(desktop):
    assert gsettings(desktop, "org.gnome.shell", "favorite-apps") == str(list(vm_desktop.FAVORITE_APPS))
    dock = "org.gnome.shell.extensions.dash-to-dock"
    assert [gsettings(desktop, dock, key) for key in ("dock-position", "dock-fixed", "extend-height",
                                                      "dash-max-icon-size")] == ["'LEFT'", "true", "true", "48"]


def test_default_apps_by_type_are_the_vms(desktop):
    def default(mime: str) -> str:
        return desktop.shell(f"xdg-mime query default {mime}")["output"].strip()

    assert default("video/mp4") == default("video/x-matroska") == "org.gnome.Totem.desktop"  # GNOME Videos
    assert default("text/plain") == "org.gnome.gedit.desktop"
    assert default("inode/directory") == "org.gnome.Nautilus.desktop"
    assert default("x-scheme-handler/https") == "google-chrome.desktop"


def test_the_settings_upstream_tasks_read_have_the_vms_values(desktop):
    assert gsettings(desktop, "org.gnome.settings-daemon.plugins.power", "idle-dim") == "true"
    assert gsettings(desktop, "org.gnome.desktop.screensaver", "lock-enabled") == "false"
    assert gsettings(desktop, "org.gnome.desktop.background", "picture-uri").endswith("/warty-final-ubuntu.png'")


def test_gnome_shells_top_bar_and_dock_are_in_the_accessibility_tree(desktop):
    tree = desktop.get("/accessibility").json()["AT"]
    shell = tree[tree.index('<application name="gnome-shell"'):]
    assert re.search(r'<label name="Activities"', shell)
    assert re.search(r'<menu name="System"', shell)
    dock = re.findall(r'<push-button name="([^"]+)"[^>]*cp:screencoord="\(0, \d+\)" cp:size="\(70, 64\)"', shell)

    vs_code = ["Visual Studio Code"] if installed_vscode() is not None else []  # the VM's third icon, when built
    assert dock[:3 + len(vs_code)] == ["Google Chrome", "Thunderbird Mail", *vs_code, "VLC media player"]
    assert "Files" in dock and "Trash" in dock
    assert re.search(r'<toggle-button name="Show Applications"', shell)
    assert re.search(r'<label name="Home"', tree)  # the desktop icon, as on the VM


def test_the_prompt_agents_table_keeps_the_rows_the_vms_tree_gives(desktop):
    """The rows OSWorld's own agent example lists for the VM's idle desktop (vm_desktop's
    [tree] source): the top bar's menu, one push-button per dock icon in 70x64 cells, Show
    Applications, and the Home icon's label. (Not the Activities label: GNOME 43 does not
    mark it enabled, see VM_DIFFERENCES.md.)"""
    rows = {(node.tag, node.name): node for node in visible_nodes(desktop.get("/accessibility").json()["AT"])}
    assert ("menu", "System") in rows
    chrome = rows[("push-button", "Google Chrome")]
    assert (chrome.x, chrome.y, chrome.width, chrome.height) == (0, 33, 70, 64)  # the VM's (35, 65) centre
    assert ("toggle-button", "Show Applications") in rows and ("label", "Home") in rows


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr is not installed")
def test_activities_is_read_in_the_top_left_corner_of_a_screenshot(desktop, tmp_path):
    screenshot = Image.open(io.BytesIO(desktop.get("/screenshot").content))
    corner = screenshot.crop((0, 0, 200, 32)).resize((800, 128))
    corner.save(tmp_path / "corner.png")
    text = subprocess.run(["tesseract", str(tmp_path / "corner.png"), "stdout", "--psm", "7"],
                          capture_output=True, text=True, check=True).stdout
    assert "Activities" in text


def test_nothing_shows_at_start_that_the_vm_does_not_show(desktop):
    tree = desktop.get("/accessibility").json()["AT"]
    assert "Screen Lock disabled" not in tree and "privileged user" not in tree
    assert not re.search(r'<panel name="Overview"[^>]*st:showing="true"', tree)  # the desktop, not the overview
    assert desktop.shell("pgrep -c tracker")["output"].strip() == "0"  # no file indexer


def test_the_session_bus_is_where_a_task_names_it(desktop):
    """Some of OSWorld's tasks set DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus themselves: a
    `gsettings set` through that address must reach the desktop's settings, as on the VM."""
    key = "org.gnome.desktop.interface text-scaling-factor"
    try:
        done = desktop.shell(f"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus gsettings set {key} 1.25")
        assert done["returncode"] == 0, done
        assert desktop.shell(f"gsettings get {key}")["output"].strip() == "1.25"
    finally:
        desktop.shell(f"gsettings reset {key}")


def test_the_session_bus_never_starts_a_second_a11y_bus_launcher(desktop):
    """The session waits until its own launcher owns org.a11y.Bus before the desktop's apps start: an
    app that asked earlier had the bus activate a second launcher, and ours, losing the name, died."""
    bus_log = desktop.shell("cat /run/osworld/logs/dbus.log")
    assert bus_log["returncode"] == 0, bus_log
    assert "Successfully activated service" in bus_log["output"]  # the bus's own log, which names activations
    assert "Activating service name='org.a11y.Bus'" not in bus_log["output"]
