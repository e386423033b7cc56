"""Every case where the parity test (test_osworld_parity.py, with an OSWorld checkout) found our metric's
verdict different from OSWorld's own: the same inputs, OSWorld's verdict as the default, and the verdict
of our fix where --evaluator-fixes has one. Runs without a checkout, so CI keeps these verdicts."""
from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path
from typing import Any

import docx
import openpyxl
import pypdf
import pytest

from desktop_env.evaluators.fixes import FIXES, evaluator_fixes
from desktop_env.evaluators.outcome import as_metric_result
from desktop_env.evaluators.registry import get_metric, load_builtins

A11Y = ('<desktop-frame xmlns:attr="https://accessibility.ubuntu.example.org/ns/attributes">'
        '<application name="Thunderbird"><text name="empty"></text></application></desktop-frame>')
BINDING = {"key": "ctrl+j", "command": "workbench.action.focusActiveEditorGroup", "when": "terminalFocus"}
THEME = {"expected": '{"workbench.colorTheme": "Visual Studio Dark"}\n'}



def fuzzy(cells: str, kind: str, sheets: tuple[str, str] = ("RNSheet1", "ENSheet1"), **options: Any) -> list[dict]:
    """compare_table's rules: one sheet_fuzzy rule over `cells` with match type `kind`."""
    return [{"type": "sheet_fuzzy", "sheet_idx0": sheets[0], "sheet_idx1": sheets[1],
             "rules": [{"range": [cells], "type": kind, **options}]}]


FUZZY_A1 = fuzzy("A1", "exact_match")

