"""General-purpose metrics, on the value and file shapes OSWorld's task files give them."""
from __future__ import annotations

import datetime
import html
import json
import sqlite3

import docx
import pytest

from desktop_env.a11y_namespaces import xmlns_declarations
from desktop_env.evaluators.fixes import evaluator_fixes
from desktop_env.evaluators.metrics import (
    general,
    infeasible,  # noqa: F401  (registers it)
)
from desktop_env.evaluators.metrics.general import (
    check_accessibility_tree,
    check_csv,
    check_direct_json_object,
    check_include_exclude,
    check_json,
    check_line_number,
    check_list,
    compare_python_pure_text,
    compare_terminal_and_txt,
    compare_time_in_speedtest_results,
    diff_text_file,
    exact_match,
    file_contains,
    fuzzy_match,
    fuzzy_place_math,
    is_in_list,
    is_included_all_json_objects,
    literal_match,
    match_in_list,
    match_value_to_rule,
    run_sqlite3,
)
from desktop_env.evaluators.registry import get_metric
from desktop_env.evaluators.scoring import EvaluationError


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# -- plain values ------------------------------------------------------------------------------

def test_exact_match_compares_command_output_with_the_expected_text():
    assert exact_match("uint32 0\n", {"expected": "uint32 0\n"}).score == 1.0
    assert exact_match("uint32 300\n", {"expected": "uint32 0\n"}).score == 0.0
    assert exact_match(None, {"expected": "true\n"}).score == 0.0


def test_exact_match_is_plain_equality_as_in_osworld():
    assert exact_match("File exists.", {"expected": "File exists.\n"}).score == 0.0
    assert exact_match("File exists.", {"expected": "File exists."}).score == 1.0


def test_exact_match_says_when_only_trailing_whitespace_differs_where_clipping_hides_it():
    listing = "[('layout.png', '1e85')]" * 10
    missed = exact_match(listing + "\n", {"expected": listing})
    assert missed.score == 0.0
    assert "differ only in trailing whitespace ('\\n' vs '')" in missed.explanation
    assert "trailing" not in exact_match("a\n", {"expected": "b"}).explanation


def test_exact_match_with_the_evaluator_fixes_ignores_only_trailing_whitespace():
    with evaluator_fixes():
        assert exact_match("File exists.", {"expected": "File exists.\n"}).score == 1.0
        assert exact_match(" File exists.", {"expected": "File exists.\n"}).score == 0.0


def test_match_in_list_accepts_any_listed_value():
    rules = {"expected": ["Microsoft Bing", "Bing"]}
    assert match_in_list("Bing", rules).score == 1.0
    assert match_in_list("Google", rules).score == 0.0
    assert match_in_list(None, rules).score == 0.0


def test_is_in_list_looks_for_the_expected_value_in_the_result():
    rules = {"expected": "/home/user/Desktop/helloExtension"}
    assert is_in_list(["/opt/other", "/home/user/Desktop/helloExtension"], rules).score == 1.0
    assert is_in_list(["/opt/other"], rules).score == 0.0
    assert is_in_list(None, rules).score == 0.0
    assert is_in_list(42, rules).score == 0.0


def test_literal_match_compares_lists_of_strings_with_ignore_case():
    row = ["Yann LeCun", 345074, "147"]
    assert literal_match(row, ["yann lecun", "345074", "147"], type="list", ignore_case=True).score == 1.0
    assert literal_match(row, ["yann lecun", "345074", "147"], type="list").score == 0.0
    assert literal_match(row, ["Yann LeCun", "345074"], type="list").score == 0.0
    assert literal_match(None, ["Yann LeCun"], type="list").score == 0.0


def test_literal_match_compares_strings_by_default():
    assert literal_match(3, "3").score == 1.0
    assert literal_match("Abc", "abc").score == 0.0
    assert literal_match("Abc", "abc", ignore_case=True).score == 1.0


def test_literal_match_rejects_an_unknown_type_option():
    with pytest.raises(ValueError, match="type"):
        literal_match("a", "a", type="dict")


