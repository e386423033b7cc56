"""VS Code metrics: settings/keybindings JSON, text and config files, extensions, test suites."""
from __future__ import annotations

import ast
import io
import json
import logging
import os
import re
import subprocess
import sys
import zipfile
from difflib import SequenceMatcher
from typing import Any

import lxml.etree
import lxml.html

from ..archives import ArchiveTooLarge, check_zip
from ..fixes import fixes_enabled
from ..outcome import MetricResult, failed, first_difference, passed, show, verdict
from ..registry import metric
from .general import missing_file, read_text

logger = logging.getLogger(__name__)


def parse_jsonc(text: str) -> Any:
    """Parses VS Code's JSON with comments (// and /* */) and trailing commas, as its
    settings.json and keybindings.json are written; raises ValueError when it is not JSON."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == '"':  # copy a string literal whole, escapes included
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i:end + 1])
            i = end + 1
        elif text.startswith("//", i):
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
        else:
            if char in "}]":  # drop a trailing comma before the closing bracket
                back = len(out) - 1
                while back >= 0 and out[back].isspace():
                    back -= 1
                if back >= 0 and out[back] == ",":
                    del out[back]
            out.append(char)
            i += 1
    return json.loads("".join(out))


def _load_settings_file(path: Any, keybindings: bool = False) -> Any:
    """The JSON value of a VS Code settings file, or None. OSWorld reads plain JSON (and, for
    keybindings.json, plain JSON after its first line, where VS Code writes a // comment); the
    evaluator fixes read comments and trailing commas anywhere, as VS Code does."""
    text = read_text(path)
    if text is None:
        return None
    if fixes_enabled():
        try:
            return parse_jsonc(text)
        except ValueError as e:
            logger.info("%s is not JSON: %s", path, e)
            return None
    if not keybindings:
        try:
            return json.loads(text)
        except ValueError:
            return None
    for attempt in (text, text.split("\n", 1)[1] if "\n" in text else ""):
        try:
            bindings = json.loads(attempt)
        except ValueError:
            continue
        if isinstance(bindings, list):
            return bindings
    return None


def _no_json(path: Any, what: str) -> str:
    if read_text(path) is None:
        return missing_file(path)
    return f"the file {os.path.basename(str(path))} is not a JSON {what}"


@metric("check_json_settings")
def check_json_settings(result: Any, expected: dict | None = None) -> MetricResult:
    """Every setting in expected["expected"] has that exact value in settings.json."""
    settings = _load_settings_file(result)
    if not isinstance(settings, dict) or expected is None:
        return failed(_no_json(result, "settings object") if expected is not None else "no expected settings given")
    for key, value in expected["expected"].items():
        if key not in settings or settings[key] != value:
            return failed(f"setting {key!r} is {show(settings.get(key, '(not set)'))}, expected {show(value)}")
    return passed(f"all {len(expected['expected'])} settings have the expected values")


@metric("check_json_keybindings")
def check_json_keybindings(result: Any, expected: dict | None = None) -> MetricResult:
    """keybindings.json (a list, usually after a // comment line) holds an entry equal to
    expected["expected"] ({key, command, when})."""
    bindings = _load_settings_file(result, keybindings=True)
    if not isinstance(bindings, list) or expected is None:
        return failed(_no_json(result, "list of keybindings") if expected is not None
                      else "no expected binding given")
    keys = [b.get("key") for b in bindings if isinstance(b, dict)]
    return verdict(expected["expected"] in bindings,
                   f"a binding {show(expected['expected'])} among {len(bindings)} (keys bound: {show(keys)})")


def _collapse_blanks(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@metric("compare_text_file")
def compare_text_file(result: Any, expected: Any = None, ignore_blanks: bool = False,
                      ignore_case: bool = False) -> MetricResult:
    """1 when the two text files are equal; `ignore_blanks` treats every run of whitespace
    as one space (and ignores it at the ends), `ignore_case` ignores letter case."""
    produced, gold = read_text(result), read_text(expected)
    if produced is None or gold is None:
        return failed(missing_file(result) if produced is None else missing_file(expected, "expected"))
    if ignore_blanks:
        produced, gold = _collapse_blanks(produced), _collapse_blanks(gold)
    if ignore_case:
        produced, gold = produced.lower(), gold.lower()
    if produced == gold:
        return passed("the files have the same text")
    return failed(f"line {first_difference(produced.splitlines(), gold.splitlines())}")


def _is_subset(expected: Any, actual: Any) -> bool:
    """Objects: every expected key present with a matching value (recursively); else equality."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and _is_subset(v, actual[k]) for k, v in expected.items())
    return expected == actual


@metric("compare_config")
def compare_config(result: Any, rules: dict | None = None, containment_ok: bool = True) -> MetricResult:
    """The file holds rules["expected"]: by default (`containment_ok`, as in OSWorld since it has the
    option) the expected JSON is contained in the file's (every expected key present with that value,
    recursively), e.g. one setting in a larger settings.json, or, when either side is not JSON, the
    expected text is a substring of the file's. With `containment_ok: false` the texts are equal, or
    both are equal JSON. The evaluator fixes read the file as VS Code does (comments, trailing commas)."""
    text = read_text(result)
    if text is None or rules is None or not isinstance(rules.get("expected"), str) or not rules["expected"]:
        return failed(missing_file(result) if text is None else f"rules['expected'] must be text, got {show(rules)}")
    wanted = rules["expected"]
    said = f"the file {show(text.rstrip())} vs expected {show(wanted.rstrip())}"
    if not containment_ok:
        if text == wanted:
            return passed(f"the same text: {said}")
        try:
            return verdict(json.loads(text) == json.loads(wanted), f"JSON equality: {said}")
        except ValueError:
            return failed(said)
    try:
        actual = parse_jsonc(text) if fixes_enabled() else json.loads(text)
        return verdict(_is_subset(json.loads(wanted), actual), f"containment: {said}")
    except ValueError:
        return verdict(wanted.strip() in text, f"substring: {said}")


@metric("compare_answer")
def compare_answer(result: Any, rules: dict | None = None) -> MetricResult:
    """1 when the result string equals rules["expected"]."""
    if not result or rules is None:
        return failed(f"no answer (got {show(result)})" if rules is not None else "no rules given")
    return verdict(result == rules["expected"], f"the answer is {show(result)}, expected {show(rules['expected'])}")


@metric("is_extension_installed")
def is_extension_installed(result: Any, rules: dict | None = None) -> MetricResult:
    """A command's output (e.g. `code --list-extensions`) contains rules["expected"]
    (`type: "contain"`) or does not (`type: "not_contain"`). No output at all (None) scores 0."""
    if not isinstance(result, str) or rules is None:
        return failed(f"no command output (got {show(result)})" if rules is not None else "no rules given")
    rule_type = rules.get("type")
    present = rules["expected"] in result
    said = f"{show(rules['expected'])} is {'' if present else 'not '}in the output {show(result)}"
    if rule_type == "contain":
        return verdict(present, said)
    if rule_type == "not_contain":
        return verdict(not present, said)
    raise ValueError(f"is_extension_installed: rule type must be 'contain' or 'not_contain', got {rule_type!r}")


def _pdf_bytes_text(data: bytes) -> str | None:
    """The text of a PDF held in memory (a zip member), or None when it is not a readable PDF."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        return "".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages)
    except (PyPdfError, OSError, ValueError) as e:
        logger.info("cannot read a PDF zip member: %s", e)
        return None


def _pdf_bytes_similarity(first: bytes, second: bytes) -> float | None:
    first_text, second_text = _pdf_bytes_text(first), _pdf_bytes_text(second)
    if first_text is None or second_text is None:
        return None
    return SequenceMatcher(None, first_text, second_text).ratio()


PDF_MEMBER_THRESHOLD = 0.95


@metric("compare_zip_files")
def compare_zip_files(result: Any, expected: Any = None) -> MetricResult:
    """The zip files hold the same member names, each with the same bytes; PDF members need
    only text that is at least 95% similar (a re-exported PDF differs in its metadata)."""
    for role, path in (("result", result), ("expected", expected)):
        if not (isinstance(path, str) and os.path.isfile(path)):
            return failed(missing_file(path, role))
    try:
        with zipfile.ZipFile(result) as produced, zipfile.ZipFile(expected) as gold:
            check_zip(expected, gold)  # past the bounds, the task's gold is an error (ArchiveTooLarge)
            try:
                check_zip(result, produced)
            except ArchiveTooLarge as e:
                return failed(f"the result zip {e}")
            names = set(produced.namelist())
            if names != set(gold.namelist()):
                return failed(f"the zip holds {show(sorted(names))}, expected {show(sorted(gold.namelist()))}")
            for name in sorted(names):
                a, b = produced.read(name), gold.read(name)
                if name.lower().endswith(".pdf"):
                    similarity = _pdf_bytes_similarity(a, b)
                    if similarity is None or similarity < PDF_MEMBER_THRESHOLD:
                        return failed(f"member {name}: " + ("not a readable PDF" if similarity is None else
                                      f"text similarity {similarity:.3f}, below {PDF_MEMBER_THRESHOLD}"))
                elif a != b:
                    return failed(f"member {name} differs from the gold one")
    except (zipfile.BadZipFile, OSError) as e:
        return failed(f"a zip file cannot be read: {e}")
    return passed(f"the {len(names)} members match")


@metric("compare_result_files")
def compare_result_files(result: Any, expected: Any = None) -> MetricResult:
    """A program's output file against the gold one: when the gold is a number, the output
    may contain it as text or equal it within 1e-4; otherwise the (stripped) texts are equal."""
    produced, gold = read_text(result), read_text(expected)
    if produced is None or gold is None:
        return failed(missing_file(result) if produced is None else missing_file(expected, "expected"))
    produced, gold = produced.strip(), gold.strip()
    said = f"the output {show(produced)}, expected {show(gold)}"
    try:
        gold_number = float(gold)
    except ValueError:
        return verdict(produced == gold, said)
    if gold in produced:  # e.g. "The answer is 42.5" for 42.5
        return passed(f"the output contains {gold}")
    try:
        return verdict(abs(float(produced) - gold_number) < 1e-4, said)
    except ValueError:
        return failed(said)


@metric("check_html_background_image")
def check_html_background_image(result: Any, rule: dict | None = None) -> MetricResult:
    """A <style> element of the HTML file sets `background-image: url('<rule["value"]>')`."""
    text = read_text(result)
    if text is None or rule is None:
        return failed(missing_file(result) if rule is not None else "no rule given")
    try:
        root = lxml.html.document_fromstring(text)
    except (lxml.etree.ParserError, ValueError) as e:
        return failed(f"the file is not HTML: {e}")
    wanted = f"background-image: url('{rule['value']}')"
    return verdict(any(wanted in (style.text or "") for style in root.iter("style")),
                   f"a <style> with {wanted!r}")


_RESULT_MARK = "OSWORLD_TEST_SUITE_RESULT="
_TEST_RUNNER = f"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("osworld_test_suite", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
outcome = getattr(module, sys.argv[2])()
if isinstance(outcome, bool) or not isinstance(outcome, (int, float)):
    outcome = float(bool(outcome))
print()
print("{_RESULT_MARK}" + repr(min(max(float(outcome), 0.0), 1.0)))
"""


@metric("check_python_file_by_test_suite")
def check_python_file_by_test_suite(result: Any, test_file: Any = None, test_function_name: str = "test",
                                    timeout: float = 300) -> MetricResult:
    """Runs the gold test file's `test_function_name` function (default `test`), which
    imports the agent's Python files fetched beside it; its return value is the score
    (true/false, or a number clamped to [0, 1]).

    The suite runs in a child Python with its folder as the working directory, not inside
    the harness as in OSWorld: a crashing or hanging suite (limit `timeout` seconds) scores
    0 and cannot change the harness's working directory or modules."""
    if not isinstance(test_file, str) or not os.path.isfile(test_file):
        return failed(missing_file(test_file, "test suite"))
    if result is None or (isinstance(result, list) and any(p is None for p in result)):
        return failed("the agent's Python files were not fetched")
    test_file = os.path.abspath(test_file)
    try:
        run = subprocess.run(
            [sys.executable, "-c", _TEST_RUNNER, test_file, test_function_name],
            cwd=os.path.dirname(test_file), capture_output=True, text=True, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return failed(f"the test suite {os.path.basename(test_file)} ran over {timeout} s")
    marks = [line for line in run.stdout.splitlines() if line.startswith(_RESULT_MARK)]
    if run.returncode != 0 or not marks:
        return failed(f"the test suite {os.path.basename(test_file)} crashed (exit {run.returncode}): "
                      f"{run.stderr.strip()[-500:]}")
    score = float(marks[-1][len(_RESULT_MARK):])
    return MetricResult(score, f"{test_function_name}() of {os.path.basename(test_file)} gives {score:g}")


def _python_code(path: Any) -> str | None:
    """The file's program as an AST dump without docstrings: the same code however it is
    laid out or commented. None when the file is missing or is not Python."""
    text = read_text(path)
    if text is None:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, annotate_fields=False)


@metric("check_python_file_by_gold_file")
def check_python_file_by_gold_file(result: Any, gold_file: Any = None) -> MetricResult:
    """1 when the agent's Python file is the gold file's program: the same syntax tree, so
    layout, comments and docstrings do not count. `result` may be a list of fetched files
    (the first is compared). OSWorld exports this name with no body (it scores None)."""
    if isinstance(result, list):
        result = result[0] if result else None
    actual, gold = _python_code(result), _python_code(gold_file)
    if actual is None:
        return failed(f"the result {show(result)} is missing or not Python")
    return verdict(actual == gold, "the same program as the gold file" if actual == gold
                   else "the program differs from the gold file (syntax trees differ)")
