"""What a run will do, before it spends anything: the plan, what its tasks need from outside (a live
website, downloads, and whether the cache has them), the budgets, and whether its number will be
comparable with OSWorld's published ones (osworld_harness/results/comparability.py).

`osworld run --dry-run` prints it; a real run reports the same warnings before its first task and
records the facts in args.json (`plan`), which is what `summarize` judges the run by later.
"""
from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from desktop_env.providers import desktop_versions_for
from desktop_env.tasks import TaskFileError, load_task_set
from desktop_env.tasks.coverage import NEEDS, files_in_cache, web_reasons
from desktop_env.tasks.remote_files import remote_files
from osworld_harness.results.comparability import Verdict, plan_verdict
from osworld_harness.results.config import RunConfig
from osworld_harness.results.task_folder import TaskState

from .plan import Plan, broken_tasks, plan_tasks, unsupported_tasks

if TYPE_CHECKING:
    from desktop_env.tasks import Task
    from desktop_env.tasks.remote_files import RemoteFile

SHOWN = 10  # tasks named under a warning before "and N more"


@dataclass
class DomainPreview:
    tasks: int = 0
    to_run: int = 0
    done: int = 0
    errored: int = 0          # skipped: errored in an earlier run (--retry-errors runs them)
    cannot_run: int = 0       # valid tasks that need what this machine lacks
    broken: int = 0           # tasks whose files are broken (unreadable, a name no code knows...)
    live_web: int = 0         # of the selected tasks that can run, those that need a live website or an account
    downloads: int = 0        # those that need files fetched by URL
    prefetched: int = 0       # of those, the ones whose files are all in the cache


@dataclass
class RunPreview:
    config: RunConfig                 # as it will run: network and time budget decided
    plan: Plan
    domains: dict[str, DomainPreview] = field(default_factory=dict)
    live_web: dict[tuple[str, str], list[str]] = field(default_factory=dict)   # task -> why it needs the web
    missing_files: list[RemoteFile] = field(default_factory=list)   # downloads of tasks to run not in the cache
    verdict: Verdict = field(default_factory=lambda: Verdict(None))

    @property
    def facts(self) -> dict[str, Any]:
        """What args.json records of the plan (`plan`), for the verdict `summarize` gives later."""
        return {"tasks": sum(d.tasks for d in self.domains.values()), "to_run": len(self.plan.to_run),
                "needs_network": len(self.live_web), "cannot_run": len(unsupported_tasks(self.plan.invalid)),
                "broken": len(broken_tasks(self.plan.invalid)),
                "downloads": sum(d.downloads for d in self.domains.values()),
                "prefetched": sum(d.prefetched for d in self.domains.values()),
                "left_out": len(self.plan.left_out), "suite_tasks": self.plan.suite_tasks,
                "time_budget": self.config.time_budget()}

    def verdict_with(self, versions: Mapping[str, Any]) -> Verdict:
        """The verdict naming the desktop that `versions` (environment_versions(), as args.json records them)
        say the run's desktops run: their apps, and the parity of the system they boot from."""
        return plan_verdict(dataclasses.asdict(self.config), self.facts, versions)

    def network_warning(self) -> str | None:
        if self.live_web and not self.config.network:
            return (f"{len(self.live_web)} task(s) need a live website or an account and the network is off: they "
                    f"will most likely score 0 (--network turns it on): {_named(list(self.live_web))}")
        return None

    def invalid_warning(self) -> str | None:
        invalid = unsupported_tasks(self.plan.invalid)
        if invalid:
            return (f"{len(invalid)} task(s) cannot run here; each gets an error record, counted as 0: "
                    f"{_named([(p.domain, p.task_id) for p in invalid])}")
        return None

    def broken_warning(self) -> str | None:
        broken = broken_tasks(self.plan.invalid)
        if broken:
            return (f"{len(broken)} task file(s) are broken; each gets an error record, counted as 0, and the score "
                    f"is not comparable (`osworld tasks validate` lists what is wrong): "
                    f"{_named([(p.domain, p.task_id) for p in broken])}")
        return None

    def downloads_warning(self) -> str | None:
        if self.missing_files:
            tasks = len({(f.domain, f.task_id) for f in self.missing_files})
            when = ("fetched before the first desktop starts" if self.config.prefetch
                    else "fetched during each task's setup (--no-prefetch)")
            return (f"{len(self.missing_files)} file(s) of {tasks} task(s) are not in the cache "
                    f"({self.config.cache_dir}): {when}; `osworld tasks prefetch` fetches them ahead")
        return None

    def warnings(self) -> list[str]:
        """What the user should know before the run spends anything, one line each."""
        return [w for w in (self.network_warning(), self.broken_warning(), self.invalid_warning(),
                            self.downloads_warning()) if w]


