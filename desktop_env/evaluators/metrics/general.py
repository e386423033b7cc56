"""General-purpose metrics: command output, text/JSON/CSV/YAML files, sqlite, the a11y tree.

Most take `(result, rules)`: `result` is what the result getter gave (a command's stdout, a
local file path, a dict parsed from a page) and `rules` is the task file's `rules` dict as the
`rule` / `rule_relativeTime` getter returns it. Every metric gives 0 (a MetricResult saying
why), never an exception, when the result is None, a missing file, or a file that does not
parse; a malformed task file
(an unknown rule method, no selector) raises ValueError, which the scorer records as a harness
error rather than as the agent's failure.

`read_text`, `match_record` and `match_value_to_rule` are shared with other metric modules.
"""
from __future__ import annotations

import ast
import csv
import datetime
import difflib
import io
import json
import logging
import operator
import os
import re
import sqlite3
import zipfile
from typing import Any

import lxml.etree
import yaml
from lxml.cssselect import CSSSelector
from rapidfuzz import fuzz

from ...a11y_namespaces import A11Y_NAMESPACES as UBUNTU_A11Y_NAMESPACES
from ..archives import check_zip_file
from ..fixes import fixes_enabled
from ..outcome import MetricResult, failed, first_difference, passed, show, verdict
from ..registry import metric

logger = logging.getLogger(__name__)


# -- shared helpers -----------------------------------------------------------------------------

def read_text(path: Any) -> str | None:
    """The text of a local file, or None when there is no such file.

    Undecodable bytes become U+FFFD rather than an error: two files are still compared
    consistently, and a binary file simply fails to match.
    """
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def match_record(pattern: dict, record: dict) -> bool:
    """True when every key of `pattern` is in `record` with an equal value."""
    return all(key in record and record[key] == value for key, value in pattern.items())


def _regex_flags(method: str) -> re.RegexFlag:
    flags = re.RegexFlag(0)
    for name in method.split(".")[1:]:
        flag = getattr(re, name, None)
        if not isinstance(flag, re.RegexFlag):
            raise ValueError(f"rule method {method!r}: {name!r} is not a re flag (I, M, S, X, ...)")
        flags |= flag
    return flags


_COMPARISONS = {"eq": operator.eq, "ne": operator.ne, "le": operator.le,
                "lt": operator.lt, "ge": operator.ge, "gt": operator.gt}


def match_value_to_rule(value: Any, rule: dict) -> bool:
    """Whether `value` satisfies `{"method": ..., "ref": ...}` (OSWorld's rule methods).

    Methods: `re` / `re.I.M...` (re.search of ref in a string value), `eq ne le lt ge gt`,
    `approx:<tolerance>`, `range.XY` (X, Y in {t, e}: open/closed bounds, ref = [low, high]),
    `str_list_eq` / `str_set_eq` (a comma-separated string against a list).
    A value of the wrong type (None for `lt`, a bool for `re`) does not match; OSWorld's
    version raised there and lost the whole metric.
    """
    method = rule["method"]
    ref: Any = rule.get("ref")  # a task file's JSON: its type is the method's to check
    if method == "re" or method.startswith("re."):
        return isinstance(value, str) and re.search(ref, value, _regex_flags(method)) is not None
    if method in _COMPARISONS:
        try:
            return bool(_COMPARISONS[method](value, ref))
        except TypeError:
            return False
    if method.startswith("approx:"):
        tolerance = float(method.split(":", 1)[1])
        try:
            return abs(float(value) - float(ref)) <= tolerance
        except (TypeError, ValueError):
            return False
    if method.startswith("range.") and len(method) == 8 and set(method[6:]) <= {"t", "e"}:
        lower = getattr(operator, "l" + method[6])
        upper = getattr(operator, "l" + method[7])
        try:
            return bool(lower(ref[0], value) and upper(value, ref[1]))
        except TypeError:
            return False
    if method in ("str_list_eq", "str_set_eq"):
        if not isinstance(value, str):
            return False
        container = list if method == "str_list_eq" else set
        return container(value.strip("\"'").split(",")) == container(ref)
    raise ValueError(f"unknown rule method {method!r} in {rule!r}")


