"""`osworld tasks ...`: list, show and validate task files."""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table
from rich.text import Text

from desktop_env.extensions import PluginError, load_plugin

from .errors import TASK_ERRORS, OptionMistake, selection_mistake
from .output import Column, console, format_option, print_table, rows_text, show_table
from .run_options import run_option

if TYPE_CHECKING:
    from desktop_env.tasks import Problem, TaskSet


tasks_option = click.option(
    "--tasks", "meta", type=click.Path(dir_okay=False), default=None,
    help="Meta file {domain: [ids]} with examples/ beside it (default: the built-in test_all.json).")


def load_plugins(plugins: tuple[str, ...]) -> None:
    for plugin in plugins:
        try:
            load_plugin(plugin)
        except PluginError as e:
            raise OptionMistake("--plugin", str(e)) from None


def open_task_set(meta: str | None) -> TaskSet:
    """The meta file --tasks names (or the built-in one); a missing or broken one is the user's mistake."""
    from desktop_env.tasks import TaskFileError, load_task_set

    try:
        return load_task_set(meta)
    except TaskFileError as e:
        raise OptionMistake("--tasks", str(e)) from None


def select_tasks(task_set: TaskSet, domains: tuple[str, ...] = (), task_ids: tuple[str, ...] = ()
                 ) -> list[tuple[str, str]]:
    from desktop_env.tasks import UnknownSelection

    try:
        return task_set.select(list(domains) or None, list(task_ids) or None)
    except UnknownSelection as e:
        raise selection_mistake(e) from None


plugin_option = run_option("plugins")


@click.group("tasks")
def tasks_group() -> None:
    """Task files: list, show, validate."""


@tasks_group.command("list")
@tasks_option
@click.option("--domain", "domains", multiple=True, help="Only this domain (repeatable; `all`: every one).")
@format_option()
def list_command(meta: str | None, domains: tuple[str, ...], fmt: str) -> None:
    """List the tasks a meta file indexes, with their whole ids. A task file that cannot be read is listed
    with what is wrong (and the exit status is 1)."""
    from desktop_env.tasks import TaskFileError

    task_set = open_task_set(meta)
    rows: list[tuple[str, str, str, bool]] = []  # domain, id, instruction or what is wrong, usable
    for domain, task_id in select_tasks(task_set, domains):
        try:
            rows.append((domain, task_id, task_set.load(domain, task_id).instruction, True))
        except TaskFileError as e:
            rows.append((domain, task_id, f"cannot be used: {e}", False))
    broken = sum(not usable for *_, usable in rows)
    if fmt == "json":
        click.echo(json.dumps([{"domain": d, "id": i, **({"instruction": text} if usable else {"error": text})}
                               for d, i, text, usable in rows], indent=2, ensure_ascii=False))
    elif fmt != "table":
        click.echo(rows_text(fmt, ["domain", "id", "instruction"], [[d, i, text] for d, i, text, _ in rows]), nl=False)
    else:
        show_table([Column("domain", key=True), Column("id", key=True), Column("instruction")],
                   [[d, i, Text(text, style="" if usable else "red")] for d, i, text, usable in rows],
                   title=str(task_set.meta_path))
    if broken:
        console.print(f"[red]{broken} task file(s) cannot be used[/] (osworld tasks validate says more)")
        sys.exit(TASK_ERRORS)


@tasks_group.command("show")
@tasks_option
@click.argument("task_id")
def show_command(meta: str | None, task_id: str) -> None:
    """Print one task file."""
    from desktop_env.tasks import TaskFileError

    task_set = open_task_set(meta)
    for domain, tid in task_set.select():
        if tid == task_id:
            try:
                task = task_set.load(domain, tid, check_paths=False)
            except TaskFileError as e:
                raise click.ClickException(str(e)) from None
            console.print(f"[bold]{domain}/{tid}[/] ({task.path})")
            click.echo(json.dumps(task.config, indent=2, ensure_ascii=False))
            return
    raise OptionMistake("TASK_ID", f"no task {task_id!r} in {task_set.meta_path}")


def meta_file(path: Path) -> Any:
    """The task set of a meta file ({domain: [ids]}), or None for a task file."""
    from desktop_env.tasks import TaskFileError, load_task_set
    from desktop_env.tasks.loader import read_json

    try:
        content = read_json(path, "file")
    except TaskFileError:
        return None  # validated as a task file, which reports it
    if not isinstance(content, dict) or "id" in content or not content \
            or not all(isinstance(v, list) for v in content.values()):
        return None
    try:
        return load_task_set(path)
    except TaskFileError as e:
        raise OptionMistake("PATH", str(e)) from None


def validation_targets(paths: tuple[str, ...]) -> tuple[list[Path], list[Any]]:
    """(task files, task sets whose listings to check) that PATHs name."""
    files: list[Path] = []
    sets: list[Any] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            # An OSWorld root holds meta files and examples/: examples/ has the task files.
            root = path / "examples" if (path / "examples").is_dir() else path
            files += sorted(p for p in root.rglob("*.json") if not p.name.startswith("test_"))
            if root != path:
                sets += [task_set for m in sorted(path.glob("test_*.json")) if (task_set := meta_file(m))]
        elif path.is_file():
            task_set = meta_file(path)
            if task_set is None:
                files.append(path)
                continue
            sets.append(task_set)
            files += [task_set.task_path(*pair) for pair in task_set.select() if task_set.task_path(*pair).is_file()]
        else:
            raise OptionMistake("PATH", f"no such file or folder: {path}")
    return list(dict.fromkeys(files)), sets