def test_fuzzy_match_is_a_similarity_ratio():
    assert fuzzy_match("Thomas", {"expected": "Thomas"}).score == 1.0
    assert 0.0 < fuzzy_match("Tomas", {"expected": "Thomas"}).score < 1.0
    assert fuzzy_match("xyz", {"expected": "Thomas"}).score == 0.0
    assert fuzzy_match(None, {"expected": "Thomas"}).score == 0.0


def test_check_include_exclude_needs_all_includes_and_no_excludes():
    rules = {"include": ["catch the desired command"], "exclude": ["failed to complete this task"]}
    assert check_include_exclude("catch the desired command\n", rules).score == 1.0
    assert check_include_exclude("failed to complete this task\n", rules).score == 0.0
    assert check_include_exclude(None, rules).score == 0.0


def test_check_include_exclude_with_only_an_exclude_list():
    rules = {"include": [], "exclude": ["Error:"]}
    assert check_include_exclude("", rules).score == 1.0
    assert check_include_exclude("ModuleNotFoundError: No module named 'InstructorEmbedding'", rules).score == 0.0


# -- JSON objects from getters -----------------------------------------------------------------

def test_check_direct_json_object_compares_every_expected_key():
    rules = {"expected": {"list_price_max": "50000", "zip": "10001", "fuel_slugs[]": "electric"}}
    parsed_url = {"list_price_max": "50000", "zip": "10001", "fuel_slugs[]": "electric", "page": "1"}
    assert check_direct_json_object(parsed_url, rules).score == 1.0
    assert check_direct_json_object({**parsed_url, "zip": "10002"}, rules).score == 0.0
    assert check_direct_json_object({"zip": "10001"}, rules).score == 0.0
    assert check_direct_json_object(None, rules).score == 0.0


def test_check_direct_json_object_with_boolean_flags_from_a_page():
    rules = {"expected": {"Black": True, "$25 - $60": True, "On sale": True, "is_other_exist": False}}
    assert check_direct_json_object({"Black": True, "$25 - $60": True, "On sale": True, "is_other_exist": False},
                                    rules).score == 1.0
    assert check_direct_json_object({"Black": True, "$25 - $60": True, "On sale": True, "is_other_exist": True},
                                    rules).score == 0.0


def test_check_direct_json_object_with_relative_time_rules_as_the_getter_fills_them():
    # rule_relativeTime returns the task's rules with the dates put into "expected".
    rules = {"relativeTime": {"from": "next Monday"}, "expect_in_result": True,
             "expected": {"fromStation": ["BOM"], "toStation": ["STO", "ARN"], "time": ["2024-06-03"]}}
    to_stockholm = {"fromStation": "BOM", "toStation": "ARN", "time": "2024-06-03"}
    assert check_direct_json_object(to_stockholm, rules).score == 1.0
    to_copenhagen = {"fromStation": "BOM", "toStation": "CPH", "time": "2024-06-03"}
    assert check_direct_json_object(to_copenhagen, rules).score == 0.0


def test_check_direct_json_object_expect_in_result_takes_substrings_and_list_members():
    rules = {"expected": {"q": "drip coffee maker"}, "expect_in_result": True}
    assert check_direct_json_object({"q": "best drip coffee maker 2024"}, rules).score == 1.0
    assert check_direct_json_object({"q": "espresso machine"}, rules).score == 0.0
    assert check_direct_json_object({}, rules).score == 0.0
    listed = {"expected": {"tags": ["a", "z"]}, "expect_in_result": True}
    assert check_direct_json_object({"tags": ["x", "z"]}, listed).score == 1.0


def test_check_direct_json_object_scores_0_when_the_relative_time_getter_failed():
    rules = {"expected": {"time": "__EVALUATION_FAILED__"}}
    assert check_direct_json_object({"time": "__EVALUATION_FAILED__"}, rules).score == 0.0


