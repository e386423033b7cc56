"""Turns a task's `evaluator` block into a score, exactly as OSWorld defines it.

- `func` is a metric name, or a list of names with `result`/`expected`/`options`
  lists aligned with it (entries may be null; task validation refuses a null entry of an `expected`
  list, on which OSWorld's evaluate() raises).
- `conj: "and"` (default): 0 at the first metric that gives 0, else the mean;
  `conj: "or"`: 1 at the first metric that gives 1, else the max.
- A result getter that finds nothing (None, or FileNotFoundError) gives 0 for
  that metric (so 0 overall under "and").
- `infeasible` and FAIL-as-last-action are decided by DesktopEnv before this runs.
Metrics give OSWorld's verdicts unless `evaluator_fixes` (fixes.py) asks for ours.
Errors that are not "the agent's file is missing" (a getter that cannot reach the
desktop, a metric that crashes on a valid file) raise EvaluationError: they are
harness errors and must be recorded as errors, never as a score of 0.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import DesktopEnvError
from .context import context_for
from .fingerprint import fingerprint
from .fixes import evaluator_fixes as fixes_applied
from .outcome import Evaluation, MetricPart, MetricResult, as_metric_result, summarize_parts
from .registry import get_getter, get_metric, ignored_options


class EvaluationError(DesktopEnvError):
    """The evaluator itself failed (not the agent): record as an error, not a failure."""


@dataclass
class MetricCall:
    func: str
    result: dict | None
    expected: dict | None
    options: dict


def aligned(value: Any, length: int, field: str) -> list:
    """A per-metric list for `field`: a list must match the funcs; a single value applies to all."""
    if isinstance(value, list):
        if len(value) != length:
            raise EvaluationError(f"evaluator '{field}' has {len(value)} entries for {length} funcs")
        return value
    return [value] * length


def metric_entries(evaluator: dict) -> list[tuple[Any, Any, Any, Any]]:
    """(func, result, expected, options) of each metric, as the task file wrote them (options may
    be anything there: validation reports what is not an object); EvaluationError when a list's
    length does not match the funcs."""
    funcs = evaluator["func"] if isinstance(evaluator["func"], list) else [evaluator["func"]]
    n = len(funcs)
    if isinstance(evaluator["func"], list):
        results = aligned(evaluator.get("result"), n, "result")
        expecteds = aligned(evaluator.get("expected"), n, "expected")
        options = aligned(evaluator.get("options", {}), n, "options")
    else:
        results, expecteds = [evaluator.get("result")], [evaluator.get("expected")]
        options = [evaluator.get("options", {})]
    return list(zip(funcs, results, expecteds, options, strict=True))


def metric_calls(evaluator: dict) -> list[MetricCall]:
    return [MetricCall(f, r, e, o or {}) for f, r, e, o in metric_entries(evaluator)]


def run_getter(env: Any, config: dict | None, role: str, func: str) -> Any:
    """The value of one getter config. Getters get the evaluation's context (`env` may be one, or
    a DesktopEnv, which made one for this evaluation), never the env itself."""
    if not config:
        return None
    fn = get_getter(config["type"])
    ctx = context_for(env)
    try:
        with ctx.getter_scope(f"{role} getter {config['type']!r} of metric {func!r}", config):
            return fn(ctx, config)
    except FileNotFoundError:
        return None
    except DesktopEnvError:
        raise
    except Exception as e:
        raise EvaluationError(f"{role} getter {config['type']!r} of metric {func!r} failed: "
                              f"{type(e).__name__}: {e}") from e


def metric_options(options: dict, ignored: dict | None = None) -> dict:
    """The options a metric is called with: an option named with a leading underscore (OSWorld's
    task files use `_note`) is a note for the reader, not an argument; one the metric declares ignored
    (registry.ignored_options: OSWorld's metric does not read it either) is left out."""
    return {k: v for k, v in options.items() if not str(k).startswith("_") and k not in (ignored or {})}


def call_metric(call: MetricCall, result: Any, expected: Any) -> MetricResult:
    fn = get_metric(call.func)
    options = metric_options(call.options, ignored_options(fn))
    try:
        value = fn(result, expected, **options) if call.expected is not None else fn(result, **options)
    except Exception as e:
        raise EvaluationError(f"metric {call.func!r} failed: {type(e).__name__}: {e}") from e
    try:
        return as_metric_result(value, call.func)
    except (TypeError, ValueError) as e:
        raise EvaluationError(str(e)) from None


def missing_result(call: MetricCall) -> MetricResult:
    """The agent's output that the result getter looks for is not there: a 0, said plainly."""
    config = call.result or {}
    where = config.get("path") or config.get("file") or config.get("dest") or ""
    what = f" ({where})" if where else ""
    return MetricResult(0.0, f"the result getter {config.get('type')!r} found nothing{what}: "
                             f"the agent's output is missing, so {call.func!r} gives 0")


def evaluate_task(env: Any, evaluator: dict, evaluator_fixes: bool = False) -> Evaluation:
    """The task's score with its explanation and the metrics behind it (OSWorld's rules for conj);
    `evaluator_fixes`: the metrics apply our fixes of OSWorld's bugs (fixes.py) instead of its verdicts."""
    with fixes_applied(evaluator_fixes):
        return _evaluate(env, evaluator)


def _evaluate(env: Any, evaluator: dict) -> Evaluation:
    conj = evaluator.get("conj", "and")
    if conj not in ("and", "or"):
        raise EvaluationError(f"evaluator 'conj' must be 'and' or 'or', got {conj!r}")
    calls = metric_calls(evaluator)
    parts: list[MetricPart] = []

    def finish(score: float) -> Evaluation:
        rest = [MetricPart(c.func, None, "", skipped=True) for c in calls[len(parts):]]
        all_parts = parts + rest
        return Evaluation(score, summarize_parts(score, conj, all_parts), tuple(all_parts))

    for call in calls:
        result = run_getter(env, call.result, "result", call.func)
        values = {"result": fingerprint(result)}
        if call.result is not None and result is None:
            outcome = missing_result(call)
        else:
            expected = run_getter(env, call.expected, "expected", call.func)
            values["expected"] = fingerprint(expected)
            outcome = call_metric(call, result, expected)
        parts.append(MetricPart(call.func, outcome.score, outcome.explanation, values=values))
        if conj == "and" and outcome.score == 0:
            return finish(0.0)
        if conj == "or" and outcome.score == 1:
            return finish(1.0)
    scores = [p.score for p in parts if p.score is not None]
    if not scores:
        return Evaluation(0.0, "the evaluator names no metric", ())
    return finish(sum(scores) / len(scores) if conj == "and" else max(scores))


def score_task(env: Any, evaluator: dict, evaluator_fixes: bool = False) -> float:
    return evaluate_task(env, evaluator, evaluator_fixes).score
