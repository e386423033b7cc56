"""OSWorld's verdicts by default; this project's fixes of OSWorld's evaluator bugs only on request.

A score is comparable with a published OSWorld score only if each metric gives the verdict OSWorld's
own metric function gives on the same files, bugs included: that is the default. Where OSWorld's
function is wrong in a way that changes a verdict (a trailing newline failing an exact match, VS Code's
JSON with comments read as no JSON at all), our fix runs only inside `evaluator_fixes(True)`, which the
scorer enters for `osworld run --evaluator-fixes` and `osworld rescore --evaluator-fixes`. A run made
so is not comparable with OSWorld's scores, and `summarize` says so. FIXES names each fix and what it
changes; docs/EVALUATORS.md lists the tasks each one can change.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_enabled: ContextVar[bool] = ContextVar("osworld_evaluator_fixes", default=False)

# metric -> what our fix changes in OSWorld's verdict.
FIXES: dict[str, str] = {
    "exact_match": "strings that differ only by trailing whitespace (a command's final newline) match",
    "match_in_list": "the result must be one of the listed values, trailing whitespace aside (OSWorld's `in` "
                     "also takes a substring of an expected string)",
    "check_direct_json_object": "`ignore_list_order` is read beside `expected` (where task files put it) and "
                                "compares lists as multisets; Python-literal text parses as such (OSWorld's "
                                "quote swap breaks on an apostrophe); `expect_in_result` compares booleans and "
                                "numbers by equality instead of failing them",
    "check_json_settings": "settings.json may hold comments and trailing commas, as VS Code writes and reads it",
    "check_json_keybindings": "keybindings.json may hold comments and trailing commas anywhere",
    "compare_config": "with containment, a settings file with comments or trailing commas is read as JSON",
    "run_sqlite3": "a query's value is clamped to [0, 1]",
    "check_thunderbird_folder": "the messages of the two folders are compared (OSWorld's reading skips every "
                                "message, so any two folders Thunderbird wrote are equal)",
    "compare_docx_files": "the reader (.docx or .odt) is chosen from each file's content, not its name, so a "
                          ".docx/.odt pair is compared instead of scoring 0",
    "is_expected_url_pattern_match": "a pattern given as one string (not a list) is one regex (OSWorld searches "
                                     "each of its characters as a regex of its own)",
    "check_json": "an unexpect rule whose key is missing (an index past a list's end, or any missing key under a "
                  "regex or an order comparison) does not hold (OSWorld's matching raises there and scores 0)",
    "is_gold_text_included_in_pdf": "a gold value the PDF breaks across lines is found (whitespace runs count as "
                                    "one space; OSWorld looks for it in the raw text)",
    "compare_pdfs": "no result file (None) scores 0 (OSWorld opens None as an empty document, whose text equals "
                    "that of a gold PDF without text)",
}


def fixes_enabled() -> bool:
    """Whether the metric being run should apply our fixes instead of giving OSWorld's verdict."""
    return _enabled.get()


@contextlib.contextmanager
def evaluator_fixes(enabled: bool = True) -> Iterator[None]:
    """Metrics called inside the block apply our fixes (enabled) or give OSWorld's verdicts."""
    token = _enabled.set(enabled)
    try:
        yield
    finally:
        _enabled.reset(token)
