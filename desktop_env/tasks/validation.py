"""Checks a task's names against what this harness can run.

Every setup step `type` (config and postconfig), getter `type` (result and
expected) and metric `func` must be known. An unknown name is a Problem that
names the file, the field (e.g. `evaluator.result[1].type`) and the value, and
lists the close known names; a name we know but cannot run offline (accounts,
live web) is reported as unsupported with the reason. A host path that would leave
the harness's folders (desktop_env.tasks.paths) is a Problem of kind "path": an
error, like an unknown name.

A metric's options are checked against its signature (metrics declare their options as
keyword parameters): an option the metric does not take is a Problem of kind "option"
naming the field (`evaluator.options[1].sheet_nme`) and the close names. A metric may also
check its options' values (compare_table its rules) through a `check_options` attribute;
a plugin metric that takes `**options` is accepted as it is (nothing to check).

An option that OSWorld's task files give but OSWorld's own metric never reads (a metric's
`ignored_options`, an `ignored` OptionIssue of its `check_options`) is a warning, kind "ignored
option": the task runs, the scorer leaves the option out, and `tasks validate` and the run's
plan say so. Only a name no code knows is refused.
"""
from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..controllers.setup import NEEDS_ACCOUNT, step_names
from ..errors import TaskFileError
from ..evaluators import registry
from ..evaluators.scoring import EvaluationError, metric_entries
from .loader import Task, TaskSet
from .paths import missing_resources, unsafe_paths

NAME_KINDS = ("setup step", "getter", "metric", "app")  # app: one the desktop lacks (coverage.app_problems)
OPTION_KINDS = ("option", "option value")
WARNING_KINDS = ("ignored option",)  # the task runs: what validation says of these is a warning


@dataclass(frozen=True)
class Problem:
    path: Path
    field: str
    kind: str          # a name (NAME_KINDS), a metric's option (OPTION_KINDS), "path" (an unsafe host path),
                       # "missing file" (a local resource that is not there), "missing field" (of a getter),
                       # "task file" (cannot be read), or of the meta file: "listing"
    name: str          # the name, or the value as the task or meta file gives it
    reason: str        # "unknown", why it is unsupported, or what is wrong with the value
    close: tuple[str, ...] = ()

    @property
    def unsafe_path(self) -> bool:
        return self.kind == "path"

    @property
    def unsupported(self) -> bool:
        return self.kind in NAME_KINDS and self.reason != "unknown"

    @property
    def warning(self) -> bool:
        """Said, but the task runs (an option OSWorld's metric ignores too)."""
        return self.kind in WARNING_KINDS

    @property
    def about_names(self) -> bool:
        return self.kind in NAME_KINDS

    def to_dict(self) -> dict[str, str]:
        """What an error record keeps of it: the file, the field, the value and what is wrong."""
        return {"file": str(self.path), "field": self.field, "value": self.name, "kind": self.kind,
                "reason": str(self) if self.about_names else self.reason}

    def __str__(self) -> str:
        if self.unsafe_path:
            return f"{self.path}: {self.field} = {self.name!r} {self.reason}"
        if self.kind == "task file":
            return self.reason  # the loader's message names the file
        if self.kind == "missing field":
            return f"{self.path}: {self.field} is missing: {self.reason}"
        if not self.about_names:
            hint = f"; did you mean {', '.join(self.close)}?" if self.close else ""
            return f"{self.path}: {self.field} = {self.name!r}: {self.reason}{hint}"
        hint = f"; did you mean {', '.join(self.close)}?" if self.close else ""
        what = "unknown" if not self.unsupported else f"unsupported ({self.reason})"
        return f"{self.path}: {self.field} = {self.name!r}: {what} {self.kind}{hint}"


def _entries(value: Any, field: str) -> Iterator[tuple[str, object]]:
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield f"{field}[{i}]", item
    else:
        yield field, value


def _check(path: Path, field: str, kind: str, name: object, known: list[str], unsupported: Mapping[str, str]
           ) -> Problem | None:
    if isinstance(name, str) and name in known:
        return None
    if isinstance(name, str) and name in unsupported:
        return Problem(path, field, kind, name, unsupported[name])
    close = tuple(difflib.get_close_matches(str(name), known, n=3, cutoff=0.6))
    return Problem(path, field, kind, str(name), "unknown", close)


