"""Cases for the Chrome metrics on what their getters give: active tab and tab lists, URL patterns,
bookmarks, installed extensions, search queries."""

from __future__ import annotations

from typing import Any

from .cases import Case, Files

TAB = {"title": "Flights", "url": "https://www.airbnb.com.sg/s/homes?adults=2#top", "index": 0}


def url_cases() -> list[Case]:
    cases = []
    pattern_cases: list[tuple[str, Any, list[str]]] = [
        ("a dict with matching patterns", TAB, ["airbnb", r"adults=2"]),
        ("a dict, one pattern missing", TAB, ["airbnb", "children=1"]),
        ("a plain URL", "https://www.drugs.com/npc/?search=aspirin", [r"drugs\.com/npc"]),
        ("a dict without url", {"title": "x"}, ["x"]),
        ("no result", None, ["x"]),
        ("an empty URL", "", ["x"]),
        ("no pattern", "https://a.org", []),
    ]
    for label, result, patterns in pattern_cases:
        cases.append(Case("is_expected_url_pattern_match", (result, {"expected": patterns}), label))
    # One string instead of a list: OSWorld searches each of its characters as a regex of its own.
    string_cases: list[tuple[str, Any, str]] = [
        ("a string whose characters are all in the URL", TAB, "homes"),
        ("a string of characters not in the URL", TAB, "xyz"),
        ("a string that is a regex the URL does not match", TAB, "sea.*homes"),
        ("a string holding a dot", "https://www.drugs.com/npc", "drugs.com"),
        ("a string holding an escaped dot", "https://www.drugs.com/npc", r"drugs\.com"),
        ("a string holding a group", TAB, "(www)"),
        ("a string with anchors", "https://a.org", "^a$"),
        ("an empty string", "https://a.org", ""),
        ("a string against no result", None, "a"),
    ]
    for label, result, pattern in string_cases:
        cases.append(Case("is_expected_url_pattern_match", (result, {"expected": pattern}), label))
    for label, result, url in [
        ("the same page", TAB, "https://airbnb.com/s/homes?adults=2#top"),
        ("another query", TAB, "https://www.airbnb.com/s/homes?adults=3#top"),
        ("a trailing slash", {"url": "https://www.python.org/"}, "https://python.org"),
        ("no scheme", "www.python.org/downloads", "https://python.org/downloads"),
        ("a subdomain", {"url": "https://docs.python.org/3/"}, "https://python.org/3/"),
        ("no result", None, "https://python.org"),
    ]:
        cases.append(Case("is_expected_active_tab", (result, {"type": "url", "url": url}), label))
        cases.append(Case("is_expected_active_tab_approximate", (result, {"type": "url", "url": url}), label))
    cases.append(Case("is_expected_active_tab", (TAB, {"type": "title", "url": "x"}), "another rule type"))
    tabs = [{"url": "https://www.lonelyplanet.com/"}, {"url": "https://www.tripadvisor.com/Hotels"}]
    for label, urls in [
        ("the same tabs in another order", ["https://www.tripadvisor.com/Hotels", "https://lonelyplanet.com"]),
        ("one tab too many", ["https://lonelyplanet.com"]),
        ("another tab", ["https://lonelyplanet.com", "https://booking.com"]),
    ]:
        cases.append(Case("is_expected_tabs", (tabs, {"type": "url", "urls": urls}), label))
    cases.append(Case("is_expected_tabs", ([], {"type": "url", "urls": []}), "no tabs"))
    query = {"expect": {"pattern": r"q=dogs?\b"}}
    cases.append(Case("is_expected_search_query", ({"url": "https://www.google.com/search?q=dogs"}, query), "matches"))
    cases.append(Case("is_expected_search_query", ({"url": "https://www.google.com/search?q=cat"}, query), "no match"))
    return cases


def bookmark_cases() -> list[Case]:
    bar: dict[str, Any] = {
        "bookmark_bar": {
            "children": [
                {"type": "folder", "name": "Favorites", "children": []},
                {"type": "url", "name": "Python", "url": "https://www.python.org/"},
                {
                    "type": "folder",
                    "name": "Liked Authors",
                    "children": [
                        {"type": "url", "name": "a", "url": "https://a.org/"},
                        {"type": "url", "name": "b", "url": "https://b.org/"},
                    ],
                },
            ]
        }
    }
    return [
        Case(
            "is_expected_bookmarks",
            (bar, {"type": "bookmark_bar_folders_names", "names": ["Favorites", "Liked Authors"]}),
            "folder names",
        ),
        Case(
            "is_expected_bookmarks",
            (bar, {"type": "bookmark_bar_folders_names", "names": ["Favorites"]}),
            "a folder missing from the rule",
        ),
        Case(
            "is_expected_bookmarks",
            (bar, {"type": "bookmark_bar_websites_urls", "urls": ["https://www.python.org/"]}),
            "website urls",
        ),
        Case(
            "is_expected_bookmarks",
            (
                bar,
                {
                    "type": "liked_authors_websites_urls",
                    "urls": [["https://a.org/", "https://a2.org/"], "https://b.org/"],
                },
            ),
            "liked authors, alternatives",
        ),
        Case(
            "is_expected_bookmarks",
            (bar, {"type": "liked_authors_websites_urls", "urls": ["https://c.org/"]}),
            "liked authors, another",
        ),
        Case("is_expected_bookmarks", ({}, {"type": "bookmark_bar_folders_names", "names": []}), "no bookmarks"),
    ]


def extension_cases() -> list[Case]:
    installed = ["Zoom Chrome Extension", "uBlock Origin"]
    return [
        Case("is_expected_installed_extensions", (installed, {"expected": ["Zoom for Google Chrome"]}), "an alias"),
        Case(
            "is_expected_installed_extensions",
            (installed, {"expected": ["uBlock Origin", "Dark Reader"]}),
            "one missing",
        ),
        Case("is_expected_installed_extensions", ([], {"expected": ["x"]}), "none installed"),
    ]


def cases(files: Files) -> list[Case]:
    return url_cases() + bookmark_cases() + extension_cases()
