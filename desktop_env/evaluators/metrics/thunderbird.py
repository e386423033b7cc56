"""Thunderbird metrics over its profile files: prefs.js, msgFilterRules.dat, mbox folders."""
from __future__ import annotations

import json
import logging
import re
from collections import Counter
from typing import Any

from ..fixes import fixes_enabled
from ..outcome import MetricResult, failed, passed, show
from ..registry import metric
from .general import match_record, match_value_to_rule, missing_file, read_text

logger = logging.getLogger(__name__)


# -- prefs.js -----------------------------------------------------------------------------------

_USER_PREF = re.compile(r'^user_pref\("((?:[^"\\]|\\.)+)",\s*(.+)\);\s*$')


def parse_prefs(text: str) -> dict[str, Any]:
    """prefs.js `user_pref("key", value);` lines as {key: value}; values are JSON literals
    (true, 3, "text"), anything else is kept as its raw text."""
    prefs: dict[str, Any] = {}
    for line in text.splitlines():
        match = _USER_PREF.match(line.strip())
        if match is None:
            continue
        key, raw = match.groups()
        try:
            key = json.loads(f'"{key}"')
            prefs[key] = json.loads(raw)
        except ValueError:
            prefs[key] = raw
    return prefs


@metric("check_thunderbird_prefs")
def check_thunderbird_prefs(result: Any, rules: dict | None = None) -> MetricResult:
    """rules = {"expect": {pref: {"method", "ref"}}, "unexpect": {pref: {...}}}: every expected
    pref is set and matches its rule; no unexpected pref is set to a value matching its rule
    (an unset pref, i.e. the default, is fine). Methods: see match_value_to_rule."""
    text = read_text(result)
    if text is None or rules is None:
        return failed(missing_file(result) if rules is not None else "no rules given")
    prefs = parse_prefs(text)
    for key, rule in rules.get("expect", {}).items():
        if key not in prefs:
            return failed(f"pref {key!r} is not set, expected {rule.get('method')} {show(rule.get('ref'))}")
        if not match_value_to_rule(prefs[key], rule):
            return failed(f"pref {key!r} is {show(prefs[key])}, expected {rule.get('method')} {show(rule.get('ref'))}")
    for key, rule in rules.get("unexpect", {}).items():
        if key in prefs and match_value_to_rule(prefs[key], rule):
            return failed(f"pref {key!r} is {show(prefs[key])}, which it must not be")
    return passed("every expected pref is set as required, no unexpected one")


# -- msgFilterRules.dat -------------------------------------------------------------------------

_DAT_LINE = re.compile(r'^(\w+)="(.*)"$')
# One term of a filter condition: `AND (subject,contains,discount)`, `OR (from,is,"a, b")`, `ALL`.
_CONDITION_TERM = re.compile(r'\b(?:AND|OR) \([^,()]+,[^,()]+,(?:"(?:[^"\\]|\\.)*"|[^)]*)\)|\bALL\b')


def _unescape(value: str) -> str:
    return value.replace('\\"', '"').replace("\\\\", "\\")


def parse_filters(text: str) -> list[dict[str, Any]]:
    """The filters of a msgFilterRules.dat, each as {name, enabled, type, condition: [terms],
    actions: [(action, actionValue)]} (a filter may have several actions)."""
    filters: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        match = _DAT_LINE.match(line.strip())
        if match is None:
            continue
        key, value = match.group(1), _unescape(match.group(2))
        if key == "name":
            current = {"name": value, "actions": []}
            filters.append(current)
        elif current is None:
            continue  # file header: version, logging
        elif key == "action":
            current["actions"].append([value, None])
        elif key == "actionValue" and current["actions"]:
            current["actions"][-1][1] = value
        elif key == "condition":
            current["condition"] = _CONDITION_TERM.findall(value)
        else:
            current[key] = value
    return filters


def _filter_matches(wanted: dict, found: dict) -> bool:
    """`wanted` uses OSWorld's flat keys; `action`/`actionValue` must hold for one action."""
    plain = {k: v for k, v in wanted.items() if k not in ("action", "actionValue")}
    if not match_record(plain, found):
        return False
    if "action" not in wanted and "actionValue" not in wanted:
        return True
    return any(("action" not in wanted or action == wanted["action"])
               and ("actionValue" not in wanted or value == wanted["actionValue"])
               for action, value in found["actions"])


@metric("check_thunderbird_filter")
def check_thunderbird_filter(result: Any, rules: dict | None = None) -> MetricResult:
    """rules = {"expect": [filter], "unexpect": [filter]}, a filter given by some of name,
    enabled, type, action, actionValue, condition (a list of terms like
    "AND (subject,contains,discount)" or "ALL"): each expected filter exists, no unexpected one.
    A filter with several actions matches a rule when one of its actions does (OSWorld kept
    only the last action)."""
    text = read_text(result)
    if text is None or rules is None:
        return failed(missing_file(result) if rules is not None else "no rules given")
    filters = parse_filters(text)
    for r in rules.get("expect", []):
        if not any(_filter_matches(r, f) for f in filters):
            return failed(f"no filter matches {show(r)} (filters: {show([f.get('name') for f in filters])})")
    for r in rules.get("unexpect", []):
        if any(_filter_matches(r, f) for f in filters):
            return failed(f"a filter matches the unexpected {show(r)}")
    return passed("every expected filter exists, no unexpected one")