def missing_file(path: Any, role: str = "result") -> str:
    """What an explanation says when a file to compare is not there."""
    return f"the {role} file {show(path)} does not exist" if path else f"no {role} file was given"


# -- plain values (command output, getter values) -----------------------------------------------

def _same_text(result: Any, expected: Any) -> bool:
    # A command's stdout and a task's expected string often differ only by a trailing newline: equal
    # for our fix, not for OSWorld's plain ==.
    if fixes_enabled() and isinstance(result, str) and isinstance(expected, str):
        return result.rstrip() == expected.rstrip()
    return bool(result == expected)


@metric("exact_match")
def exact_match(result: Any, rules: dict | None = None) -> MetricResult:
    """1 when result equals rules["expected"] (with the evaluator fixes, strings ignore trailing
    whitespace)."""
    if result is None or rules is None:
        return failed("no result to compare" if result is None else "no rules given")
    expected = rules["expected"]
    explanation = f"got {show(result)}, expected {show(expected)}"
    if (not fixes_enabled() and isinstance(result, str) and isinstance(expected, str) and result != expected
            and result.rstrip() == expected.rstrip()):
        # clipped values would look equal: say what the difference is
        explanation += (f": they differ only in trailing whitespace ({show(result[len(result.rstrip()):])} vs "
                        f"{show(expected[len(expected.rstrip()):])}), which OSWorld's == counts")
    return verdict(_same_text(result, expected), explanation)


@metric("match_in_list")
def match_in_list(result: Any, rules: dict | None = None) -> MetricResult:
    """1 when result is one of rules["expected"] (a list of accepted values). OSWorld's `in` also takes
    a substring when `expected` is a string; the evaluator fixes require one of the listed values,
    trailing whitespace aside."""
    if result is None or rules is None:
        return failed("no result to compare" if result is None else "no rules given")
    accepted = rules["expected"]
    said = f"got {show(result)}, expected one of {show(accepted)}"
    if fixes_enabled():
        return verdict(isinstance(accepted, list) and any(_same_text(result, a) for a in accepted), said)
    try:
        return verdict(result in accepted, said)
    except TypeError:  # OSWorld's `in` raises here (a non-string in a string): no score there either
        return failed(f"{said}: not a list or a string to look in")


@metric("is_in_list")
def is_in_list(result: Any, rules: dict | None = None) -> MetricResult:
    """1 when rules["expected"] is an element of the result list (or a substring of a string)."""
    if result is None or rules is None:
        return failed("no result to compare" if result is None else "no rules given")
    try:
        found = rules["expected"] in result
    except TypeError:  # a result that is neither a container nor a string
        return failed(f"the result {show(result)} is not a list or text")
    return verdict(found, f"{show(rules['expected'])} {'is' if found else 'is not'} in {show(result)}")


@metric("literal_match")
def literal_match(result: Any, expected: Any = None, type: str = "str", ignore_case: bool = False) -> MetricResult:
    """Compares result and expected as strings (`type: "str"`, default) or element-wise as
    lists of strings (`type: "list"`); `ignore_case` lowercases both sides."""
    if result is None or expected is None:
        return failed("no result to compare" if result is None else "no expected value")
    literal_type = type
    said = f"got {show(result)}, expected {show(expected)}" + (" (ignoring case)" if ignore_case else "")

    def norm(value: Any) -> str:
        return str(value).lower() if ignore_case else str(value)

    if literal_type == "str":
        return verdict(norm(result) == norm(expected), said)
    if literal_type == "list":
        if not isinstance(result, (list, tuple)) or not isinstance(expected, (list, tuple)):
            return failed(f"not two lists: {said}")
        return verdict([norm(v) for v in result] == [norm(v) for v in expected], said)
    raise ValueError(f"literal_match: option type must be 'str' or 'list', got {literal_type!r}")


@metric("fuzzy_match")
def fuzzy_match(result: Any, rules: dict | None = None) -> MetricResult:
    """The rapidfuzz ratio (0..1) between result and rules["expected"]."""
    if result is None or rules is None:
        return failed("no result to compare" if result is None else "no rules given")
    score = fuzz.ratio(str(result), str(rules["expected"])) / 100.0
    return MetricResult(score, f"similarity {score:.3f} of {show(result)} to {show(rules['expected'])}")


