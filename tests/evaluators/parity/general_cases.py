"""Cases for the general metrics: command output, text, JSON, YAML, CSV, sqlite, the a11y tree."""

from __future__ import annotations

import sqlite3
from typing import Any

import docx

from .cases import Case, Files

A11Y = """<desktop-frame xmlns:attr="https://accessibility.ubuntu.example.org/ns/attributes"
 xmlns:st="https://accessibility.ubuntu.example.org/ns/state" name="main">
 <application name="Thunderbird">
  <tool-bar attr:id="MsgHeadersToolbar"><label name="To">To</label>
   <section attr:class="address-pill"><label attr:class="pill-label" name="fox@someuniversity.edu">Fox</label></section>
  </tool-bar>
  <push-button name="Password settings" st:focused="true">Save</push-button>
  <text name="empty"></text>
 </application>
</desktop-frame>"""


def plain_value_cases() -> list[Case]:
    cases = []
    pairs: list[tuple[Any, Any]] = [
        ("true", "true"),
        ("true\n", "true"),
        ("Thomas ", "Thomas"),
        ("false", "true"),
        (None, "true"),
        ("", ""),
        (1, 1),
        ("1", 1),
        (True, "true"),
        ([1, 2], [1, 2]),
    ]
    for result, expected in pairs:
        cases.append(Case("exact_match", (result, {"expected": expected}), f"{result!r} vs {expected!r}"))
    accepted_lists: list[tuple[Any, Any]] = [
        ("light", ["light", "system"]),
        ("dark", ["light", "system"]),
        ("Bing\n", ["Bing"]),
        ("Bing", "Microsoft Bing"),
        (None, ["a"]),
        ("", [""]),
    ]
    for result, accepted in accepted_lists:
        cases.append(Case("match_in_list", (result, {"expected": accepted}), f"{result!r} in {accepted!r}"))
    for result, wanted in [
        (["/home/user/Desktop/helloExtension", "/x"], "/home/user/Desktop/helloExtension"),
        (["/x"], "/home/user/Desktop/helloExtension"),
        ("/a/helloExtension/b", "helloExtension"),
        ([], "a"),
    ]:
        cases.append(Case("is_in_list", (result, {"expected": wanted}), f"{wanted!r} in {result!r}"))
    for result, rules in [
        ("a b c", {"include": ["a", "b"], "exclude": ["d"]}),
        ("a b d", {"include": ["a"], "exclude": ["d"]}),
        ("", {"include": []}),
        ("true\n", {"include": ["true"]}),
        (None, {"include": ["a"]}),
        ("x", {"exclude": ["y"]}),
        ("project", {"include": ["proj"], "exclude": []}),
    ]:
        cases.append(Case("check_include_exclude", (result, rules), f"{result!r} {rules!r}"))
    for result, expected, options in [
        (["Tianbao Xie", "1000"], ["tianbao xie", "1000"], {"type": "list", "ignore_case": True}),
        (["Tianbao Xie", 1000], ["Tianbao Xie", "1000"], {"type": "list", "ignore_case": True}),
        (("a",), ["a"], {"type": "list", "ignore_case": False}),
        (["a", "b"], ["a"], {"type": "list", "ignore_case": True}),
        ("abc", "ABC", {"ignore_case": True, "type": "str"}),
        ("abc", "ABC", {}),
        (12, "12", {}),
        ("a", ["a"], {"type": "list", "ignore_case": True}),
    ]:
        cases.append(Case("literal_match", (result, expected), f"{result!r} vs {expected!r} {options}", options))
    for result, expected in [("kitten", "sitting"), ("same", "same"), ("", "abc")]:
        cases.append(Case("fuzzy_match", (result, {"expected": expected}), f"{result!r} ~ {expected!r}"))
    return cases