# -- mbox folders -------------------------------------------------------------------------------

_MBOX_SEPARATOR = re.compile(r"^From .*$", re.MULTILINE)
_STATUS_LINE = re.compile(r"^X-Mozilla-Status2?:.*\n?", re.MULTILINE)
_KEYS_LINE = re.compile(r"^X-Mozilla-Keys:.*\n?", re.MULTILINE)
_STATUS_VALUE = re.compile(r"^X-Mozilla-Status: *([0-9A-Fa-f]{4})", re.MULTILINE)
_MSG_FLAG_EXPUNGED = 0x0008  # a deleted message Thunderbird has not compacted away yet


def _messages(text: str) -> list[str]:
    """The messages of an mbox file without their `From ` separator lines (the envelope date
    changes when Thunderbird copies a message); a file with no separator (.eml) is one message."""
    parts = _MBOX_SEPARATOR.split(text)
    return [part.strip("\n") for part in parts if part.strip()]


def _is_deleted(message: str) -> bool:
    match = _STATUS_VALUE.search(message)
    return match is not None and bool(int(match.group(1), 16) & _MSG_FLAG_EXPUNGED)


def _folder_messages(text: str, remove_deleted: bool, remove_duplicate: bool, ignore_status: bool,
                     ignore_keys: bool) -> Counter:
    messages = _messages(text)
    if remove_deleted:
        messages = [m for m in messages if not _is_deleted(m)]
    if ignore_status:
        messages = [_STATUS_LINE.sub("", m) for m in messages]
    if ignore_keys:
        messages = [_KEYS_LINE.sub("", m) for m in messages]
    counted = Counter(m.strip() for m in messages)
    if remove_duplicate:
        counted = Counter(set(counted))
    return counted


_SUBJECT = re.compile(r"^Subject: *(.*)$", re.MULTILINE)


def _subjects(messages: Counter) -> list[str]:
    return sorted((m.group(1) if (m := _SUBJECT.search(text)) else text[:60]) for text in messages.elements())


def _osworld_folder_reading(text: str, remove_duplicate: bool) -> list[str]:
    """What OSWorld's check_thunderbird_folder reads of a folder file: one "FROM - " per blank piece
    between its "FROM - " separators (every piece with text is skipped), once with remove_duplicate."""
    blanks = ["FROM - " for piece in text.strip().split("FROM - ") if not piece.strip()]
    return blanks[:1] if remove_duplicate else blanks


@metric("check_thunderbird_folder")
def check_thunderbird_folder(result: Any, expected: Any = None, remove_deleted: bool = True,
                             remove_duplicate: bool = True, ignore_status: bool = False,
                             ignore_keys: bool = False) -> MetricResult:
    """Each mail folder file (mbox; or .eml) holds the same messages as its gold twin, in any
    order. Lists of files are compared pairwise. Options: `remove_deleted` (default true)
    drops messages flagged expunged, `remove_duplicate` (default true) compares sets,
    `ignore_status` / `ignore_keys` ignore the X-Mozilla-Status(2) / X-Mozilla-Keys headers.

    OSWorld's reading keeps only the blank pieces between "FROM - " separators (it skips every
    piece that has text: `if mail.strip(): continue`), so a folder reads as nothing, or as one
    empty message when the file starts with "FROM - " (Thunderbird writes "From - "): any two
    folders Thunderbird wrote compare equal. That is the default verdict; the evaluator fixes
    split on the mbox separator and compare the messages."""
    if result is None or expected is None:
        return failed("no result folder" if result is None else "no expected folder")
    if not isinstance(expected, list):
        result, expected = [result], [expected]
    if not isinstance(result, list) or len(result) != len(expected):
        return failed(f"{len(result) if isinstance(result, list) else 1} result folders for {len(expected)} expected")
    for produced, gold in zip(result, expected, strict=True):
        produced_text, gold_text = read_text(produced), read_text(gold)
        if produced_text is None or gold_text is None:
            return failed(missing_file(produced) if produced_text is None else missing_file(gold, "expected"))
        if not fixes_enabled():
            if _osworld_folder_reading(produced_text, remove_duplicate) != \
                    _osworld_folder_reading(gold_text, remove_duplicate):
                return failed(f"folder {show(str(produced).rsplit('/', 1)[-1])}: one file starts with 'FROM - ' "
                              "and the other does not, the only difference OSWorld's reading sees")
            continue
        flags = (remove_deleted, remove_duplicate, ignore_status, ignore_keys)
        got, want = _folder_messages(produced_text, *flags), _folder_messages(gold_text, *flags)
        if got != want:
            return failed(f"folder {show(str(produced).rsplit('/', 1)[-1])}: messages {show(_subjects(got))}, "
                          f"expected {show(_subjects(want))}")
    if not fixes_enabled():
        return passed(f"the {len(result)} folders read alike as OSWorld reads them (it compares no messages)")
    return passed(f"the {len(result)} folders hold the expected messages")
