"""Cases for how an evaluator block becomes a score: `infeasible`, FAIL as the last action, `conj`,
and a result file that is missing."""

from __future__ import annotations

from .cases import EvaluatorCase, Files

FAIL_ACTIONS = {
    "FAIL": "FAIL",
    "FAIL as a computer_13 dict": {"action_type": "FAIL"},
    "DONE": "DONE",
    "an action": "pyautogui.click(1, 2)",
    "no action": None,
}


def rule(name: str) -> dict:
    return {"type": "rule", "name": name, "rules": {}}


def cases(files: Files) -> list[EvaluatorCase]:
    found = []
    for label, action in FAIL_ACTIONS.items():
        found.append(
            EvaluatorCase({"func": "infeasible"}, {}, action, f"infeasible, last action: {label}", metric="infeasible")
        )
        found.append(
            EvaluatorCase(
                {"func": "exact_match", "result": rule("yes"), "expected": rule("rules_yes")},
                {"yes": "yes", "rules_yes": {"expected": "yes"}},
                action,
                f"a feasible task done right, last action: {label}",
            )
        )
    values = {
        "yes": "yes",
        "no": "no",
        "none": None,
        "rules_yes": {"expected": "yes"},
        "text": "a b",
        "ab": {"text": 1},
        "rules_ab": {"include": ["a", "b"]},
        "rules_c": {"include": ["c"]},
    }
    metrics = ["exact_match", "exact_match", "check_include_exclude"]
    for conj in ("and", "or"):
        for label, results, expected in [
            ("all pass", ["yes", "yes", "text"], ["rules_yes", "rules_yes", "rules_ab"]),
            ("the first fails", ["no", "yes", "text"], ["rules_yes", "rules_yes", "rules_ab"]),
            ("the last fails", ["yes", "yes", "text"], ["rules_yes", "rules_yes", "rules_c"]),
            ("all fail", ["no", "no", "text"], ["rules_yes", "rules_yes", "rules_c"]),
            (
                "a result getter that finds nothing first",
                ["none", "yes", "text"],
                ["rules_yes", "rules_yes", "rules_ab"],
            ),
            (
                "a getter raising FileNotFoundError first",
                ["missing", "yes", "text"],
                ["rules_yes", "rules_yes", "rules_ab"],
            ),
        ]:
            evaluator = {
                "func": metrics,
                "conj": conj,
                "result": [rule(r) for r in results],
                "expected": [rule(e) for e in expected],
            }
            found.append(EvaluatorCase(evaluator, values, "DONE", f"conj {conj}: {label}"))
    for name in ("missing", "none"):
        found.append(
            EvaluatorCase(
                {"func": "exact_match", "result": rule(name), "expected": rule("rules_yes")},
                values,
                None,
                f"one metric, result getter {name!r}",
            )
        )
    found.append(
        EvaluatorCase(
            {
                "func": ["exact_match", "exact_match"],
                "result": [rule("yes"), rule("no")],
                "expected": [rule("rules_yes"), rule("rules_yes")],
                "options": [{}, None],
            },
            values,
            None,
            "options with a null entry",
        )
    )
    return found