# (metric, what the case is, the inputs (a file as ("file", name, text)), options, OSWorld's verdict, ours with
# the evaluator fixes). OSWorld's verdict of a case where its function raised is 0: its run records no score.
CASES: list[tuple[str, str, tuple[Any, ...], dict[str, Any], float, float]] = [
    ("exact_match", "a trailing newline", ("true\n", {"expected": "true"}), {}, 0.0, 1.0),
    ("exact_match", "a trailing space", ("Thomas ", {"expected": "Thomas"}), {}, 0.0, 1.0),
    ("match_in_list", "a trailing newline", ("Bing\n", {"expected": ["Bing"]}), {}, 0.0, 1.0),
    ("match_in_list", "a substring of a string", ("Bing", {"expected": "Microsoft Bing"}), {}, 1.0, 0.0),
    ("check_direct_json_object", "Python-literal text (OSWorld raises)",
     ("{'mens_clothing': True, 'size': 'L'}", {"expected": {"mens_clothing": True, "size": "L"}}), {}, 0.0, 1.0),
    ("check_direct_json_object", "an apostrophe in a value (OSWorld raises)",
     ("{'q': \"it's\"}", {"expected": {"q": "it's"}}), {}, 0.0, 1.0),
    ("check_direct_json_object", "ignore_list_order beside expected (chrome/f5d96daf)",
     ({"a": ["x", "y"]}, {"expected": {"a": ["y", "x"]}, "ignore_list_order": True}), {}, 0.0, 1.0),
    ("check_direct_json_object", "ignore_list_order inside expected",
     ({"a": ["x", "y"], "ignore_list_order": True}, {"expected": {"a": ["x", "y"], "ignore_list_order": True}}),
     {}, 0.0, 1.0),
    ("check_direct_json_object", "expect_in_result with a boolean",
     ({"q": True}, {"expected": {"q": True}, "expect_in_result": True}), {}, 0.0, 1.0),
    ("check_list", "a pattern ending in a newline",
     (("file", "wmctrl.out", "a window of OSWorld\n"), {"expect": ["OSWorld\\n"]}), {}, 1.0, 1.0),
    ("compare_terminal_and_txt", "the file without the terminal's final newline",
     (("file", "out.txt", "total 0\nfile.txt"), "total 0\nfile.txt\n"), {}, 0.0, 0.0),
    ("check_csv", "a quoted field holding a newline",
     (("file", "a.csv", 'a,b\n"x\ny",2\n'), {"expect": [{"a": "x\ny"}]}), {}, 1.0, 1.0),
    ("run_sqlite3", "a count above 1", (("sqlite", "m.sqlite", "SELECT 3"), {"sql": "SELECT COUNT(*) FROM t"}),
     {}, 3.0, 1.0),
    ("check_accessibility_tree", "an empty node against an expected empty text",
     (A11Y, [{"xpath": "//text", "text": "", "exact": True}]), {}, 0.0, 0.0),
    ("check_json_settings", "a // comment",
     (("file", "settings.json", '// settings\n{"editor.wordWrapColumn": 50}'),
      {"expected": {"editor.wordWrapColumn": 50}}), {}, 0.0, 1.0),
    ("check_json_settings", "a trailing comma",
     (("file", "settings.json", '{"editor.wordWrapColumn": 50,\n}'), {"expected": {"editor.wordWrapColumn": 50}}),
     {}, 0.0, 1.0),
    ("check_json_keybindings", "a trailing comma",
     (("file", "keybindings.json", f"// keys\n[{json.dumps(BINDING)},\n]"), {"expected": BINDING}), {}, 0.0, 1.0),
    ("check_json_keybindings", "a comment inside the list",
     (("file", "keybindings.json", f"[\n// mine\n{json.dumps(BINDING)}]"), {"expected": BINDING}), {}, 0.0, 1.0),
    ("compare_config", "no options: the setting among others (containment is the default)",
     (("file", "settings.json", '{"workbench.colorTheme": "Visual Studio Dark", "a": 1}'), THEME), {}, 1.0, 1.0),
    ("compare_config", "no options: a settings file opening with a comment (a substring then)",
     (("file", "settings.json", '// mine\n{"workbench.colorTheme": "Visual Studio Dark"}'), THEME), {}, 1.0, 1.0),
    ("compare_config", "containment_ok: a trailing comma",
     (("file", "settings.json", '{"workbench.colorTheme": "Visual Studio Dark",}'), THEME),
     {"containment_ok": True}, 0.0, 1.0),
    ("compare_config", "no options: a path holding the expected word (vs_code/53ad5833)",
     (("file", "out.txt", "/home/user/project\n"), {"expected": "project"}), {}, 1.0, 1.0),
    ("is_expected_active_tab", "a rule type other than url",
     ({"url": "https://www.python.org/"}, {"type": "title", "url": "https://python.org"}), {}, 0.0, 0.0),
    ("is_expected_installed_extensions", "the Zoom extension under its other name",
     (["Zoom Chrome Extension", "uBlock Origin"], {"expected": ["Zoom for Google Chrome"]}), {}, 1.0, 1.0),
    ("check_thunderbird_folder", "other messages in a folder Thunderbird wrote (multi_apps/78aed49a, a0b9dc9c)",
     (("file", "Work", "From - Mon Jan 01 10:00:00 2024\nSubject: Three\n\nHi.\n"),
      ("file", "Work_gold", "From - Mon Jan 01 10:00:00 2024\nSubject: One\n\nHi.\n")),
     {"remove_deleted": True, "remove_duplicate": True}, 1.0, 0.0),
    ("compare_docx_files", "an .odt result against a .docx gold",
     (("odt-named-docx", "answer.odt", "Same text"), ("docx", "gold.docx", "Same text")), {}, 0.0, 1.0),
    ("is_expected_url_pattern_match", "one string: each character a regex, all found",
     ("https://shop.example/mesoh", {"expected": "homes"}), {}, 1.0, 0.0),
    ("is_expected_url_pattern_match", "one string holding a group (OSWorld raises on its '(')",
     ("https://www.python.org/", {"expected": "(www)"}), {}, 0.0, 1.0),
    ("compare_pdfs", "no result (None) against a gold PDF without text",
     (None, ("blank-pdf", "gold.pdf", "")), {}, 1.0, 0.0),
    ("check_json", "unexpect: an index past the end of a list (OSWorld raises, 0)",
     (("file", "prefs.json", '{"session": {"startup_urls": ["http://localhost:8000/"]}}'),
      {"unexpect": [{"key": ["session", "startup_urls", 1], "method": "re", "ref": "."}]}), {}, 0.0, 1.0),
    ("check_json", "unexpect: a missing key under a regex (OSWorld matches None, raises, 0)",
     (("file", "prefs.json", '{"session": {}}'),
      {"unexpect": [{"key": ["session", "homepage"], "method": "re", "ref": "example"}]}), {}, 0.0, 1.0),
    ("check_json", "unexpect: a missing key under eq (OSWorld compares None, no raise)",
     (("file", "prefs.json", '{"session": {}}'),
      {"unexpect": [{"key": ["session", "homepage"], "method": "eq", "ref": "x"}]}), {}, 1.0, 1.0),
    ("is_gold_text_included_in_pdf", "a gold value the PDF breaks across lines (EUR / 42,000)",
     (("pdf-lines", "minutes.pdf", ["approved at EUR", "42,000."]), ("file", "gold.json", '{"budget": "EUR 42,000"}')),
     {}, 0.0, 1.0),
    ("compare_table", "sheet_fuzzy: a number against the same digits as text (3.0 against 3)",
     (("xlsx", "result.xlsx", [[3]]), ("xlsx", "gold.xlsx", [["3"]])), {"rules": FUZZY_A1}, 0.0, 0.0),
    ("compare_table", "sheet_fuzzy: an empty cell against the text None",
     (("xlsx", "result.xlsx", [[None, "x"]]), ("xlsx", "gold.xlsx", [["None", "x"]])), {"rules": FUZZY_A1}, 1.0, 1.0),
    ("compare_table", "sheet_fuzzy: TRUE against FALSE (both read as None)",
     (("xlsx", "result.xlsx", [[True]]), ("xlsx", "gold.xlsx", [[False]])), {"rules": FUZZY_A1}, 1.0, 1.0),
    ("compare_table", "sheet_fuzzy includes: an empty gold cell in a result holding None",
     (("xlsx", "result.xlsx", [["None of these"]]), ("xlsx", "gold.xlsx", [[None, "x"]])),
     {"rules": fuzzy("A1", "includes")}, 1.0, 1.0),
    ("compare_table", "sheet_fuzzy: a sheet neither book has",
     (("xlsx", "result.xlsx", [["a"]]), ("xlsx", "gold.xlsx", [["b"]])),
     {"rules": fuzzy("A1", "exact_match", sheets=("RNNone", "ENNone"))}, 1.0, 1.0),
    ("compare_table", "sheet_fuzzy: a formula openpyxl saved without its value (OSWorld raises)",
     (("xlsx", "result.xlsx", [["=1+1"]]), ("xlsx", "gold.xlsx", [[2]])), {"rules": FUZZY_A1}, 0.0, 0.0),
    ("compare_table", "sheet_fuzzy includes: a phone number saved as a number (multi_apps/d1acdb87's options)",
     (("xlsx", "result.xlsx", [[15551234]]), ("xlsx", "gold.xlsx", [["+1 (555) 1234"]])),
     {"rules": fuzzy("A1", "includes", trim_leadings="+ ", ignore_chars=" ()-")}, 1.0, 1.0),
    ("compare_table", "sheet_fuzzy fuzzy_match: an empty cell against a short text ('None' against 'Non')",
     (("xlsx", "result.xlsx", [[None, "x"]]), ("xlsx", "gold.xlsx", [["Non", "x"]])),
     {"rules": fuzzy("A1", "fuzzy_match", threshold=85)}, 1.0, 1.0),
]


