"""`osworld run`, `osworld summarize`, `osworld demo`."""
from __future__ import annotations

import csv
import io
import json
import logging
import sys
import time
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape
from rich.text import Text

from .dry_run import print_dry_run
from .errors import INTERRUPTED, OK, RUN_STOPPED, TASK_ERRORS, option_mistakes
from .limit_options import DESKTOP_LIMITS
from .osworld_options import AcceptsOSWorldOptions
from .output import Column, console, format_option, show_table, tsv
from .run_options import config_values, run_options
from .task_commands import load_plugins

if TYPE_CHECKING:
    from osworld_harness.execution.plan import RunSummary
    from osworld_harness.execution.run import RunConfig
    from osworld_harness.results.summary import TaskFailure


def parse_labels(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    from osworld_harness.results.summary import parse_labels as parse

    try:
        return parse(values)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


label_option = click.option(
    "--label", "labels", multiple=True, callback=parse_labels, metavar="NAME=PATH",
    help="Call the run under PATH (one of the folders given) NAME in tables (repeatable). Without it a run "
         "is called by the label its args.json records (run --label), else ACTION_SPACE/OBS/MODEL; two runs "
         "that would share a name get their results folder in front.")
rescored_option = click.option(
    "--rescored", is_flag=True,
    help="Use the scores `osworld rescore` wrote (rescore.json) where it wrote one, instead of result.txt.")

GROUP_KEYS = ("group", "score", "95% CI")  # never wrapped: what a reader looks for in a row


def print_summary(paths: tuple[str, ...], fmt: str, with_failures: bool = False,
                  labels: dict[str, str] | None = None, rescored: bool = False) -> None:
    from osworld_harness.results.comparability import comparability_lines
    from osworld_harness.results.reproduce import reproduce_line, reproducibility
    from osworld_harness.results.shards import ShardMismatch
    from osworld_harness.results.summary import (
        comparison_rows,
        failures,
        failures_json,
        failures_markdown,
        recorded_disagreement_lines,
        recorded_disagreements,
        run_heading,
        runs_under,
        summarize_run,
        table_rows,
        to_csv,
        to_json,
        to_markdown,
    )

    try:
        runs = runs_under(paths, labels, rescored)
    except ShardMismatch as e:
        raise click.UsageError(str(e)) from None
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--label") from None
    if not runs:
        raise click.ClickException(f"no task results under {', '.join(paths)}")
    summaries = [(run, summarize_run(run)) for run in runs]
    listed = [f for run in runs for f in failures(run)] if with_failures else []
    if fmt == "json":
        data = json.loads(to_json(summaries, {run.path: {"reproducibility": reproducibility(run),
                                                         "comparable": comparable_json(run),
                                                         **scope_json(run),
                                                         "recorded_disagreements": [
                                                             asdict(d) for d in recorded_disagreements(run)]}
                                              for run in runs}))
        if with_failures:
            data["failures"] = failures_json(listed)
        click.echo(json.dumps(data, indent=2))
    elif fmt in ("csv", "tsv"):
        if with_failures:
            raise click.UsageError("--failures lists explanations; use --format table, markdown or json")
        text = to_csv(summaries)
        if fmt == "tsv":
            header, *body = csv.reader(io.StringIO(text))
            text = tsv(header, body)
        click.echo(text, nl=False)
    elif fmt == "markdown":
        lines = {run.path: [f"reproduce with: `{reproduce_line(run)}`"] * bool(reproduce_line(run))
                 + scope_lines(run) + comparability_lines(run) + recorded_disagreement_lines(run) for run in runs}
        click.echo(to_markdown(summaries, lines))
        if with_failures:
            click.echo(failures_markdown(listed))
    else:
        for run, rows in summaries:
            header, body = table_rows(rows)
            show_table([Column(name, key=name in GROUP_KEYS) for name in header], body,
                       title=f"{run.label}  ({run.path})", caption=run_heading(run, rows),
                       styles=["bold" if row.name == "Overall" else None for row in rows])
            line = reproduce_line(run)
            if line:
                console.print(Text(f"reproduce with: {line}"), soft_wrap=True)
            for text in scope_lines(run) + comparability_lines(run) + recorded_disagreement_lines(run):
                console.print(Text(text), soft_wrap=True)
        if len(summaries) > 1:
            header, body = comparison_rows(summaries)
            show_table([Column(name, key=True) for name in header], body,
                       title="side by side: score (errors as 0) [95% CI] (tasks); "
                             "`osworld compare A B` pairs the tasks")
        if with_failures:
            print_failures(listed)


def scope_lines(run: Any) -> list[str]:
    """The shards a run combines and the task folders left out of its task set."""
    from osworld_harness.results.shards import shard_lines
    from osworld_harness.results.task_scope import stray_line

    stray = stray_line(run.scope.strays)
    return shard_lines(run) + ([stray] if stray else [])


def scope_json(run: Any) -> dict[str, Any]:
    from osworld_harness.results.task_scope import task_names

    scope = run.scope
    strays = task_names(dict.fromkeys((r.domain, r.task_id) for r in scope.strays))
    shards = {"count": scope.shards, "present": scope.present, "missing": scope.missing_shards} \
        if scope.shards else None
    return {"not_in_task_set": strays, "shards": shards}


def comparable_json(run: Any) -> dict[str, Any]:
    from osworld_harness.results.comparability import run_comparability

    return run_comparability(run).to_json()


def print_failures(listed: list[TaskFailure]) -> None:
    """Each task that scored below 1 or ended in an error, with why (the texts are the files', never markup)."""
    from osworld_harness.results.summary import task_label

    if not listed:
        console.print("failures: none (every finished task scored 1)")
        return
    columns = [Column("run"), Column("task", key=True), Column("outcome", key=True), Column("score", key=True),
               Column("why")]
    show_table(columns, [[Text(f.run), Text(task_label(f.domain, f.task_id, f.trial)), f.outcome,
                          "-" if f.score is None else f"{f.score:g}", Text(f.explanation)] for f in listed],
               title=f"failures ({len(listed)})", lines=True)


@click.command("run", cls=AcceptsOSWorldOptions)
@run_options(
    "osworld", "agent", "agent_args", "agent_python", "model", "observation_type", "action_space", "provider",
    "path_to_vm", "tasks", "domains", "task_ids", "limit", "shard", "max_steps", "max_trajectory_length",
    "temperature", "top_p", "max_tokens", "sleep_after_execution", "screen_size", "num_envs", "trials", "result_dir",
    "resume", "retry_errors", "force", "record", "watch", "network", *DESKTOP_LIMITS, "wait_after_reset",
    "cache_dir", "screenshot_scale", "perturb", "perturb_seed", "evaluator_fixes", "backend", "ray_address",
    "ray_cpus_per_env", "ray_memory_per_env", "ray_task_retries", "agent_time_budget", "stop_after_fatal", "prefetch",
    "client_password", "label",
    click.option("--log-level", default=None, type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"]),
                 help="Log the harness's messages at this level to stderr (as -v does for INFO)."),
    click.option("--dry-run", is_flag=True,
                 help="Print the plan (what runs, what is skipped, what cannot run here and why, what needs the "
                      "network or downloads), the budgets and whether the score would be comparable with OSWorld's "
                      "leaderboard, then exit without starting anything."),
    "strict", "plugins")
def run_command(dry_run: bool, log_level: str | None, **options: Any) -> None:
    """Run an agent on tasks and score it; results go to RESULT_DIR/ACTION_SPACE/OBS/MODEL/DOMAIN/ID/.
    OSWorld's run.py options are accepted by their own names too (--max_steps, --observation_type, ...).

    Exit status: 0 every selected task has a score; 1 some ended in an error record; 2 nothing ran
    (a mistake in the options, or --strict and a score that would not be comparable); 3 stopped early (the
    same fatal error task after task, workers that die as they start, a Ray cluster with no room); 130
    interrupted."""
    if log_level:
        logging.getLogger().setLevel(log_level)
    config = config_of(options)
    if dry_run:
        sys.exit(print_dry_run(config))
    summary = run_with_progress(config)
    console.print(f"ran {summary.ran}: {summary.ok} scored ({summary.score_sum:g} success), {summary.errors} error(s); "
                  f"skipped {summary.skipped_done} done and {summary.skipped_errors} errored")
    print_summary((str(config.layout.model_dir),), "table")
    print_invalid(summary)
    sys.exit(run_exit_status(summary))


CLI_ONLY = ("dry_run", "log_level")  # options of the command, not of the run


def config_of(options: dict[str, Any]) -> RunConfig:
    """The RunConfig of `osworld run`'s options (as click parsed them), its plugins loaded and the agent's
    own defaults taken for what the options leave out."""
    from osworld_harness.execution.run import RunConfig

    options = config_values({k: v for k, v in options.items() if k not in CLI_ONLY})
    load_plugins(options["plugins"])
    with option_mistakes():
        return RunConfig(**options).resolved()


def print_invalid(summary: RunSummary) -> None:
    if summary.invalid:
        from osworld_harness.execution.plan import once_per_task

        tasks = once_per_task(summary.invalid)
        broken = sum(planned.broken for planned in tasks)
        console.print(f"[red]{len(tasks)} task(s) cannot run[/], {broken} of them with a broken task file (error "
                      "records written; `osworld tasks validate` checks the files):")
        for planned in tasks:
            console.print(f"  {planned.domain}/{planned.task_id}: {'broken: ' * planned.broken}{planned.error}",
                          markup=False, highlight=False)


def run_with_progress(config: RunConfig) -> RunSummary:
    from osworld_harness.execution.progress import RunProgress
    from osworld_harness.execution.run import run_benchmark

    try:
        with option_mistakes(), RunProgress(console) as progress:
            return run_benchmark(config, report=progress)
    except KeyboardInterrupt:
        console.print("stopped; finished tasks are kept, re-run the same command to resume")
        sys.exit(INTERRUPTED)


def run_exit_status(summary: RunSummary) -> int:
    """3 when the run stopped early; 1 when a selected task is left with an error record, run now or kept
    from before (see --retry-errors)."""
    if summary.stopped:
        console.print(f"[red]stopped:[/] {escape(summary.stopped)}")
        return RUN_STOPPED
    errors = summary.errors + summary.skipped_errors + len(summary.invalid)
    if errors:
        kept = f" ({summary.skipped_errors} kept from earlier runs; --retry-errors runs them again)" \
            if summary.skipped_errors else ""
        console.print(f"[red]{errors} task(s) ended in an error{kept}[/]")
        return TASK_ERRORS
    return OK


@click.command("summarize")
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@format_option(help="table; markdown; json; csv or tsv: a row per group, then one per trial.")
@click.option("--failures", "with_failures", is_flag=True,
              help="Also list each task that scored below 1 (or ended in an error) with why: its evaluation's "
                   "explanation from status.json.")
@label_option
@rescored_option
def summarize_command(results: tuple[str, ...], fmt: str, with_failures: bool, labels: dict[str, str],
                      rescored: bool) -> None:
    """Success rates per domain, per paper category and overall for one or more result folders, and
    whether each run is comparable with OSWorld's published numbers (and if not, why)."""
    print_summary(results, fmt, with_failures, labels, rescored)


@click.command("demo")
@click.option("--result-dir", default="./results/demo", show_default=True)
@click.option("--num-envs", default=1, show_default=True, type=click.IntRange(1))
def demo_command(result_dir: str, num_envs: int) -> None:
    """A small benchmark (test_small) with the reference-solution agent, then its summary: no API key needed."""
    from desktop_env.tasks.loader import BUILTIN_ROOT
    from osworld_harness.execution.run import RunConfig

    config = RunConfig(agent="oracle", model="reference-solution", observation_type="screenshot",
                       tasks=str(BUILTIN_ROOT / "test_small.json"), result_dir=result_dir, num_envs=num_envs,
                       retry_errors=True)
    started = time.monotonic()
    summary = run_with_progress(config)
    print_summary((str(config.layout.model_dir),), "table")
    print_invalid(summary)
    console.print(f"the demo ran {summary.ran} task(s) in {time.monotonic() - started:.0f} s "
                  f"({summary.skipped_done} already done in {result_dir})")
    sys.exit(run_exit_status(summary))