@metric("check_include_exclude")
def check_include_exclude(result: Any, rules: dict | None = None) -> MetricResult:
    """1 when the result text contains every rules["include"] string and no rules["exclude"] one."""
    if not isinstance(result, str) or rules is None:
        return failed(f"no result text (got {show(result)})" if rules is not None else "no rules given")
    missing = [s for s in rules.get("include", []) if s not in result]
    present = [s for s in rules.get("exclude", []) if s in result]
    if missing or present:
        return failed(f"the text {show(result)} " + "; ".join(
            ([f"lacks {show(missing)}"] if missing else []) + ([f"holds excluded {show(present)}"] if present else [])))
    return passed("the text holds every included string and no excluded one")


# -- JSON objects from getters ------------------------------------------------------------------

EVALUATION_FAILED = "__EVALUATION_FAILED__"  # what a relativeTime getter puts in when it failed


def _as_object(result: Any) -> Any:
    """A getter value as a Python object. OSWorld swaps every ' for " and reads JSON, so Python-literal
    text with an apostrophe inside a value is no object there; the evaluator fixes read JSON, then a
    Python literal."""
    if not isinstance(result, str):
        return result
    text = result.strip()
    if not fixes_enabled():
        try:
            return json.loads(text.replace("'", '"'))
        except ValueError:
            return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _contains_expected(expected: Any, actual: Any) -> bool:
    """`expect_in_result` semantics for one key: a list gives accepted alternatives (an element of a
    list result, or equal to a string result), a string must be in the result (a substring, or an
    element of a list). Any other expected value fails in OSWorld; the evaluator fixes compare it."""
    if isinstance(expected, list):
        return any((isinstance(actual, list) and e in actual) or (isinstance(actual, str) and e == actual)
                   for e in expected)
    if isinstance(expected, str):
        try:
            return expected in actual
        except TypeError:
            return False
    return fixes_enabled() and expected == actual


def _osworld_comparison(expected: dict, result: dict) -> str | None:
    """Why the result's values differ from the expected ones as OSWorld compares them, or None. It reads
    `ignore_list_order` inside `expected` (task files put it beside it, where it is never seen), and
    then sorts that flag's own value too, which fails the whole metric."""
    ignore_order = expected.get("ignore_list_order", False)
    for key, value in expected.items():
        actual = result.get(key)
        if ignore_order:
            try:
                # Unsortable values (a flag, a missing key) raise here, as in OSWorld.
                value, actual = sorted(value), sorted(actual)  # type: ignore[arg-type]
            except TypeError:
                return f"key {key!r}: {show(actual)} and {show(value)} cannot both be sorted"
        if value != actual:
            return f"key {key!r}: {show(actual)}, expected {show(value)}"
    return None


def _fixed_comparison(expected: dict, result: dict, ignore_order: bool) -> str | None:
    """The evaluator fixes' comparison: `ignore_list_order` (beside or inside `expected`) compares list
    values as multisets and is not itself a key to compare."""
    for key, value in expected.items():
        if key == "ignore_list_order":
            continue
        actual = result.get(key)
        if ignore_order and isinstance(value, list) and isinstance(actual, list):
            value, actual = sorted(value, key=repr), sorted(actual, key=repr)
        if value != actual:
            return f"key {key!r}: {show(actual)}, expected {show(value)}"
    return None


@metric("check_direct_json_object")
def check_direct_json_object(result: Any, rules: dict | None = None) -> MetricResult:
    """Compares the result dict (from a page/URL parsing getter) with rules["expected"].

    Every expected key must equal the result's value; with `expect_in_result: true`, a string
    must be a substring of the result's and a list lists accepted alternatives.
    `ignore_list_order` is OSWorld's (see _osworld_comparison) unless the evaluator fixes are on,
    which compare list values as multisets when it is set beside or inside `expected`. `expected` comes
    from the `rule` getter or, with dates filled in, from `rule_relativeTime`; a value of
    "__EVALUATION_FAILED__" there scores 0.
    """
    result = _as_object(result)
    if not isinstance(result, dict) or not isinstance(rules, dict):
        return failed(f"the result {show(result)} is not an object" if isinstance(rules, dict) else "no rules given")
    expected = rules["expected"]
    if not isinstance(expected, dict):
        raise ValueError(f"check_direct_json_object: rules['expected'] must be an object, got {expected!r}")
    if EVALUATION_FAILED in expected.values():
        return failed("the expected values could not be computed (the relative-time getter failed)")
    if rules.get("expect_in_result", False):
        for key, value in expected.items():
            if not _contains_expected(value, result.get(key)):
                return failed(f"key {key!r}: {show(result.get(key))} does not contain {show(value)}")
        return passed(f"all {len(expected)} expected keys are in the result")
    if fixes_enabled():
        ignore_order = bool(rules.get("ignore_list_order") or expected.get("ignore_list_order"))
        differs = _fixed_comparison(expected, result, ignore_order)
    else:
        differs = _osworld_comparison(expected, result)
    if differs:
        return failed(differs)
    return passed(f"all {len(expected)} expected keys have their values")


