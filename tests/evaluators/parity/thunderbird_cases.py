"""Cases for the Thunderbird metrics: prefs.js, msgFilterRules.dat and mbox folder files."""

from __future__ import annotations

from .cases import Case, Files

PREFS = """// Mozilla User Preferences
user_pref("mail.spam.manualMark", true);
user_pref("mail.spam.manualMarkMode", 1);
user_pref("mailnews.default_sort_order", 2);
user_pref("mail.identity.id1.fullName", "Anonym \\"X\\"");
"""

FILTERS = """version="9"
logging="no"
name="Move to Work"
enabled="yes"
type="17"
action="Move to folder"
actionValue="mailbox://nobody@Local%20Folders/Work"
condition="AND (subject,contains,work) AND (from,contains,boss@x.org)"
name="Old rule"
enabled="no"
type="1"
action="Mark read"
condition="ALL"
"""


def message(sender: str, subject: str, status: str = "0001") -> str:
    return (
        f"FROM - Mon Jan 01 10:00:00 2024\nX-Mozilla-Status: {status}\nX-Mozilla-Keys: \n"
        f"MIME-Version: 1.0\nFrom: {sender}\nSubject: {subject}\n\nHello.\n\n"
    )


def cases(files: Files) -> list[Case]:
    prefs = files.text(PREFS, ".js")
    found = [
        Case(
            "check_thunderbird_prefs",
            (prefs, {"expect": {"mail.spam.manualMark": {"method": "eq", "ref": True}}}),
            "an expected boolean",
        ),
        Case(
            "check_thunderbird_prefs",
            (prefs, {"expect": {"mail.spam.manualMarkMode": {"method": "eq", "ref": 0}}}),
            "an expected number differs",
        ),
        Case(
            "check_thunderbird_prefs",
            (prefs, {"expect": {"mail.absent": {"method": "eq", "ref": 1}}}),
            "an expected pref that is not set",
        ),
        Case(
            "check_thunderbird_prefs",
            (prefs, {"unexpect": {"mailnews.default_sort_order": {"method": "eq", "ref": 2}}}),
            "an unexpected value present",
        ),
        Case(
            "check_thunderbird_prefs",
            (prefs, {"expect": {"mail.identity.id1.fullName": {"method": "re", "ref": "Anonym"}}}),
            "an escaped quote",
        ),
        Case("check_thunderbird_prefs", (None, {"expect": {}}), "no file"),
    ]
    rules = files.text(FILTERS, ".dat")
    for label, rule in [
        (
            "the expected filter",
            {
                "expect": [
                    {
                        "name": "Move to Work",
                        "enabled": "yes",
                        "action": "Move to folder",
                        "condition": ["AND (subject,contains,work)", "AND (from,contains,boss@x.org)"],
                    }
                ]
            },
        ),
        ("a condition missing", {"expect": [{"name": "Move to Work", "condition": ["AND (subject,contains,work)"]}]}),
        ("an unexpected filter present", {"unexpect": [{"name": "Old rule"}]}),
        ("an ALL condition", {"expect": [{"name": "Old rule", "condition": ["ALL"]}]}),
    ]:
        found.append(Case("check_thunderbird_filter", (rules, rule), label))
    gold = files.text(message("a@x.org", "One") + message("b@x.org", "Two"), ".mbox")
    thunderbird_gold = files.text(
        (message("a@x.org", "One") + message("b@x.org", "Two")).replace("FROM - ", "From - "), ".mbox"
    )
    found.append(
        Case(
            "check_thunderbird_folder",
            (files.text(message("c@x.org", "Three").replace("FROM - ", "From - "), ".mbox"), thunderbird_gold),
            "both with Thunderbird's separator, other messages",
            {"remove_deleted": True, "remove_duplicate": True},
        )
    )
    for label, text, options in [
        ("the same messages", message("a@x.org", "One") + message("b@x.org", "Two"), {}),
        ("in another order", message("b@x.org", "Two") + message("a@x.org", "One"), {}),
        ("a message missing", message("a@x.org", "One"), {}),
        ("other messages", message("c@x.org", "Three"), {"remove_deleted": True, "remove_duplicate": True}),
        (
            "a deleted extra message",
            message("a@x.org", "One") + message("b@x.org", "Two") + message("d@x.org", "Gone", "0009"),
            {"remove_deleted": True, "remove_duplicate": True},
        ),
        ("an empty folder", "", {}),
        ("Thunderbird's own separator, other messages", message("c@x.org", "Three").replace("FROM - ", "From - "), {}),
    ]:
        found.append(Case("check_thunderbird_folder", (files.text(text, ".mbox"), gold), label, options))
    return found
