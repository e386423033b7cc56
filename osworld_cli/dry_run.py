"""`osworld run --dry-run`: the plan and its warnings, printed; nothing is started or written."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from rich.text import Text

from .errors import CANNOT_START, OK, option_mistakes
from .output import Column, console, show_table

if TYPE_CHECKING:
    from osworld_harness.execution.preview import RunPreview
    from osworld_harness.results.config import RunConfig


def say(text: str, style: str = "") -> None:
    console.print(Text(text, style=style), soft_wrap=True)


def budget_text(preview: RunPreview) -> str:
    config = preview.config
    seconds = config.time_budget()
    if not seconds:
        time = "no limit on the agent's time (as OSWorld's run.py)"
    else:
        given = "--agent-time-budget" if config.agent_time_budget is not None else "the default"
        time = (f"the agent has {seconds:g} s of predict() per task ({seconds / config.max_steps:g} s a step; "
                f"{given})")
    trials = f", {config.trials} trials each" if config.trials > 1 else ""
    return f"budgets: {config.max_steps} steps per task{trials}; {time}"


def agent_text(config: RunConfig) -> str:
    from mm_agents.loader import declared_defaults

    declared = declared_defaults(config.agent, config.agent_python)

    def origin(name: str) -> str:
        if name not in config.agent_defaults:
            return ""
        if name in declared:
            return " (the agent's own default)"
        return " (the agent's name: it declares no model)" if name == "model" else " (it declares none)"
    return (f"agent: {config.agent}, model {config.model}{origin('model')}, observation {config.observation_type}"
            f"{origin('observation_type')}, action space {config.action_space}{origin('action_space')}")


def built_with_text(config: RunConfig) -> str:
    """What the agent's constructor gets (or keeps of its own) of the run's options, and from where."""
    from mm_agents.loader import accepts_argument, declared_defaults, load_agent_class
    from osworld_harness.results.config import RUN_DEFAULTS

    agent_class = load_agent_class(config.agent, config.agent_python)
    declared = declared_defaults(config.agent, config.agent_python)
    given = config.agent_kwargs()
    parts = []
    for name in RUN_DEFAULTS:
        if name == "action_space":
            continue  # said on the agent's line
        if name in config.agent_args:
            parts.append(f"{name} {shown(given[name])} (--agent-arg)")
        elif name in config.agent_defaults:
            parts.append(f"{name} {shown(getattr(config, name))} (its own default)")
        elif name in declared:  # it would have kept its own: the option was given
            parts.append(f"{name} {shown(given[name])} (given; its own: {shown(declared[name])})")
        elif accepts_argument(agent_class, name):
            parts.append(f"{name} {shown(given[name])}")
    return "agent built with: " + (", ".join(parts) if parts else "none of the run's options (it takes none)")


def shown(value: object) -> str:
    if value is None:
        return "none"
    return f"{value:g}" if isinstance(value, float) else str(value)


def part_text(config: RunConfig, selection: int) -> str | None:
    """What part of the selection a --shard or --limit run takes, and where it goes."""
    parts = ([f"shard {config.shard[0]} of {config.shard[1]} (round-robin over the tasks sorted by domain and id)"]
             if config.shard else []) + ([f"a smoke run of the first {config.limit}"] if config.limit else [])
    if not parts:
        return None
    return (f"part: {' and '.join(parts)} of the {selection} selected task(s), in a folder of its own "
            f"({config.layout.model_dir.name})")


def holdings_lines(preview: RunPreview, forced: list[tuple[str, object, object]]) -> list[str]:
    """What the results folder already holds: this run's tasks (resumed), other task sets' and strays, and the
    settings --force mixes."""
    from osworld_harness.results.config import flag
    from osworld_harness.results.task_scope import folder_holdings

    states: dict[tuple[str, str], list[str]] = {}
    for planned in preview.plan.to_run + preview.plan.skipped:
        states.setdefault((planned.domain, planned.task_id), []).append(planned.state.value)
    lines = folder_holdings(preview.config.layout.model_dir, preview.plan.selected, states).lines()
    if forced:
        lines.append("  its results were made with other settings, which --force mixes in: " + "; ".join(
            f"{flag(name)} was {old!r}, now {new!r}" for name, old, new in forced))
    return lines


def agent_problem(config: RunConfig) -> str | None:
    """Why the agent cannot be built (a missing API key...), as a real run would stop; None when it can."""
    from osworld_harness.execution.run import RunOptionError, check_agent

    try:
        check_agent(config)
    except RunOptionError as e:
        return str(e)
    return None


def app_lines(config: RunConfig, preview: RunPreview) -> list[str]:
    """The apps the local desktop will build before its first desktop starts, as `tasks coverage` says it."""
    from desktop_env.providers import builds_its_desktop

    if not builds_its_desktop(config.provider) or not preview.plan.to_run:
        return []
    from desktop_env.tasks import load_task_set
    from osworld_harness.execution.plan import once_per_task

    from .coverage_command import to_build_lines

    task_set = load_task_set(config.tasks)
    return to_build_lines([task_set.load(p.domain, p.task_id) for p in once_per_task(preview.plan.to_run)])


def print_dry_run(config: RunConfig) -> int:
    """Prints what the run would do; the exit status: 2 when a real run would refuse to start (a mistake in the
    options, an agent that cannot be built, --strict and a score that would not be comparable), else 0."""
    from osworld_harness.execution.plan import broken_tasks, unsupported_tasks
    from osworld_harness.execution.preview import blockers
    from osworld_harness.execution.run import check_run, environment_versions

    strict, network_given = config.strict, config.network is not None
    with option_mistakes():
        preview, forced = check_run(dataclasses.replace(config, strict=False))
    config, plan = preview.config, preview.plan
    facts = preview.facts
    say(f"plan: {facts['tasks']} task(s) from {config.tasks or 'the built-in suite'}"
        + (" (OSWorld-Verified)" if config.osworld else "") + f" -> {config.layout.model_dir}", "bold")
    part = part_text(config, len(plan.selection))
    if part:
        say(part)
    for line in holdings_lines(preview, forced):
        say(line)
    broken = broken_tasks(plan.invalid)
    columns = [Column("domain", key=True), Column("tasks", justify="right"), Column("to run", justify="right"),
               Column("done", justify="right"), Column("errored before", justify="right"),
               *[Column("broken", justify="right")] * bool(broken),  # a sound checkout's table stays as it was
               Column("cannot run here", justify="right"), Column("live web", justify="right"),
               Column("downloads", justify="right"), Column("in cache", justify="right")]
    rows = [[name, str(d.tasks), str(d.to_run), str(d.done), str(d.errored), *[str(d.broken)] * bool(broken),
             str(d.cannot_run), str(d.live_web), str(d.downloads), str(d.prefetched)]
            for name, d in preview.domains.items()]
    totals = [sum(int(row[i]) for row in rows) for i in range(1, len(columns))]
    show_table(columns, rows + [["total", *map(str, totals)]], sections=[len(rows) - 1])
    if plan.left_out:
        say(f"left out: {len(plan.left_out)} task(s) OSWorld-Verified does not score: "
            + "; ".join(sorted(set(plan.left_out.values()))))
    if broken:
        say(f"broken: {len(broken)} task file(s); each gets an error record, counted as 0, and the score is not "
            "comparable (file: field = value: what is wrong):", "red")
        for planned in broken:
            say(f"  {planned.domain}/{planned.task_id}:")
            for each in planned.problems:
                say(f"    {each}")
    invalid = unsupported_tasks(plan.invalid)
    if invalid:
        named = ", ".join(f"{name} {count}" for name, count in sorted(blockers(plan).items(),
                                                                     key=lambda kv: (-kv[1], kv[0])))
        say(f"cannot run here: {len(invalid)} task(s) ({named}); each gets an error record, counted as 0:")
        for planned in invalid:
            say(f"  {planned.domain}/{planned.task_id}: {planned.error}")
    how = ("--network" if config.network else "--no-network") if network_given else "decided by the tasks"
    say(f"network: {'on' if config.network else 'off'} ({how}); {len(preview.live_web)} task(s) to run need a live "
        "website or an account")
    downloads, cached = facts["downloads"], facts["prefetched"]
    missing = len(preview.missing_files)
    say(f"downloads: {downloads} task(s) need files fetched by URL, {cached} of them all in the cache "
        f"({config.cache_dir}); {missing} file(s) to fetch"
        + (" before the first desktop starts" if missing and config.prefetch else
           " during each task's setup" if missing else ""))
    for line in app_lines(config, preview):
        say(line)
    say(budget_text(preview))
    say(agent_text(config))
    say(built_with_text(config))
    problem = agent_problem(config) if plan.to_run else None
    warning = preview.network_warning()  # the rest of the warnings a run gives are said above
    if warning:
        say(f"warning: {warning}", "yellow")
    for line in preview.verdict_with(environment_versions(config.provider)).lines():
        say(line)
    if problem:
        say(f"Error: the agent cannot be built, so a real run would stop here: {problem}", "red")
        return CANNOT_START
    if not preview.verdict.comparable and strict:
        say("--strict: this run would be refused", "red")
        return CANNOT_START
    return OK
