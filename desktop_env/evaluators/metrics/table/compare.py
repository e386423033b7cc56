"""The compare_table metric: opens the result and the expected book and runs the task's rules in order; and what
task validation checks in its options (each rule's type and fields)."""
from __future__ import annotations

import difflib
import logging
from typing import Any

from ...outcome import MetricResult, failed, passed, show
from ...registry import OptionIssue, declare_option_check, metric
from .rules import _RULE_CHECKS, IGNORED_RULE_FIELDS, RULE_FIELDS, RuleFields
from .sheets import FUZZY_FIELDS, FUZZY_MATCH_TYPES
from .workbook import _Books, _open_book

log = logging.getLogger(__name__)


def _fields_problems(where: str, item: Any, known_types: tuple[str, ...],
                     fields: dict[str, RuleFields] | RuleFields) -> list[OptionIssue]:
    """What is wrong with one rule: its type, missing and unknown fields; and, as ignored issues, the
    fields OSWorld's task files give it that no check reads."""
    if not isinstance(item, dict):
        return [OptionIssue(where, repr(item)[:200], "a rule must be an object")]
    kind = item.get("type")
    if kind not in known_types:
        close = difflib.get_close_matches(str(kind), known_types, n=3, cutoff=0.6)
        return [OptionIssue(f"{where}.type", str(kind), f"unknown rule type (known: {', '.join(known_types)})",
                            tuple(close))]
    per_type = isinstance(fields, dict)  # else (required, optional) shared by every type
    if isinstance(fields, dict) and kind not in fields:
        return []  # a plugin's rule type: it declares no fields, so there is nothing to check
    required, optional = fields[kind] if isinstance(fields, dict) else fields
    problems = [OptionIssue(where, kind, f"a {kind} rule needs {name!r}") for name in required if name not in item]
    allowed = ("type",) + required + optional
    ignored = IGNORED_RULE_FIELDS.get(kind, {}) if per_type else {}
    for name in item:
        if name in ignored:
            problems.append(OptionIssue(f"{where}.{name}", str(name), f"a {kind} rule ignores it: {ignored[name]}",
                                        ignored=True))
        elif name not in allowed:
            close = difflib.get_close_matches(str(name), allowed, n=3, cutoff=0.6)
            problems.append(OptionIssue(f"{where}.{name}", str(name),
                                        f"a {kind} rule has no field {name!r} (it reads: {', '.join(allowed)})",
                                        tuple(close)))
    return problems


def rules_problems(options: dict) -> list[OptionIssue]:
    """compare_table's rules as validation sees them: an issue for a
    missing or non-list `rules`, an unknown rule type, a missing or unknown field, and the same
    for sheet_fuzzy's inner rules; an ignored field (IGNORED_RULE_FIELDS) as a warning."""
    rules = options.get("rules")
    if not isinstance(rules, list):
        return [OptionIssue("rules", repr(rules)[:200], "compare_table needs 'rules', a list of rules")]
    problems = []
    for i, rule in enumerate(rules):
        found = _fields_problems(f"rules[{i}]", rule, tuple(_RULE_CHECKS), RULE_FIELDS)
        problems += found
        if not found and rule["type"] == "sheet_fuzzy":
            inner = rule["rules"] if isinstance(rule["rules"], list) else [rule["rules"]]
            for j, sub_rule in enumerate(inner):
                problems += _fields_problems(f"rules[{i}].rules[{j}]", sub_rule, FUZZY_MATCH_TYPES, FUZZY_FIELDS)
    return problems


def rule_failure(answer: Any) -> str | None:
    """A rule check's answer as "why it does not hold" (None: it holds). Built-in checks give a
    sentence or None; a plugin's may give a bool, as table rules did before they explained."""
    if answer is True:
        return None
    if answer is False:
        return "the rule's check says it does not hold (it gives no reason)"
    return answer


@metric("compare_table")
def compare_table(result: Any, expected: Any = None, rules: list | None = None) -> MetricResult:
    """1.0 when every rule in `rules` holds for the result workbook (see the module
    docstring); 0.0 at the first failing rule or when the result is missing or unreadable.

    `result`/`expected` are xlsx paths, or lists whose first entry is the xlsx and the others
    companion files such as the csv export that `sheet_print` reads."""
    if not isinstance(rules, list):
        raise ValueError("compare_table: options.rules must be a list of rules")
    for rule in rules:
        if rule.get("type") not in _RULE_CHECKS:
            raise ValueError(f"compare_table: unknown rule type {rule.get('type')!r} "
                             f"(known: {', '.join(_RULE_CHECKS)})")
    result_book = _open_book(result)
    if result_book is None:
        return failed(f"the result workbook {show(result)} is missing or cannot be read")
    expected_book = None
    if expected is not None:
        expected_book = _open_book(expected)
        if expected_book is None:
            log.warning("compare_table: expected workbook %r cannot be read", expected)
    books = _Books(result_book, expected_book)
    for number, rule in enumerate(rules):
        why = rule_failure(_RULE_CHECKS[rule["type"]](rule, books))
        if why is not None:
            return failed(f"rule {number} ({rule['type']}) does not hold: {why}")
    return passed(f"all {len(rules)} rules hold ({', '.join(r['type'] for r in rules)})")


declare_option_check(compare_table, rules_problems)  # task validation checks the rules (tasks/validation.py)