def json_object_cases() -> list[Case]:
    expected = {"locationName": "Zürich", "filterCriteria_carCategory": "large"}
    cases = [
        Case(
            "check_direct_json_object",
            ({"locationName": "Zürich", "filterCriteria_carCategory": "large", "x": 1}, {"expected": expected}),
            "equal keys, extra key in the result",
        ),
        Case(
            "check_direct_json_object",
            ({"locationName": "Zurich", "filterCriteria_carCategory": "large"}, {"expected": expected}),
            "one value differs",
        ),
        Case(
            "check_direct_json_object",
            ("{'mens_clothing': True, 'size': 'L'}", {"expected": {"mens_clothing": True, "size": "L"}}),
            "python-literal text",
        ),
        Case("check_direct_json_object", ('{"a": true, "b": "L"}', {"expected": {"a": True, "b": "L"}}), "JSON text"),
        Case("check_direct_json_object", ("{'q': \"it's\"}", {"expected": {"q": "it's"}}), "an apostrophe in a value"),
        Case("check_direct_json_object", (None, {"expected": {"a": 1}}), "no result"),
        Case(
            "check_direct_json_object",
            ({"a": "x"}, {"expected": {"a": "__EVALUATION_FAILED__"}}),
            "failed relative time",
        ),
        Case(
            "check_direct_json_object",
            ({"a": ["x", "y"]}, {"expected": {"a": ["y", "x"]}, "ignore_list_order": True}),
            "ignore_list_order beside expected (chrome/f5d96daf)",
        ),
        Case(
            "check_direct_json_object",
            ({"a": ["x", "y"]}, {"expected": {"a": ["y", "x"], "ignore_list_order": True}}),
            "ignore_list_order inside expected",
        ),
        Case(
            "check_direct_json_object",
            ({"a": ["x", "y"], "ignore_list_order": True}, {"expected": {"a": ["x", "y"], "ignore_list_order": True}}),
            "ignore_list_order inside expected, the result has the key",
        ),
        Case(
            "check_direct_json_object",
            ({"q": "best pizza near me"}, {"expected": {"q": "pizza"}, "expect_in_result": True}),
            "expect_in_result: substring",
        ),
        Case(
            "check_direct_json_object",
            ({"q": "pasta"}, {"expected": {"q": "pizza"}, "expect_in_result": True}),
            "expect_in_result: no substring",
        ),
        Case(
            "check_direct_json_object",
            ({"q": ["a", "b"]}, {"expected": {"q": ["b", "c"]}, "expect_in_result": True}),
            "expect_in_result: one of a list in a list",
        ),
        Case(
            "check_direct_json_object",
            ({"q": "b"}, {"expected": {"q": ["b", "c"]}, "expect_in_result": True}),
            "expect_in_result: one of a list equal to a string",
        ),
        Case(
            "check_direct_json_object",
            ({"q": True}, {"expected": {"q": True}, "expect_in_result": True}),
            "expect_in_result: a boolean",
        ),
        Case(
            "check_direct_json_object",
            ({"q": None}, {"expected": {"q": "x"}, "expect_in_result": True}),
            "expect_in_result: a missing value",
        ),
        Case(
            "check_direct_json_object",
            ({"q": 3}, {"expected": {"q": ["3"]}, "expect_in_result": True}),
            "expect_in_result: a number against a list",
        ),
        Case("check_direct_json_object", ({"a": 1}, {"expected": {}}), "nothing expected"),
        Case("check_direct_json_object", ("not json", {"expected": {"a": 1}}), "text that is not JSON"),
    ]
    return cases