def load_tasks(paths: tuple[str, ...]) -> list[Any]:
    """The tasks PATHs name (task files, meta files, folders), as `tasks validate` reads them; a task file
    that cannot be read is the user's mistake, named."""
    from desktop_env.tasks import TaskFileError, load_task

    files, _ = validation_targets(paths)
    tasks = []
    for path in files:
        try:
            tasks.append(load_task(path, check_paths=False))
        except TaskFileError as e:
            raise OptionMistake("PATH", str(e)) from None
    return tasks


SUMMARY_COLUMNS = ("files", "valid", "broken", "unknown names", "unsupported names", "unsafe paths", "missing files",
                   "listing problems", "warnings")
FINDING_COLUMNS = ("category", "file", "field", "value", "kind", "reason")


@tasks_group.command("validate")
@click.argument("paths", nargs=-1, required=True)
@plugin_option
@click.option("-q", "--quiet", is_flag=True, help="Only the summary.")
@format_option(help="table: each problem, then the summary and the names not known or not supported; json: the "
                    "summary and every finding; markdown, csv or tsv: a row per finding (category, file, field, "
                    "value, kind, reason), or with --quiet the summary's row.")
def validate_command(paths: tuple[str, ...], plugins: tuple[str, ...], quiet: bool, fmt: str) -> None:
    """Check task files, meta files or folders of them: every setup step, getter and metric must be
    known, every host path a task names must stay inside the harness's folders, every local file a
    task uses must be there, and a meta file must list each task once, with its task file.

    Given an OSWorld root (with examples/), examples/ is read and the meta files (test_*.json)
    beside it are checked for their listing. An option OSWorld's own metric ignores too is a warning
    (the task runs). Exit status 1 when anything but an unsupported name or a warning is wrong.
    """
    from desktop_env.tasks import TaskFileError, listing_problems, load_task, refusals, validate_task

    load_plugins(plugins)
    files, sets = validation_targets(paths)
    findings: list[tuple[str, Problem | str, Path | None]] = []  # (category, what, the broken file) in order
    unknown: Counter[tuple[str, str]] = Counter()
    unsupported: Counter[tuple[str, str, str]] = Counter()
    valid = 0
    for path in files:
        try:
            problems = validate_task(load_task(path, check_paths=False))  # unsafe paths come as problems
        except TaskFileError as e:
            findings.append(("broken", str(e), path))
            continue
        if not refusals(problems):
            valid += 1
        for problem in problems:
            category = ("warning" if problem.warning else "unsafe path" if problem.unsafe_path
                        else "missing file" if problem.kind == "missing file"
                        else "unsupported name" if problem.unsupported
                        else "unknown name" if problem.about_names else "invalid value")
            if category == "unsupported name":
                unsupported[(problem.kind, problem.name, problem.reason)] += 1
            elif category in ("unknown name", "invalid value"):  # counted together, as "unknown names"
                unknown[(problem.kind, problem.name)] += 1
            findings.append((category, problem, None))
    findings += [("listing problem", problem, None) for task_set in sets for problem in listing_problems(task_set)]
    counted = Counter(category for category, _, _ in findings)
    summary = [str(len(files)), str(valid), str(counted["broken"]), str(sum(unknown.values())),
               str(sum(unsupported.values())), str(counted["unsafe path"]), str(counted["missing file"]),
               str(counted["listing problem"]), str(counted["warning"])]
    rows = [finding_row(category, what, broken) for category, what, broken in findings]
    if fmt == "json":
        click.echo(json.dumps({"summary": dict(zip(SUMMARY_COLUMNS, map(int, summary), strict=True)),
                               "findings": [dict(zip(FINDING_COLUMNS, row, strict=True)) for row in rows]}, indent=2))
    elif fmt != "table":
        click.echo(rows_text(fmt, SUMMARY_COLUMNS, [summary]) if quiet else rows_text(fmt, FINDING_COLUMNS, rows),
                   nl=False)
    else:
        print_validation(findings, summary, unknown, unsupported, quiet)
    if counted.keys() - {"warning", "unsupported name"}:
        sys.exit(TASK_ERRORS)


def finding_row(category: str, what: Problem | str, broken: Path | None) -> list[str]:
    """One finding of `tasks validate` as FINDING_COLUMNS: a problem's own fields, a broken file's message."""
    if isinstance(what, str):
        return [category, str(broken), "", "", "task file", what]
    return [category, *(what.to_dict()[key] for key in ("file", "field", "value", "kind", "reason"))]


def print_validation(findings: list[tuple[str, Problem | str, Path | None]], summary: list[str],
                     unknown: Counter[tuple[str, str]], unsupported: Counter[tuple[str, str, str]],
                     quiet: bool) -> None:
    """`tasks validate`'s table format: each problem as it is found (the broken files last), the summary, the
    names not known and those not supported with their uses."""
    def show(problem: Problem | str, style: str = "red") -> None:
        if not quiet:  # the value is the task's text: printed as it is, never as markup
            console.print(str(problem), style=style, markup=False, highlight=False, soft_wrap=True)

    for category, what, _ in findings:
        if category == "warning":
            show(f"warning: {what}", "yellow")
        elif category not in ("broken", "unsupported name"):
            show(what)
    for category, what, _ in findings:
        if category == "broken":
            show(what)
    table = Table(title="task validation")
    for column in SUMMARY_COLUMNS:
        table.add_column(column, justify="right")
    table.add_row(*summary)
    print_table(table)
    if unknown:
        table = Table("kind", "unknown name", "uses", title="unknown names")
        for (kind, name), count in unknown.most_common():
            table.add_row(kind, name, str(count))
        print_table(table)
    if unsupported:
        table = Table("kind", "unsupported name", "uses", "why", title="unsupported names")
        for (kind, name, reason), count in unsupported.most_common():
            table.add_row(kind, name, str(count), reason)
        print_table(table)