def _os_make_files():  # the os tasks' file builder, whose simple_pdf writes a one-page PDF of text lines
    path = Path(__file__).resolve().parents[2] / "evaluation_examples" / "files" / "os" / "make_files.py"
    spec = importlib.util.spec_from_file_location("os_make_files", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def materialize(value: Any, folder: Path) -> Any:
    """A case's input as the getter would give it: files are written into `folder`."""
    if not (isinstance(value, tuple) and len(value) == 3 and isinstance(value[0], str)):
        return value
    kind, name, text = value
    path = folder / name
    if kind == "file":
        path.write_text(text, encoding="utf-8")
    elif kind == "sqlite":
        with sqlite3.connect(path) as connection:
            connection.execute("CREATE TABLE t (x INTEGER)")
            connection.executemany("INSERT INTO t VALUES (?)", [(1,), (2,), (3,)])
    elif kind == "xlsx":  # rows of cell values, written by openpyxl into the sheet "Sheet1"
        book = openpyxl.Workbook()
        sheet = book.active
        assert sheet is not None
        sheet.title = "Sheet1"
        for row in text:
            sheet.append(row)
        book.save(path)
    elif kind == "blank-pdf":  # a page without text, as a scan without its text layer
        writer = pypdf.PdfWriter()
        writer.add_blank_page(width=595, height=842)
        writer.write(path)
    elif kind == "pdf-lines":  # one page, each item of `text` a line of Helvetica
        path.write_bytes(_os_make_files().simple_pdf(text))
    elif kind == "docx" or kind == "odt-named-docx":
        # An .odt name on a .docx file: OSWorld picks its reader by the names and reads neither pair.
        document = docx.Document()
        document.add_paragraph(text)
        document.save(str(path))
    return str(path)


def verdict(metric: str, inputs: tuple[Any, ...], options: dict[str, Any], folder: Path) -> float:
    load_builtins()
    args = [materialize(v, folder) for v in inputs]
    return as_metric_result(get_metric(metric)(*args, **options), metric).score


@pytest.mark.parametrize(("metric", "label", "inputs", "options", "osworld", "fixed"), CASES,
                         ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_the_default_verdict_is_osworlds(tmp_path, metric, label, inputs, options, osworld, fixed):
    assert verdict(metric, inputs, options, tmp_path) == osworld


@pytest.mark.parametrize(("metric", "label", "inputs", "options", "osworld", "fixed"), CASES,
                         ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_the_evaluator_fixes_change_a_verdict_only_where_documented(tmp_path, metric, label, inputs, options,
                                                                     osworld, fixed):
    with evaluator_fixes():
        score = verdict(metric, inputs, options, tmp_path)
    assert score == fixed
    if fixed != osworld:
        assert metric in FIXES, f"{metric} changes a verdict under --evaluator-fixes but FIXES does not say so"


def test_every_fix_is_shown_changing_a_verdict_here():
    changed = {metric for metric, _, _, _, osworld, fixed in CASES if fixed != osworld}
    assert changed == set(FIXES)