def test_check_direct_json_object_parses_a_string_result():
    rules = {"expected": {"time": "june-weather"}}
    assert check_direct_json_object('{"time": "june-weather"}', rules).score == 1.0
    assert check_direct_json_object("{'time': 'june-weather'}", rules).score == 1.0
    assert check_direct_json_object("not an object", rules).score == 0.0


def test_check_direct_json_object_ignore_list_order():
    beside = {"expected": {"k": ["a", "b"]}, "ignore_list_order": True}
    inside = {"expected": {"k": ["a", "b"], "ignore_list_order": True}}
    assert check_direct_json_object({"k": ["b", "a"]}, {"expected": {"k": ["a", "b"]}}).score == 0.0
    # OSWorld reads the flag only inside `expected`, where it then fails on sorting its own value.
    assert check_direct_json_object({"k": ["b", "a"]}, beside).score == 0.0
    assert check_direct_json_object({"k": ["b", "a"]}, inside).score == 0.0
    with evaluator_fixes():
        assert check_direct_json_object({"k": ["b", "a"]}, beside).score == 1.0
        assert check_direct_json_object({"k": ["b", "a"]}, inside).score == 1.0


def test_is_included_all_json_objects(tmp_path):
    small = write(tmp_path, "small.json", json.dumps({"name": "Ada", "id": 7}))
    large = write(tmp_path, "large.json", json.dumps({"name": "Ada", "id": 7, "city": "London"}))
    other = write(tmp_path, "other.json", json.dumps({"name": "Ada", "id": 8}))
    assert is_included_all_json_objects(small, large).score == 1.0
    assert is_included_all_json_objects(small, other).score == 0.0
    assert is_included_all_json_objects(None, large).score == 0.0
    assert is_included_all_json_objects(write(tmp_path, "bad.json", "{oops"), large).score == 0.0


# -- text files --------------------------------------------------------------------------------

def test_diff_text_file_is_the_line_similarity(tmp_path):
    gold = write(tmp_path, "gold.js", "function a() {\n  return 1;\n}\n")
    assert diff_text_file(write(tmp_path, "same.js", "function a() {\n  return 1;\n}\n"), gold).score == 1.0
    partial = diff_text_file(write(tmp_path, "edited.js", "function a() {\n  return 2;\n}\n"), gold)
    assert 0.5 < partial.score < 1.0
    assert diff_text_file(str(tmp_path / "missing.js"), gold).score == 0.0
    assert diff_text_file(None, gold).score == 0.0


SAR_REPORT = """Linux 6.5.0 (osworld)   01/25/2024  _x86_64_  (4 CPU)

12:00:01 PM     CPU     %user     %nice   %system   %iowait    %steal     %idle
12:00:02 PM     all      2.01      0.00      1.00      0.00      0.00     96.99
12:00:03 PM     all      1.50      0.00      0.75      0.00      0.00     97.75
Average:        all      1.75      0.00      0.88      0.00      0.00     97.37
"""


def test_file_contains_needs_every_string(tmp_path):
    report = write(tmp_path, "System_Resources_Report.txt", SAR_REPORT)
    rules = {"expected": ["CPU", "%user", "%nice", "%system", "%iowait", "%steal", "%idle"]}
    assert file_contains(report, rules).score == 1.0
    assert file_contains(write(tmp_path, "free.txt", "Mem: 16G total"), rules).score == 0.0
    assert file_contains(None, rules).score == 0.0


def test_check_line_number_counts_timestamped_lines(tmp_path):
    report = write(tmp_path, "report.txt", SAR_REPORT)
    assert check_line_number(report, {"expected": "3"}).score == 1.0
    assert check_line_number(report, {"expected": "31"}).score == 0.0
    assert check_line_number(str(tmp_path / "missing.txt"), {"expected": "3"}).score == 0.0