@metric("is_included_all_json_objects")
def is_included_all_json_objects(first_path: Any, second_path: Any = None) -> MetricResult:
    """1 when every key of the first JSON file is in the second with an equal value.

    OSWorld names the parameters (gold, result) but the scorer passes (result, expected):
    the order of the arguments, not their names, is what task files rely on, so it is kept.
    """
    first_text, second_text = read_text(first_path), read_text(second_path)
    if first_text is None or second_text is None:
        return failed(missing_file(first_path if first_text is None else second_path))
    try:
        first, second = json.loads(first_text), json.loads(second_text)
    except ValueError as e:
        return failed(f"a file is not JSON: {e}")
    if not isinstance(first, dict) or not isinstance(second, dict):
        return failed("a JSON file does not hold an object")
    for key, value in first.items():
        if key not in second or second[key] != value:
            return failed(f"key {key!r}: {show(value)} in {os.path.basename(str(first_path))}, "
                          f"{show(second.get(key, '(missing)'))} in {os.path.basename(str(second_path))}")
    return passed(f"all {len(first)} keys are in the second file with the same values")


# -- text files ---------------------------------------------------------------------------------

@metric("diff_text_file")
def diff_text_file(result: Any, expected: Any = None) -> MetricResult:
    """The difflib similarity (0..1) of the two files' line sequences."""
    result_text, expected_text = read_text(result), read_text(expected)
    if result_text is None or expected_text is None:
        absent, role = (result, "result") if result_text is None else (expected, "expected")
        return failed(missing_file(absent, role))
    got, want = result_text.splitlines(), expected_text.splitlines()
    score = difflib.SequenceMatcher(a=got, b=want).ratio()
    if score == 1.0:
        return passed("the files have the same lines", score)
    return MetricResult(score, f"line similarity {score:.3f}; first difference at line {first_difference(got, want)}")


@metric("file_contains")
def file_contains(result: Any, rules: dict | None = None) -> MetricResult:
    """1 when the file contains every string of rules["expected"]."""
    text = read_text(result)
    if text is None or rules is None:
        return failed(missing_file(result) if rules is not None else "no rules given")
    missing = [s for s in rules["expected"] if s not in text]
    return verdict(not missing,
                   f"the file lacks {show(missing)}" if missing else "the file holds every expected string")


_TIME_OF_DAY = re.compile(r"([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)")


@metric("check_line_number")
def check_line_number(result: Any, rules: dict | None = None) -> MetricResult:
    """1 when the number of lines holding an HH:MM:SS time equals rules["expected"]
    (e.g. one line per sample of a `sar` report)."""
    text = read_text(result)
    if text is None or rules is None:
        return failed(missing_file(result) if rules is not None else "no rules given")
    try:
        wanted = int(rules["expected"])
    except (TypeError, ValueError):
        raise ValueError(f"check_line_number: rules['expected'] must be a number, got {rules['expected']!r}") from None
    found = sum(1 for line in text.splitlines() if _TIME_OF_DAY.search(line))
    return verdict(found == wanted, f"{found} lines with a time of day, expected {wanted}")


