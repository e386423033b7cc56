"""`osworld verify`: is every task sound?

A task is sound when its reference solution scores 1.0 and doing nothing scores 0.0 (for an
infeasible task the reference answer is FAIL, which scores 1, and the no-op's DONE scores 0).
Both are ordinary runs, through the same plan, scheduler, episode and result folders as
`osworld run`: one of the reference agent, one of the no-op agent, then a comparison. So a task
that cannot run, a setup step that fails or a desktop that dies is an error here exactly as in a
benchmark run.

With `noop_only`, only the no-op run is made: a task is sound when doing nothing scores 0, and
every task it passes is a free pass (a place where the desktop starts where the task's goal is).
"""
from __future__ import annotations

import tempfile
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field

from desktop_env.desktop_defaults import DEFAULT_SCREEN_SIZE
from desktop_env.tasks import load_task_set
from osworld_harness.execution.events import Event, Finished
from osworld_harness.execution.run import run_benchmark
from osworld_harness.results.config import RunConfig
from osworld_harness.results.task_folder import error_text, read_status, read_task

# Enough steps for the longest reference solution: a verify must never cut one off.
REFERENCE_MAX_STEPS = 200


@dataclass
class Verdict:
    domain: str
    task_id: str
    reference_score: float | None = None
    noop_score: float | None = None
    error: str | None = None
    seconds: float = 0.0
    reference_ran: bool = True

    @property
    def sound(self) -> bool:
        return self.error is None and self.noop_score == 0.0 and (self.reference_score == 1.0 or not self.reference_ran)

    @property
    def free_pass(self) -> bool:
        """Doing nothing scored above 0."""
        return bool(self.noop_score)


@dataclass
class VerifyOptions:
    num_envs: int = 1
    screen_size: tuple[int, int] = DEFAULT_SCREEN_SIZE
    cache_dir: str = "cache"
    result_dir: str | None = None       # where both runs' results go; None: a temporary folder
    domains: list[str] = field(default_factory=list)
    task_ids: list[str] = field(default_factory=list)
    plugins: list[str] = field(default_factory=list)
    noop_only: bool = False             # no reference run: only "does doing nothing score 0?"


def _outcome(config: RunConfig, domain: str, task_id: str) -> tuple[float | None, str | None, float]:
    """(score, error, seconds) of one task of one run."""
    task_dir = config.layout.task_dir(domain, task_id)
    record = read_task(task_dir)
    if record is None or record.status == "incomplete":
        return None, "did not finish", 0.0
    seconds = record.seconds or 0.0
    if record.status == "error":
        return None, error_text(read_status(task_dir)), seconds
    return record.score, None, seconds


def verdict_of(reference: RunConfig | None, noop: RunConfig, domain: str, task_id: str) -> Verdict:
    """The task's verdict from its results in both runs (only the no-op's when `reference` is None)."""
    ref_score, ref_error, ref_seconds = _outcome(reference, domain, task_id) if reference else (None, None, 0.0)
    noop_score, noop_error, noop_seconds = _outcome(noop, domain, task_id)
    errors = [f"{who}: {error}" for who, error in (("reference", ref_error), ("no-op", noop_error)) if error]
    return Verdict(domain, task_id, ref_score, noop_score, "; ".join(errors) or None,
                   round(ref_seconds + noop_seconds, 1), reference_ran=reference is not None)


def verify(meta: str | None, options: VerifyOptions, on_verdict: Callable[[Verdict], None] = lambda v: None,
           report: Callable[[Event], None] = lambda e: None) -> list[Verdict]:
    """Runs the selected tasks of `meta` with the reference agent, then with the no-op agent, and
    compares; `on_verdict` gets each task's verdict as its no-op run finishes."""
    holder = nullcontext(options.result_dir) if options.result_dir else tempfile.TemporaryDirectory(
        prefix="osworld-verify-")
    with holder as root:
        def run_config(agent: str, model: str, max_steps: int) -> RunConfig:
            """One of the two runs: the settings both share, with its agent."""
            width, height = options.screen_size
            return RunConfig(agent=agent, model=model, max_steps=max_steps, observation_type="screenshot",
                             tasks=meta, domains=list(options.domains), task_ids=list(options.task_ids),
                             num_envs=options.num_envs, screen_size=(width, height), cache_dir=options.cache_dir,
                             result_dir=str(root), record=False, resume=False, agent_time_budget=0,
                             plugins=list(options.plugins))

        reference = None if options.noop_only else run_config("oracle", "reference", REFERENCE_MAX_STEPS)
        noop = run_config("noop", "noop", 1)
        reported: set[tuple[str, str]] = set()

        def after_noop(event: Event) -> None:
            report(event)
            if isinstance(event, Finished):
                reported.add((event.domain, event.task_id))
                on_verdict(verdict_of(reference, noop, event.domain, event.task_id))

        for config, reporter in ((reference, report), (noop, after_noop)):
            if config is None:
                continue
            summary = run_benchmark(config, reporter)
            if summary.stopped:
                raise VerifyStopped(summary.stopped)
        verdicts = [verdict_of(reference, noop, *key) for key in _selected(noop)]
        for verdict in verdicts:  # the tasks the plan refused: no run reported them
            if (verdict.domain, verdict.task_id) not in reported:
                on_verdict(verdict)
        return verdicts


class VerifyStopped(RuntimeError):
    """A run of the verify stopped early (the same fatal error on consecutive tasks)."""


def _selected(config: RunConfig) -> list[tuple[str, str]]:

    return list(dict.fromkeys(load_task_set(config.tasks).select(config.domains or None, config.task_ids or None)))