def _metric_parameters(fn: Callable[..., Any]) -> tuple[list[str], bool]:
    """The names a metric takes by keyword, and whether it takes any name (`**options`)."""
    params = list(inspect.signature(fn).parameters.values())
    open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    named = [p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                   inspect.Parameter.KEYWORD_ONLY)]
    return named, open_ended


def option_problems(path: Path, field: str, func: str, options: Any, positional: int) -> list[Problem]:
    """What is wrong with one metric call's options: not a dict, a name the metric does not take
    (it is called as metric(result[, expected], **options), so the first `positional` parameters
    are not options), or a value its `check_options` rejects. Names with a leading underscore
    are notes (scoring.metric_options drops them)."""
    if options is None:
        return []
    if not isinstance(options, dict):
        return [Problem(path, field, "option value", repr(options)[:200], "options must be an object")]
    fn = registry.get_metric(func)
    named, open_ended = _metric_parameters(fn)
    accepted = named[positional:]
    ignored = registry.ignored_options(fn)
    problems = []
    for name in options:
        if name in ignored:
            problems.append(Problem(path, f"{field}.{name}", "ignored option", str(name),
                                    f"metric {func!r} ignores it: {ignored[name]}"))
            continue
        if str(name).startswith("_") or open_ended or name in accepted:
            continue
        close = tuple(difflib.get_close_matches(str(name), accepted + list(ignored), n=3, cutoff=0.6))
        takes = ", ".join(accepted) if accepted else "no options"
        problems.append(Problem(path, f"{field}.{name}", "option", str(name),
                                f"metric {func!r} takes no option {name!r} (it takes: {takes})", close))
    check = getattr(fn, "check_options", None)
    if check is not None:
        for issue in check(options):
            issue = registry.OptionIssue(*issue)
            kind = "ignored option" if issue.ignored else "option value"
            problems.append(Problem(path, f"{field}.{issue.field}", kind, issue.value, issue.reason,
                                    tuple(issue.close)))
    return problems


def _metric_option_problems(task: Task, known: list[str]) -> list[Problem]:
    evaluator = task.evaluator
    if "func" not in evaluator:
        return []
    try:  # each metric with its options and expected, aligned as the scorer aligns them
        entries = metric_entries(evaluator)
    except EvaluationError:  # a length mismatch; the evaluator reports it when it runs
        return []
    per_metric_options = isinstance(evaluator.get("func"), list) and isinstance(evaluator.get("options"), list)
    problems = []
    for i, (name, _, expected, opts) in enumerate(entries):
        if not isinstance(name, str) or name not in known:
            continue  # the name's own problem is reported already
        field = f"evaluator.options[{i}]" if per_metric_options else "evaluator.options"
        problems += option_problems(task.path, field, name, opts, 2 if expected is not None else 1)
    return problems


def _missing_getter_fields(path: Path, field: str, name: str, spec: dict[str, Any]) -> list[Problem]:
    """A field the getter declares it needs (registry.requires) that its config lacks."""
    needed = getattr(registry.get_getter(name), "required_fields", ())
    return [Problem(path, f"{field}.{key}", "missing field", key, f"getter {name!r} needs it (it needs: "
                                                                  f"{', '.join(needed)})")
            for key in needed if spec.get(key) is None]


def _null_expected_entries(task: Task) -> list[Problem]:
    """A null entry of an `expected` list: OSWorld's evaluate() builds an expected getter for every metric of the
    list and calls it, raising TypeError on a null one (none of OSWorld's task files has one), so the task could
    never be scored with OSWorld's code; ours would score it."""
    expected = task.evaluator.get("expected")
    if not isinstance(expected, list) or not expected:
        return []
    return [Problem(task.path, f"evaluator.expected[{i}]", "missing field", "expected",
                    "OSWorld's evaluate() calls an expected getter for every metric once the evaluator has an "
                    "`expected` list, and raises on a null one: give this metric one, or score it in a task of its own")
            for i, spec in enumerate(expected) if not spec]


