"""Cases for the desktop metrics on command output: gsettings lists, timedatectl, the text scale, a folder
listing, the clipboard."""

from __future__ import annotations

from .cases import Case, Files

TIMEDATECTL = """               Local time: Thu 2024-01-25 12:56:06 {zone}
           Universal time: Thu 2024-01-25 12:56:06 UTC
                 RTC time: Thu 2024-01-25 12:56:05
                Time zone: {name} ({zone}, {offset})
System clock synchronized: yes
              NTP service: inactive
          RTC in local TZ: no
"""


def cases(files: Files) -> list[Case]:
    favorites = {"expected": ["google-chrome.desktop", "thunderbird.desktop"]}
    found = [
        Case(
            "check_gnome_favorite_apps",
            ("['thunderbird.desktop', 'google-chrome.desktop']\n", favorites),
            "the same apps",
        ),
        Case("check_gnome_favorite_apps", ("['thunderbird.desktop']\n", favorites), "one app"),
        Case(
            "check_gnome_favorite_apps",
            ("['a.desktop', 'thunderbird.desktop', 'google-chrome.desktop']", favorites),
            "one app too many",
        ),
        Case("check_gnome_favorite_apps", ("@as []\n", favorites), "gsettings' empty list"),
        Case("is_utc_0", (TIMEDATECTL.format(zone="UTC", name="Etc/UTC", offset="+0000"),), "UTC"),
        Case("is_utc_0", (TIMEDATECTL.format(zone="WET", name="Atlantic/Faroe", offset="+0000"),), "WET at +0000"),
        Case("is_utc_0", (TIMEDATECTL.format(zone="CET", name="Europe/Paris", offset="+0100"),), "CET"),
        Case("check_text_enlarged", ("1.25\n",), "1.25"),
        Case("check_text_enlarged", ("1.0\n",), "1.0"),
    ]
    jpgs = {"expected": ["a.jpg", "b.jpg"]}
    for label, names in [
        ("the same files", ["b.jpg", "a.jpg"]),
        ("one missing", ["a.jpg"]),
        ("another file", ["a.jpg", "c.jpg"]),
    ]:
        listing = {"name": "cpjpg", "type": "directory", "children": [{"name": n, "type": "file"} for n in names]}
        found.append(Case("check_moved_jpgs", (listing, jpgs), label))
    secret = {"expected": "/home/user/Data3/List3/secret.docx"}
    found += [
        Case("is_in_vm_clickboard", (secret, "/home/user/Data3/List3/secret.docx"), "the path"),
        Case("is_in_vm_clickboard", (secret, "/home/user/Data3/List3/other.docx"), "another path"),
        Case("is_in_vm_clickboard", ({"expected": ["a", "b"]}, "a and b"), "a list, all there"),
        Case("is_in_vm_clickboard", ({"expected": ["a", "z"]}, "a and b"), "a list, one missing"),
    ]
    return found