def text_file_cases(files: Files) -> list[Case]:
    cases = []
    out = files.text(
        "org.gnome.Nautilus.Org.gnome.Nautilus  OSWorld\n"
        "gnome-terminal-server.Gnome-terminal ~/Documents/Projects/OSWorld\n"
    )
    for rules in [
        {
            "expect": [
                r"\borg\.gnome\.Nautilus\.Org\.gnome\.Nautilus\b.*\bOSWorld\b",
                r"gnome-terminal-server\.Gnome-terminal\b.*~/Documents/Projects/OSWorld\b",
            ]
        },
        {"expect": ["^gnome"], "unexpect": ["firefox"]},
        {"unexpect": [".+"]},
        {"expect": ["OSWorld\\n"]},
        {"expect": ["OSWorld$"]},
        {"expect": ["absent"]},
    ]:
        cases.append(Case("check_list", (out, rules), f"wmctrl lines {rules}"))
    empty = files.text("")
    cases.append(Case("check_list", (empty, {"unexpect": [".+"]}), "an empty diff"))
    cases.append(Case("check_list", (files.text("\n"), {"unexpect": [".+"]}), "a diff of one empty line"))
    cases.append(Case("check_list", (None, {"unexpect": [".+"]}), "no file"))
    cases.append(Case("check_list", (files.text("a\r\nb\r\n"), {"expect": ["^a$"]}), "CRLF lines"))

    report = files.text(
        "Linux 6.1\n\n12:00:01 AM CPU %user %nice %system %iowait %steal %idle\n"
        + "".join(f"12:00:{i:02d} AM all 1.0 0.0 0.5 0.0 0.0 98.5\n" for i in range(2, 32))
    )
    cases.append(Case("file_contains", (report, {"expected": ["CPU", "%user", "%idle"]}), "all strings"))
    cases.append(Case("file_contains", (report, {"expected": ["CPU", "Ping"]}), "one missing"))
    cases.append(Case("file_contains", (None, {"expected": ["CPU"]}), "no file"))
    cases.append(Case("check_line_number", (report, {"expected": "31"}), "31 timed lines"))
    cases.append(Case("check_line_number", (report, {"expected": "30"}), "not 30"))
    cases.append(Case("check_line_number", (files.path(".txt"), {"expected": "1"}), "a missing file"))

    a = files.text("line one\nline two\nline three\n")
    b = files.text("line one\nline 2\nline three\n")
    cases.append(Case("diff_text_file", (a, b), "one line of three differs"))
    cases.append(Case("diff_text_file", (a, a), "the same file"))
    cases.append(Case("diff_text_file", (None, a), "no result"))
    cases.append(Case("diff_text_file", (files.text("x\r\ny"), files.text("x\ny\n")), "CRLF against LF"))

    term = "total 0\nfile.txt\n"
    cases.append(Case("compare_terminal_and_txt", (files.text(term), term), "the same output"))
    cases.append(Case("compare_terminal_and_txt", (files.text(term.rstrip()), term), "a missing newline"))
    cases.append(Case("compare_terminal_and_txt", (files.text(term), ""), "no terminal output"))

    py_gold = files.text("#!/usr/bin/env python3\ndef f(x):\n    return x + 1\n\nprint(f(1))\n", ".py")
    for label, text in [
        (
            "the same code, another header and blank lines",
            "# coding: utf-8\n\ndef f(x):\n\treturn x + 1\nprint(f(1))  \n",
        ),
        ("a markdown fence", "```python\ndef f(x):\n    return x + 1\nprint(f(1))\n```\n"),
        ("other code", "def f(x):\n    return x + 2\nprint(f(1))\n"),
    ]:
        cases.append(Case("compare_python_pure_text", (files.text(text, ".py"), py_gold), label))
    return cases