def test_compare_terminal_and_txt(tmp_path):
    saved = write(tmp_path, "output.txt", "hello world\n")
    assert compare_terminal_and_txt(saved, "hello world\n").score == 1.0
    assert compare_terminal_and_txt(saved, "goodbye\n").score == 0.0
    assert compare_terminal_and_txt(saved, None).score == 0.0
    assert compare_terminal_and_txt(None, "hello world\n").score == 0.0


def test_compare_python_pure_text_ignores_headers_blank_lines_and_tabs(tmp_path):
    gold = write(tmp_path, "gold.py", "import torch\n\ndef f(x):\n    return x * 2\n")
    agent = write(tmp_path, "agent.py", "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\nimport torch\n\n\n"
                                        "def f(x):\n\treturn x * 2   \n")
    with_fence = write(tmp_path, "fenced.py", "```python\nimport torch\n\ndef f(x):\n    return x * 2\n```\n")
    assert compare_python_pure_text(agent, gold).score == 1.0
    assert compare_python_pure_text(with_fence, gold).score == 0.0
    assert compare_python_pure_text(None, gold).score == 0.0


def test_check_list_matches_regexes_against_lines(tmp_path):
    wmctrl = write(tmp_path, "wmctrl.out",
                   "0x01 0 org.gnome.Nautilus.Org.gnome.Nautilus osworld OSWorld\n"
                   "0x02 0 gnome-terminal-server.Gnome-terminal osworld user@osworld: ~/Documents/Projects/OSWorld\n")
    rules = {"expect": [r"\borg\.gnome\.Nautilus\.Org\.gnome\.Nautilus\b.*\bOSWorld\b",
                        r"gnome-terminal-server\.Gnome-terminal\b.*~/Documents/Projects/OSWorld\b"]}
    assert check_list(wmctrl, rules).score == 1.0
    firefox_only = write(tmp_path, "none.out", "0x03 0 firefox.Firefox osworld Mozilla Firefox\n")
    assert check_list(firefox_only, rules).score == 0.0
    assert check_list(None, rules).score == 0.0


def test_check_list_unexpect_any_line_means_the_diff_must_be_empty(tmp_path):
    rules = {"unexpect": [".+"]}
    assert check_list(write(tmp_path, "diff.out", ""), rules).score == 1.0
    assert check_list(write(tmp_path, "diff2.out", "< old line\n> new line\n"), rules).score == 0.0


def test_check_csv_expect_and_unexpect_records(tmp_path):
    accounts = write(tmp_path, "thunderbird-accounts.csv",
                     "url,user\nimap://imap.gmail.com,someone@gmail.com\n")
    rules = {"unexpect": [{"url": "imap://outlook.office365.com", "user": "anonym-x2024@outlook.com"}]}
    assert check_csv(accounts, rules).score == 1.0
    still_there = write(tmp_path, "accounts2.csv",
                        "url,user\nimap://outlook.office365.com,anonym-x2024@outlook.com\n")
    assert check_csv(still_there, rules).score == 0.0
    assert check_csv(accounts, {"expect": [{"url": "imap://imap.gmail.com"}]}).score == 1.0
    assert check_csv(accounts, {"expect": [{"url": "pop3://pop.gmail.com"}]}).score == 0.0
    assert check_csv(None, rules).score == 0.0


MANIFEST_RULES = {"expect": [
    {"key": ["name"], "method": "eq", "ref": "happy-extension"},
    {"key": ["version"], "method": "eq", "ref": "0.0.1"},
    {"key": ["background", "scripts"], "method": "eq", "ref": ["background_script.js"]},
    {"key": ["browser_action", "default_icon"], "method": "eq", "ref": {"64": "icons/icon.png"}},
]}