@metric("compare_terminal_and_txt")
def compare_terminal_and_txt(txt_file: Any, terminal_output: Any = None) -> MetricResult:
    """1 when the text file's content equals the terminal output, character for character."""
    text = read_text(txt_file)
    if text is None:
        return failed(missing_file(txt_file))
    if not isinstance(terminal_output, str) or not terminal_output:
        return failed(f"no terminal output (got {show(terminal_output)})")
    return verdict(text == terminal_output, f"the file {show(text)} vs the terminal {show(terminal_output)}")


_PYTHON_HEADER = re.compile(r"#!|# -\*- coding:|# coding[:=]")


def _normalize_python_source(text: str) -> str:
    """Drops a shebang/coding header (first 3 lines) and blank lines, expands tabs, strips
    line ends: formatting noise only, so leftover markdown fences still count as a difference."""
    lines = text.splitlines()
    start = 0
    while start < min(len(lines), 3) and _PYTHON_HEADER.match(lines[start].strip()):
        start += 1
    return "\n".join(line.expandtabs(4).rstrip() for line in lines[start:] if line.strip())


@metric("compare_python_pure_text")
def compare_python_pure_text(result: Any, expected: Any = None) -> MetricResult:
    """1 when two Python files are the same code up to blank lines, tabs and header lines."""
    result_text, expected_text = read_text(result), read_text(expected)
    if result_text is None or expected_text is None:
        absent, role = (result, "result") if result_text is None else (expected, "expected")
        return failed(missing_file(absent, role))
    got, want = _normalize_python_source(result_text), _normalize_python_source(expected_text)
    return verdict(got == want, f"code line {first_difference(got.splitlines(), want.splitlines())}"
                   if got != want else "the same code")


@metric("check_list")
def check_list(result: Any, rules: dict | None = None) -> MetricResult:
    """Regexes against the lines of a text file (e.g. a saved command output):
    each rules["expect"] pattern must match some line, no rules["unexpect"] pattern any line."""
    text = read_text(result)
    if text is None or rules is None:
        return failed(missing_file(result) if rules is not None else "no rules given")
    lines = list(io.StringIO(text))  # as OSWorld reads them: split at "\n" only, each with its newline
    expect = [re.compile(p) for p in rules.get("expect", [])]
    unexpect = [re.compile(p) for p in rules.get("unexpect", [])]
    for p in expect:
        if not any(p.search(line) for line in lines):
            return failed(f"no line matches {p.pattern!r}")
    for p in unexpect:
        for line in lines:
            if p.search(line):
                return failed(f"line {show(line)} matches the unexpected {p.pattern!r}")
    return passed(f"{len(expect)} expected patterns found, none of {len(unexpect)} unexpected")


@metric("check_csv")
def check_csv(result: Any, rules: dict | None = None) -> MetricResult:
    """Records of a CSV file with a header row: each rules["expect"] record (a dict of
    column -> value) must match some row, no rules["unexpect"] record any row."""
    text = read_text(result)
    if text is None or rules is None:
        return failed(missing_file(result) if rules is not None else "no rules given")
    try:
        rows = list(csv.DictReader(io.StringIO(text)))
    except csv.Error as e:
        return failed(f"the file is not CSV: {e}")
    for r in rules.get("expect", []):
        if not any(match_record(r, row) for row in rows):
            return failed(f"no row of {len(rows)} matches {show(r)}")
    for r in rules.get("unexpect", []):
        if any(match_record(r, row) for row in rows):
            return failed(f"a row matches the unexpected {show(r)}")
    return passed("every expected record is there and no unexpected one")


def _unexpect_raises(data: Any, rule: dict, missing: bool) -> str:
    """Why OSWorld's check_json would raise on this unexpect rule (and so score 0), or "": it reads a missing key
    as None, but an index past a list's end raises, and so does matching None with a regex or an order
    comparison (its rule matching does not check types; eq and ne take None)."""
    value = data
    for key in rule["key"]:
        if isinstance(value, list) and isinstance(key, int) and not -len(value) <= key < len(value):
            return f"index {key} is past the end of a list of {len(value)}"
        try:
            value = value[key]
        except (KeyError, TypeError, IndexError):
            break
    method = str(rule.get("method"))
    typed = method == "re" or method.startswith(("re.", "approx:", "range.")) or method in ("le", "lt", "ge", "gt")
    if missing and typed:
        return f"the key is missing, and OSWorld matches {method} against None"
    return ""


