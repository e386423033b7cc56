"""Ubuntu settings metrics on real command output shapes (gsettings, timedatectl, xsel)."""
from __future__ import annotations

from desktop_env.evaluators.metrics.basic_os import (
    check_gnome_favorite_apps,
    check_moved_jpgs,
    check_text_enlarged,
    is_in_vm_clickboard,
    is_utc_0,
)

FAVORITES = {"expected": ["thunderbird.desktop", "vim.desktop", "google-chrome.desktop"]}


def test_check_gnome_favorite_apps_in_any_order():
    output = "['google-chrome.desktop', 'thunderbird.desktop', 'vim.desktop']\n"
    assert check_gnome_favorite_apps(output, FAVORITES).score == 1.0


def test_check_gnome_favorite_apps_missing_or_extra_app():
    assert check_gnome_favorite_apps("['thunderbird.desktop', 'vim.desktop']\n", FAVORITES).score == 0.0
    assert check_gnome_favorite_apps("['thunderbird.desktop', 'vim.desktop', 'google-chrome.desktop', "
                                     "'org.gnome.Nautilus.desktop']\n", FAVORITES).score == 0.0
    assert check_gnome_favorite_apps("@as []\n", FAVORITES).score == 0.0
    assert check_gnome_favorite_apps("@as []\n", {"expected": []}).score == 1.0


def test_check_gnome_favorite_apps_without_output():
    assert check_gnome_favorite_apps(None, FAVORITES).score == 0.0
    assert check_gnome_favorite_apps("No such key “favorite-apps”\n", FAVORITES).score == 0.0


def timedatectl(zone: str) -> str:
    return ("               Local time: Thu 2024-01-25 12:56:06 WET\n"
            "           Universal time: Thu 2024-01-25 12:56:06 UTC\n"
            "                 RTC time: Thu 2024-01-25 12:56:05\n"
            f"                Time zone: {zone}\n"
            "System clock synchronized: yes\n"
            "              NTP service: inactive\n"
            "          RTC in local TZ: no\n")


def test_is_utc_0():
    assert is_utc_0(timedatectl("Atlantic/Faroe (WET, +0000)")).score == 1.0
    assert is_utc_0(timedatectl("Etc/UTC (UTC, +0000)")).score == 1.0
    assert is_utc_0(timedatectl("Asia/Shanghai (CST, +0800)")).score == 0.0
    assert is_utc_0(None).score == 0.0
    assert is_utc_0("Failed to connect to bus: No such file or directory\n").score == 0.0


def test_check_text_enlarged():
    assert check_text_enlarged("1.25\n").score == 1.0
    assert check_text_enlarged("1.0\n").score == 0.0
    assert check_text_enlarged("").score == 0.0
    assert check_text_enlarged(None).score == 0.0


def listing(names: list[str]) -> dict:
    """A list_directory getter value."""
    return {"name": "cpjpg", "type": "directory",
            "children": [{"name": n, "type": "file"} for n in names]}


def test_check_moved_jpgs():
    rule = {"expected": ["emnlp2023.jpg", "hk_group_photo.jpg", "hong-kong-china.jpg"]}
    assert check_moved_jpgs(listing(["hong-kong-china.jpg", "emnlp2023.jpg", "hk_group_photo.jpg"]), rule).score == 1.0
    assert check_moved_jpgs(listing(["emnlp2023.jpg", "hk_group_photo.jpg"]), rule).score == 0.0
    assert check_moved_jpgs(listing(["emnlp2023.jpg", "hk_group_photo.jpg", "hong-kong-china.jpg", "notes.txt"]),
                            rule).score == 0.0
    assert check_moved_jpgs(None, rule).score == 0.0


def test_is_in_vm_clickboard_takes_rules_first_then_the_clipboard():
    rules = {"expected": "/home/user/Data3/List3/secret.docx"}
    assert is_in_vm_clickboard(rules, "/home/user/Data3/List3/secret.docx").score == 1.0
    assert is_in_vm_clickboard(rules, "/home/user/Data3/List3/").score == 0.0
    assert is_in_vm_clickboard(rules, None).score == 0.0
    assert is_in_vm_clickboard({"expected": ["a.txt", "b.txt"]}, "a.txt\nb.txt\n").score == 1.0
    assert is_in_vm_clickboard({"expected": ["a.txt", "b.txt"]}, "a.txt\n").score == 0.0