def test_check_json_follows_key_paths(tmp_path):
    manifest = {"name": "happy-extension", "version": "0.0.1", "manifest_version": 2,
                "background": {"scripts": ["background_script.js"]},
                "browser_action": {"default_icon": {"64": "icons/icon.png"}}}
    assert check_json(write(tmp_path, "manifest.json", json.dumps(manifest, indent=2)), MANIFEST_RULES).score == 1.0
    other_version = write(tmp_path, "v2.json", json.dumps({**manifest, "version": "0.0.2"}))
    assert check_json(other_version, MANIFEST_RULES).score == 0.0
    no_background = {k: v for k, v in manifest.items() if k != "background"}
    assert check_json(write(tmp_path, "nobg.json", json.dumps(no_background)), MANIFEST_RULES).score == 0.0
    assert check_json(write(tmp_path, "broken.json", '{"name": '), MANIFEST_RULES).score == 0.0
    assert check_json(None, MANIFEST_RULES).score == 0.0


def test_check_json_reads_yaml_with_is_yaml(tmp_path):
    config = write(tmp_path, "_config.yaml", "title: Site\nname: Test Account\nauthor:\n  name: Test Account\n"
                                             "  email: Test@gmail.com\n")
    rules = {"expect": [{"key": ["name"], "method": "eq", "ref": "Test Account"},
                        {"key": ["author", "email"], "method": "eq", "ref": "Test@gmail.com"}]}
    assert check_json(config, rules, is_yaml=True).score == 1.0
    assert check_json(config, rules).score == 0.0  # it is not JSON
    old = write(tmp_path, "old.yaml", "name: Your Name\nauthor:\n  email: x\n")
    assert check_json(old, rules, is_yaml=True).score == 0.0


def test_check_json_regex_rule_and_unexpect(tmp_path):
    xulstore = write(tmp_path, "xulstore.json", json.dumps(
        {"chrome://messenger/content/messenger.xhtml": {"folderTree": {"mode": "smart,favorite"}}}))
    rules = {"expect": [{"key": ["chrome://messenger/content/messenger.xhtml", "folderTree", "mode"],
                         "method": "re", "ref": r"\bsmart\b"}]}
    assert check_json(xulstore, rules).score == 1.0
    assert check_json(xulstore, {"unexpect": rules["expect"]}).score == 0.0
    # OSWorld matches a missing key as None, and its regex then raises: the metric scores 0; our fix reads no match
    absent = {"unexpect": [{"key": ["absent"], "method": "re", "ref": "x"}]}
    assert check_json(xulstore, absent).score == 0.0
    with evaluator_fixes():
        assert check_json(xulstore, absent).score == 1.0


@pytest.mark.parametrize("value, rule, matches", [
    (3.14, {"method": "approx:0.01", "ref": 3.141}, True),
    ("3.3", {"method": "approx:0.01", "ref": 3.141}, False),
    (2, {"method": "range.te", "ref": [0, 2]}, True),
    (0, {"method": "range.te", "ref": [0, 2]}, False),
    ('"a,b"', {"method": "str_set_eq", "ref": ["b", "a"]}, True),
    ("a,b", {"method": "str_list_eq", "ref": ["b", "a"]}, False),
    ("Dark Theme", {"method": "re.I", "ref": "dark"}, True),
    ("Dark Theme", {"method": "re", "ref": "dark"}, False),
    (True, {"method": "re", "ref": "true"}, False),
    (None, {"method": "lt", "ref": 5}, False),
    (5, {"method": "ge", "ref": 5}, True),
])
def test_rule_methods(value, rule, matches):
    assert match_value_to_rule(value, rule) is matches


def test_an_unknown_rule_method_is_a_task_error():
    with pytest.raises(ValueError, match="unknown rule method"):
        match_value_to_rule(1, {"method": "roughly", "ref": 1})


# -- documents ---------------------------------------------------------------------------------

def make_docx(path, paragraphs: list[str]) -> str:
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    document.save(path)
    return str(path)


PLACES = ["深圳市福田区正义街1号", "深圳市福田区香梅路2002-4号", "福田区水围村龙景楼一楼", "深圳市福田区振兴路108号"]


