"""Chromium's menus and Settings where the VM's Chrome had them, checked inside a real desktop.

The coordinates are clicks that agents recorded on OSWorld's VM (1920x1080; UI-TARS and Doubao in
OSWorld-Verified, whose notes name what each click was meant for), each right after the ⋮ menu was
opened at (1893, 87) or Settings was opened from it. The clicks are pyautogui's, sent as the VM's
agents sent them. Where this desktop differs from the VM's Chrome is in VM_DIFFERENCES.md
("Chrome's menus and pages").
"""
from __future__ import annotations

import json
import re

import pytest

from desktop_env.providers.local.build.vm_chromium import UPSTREAM_VERSION, installed_chromium
from mm_agents.observations import visible_nodes

pytestmark = pytest.mark.desktop

vm_era_chromium = pytest.mark.skipif(installed_chromium() is None,
                                     reason="Chromium 120 is not installed here (osworld env setup installs it)")

APP_MENU = (1893.12, 87.48)
# Item name (as Chrome of 2024 and Chromium 120 name it) -> the recorded clicks' y (x between 1555 and 1622).
VM_MENU_CLICKS = {
    "Bookmarks and lists": (423.36,),
    "Extensions": (449.28,),
    "Clear browsing data": (473.04, 486.0, 488.16),
    "Print": (578.88, 582.12),
    "More tools": (732.24, 734.4),
    "Settings": (807.84, 810.0, 813.24, 814.32, 816.48),
}
SETTINGS_CLICK = (1576.32, 813.24)
# Settings sidebar row -> the recorded clicks' y (x between 163 and 202).
VM_SIDEBAR_CLICKS = {
    "Autofill and passwords": (231.12, 235.44),
    "Privacy and security": (275.4,),
    "Performance": (335.88,),  # Doubao aimed at Appearance and got Performance, its note says
    "Appearance": (340.2, 358.56),
    "Search engine": (384.48,),
    "Languages": (530.28,),
}


def nodes(desktop):
    return visible_nodes(desktop.get("/accessibility").json()["AT"])


def item_at(desktop, tag: str, x: float, y: float) -> str | None:
    for node in nodes(desktop):
        if node.tag == tag and node.x <= x < node.x + node.width and node.y <= y < node.y + node.height:
            return node.name
    return None


def window_titles(desktop) -> str:
    return desktop.shell("wmctrl -l")["output"]


def app_menu_button(desktop) -> str | None:
    """The name of the toolbar button under the VM's recorded ⋮ click, once it is drawn."""
    x, y = APP_MENU
    return next((node.name for node in nodes(desktop) if node.tag == "push-button"
                 and node.x <= x < node.x + node.width and node.y <= y < node.y + node.height), None)


@pytest.fixture
def chrome(desktop):
    """Chrome started as OSWorld's tasks start it, its toolbar drawn."""
    desktop.shell("pkill chrome; sleep 1; (google-chrome --remote-debugging-port=1337 >/dev/null 2>&1 &)")
    desktop.wait_for(lambda: app_menu_button(desktop), timeout=90, what="Chromium's ⋮ button")
    yield
    desktop.shell("pkill chrome; sleep 1")


@vm_era_chromium
def test_google_chrome_is_chromium_120_over_the_devtools_port_too(desktop, chrome):
    assert desktop.shell("google-chrome --version")["output"].strip() == f"Chromium {UPSTREAM_VERSION}"
    version = json.loads(desktop.shell(
        "python3 -c \"import urllib.request; "
        "print(urllib.request.urlopen('http://127.0.0.1:1337/json/version', timeout=10).read().decode())\"")["output"])
    assert version["Browser"] == f"Chrome/{UPSTREAM_VERSION}"
    # The home template's profile opens without a dialog (no "profile from a newer version", no first run).
    titles = re.findall(r"^\S+\s+-?\d+\s+\S+ (.*)$", window_titles(desktop), re.MULTILINE)
    assert [title for title in titles if "Chromium" in title or "rofile" in title] == ["New Tab - Chromium"], titles


@vm_era_chromium
def test_the_toolbar_shows_an_outdated_chromes_update_chip_around_the_menu(desktop, chrome):
    open_app_menu(desktop)
    first_row = item_at(desktop, "menu-item", 1600, 130)
    desktop.execute("pyautogui.press('escape')")
    assert first_row == "Chromium is out of date"


def open_app_menu(desktop):
    desktop.execute(f"pyautogui.click{APP_MENU}")
    return desktop.wait_for(lambda: item_at(desktop, "menu-item", 1600, 800), timeout=30, what="the ⋮ menu")


def test_the_vms_recorded_menu_clicks_land_on_the_items_they_were_aimed_at(desktop, chrome):
    open_app_menu(desktop)
    landed = {(name, y): item_at(desktop, "menu-item", 1600, y) for name, ys in VM_MENU_CLICKS.items() for y in ys}
    desktop.execute("pyautogui.press('escape')")
    assert {key: (hit or "").startswith(key[0]) for key, hit in landed.items()} == dict.fromkeys(landed, True), landed


def test_the_new_tab_page_is_googles_as_chromes_default_search_engine_makes_it(desktop, chrome):
    assert any(node.name == "Search Google or type a URL" for node in nodes(desktop))


def test_the_recorded_settings_click_opens_settings_whose_sidebar_rows_are_under_the_vms_clicks(desktop, chrome):
    open_app_menu(desktop)
    desktop.execute(f"pyautogui.click{SETTINGS_CLICK}")
    desktop.wait_for(lambda: re.search(r"Settings - Chromium", window_titles(desktop)), timeout=60,
                     what="the Settings tab")
    desktop.wait_for(lambda: item_at(desktop, "menu-item", 180, 340.2), timeout=60, what="the Settings sidebar")
    landed = {(name, y): item_at(desktop, "menu-item", 180, y) for name, ys in VM_SIDEBAR_CLICKS.items() for y in ys}
    assert {key: hit == key[0] for key, hit in landed.items()} == dict.fromkeys(landed, True), landed
    # And the recorded click on Appearance opens that page.
    desktop.execute("pyautogui.click(168.96, 340.2)")
    desktop.wait_for(lambda: "Settings - Appearance" in window_titles(desktop), timeout=30,
                     what="the Appearance page")