@metric("check_json")
def check_json(result: Any, rules: dict | None = None, is_yaml: bool = False) -> MetricResult:
    """Rules on values inside a JSON (or, with `is_yaml`, YAML) file.

    rules = {"expect": [{"key": [path...], "method": ..., "ref": ...}], "unexpect": [...]}:
    every expect rule must hold at its key path (a missing key fails), no unexpect rule may
    hold (a missing key counts as None). Methods: see match_value_to_rule.
    """
    text = read_text(result)
    if text is None or rules is None:
        return failed(missing_file(result) if rules is not None else "no rules given")
    try:
        data = yaml.safe_load(text) if is_yaml else json.loads(text)
    except (ValueError, yaml.YAMLError) as e:
        return failed(f"the file is not {'YAML' if is_yaml else 'JSON'}: {str(e)[:200]}")

    missing = object()

    def lookup(path: list) -> Any:
        value = data
        for key in path:
            try:
                value = value[key]
            except (KeyError, IndexError, TypeError):
                return missing
        return value

    for rule in rules.get("expect", []):
        value = lookup(rule["key"])
        if value is missing:
            return failed(f"key {rule['key']} is missing")
        if not match_value_to_rule(value, rule):
            return failed(f"key {rule['key']} is {show(value)}, expected {rule['method']} {show(rule.get('ref'))}")
    for rule in rules.get("unexpect", []):
        value = lookup(rule["key"])
        if not fixes_enabled() and (raises_in_osworld := _unexpect_raises(data, rule, value is missing)):
            return failed(f"unexpect rule on {rule['key']}: {raises_in_osworld}, which OSWorld's check_json "
                          "fails the whole metric on")
        if match_value_to_rule(None if value is missing else value, rule):
            return failed(f"key {rule['key']} is {show(None if value is missing else value)}, "
                          f"which it must not be ({rule['method']} {show(rule.get('ref'))})")
    return passed("every expected key holds its value, no unexpected one")


# -- a place list (.docx), a speedtest export ---------------------------------------------------

@metric("fuzzy_place_math")
def fuzzy_place_math(result: Any, rules: dict | None = None) -> MetricResult:
    """A .docx that should list exactly 3 places (whitespace-separated words) from
    rules["expected"]: the mean over its words of the best fuzzy ratio against the list;
    0 unless the document holds exactly 3 words."""
    import docx
    from docx.opc.exceptions import OpcError
    if rules is None or not isinstance(result, (str, os.PathLike)) or not os.path.isfile(result):
        return failed(missing_file(result) if rules is not None else "no rules given")
    try:
        check_zip_file(result)
        document = docx.Document(os.fspath(result))
    except (OpcError, zipfile.BadZipFile, KeyError, ValueError) as e:
        return failed(f"cannot open {result} as docx: {e}")
    words = [word for paragraph in document.paragraphs for word in paragraph.text.split()]
    if len(words) != 3:
        return failed(f"the document holds {len(words)} words, expected 3 places: {show(words)}")
    accepted = rules["expected"]
    score = sum(max((fuzz.ratio(word, a) / 100.0 for a in accepted), default=0.0) for word in words) / 3
    return MetricResult(score, f"mean best similarity {score:.3f} of {show(words)} to the accepted places")


@metric("compare_time_in_speedtest_results")
def compare_time_in_speedtest_results(result: Any, time_diff: Any = None) -> MetricResult:
    """A speedtest CSV export: 1 when its first record's time (HH:MM at the end of the second
    column) is within `time_diff` minutes of now."""
    text = read_text(result)
    if text is None or time_diff is None:
        return failed(missing_file(result) if time_diff is not None else "no time difference given")
    try:
        rows = list(csv.reader(text.splitlines()))
        stamp = datetime.datetime.strptime(rows[1][1].strip()[-5:], "%H:%M")
        limit = float(time_diff)
    except (csv.Error, IndexError, TypeError, ValueError) as e:
        return failed(f"no HH:MM time at the end of the first record's second column: {e}")
    now = datetime.datetime.now()
    minutes = abs((stamp.hour * 60 + stamp.minute) - (now.hour * 60 + now.minute))
    minutes = min(minutes, 24 * 60 - minutes)  # times of day wrap at midnight
    return verdict(minutes < limit, f"the result's time {stamp:%H:%M} is {minutes} minutes from now, "
                                    f"expected under {limit:g}")