def structured_file_cases(files: Files) -> list[Case]:
    cases = []
    manifest = files.json(
        {
            "name": "happy-extension",
            "version": "0.0.1",
            "background": {"scripts": ["background_script.js"]},
            "n": 3,
            "s": "Hello World",
        }
    )
    for label, rules in [
        (
            "eq on nested keys",
            {
                "expect": [
                    {"key": ["name"], "method": "eq", "ref": "happy-extension"},
                    {"key": ["background", "scripts"], "method": "eq", "ref": ["background_script.js"]},
                ]
            },
        ),
        ("a missing key", {"expect": [{"key": ["nothing"], "method": "eq", "ref": 1}]}),
        ("a regex with flags", {"expect": [{"key": ["s"], "method": "re.I", "ref": "hello"}]}),
        ("a regex on a number", {"expect": [{"key": ["n"], "method": "re", "ref": "3"}]}),
        ("approx", {"expect": [{"key": ["n"], "method": "approx:0.5", "ref": 3.2}]}),
        ("range", {"expect": [{"key": ["n"], "method": "range.te", "ref": [2, 3]}]}),
        ("lt on a string", {"expect": [{"key": ["s"], "method": "lt", "ref": 3}]}),
        ("unexpect of a missing key", {"unexpect": [{"key": ["gone"], "method": "eq", "ref": None}]}),
        ("unexpect that holds", {"unexpect": [{"key": ["n"], "method": "eq", "ref": 3}]}),
        ("str_set_eq", {"expect": [{"key": ["s"], "method": "str_set_eq", "ref": ["Hello World"]}]}),
        ("indexing into a string", {"expect": [{"key": ["s", 0], "method": "eq", "ref": "H"}]}),
    ]:
        cases.append(Case("check_json", (manifest, rules), label))
    cases.append(
        Case(
            "check_json",
            (files.text('{"a": 1,}'), {"expect": [{"key": ["a"], "method": "eq", "ref": 1}]}),
            "a trailing comma",
        )
    )
    cases.append(Case("check_json", (files.path(".json"), {"expect": []}), "a missing file"))
    yaml_file = files.text("name: Test Account\nauthor:\n  name: Test Account\n  email: Test@gmail.com\n", ".yml")
    yaml_rules = {
        "expect": [
            {"key": ["name"], "method": "eq", "ref": "Test Account"},
            {"key": ["author", "email"], "method": "eq", "ref": "Test@gmail.com"},
        ]
    }
    cases.append(Case("check_json", (yaml_file, yaml_rules), "YAML config", {"is_yaml": True}))
    cases.append(Case("check_json", (files.text("", ".yml"), yaml_rules), "an empty YAML file", {"is_yaml": True}))
    cases.append(Case("check_json", (files.text("a: [1,\n", ".yml"), yaml_rules), "broken YAML", {"is_yaml": True}))

    accounts = files.text(
        "url,user\nimap://outlook.office365.com,anonym-x2024@outlook.com\nimap://x.org,me@x.org\n", ".csv"
    )
    for label, rules in [
        (
            "an unexpected account",
            {"unexpect": [{"url": "imap://outlook.office365.com", "user": "anonym-x2024@outlook.com"}]},
        ),
        ("an expected account", {"expect": [{"user": "me@x.org"}]}),
        ("a missing column", {"expect": [{"nothing": "x"}]}),
        ("no rules", {}),
    ]:
        cases.append(Case("check_csv", (accounts, rules), label))
    cases.append(
        Case("check_csv", (files.text('a,b\n"x\ny",2\n', ".csv"), {"expect": [{"a": "x\ny"}]}), "a quoted newline")
    )

    gold = files.json({"a": 1, "b": [1, 2]})
    cases.append(Case("is_included_all_json_objects", (gold, files.json({"a": 1, "b": [1, 2], "c": 3})), "a superset"))
    cases.append(Case("is_included_all_json_objects", (gold, files.json({"a": 1, "b": [2, 1]})), "a list reordered"))

    db = files.path(".sqlite")
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE messages (id INTEGER, folderID INTEGER)")
        connection.executemany("INSERT INTO messages VALUES (?, ?)", [(1, 13), (2, 13), (3, 4)])
    for label, sql in [
        ("a true comparison", "SELECT COUNT(*) = 2 FROM messages WHERE folderID = 13"),
        ("a false comparison", "SELECT COUNT(*) = 3 FROM messages WHERE folderID = 13"),
        ("a NULL", "SELECT NULL"),
        ("a count above 1", "SELECT COUNT(*) FROM messages"),
    ]:
        cases.append(Case("run_sqlite3", (db, {"sql": sql}), label))

    places = files.path(".docx")
    document = docx.Document()
    for word in ["Shenzhen", "Futian", "Nanshan"]:
        document.add_paragraph(word)
    document.save(places)
    accepted = {"expected": ["Shenzhen", "Futian", "Luohu"]}
    cases.append(Case("fuzzy_place_math", (places, accepted), "three places, two accepted"))
    two = files.path(".docx")
    document = docx.Document()
    document.add_paragraph("Shenzhen Futian")
    document.save(two)
    cases.append(Case("fuzzy_place_math", (two, accepted), "two words"))
    return cases


def accessibility_cases() -> list[Case]:
    rules_sets = [
        (
            "a CSS selector that matches",
            [
                {
                    "selectors": [
                        'tool-bar[attr|id=MsgHeadersToolbar] label[name=To]~[attr|class="address-pill"]'
                        '>label[attr|class="pill-label"][name*="fox@someuniversity.edu"]'
                    ]
                }
            ],
        ),
        ("an XPath that matches", [{"xpath": "//application[@name='Thunderbird']//*[contains(@name, 'Password')]"}]),
        ("an XPath that matches nothing", [{"xpath": "//application[@name='Chrome']"}]),
        ("exact text", [{"xpath": "//push-button", "text": "Save", "exact": True}]),
        ("fuzzy text", [{"xpath": "//push-button", "text": "Sav", "exact": False}]),
        ("exact text that differs", [{"xpath": "//push-button", "text": "Cancel", "exact": True}]),
        ("empty text", [{"xpath": "//text", "text": "", "exact": True}]),
    ]
    return [Case("check_accessibility_tree", (A11Y, rules), label) for label, rules in rules_sets]


def cases(files: Files) -> list[Case]:
    return (
        plain_value_cases()
        + json_object_cases()
        + text_file_cases(files)
        + structured_file_cases(files)
        + accessibility_cases()
    )