def validate_task(task: Task) -> list[Problem]:
    """Everything validation finds in one task: what refuses it, and the warnings (Problem.warning)."""
    # Imported here: the setup steps and getters import safe_paths, which imports this package.

    registry.load_builtins()
    steps, getters, metrics = step_names(), registry.getter_names(), registry.metric_names()
    problems: list[Problem | None] = []
    config = task.config
    for section, steps_list in (("config", config.get("config") or []),
                                ("evaluator.postconfig", task.evaluator.get("postconfig") or [])):
        for i, step in enumerate(steps_list):
            name = step.get("type") if isinstance(step, dict) else step
            problems.append(_check(task.path, f"{section}[{i}].type", "setup step", name, steps, NEEDS_ACCOUNT))
    evaluator = task.evaluator
    for field, func in _entries(evaluator.get("func"), "evaluator.func"):
        problems.append(_check(task.path, field, "metric", func, metrics, registry.UNSUPPORTED_METRICS))
    problems += _metric_option_problems(task, metrics)
    for role in ("result", "expected"):
        for field, spec in _entries(evaluator.get(role), f"evaluator.{role}"):
            if spec is None or spec == {}:
                continue
            name = spec.get("type") if isinstance(spec, dict) else spec
            problems.append(_check(task.path, f"{field}.type", "getter", name, getters, registry.UNSUPPORTED_GETTERS))
            if isinstance(spec, dict) and name in getters:
                problems += _missing_getter_fields(task.path, field, name, spec)
    problems += _null_expected_entries(task)
    for unsafe in unsafe_paths(config, task.path, task.task_dir):
        value = unsafe.value if isinstance(unsafe.value, str) else repr(unsafe.value)
        problems.append(Problem(task.path, unsafe.field or "", "path", value, unsafe.reason))
    for field, value, local in missing_resources(config, task.path, task.task_dir):
        problems.append(Problem(task.path, field, "missing file", str(value), f"not found at {local}"))
    return [p for p in problems if p is not None]


def refusals(problems: list[Problem]) -> list[Problem]:
    """The problems that keep a task from running (all but the warnings)."""
    return [p for p in problems if not p.warning]


def listing_problems(task_set: TaskSet, pairs: list[tuple[str, str]] | None = None) -> list[Problem]:
    """What is wrong with the meta file's entries (all of them, or those `pairs` selects): an id listed
    twice in one domain (both runs would write one folder), an id with no task file."""
    return [problem for _, problem in _listing(task_set, pairs)]


def _listing(task_set: TaskSet, pairs: list[tuple[str, str]] | None) -> list[tuple[tuple[str, str], Problem]]:
    wanted = set(pairs) if pairs is not None else None
    problems = []
    for domain, ids in task_set.index.items():
        first: dict[str, int] = {}
        for i, task_id in enumerate(ids):
            if wanted is not None and (domain, task_id) not in wanted:
                continue
            field = f"{domain}[{i}]"
            if task_id in first:
                problems.append(((domain, task_id), Problem(
                    task_set.meta_path, field, "listing", task_id,
                    f"is listed twice in domain {domain!r} (first as {domain}[{first[task_id]}])")))
                continue
            first[task_id] = i
            if not task_set.task_path(domain, task_id).is_file():
                problems.append(((domain, task_id), Problem(task_set.meta_path, field, "listing", task_id,
                                                            f"has no task file {task_set.task_path(domain, task_id)}")))
    return problems


def task_problems(task_set: TaskSet, domain: str, task_id: str) -> list[Problem]:
    """Why one task of a set cannot run, all at once: its file cannot be read, or a name is unknown or
    unsupported, or a path escapes, or a local file it needs is missing; and its warnings. Listing
    problems are apart."""
    try:
        task = task_set.load(domain, task_id, check_paths=False)  # unsafe paths come as problems
    except TaskFileError as e:
        return [Problem(task_set.task_path(domain, task_id), "", "task file", "", str(e))]
    return validate_task(task)


def selection_problems(task_set: TaskSet, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], list[Problem]]:
    """For each selected (domain, id) with something to say, every problem (warnings included:
    `refusals` keeps the reasons it cannot run); a run checks this before any desktop starts."""
    found: dict[tuple[str, str], list[Problem]] = {}
    for pair, problem in _listing(task_set, pairs):
        found.setdefault(pair, []).append(problem)
    for pair in dict.fromkeys(pairs):
        if task_set.task_path(*pair).is_file():
            problems = task_problems(task_set, *pair)
            if problems:
                found.setdefault(pair, []).extend(problems)
    return found
