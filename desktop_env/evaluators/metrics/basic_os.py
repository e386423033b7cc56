"""Ubuntu desktop settings metrics; inputs are command outputs and directory listings."""
from __future__ import annotations

import ast
import re
from typing import Any

from ..outcome import MetricResult, failed, show, verdict
from ..registry import metric


def _gsettings_list(output: str) -> list | None:
    """A gsettings string-array value ("['a.desktop', 'b.desktop']", or "@as []" when empty)."""
    text = output.strip().removeprefix("@as").strip()
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, list) else None


def _same_names(found: list, wanted: list) -> bool:
    return len(found) == len(wanted) and set(found) == set(wanted)


@metric("check_gnome_favorite_apps")
def check_gnome_favorite_apps(result: Any, rule: dict | None = None) -> MetricResult:
    """The dock's favorite apps (gsettings org.gnome.shell favorite-apps) are exactly
    rule["expected"], in any order."""
    if not isinstance(result, str) or rule is None:
        return failed(f"no gsettings output to read (got {show(result)})")
    apps = _gsettings_list(result)
    if apps is None:
        return failed(f"the favorite apps {show(result)} are not a gsettings list")
    return verdict(_same_names(apps, rule["expected"]),
                   f"favorite apps {sorted(apps)}, expected {sorted(rule['expected'])}")


_TIME_ZONE_OFFSET = re.compile(r"Time zone:.*\(\S+, ([+-]\d{4})\)")


@metric("is_utc_0")
def is_utc_0(result: Any) -> MetricResult:
    """`timedatectl status` shows a time zone at offset +0000 ("Time zone: ... (UTC, +0000)")."""
    if not isinstance(result, str):
        return failed(f"no timedatectl output (got {show(result)})")
    match = _TIME_ZONE_OFFSET.search(result)
    if match is None:
        return failed(f"no 'Time zone: ... (+hhmm)' line in {show(result)}")
    return verdict(match.group(1) in ("+0000", "-0000"), f"the time zone offset is {match.group(1)}, expected +0000")


@metric("check_text_enlarged")
def check_text_enlarged(result: Any) -> MetricResult:
    """The text scaling factor (gsettings ... text-scaling-factor) is above 1."""
    if not isinstance(result, str):
        return failed(f"no text-scaling-factor output (got {show(result)})")
    try:
        factor = float(result.strip())
    except ValueError:
        return failed(f"the text scaling factor {show(result)} is not a number")
    return verdict(factor > 1.0, f"the text scaling factor is {factor:g}, expected above 1")


@metric("check_moved_jpgs")
def check_moved_jpgs(result: Any, rule: dict | None = None) -> MetricResult:
    """The folder (a list_directory tree: {"name", "children": [{"name", ...}]}) holds
    exactly the files named in rule["expected"]."""
    if not isinstance(result, dict) or rule is None:
        return failed(f"no directory listing (got {show(result)})")
    names = [child.get("name") for child in result.get("children", []) if isinstance(child, dict)]
    return verdict(_same_names(names, rule["expected"]),
                   f"the folder holds {sorted(map(str, names))}, expected {sorted(rule['expected'])}")


@metric("is_in_vm_clickboard")
def is_in_vm_clickboard(rules: Any, clipboard: Any = None) -> MetricResult:
    """The clipboard text contains rules["expected"] (a string, or every string of a list).

    The task files give the rules as `result` and the clipboard command's output as
    `expected`, so the arguments come in that order."""
    if not isinstance(rules, dict) or not isinstance(clipboard, str):
        return failed(f"no clipboard text (got {show(clipboard)})")
    wanted = rules["expected"]
    wanted = wanted if isinstance(wanted, list) else [wanted]
    missing = [text for text in wanted if text not in clipboard]
    return verdict(not missing, f"the clipboard {show(clipboard)} lacks {show(missing)}" if missing
                   else f"the clipboard holds all of {show(wanted)}")