def test_fuzzy_place_math_scores_three_listed_places(tmp_path):
    rules = {"expected": PLACES}
    assert fuzzy_place_math(make_docx(tmp_path / "a.docx", PLACES[:3]), rules).score == 1.0
    near = fuzzy_place_math(make_docx(tmp_path / "b.docx", PLACES[:2] + ["深圳市福田区香梅路2002号"]), rules)
    assert 0.9 < near.score < 1.0
    assert fuzzy_place_math(make_docx(tmp_path / "c.docx", PLACES[:2]), rules).score == 0.0
    assert fuzzy_place_math(None, rules).score == 0.0
    assert fuzzy_place_math(write(tmp_path, "d.docx", "plain text"), rules).score == 0.0


def test_compare_time_in_speedtest_results(tmp_path):
    now = datetime.datetime.now()
    header = "Server Name,Date,Download,Upload\n"
    fresh = write(tmp_path, "fresh.csv", header + f"Speedtest,{now:%Y-%m-%d %H:%M},120.5,40.1\n")
    stale_time = now - datetime.timedelta(hours=3)
    stale = write(tmp_path, "stale.csv", header + f"Speedtest,{stale_time:%Y-%m-%d %H:%M},120.5,40.1\n")
    assert compare_time_in_speedtest_results(fresh, 60).score == 1.0
    assert compare_time_in_speedtest_results(stale, 60).score == 0.0
    assert compare_time_in_speedtest_results(None, 60).score == 0.0
    assert compare_time_in_speedtest_results(write(tmp_path, "empty.csv", header), 60).score == 0.0


# -- sqlite ------------------------------------------------------------------------------------

ATTACHMENT_SQL = ("SELECT COALESCE((SELECT COUNT(*) FROM messageAttributes WHERE attributeID = 58 AND value = 1 "
                  "AND messageID IN (SELECT id FROM messages WHERE folderID = 13)), 0) = "
                  "(SELECT COUNT(*) FROM messages WHERE folderID = 13);")


def make_gloda(path, starred: list[int]) -> str:
    """A Thunderbird global-messages-db with 3 messages in folder 13; `starred` get attribute 58."""
    connection = sqlite3.connect(path)
    connection.executescript("CREATE TABLE messages (id INTEGER PRIMARY KEY, folderID INTEGER, subject TEXT);"
                             "CREATE TABLE messageAttributes (messageID INTEGER, attributeID INTEGER, value);")
    connection.executemany("INSERT INTO messages VALUES (?, 13, ?)", [(1, "a"), (2, "b"), (3, "c")])
    connection.executemany("INSERT INTO messageAttributes VALUES (?, 58, 1)", [(i,) for i in starred])
    connection.commit()
    connection.close()
    return str(path)


def test_run_sqlite3_scores_the_query_result(tmp_path):
    rules = {"sql": ATTACHMENT_SQL}
    assert run_sqlite3(make_gloda(tmp_path / "all.sqlite", [1, 2, 3]), rules).score == 1.0
    assert run_sqlite3(make_gloda(tmp_path / "some.sqlite", [1]), rules).score == 0.0


def test_run_sqlite3_missing_or_broken_database_scores_0(tmp_path):
    missing = tmp_path / "global-messages-db.sqlite"
    assert run_sqlite3(str(missing), {"sql": ATTACHMENT_SQL}).score == 0.0
    assert not missing.exists()  # no empty database was created
    assert run_sqlite3(None, {"sql": ATTACHMENT_SQL}).score == 0.0
    assert run_sqlite3(write(tmp_path, "junk.sqlite", "not a database"), {"sql": ATTACHMENT_SQL}).score == 0.0
    empty = sqlite3.connect(tmp_path / "empty.sqlite")
    empty.close()
    assert run_sqlite3(str(tmp_path / "empty.sqlite"), {"sql": ATTACHMENT_SQL}).score == 0.0  # no such table


# -- accessibility tree ------------------------------------------------------------------------

NS = xmlns_declarations("st", "attr", "cp")