# -- databases ----------------------------------------------------------------------------------

@metric("run_sqlite3")
def run_sqlite3(result: Any, rules: dict | None = None) -> MetricResult:
    """Runs rules["sql"] on the sqlite database file; the first column of the first row is the
    score (a SQL truth value, so 0 or 1; OSWorld takes any other number as it is, the evaluator
    fixes clamp it to [0, 1])."""
    if rules is None or not isinstance(result, (str, os.PathLike)) or not os.path.isfile(result):
        return failed(missing_file(result) if rules is not None else "no rules given")
    # Read-only URI: a bare connect() would create an empty database file for a bad path.
    uri = "file:" + os.path.abspath(result) + "?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True)
        try:
            row = connection.execute(rules["sql"]).fetchone()
        finally:
            connection.close()
    except sqlite3.DatabaseError as e:  # not a database, or a table the agent's file lacks
        return failed(f"the query fails on {os.path.basename(str(result))}: {e}")
    if not row or row[0] is None:
        return failed(f"the query {show(rules['sql'])} gives no value")
    try:
        score = float(row[0])
    except (TypeError, ValueError):
        return failed(f"the query gives {show(row[0])}, not a number")
    if fixes_enabled():
        score = min(max(score, 0.0), 1.0)
    return MetricResult(score, f"the query {show(rules['sql'])} gives {show(row[0])}")


# -- accessibility tree -------------------------------------------------------------------------

A11Y_NAMESPACES = {
    "ubuntu": dict(UBUNTU_A11Y_NAMESPACES),
}


@metric("check_accessibility_tree")
def check_accessibility_tree(result: Any, rules: list | None = None, osname: str = "ubuntu") -> MetricResult:
    """Selects nodes of the accessibility-tree XML, rule by rule; each rule must select something.

    A rule has `xpath` (wins when both are given) or `selectors` (CSS selectors joined with
    ", "), both with the tree's namespace prefixes (`attr|id`, `st|focused`); optional `text`
    the selected node's text must equal (`exact`, default true) or fuzzily match (the best
    ratio counts). The score is the product of the rules' scores.
    """
    if not isinstance(result, (str, bytes)) or not result.strip() or rules is None:
        return failed("no accessibility tree" if rules is not None else "no rules given")
    if osname not in A11Y_NAMESPACES:
        raise ValueError(f"check_accessibility_tree: osname must be one of {sorted(A11Y_NAMESPACES)}, got {osname!r}")
    namespaces = A11Y_NAMESPACES[osname]
    try:
        tree = lxml.etree.fromstring(result.encode("utf-8") if isinstance(result, str) else result)
    except lxml.etree.XMLSyntaxError as e:
        return failed(f"the accessibility tree is not XML: {e}")

    score = 1.0
    for rule in rules:
        if "xpath" in rule:
            selected = tree.xpath(rule["xpath"], namespaces=namespaces)
        elif "selectors" in rule:
            selected = CSSSelector(", ".join(rule["selectors"]), namespaces=namespaces)(tree)
        else:
            raise ValueError(f"check_accessibility_tree: a rule needs 'xpath' or 'selectors': {rule!r}")
        # An XPath may evaluate to a number or string; only elements count as selected nodes.
        nodes = [n for n in selected if isinstance(n, lxml.etree._Element)] if isinstance(selected, list) else []
        what = rule.get("xpath") or rule["selectors"]
        if not nodes:
            return failed(f"no node of the tree is selected by {show(what)}")
        if "text" in rule:
            if rule.get("exact", True):
                # OSWorld compares `text or None`: an empty node never equals an expected "".
                if not any((n.text or None) == rule["text"] for n in nodes):
                    return failed(f"{len(nodes)} nodes selected by {show(what)}, none with the text "
                                  f"{show(rule['text'])} (first: {show(nodes[0].text)})")
            else:
                score *= max(fuzz.ratio(n.text or "", rule["text"]) / 100.0 for n in nodes)
    similarity = "" if score == 1 else f"; text similarity {score:.3f}"
    return MetricResult(score, f"all {len(rules)} rules select nodes{similarity}")