def _named(pairs: list[tuple[str, str]]) -> str:
    names = [f"{d}/{t}" for d, t in pairs[:SHOWN]]
    return ", ".join(names) + (f" and {len(pairs) - SHOWN} more" if len(pairs) > SHOWN else "")


def _needs(task: Task) -> tuple[list[str], list[RemoteFile]]:
    return web_reasons(task), remote_files(task)[0]


def preview_run(config: RunConfig) -> RunPreview:
    """The run's plan and what its tasks need, with the network (when not given: on if a task that runs
    needs the live web) and the time budget decided; nothing is started or written."""
    config = config.resolved()
    plan = plan_tasks(config)
    task_set = load_task_set(config.tasks)
    if config.domains and set(task_set.select(config.domains)) == set(task_set.select()):
        # `--domain all` (OSWorld's run.py default), or every domain named: the whole set, recorded as such
        config = dataclasses.replace(config, domains=[])
    preview = RunPreview(config, plan)
    invalid = {(p.domain, p.task_id) for p in plan.invalid}
    broken = {(p.domain, p.task_id) for p in broken_tasks(plan.invalid)}
    states: dict[tuple[str, str], list[TaskState]] = {}
    for planned in plan.to_run + plan.skipped:
        states.setdefault((planned.domain, planned.task_id), []).append(planned.state)
    runs = {(p.domain, p.task_id) for p in plan.to_run}
    for pair in dict.fromkeys([*states, *invalid]):
        domain = preview.domains.setdefault(pair[0], DomainPreview())
        domain.tasks += 1
        if pair in invalid:
            domain.broken += pair in broken
            domain.cannot_run += pair not in broken
            continue
        domain.to_run += pair in runs
        domain.done += all(s is TaskState.DONE for s in states[pair])
        domain.errored += pair not in runs and any(s is TaskState.ERROR for s in states[pair])
        try:
            web, files = _needs(task_set.load(*pair, check_paths=False))
        except TaskFileError:
            continue
        if web:
            domain.live_web += 1
            if pair in runs:
                preview.live_web[pair] = web
        if files:
            domain.downloads += 1
            cached = files_in_cache(files, config.cache_dir)
            domain.prefetched += cached
            if pair in runs and not cached:
                preview.missing_files += [f for f in files if not files_in_cache([f], config.cache_dir)]
    if config.network is None:
        config = dataclasses.replace(config, network=bool(preview.live_web))
        preview.config = config
    options = dataclasses.asdict(config)
    preview.verdict = plan_verdict(options, preview.facts, desktop_facts(config.provider))
    return preview


def desktop_facts(provider: str) -> dict[str, Any]:
    """What the verdict says of the desktops, as args.json's `versions` records it: the apps they run, the system
    they boot from (`desktop_system`), and the machine's cores (a warning when more desktops run at once)."""
    desktop = desktop_versions_for(provider)
    facts: dict[str, Any] = {"apps": desktop.apps, "cpus": os.cpu_count()}
    if desktop.system:
        facts["desktop_system"] = desktop.system
    return facts


def blockers(plan: Plan) -> Counter[str]:
    """What keeps the valid tasks that cannot run here from running, by name, with how many tasks each keeps."""
    found: Counter[str] = Counter()
    for planned in unsupported_tasks(plan.invalid):
        names = {NEEDS.get(p.name, p.name) for p in planned.problems}
        found.update(names)
    return found