def thunderbird_tree(recipients: list[str], tab: str = "Inbox") -> str:
    pills = "".join(
        f'<section attr:class="address-pill" st:showing="true">'
        f'<label attr:class="pill-label" name="{html.escape(r)}" cp:screencoord="(400, 300)" cp:size="(120, 20)"/>'
        '</section>'
        for r in recipients)
    return (f'<desktop-frame{NS} name="main">'
            f'<application name="Thunderbird"><frame name="{tab} - Mozilla Thunderbird" st:active="true">'
            f'<page-tab-list attr:id="tabmail-tabs"><page-tab name="{tab}" st:selected="true"/></page-tab-list>'
            f'<tool-bar attr:id="MsgHeadersToolbar"><label name="To">To</label>{pills}</tool-bar>'
            f'<label name="account">anonym-x2024@outlook.com</label><push-button name="Password Manager"/>'
            f'</frame></application></desktop-frame>')


def pill_rule(address: str) -> dict:
    return {"selectors": ['tool-bar[attr|id=MsgHeadersToolbar] label[name=To]~[attr|class="address-pill"]'
                          f'>label[attr|class="pill-label"][name*="{address}"]']}


def test_check_accessibility_tree_css_selectors_with_namespaced_attributes():
    rules = [pill_rule("fox@someuniversity.edu"), pill_rule("iron@someuniversity.edu")]
    tree = thunderbird_tree(["Fox <fox@someuniversity.edu>", "Iron <iron@someuniversity.edu>"])
    assert check_accessibility_tree(tree, rules).score == 1.0
    assert check_accessibility_tree(thunderbird_tree(["Fox <fox@someuniversity.edu>"]), rules).score == 0.0


def test_check_accessibility_tree_xpath():
    rules = [{"xpath": "//application[@name='Thunderbird']//*[contains(text(), 'anonym-x2024@outlook.com') "
                       "or contains(@name, 'anonym-x2024@outlook.com')]"},
             {"xpath": "//application[@name='Thunderbird']//*[contains(@name, 'password') "
                       "or contains(@name, 'Password')]"}]
    assert check_accessibility_tree(thunderbird_tree([]), rules).score == 1.0
    assert check_accessibility_tree(thunderbird_tree([]).replace("Password Manager", "Settings"), rules).score == 0.0


def test_check_accessibility_tree_selected_tab():
    rules = [{"selectors": ['application[name=Thunderbird] page-tab-list[attr|id="tabmail-tabs"]'
                            '>page-tab[name="About Profiles"]']}]
    assert check_accessibility_tree(thunderbird_tree([], tab="About Profiles"), rules).score == 1.0
    assert check_accessibility_tree(thunderbird_tree([], tab="Inbox"), rules).score == 0.0


def test_check_accessibility_tree_text_exact_and_fuzzy():
    tree = thunderbird_tree([])
    assert check_accessibility_tree(tree, [{"selectors": ["label[name=To]"], "text": "To"}]).score == 1.0
    assert check_accessibility_tree(tree, [{"selectors": ["label[name=To]"], "text": "Cc"}]).score == 0.0
    fuzzy = check_accessibility_tree(tree, [{"selectors": ["label[name=To]"], "text": "Tot", "exact": False}])
    assert 0.5 < fuzzy.score < 1.0


def test_check_accessibility_tree_without_a_tree_scores_0():
    rules = [{"selectors": ["label"]}]
    assert check_accessibility_tree(None, rules).score == 0.0
    assert check_accessibility_tree("", rules).score == 0.0
    assert check_accessibility_tree("<desktop-frame><unclosed>", rules).score == 0.0


def test_check_accessibility_tree_rule_without_selector_is_a_task_error():
    with pytest.raises(ValueError, match="xpath"):
        check_accessibility_tree(thunderbird_tree([]), [{"text": "To"}])


# -- registration ------------------------------------------------------------------------------

def test_metrics_register_under_osworld_names():
    assert get_metric("check_direct_json_object") is check_direct_json_object
    assert get_metric("run_sqlite3") is general.run_sqlite3


def test_infeasible_is_registered_but_never_scores_through_getters():
    with pytest.raises(EvaluationError, match="last action"):
        get_metric("infeasible")(None)
