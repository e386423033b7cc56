"""The VM parity suite: trajectories recorded on OSWorld's VM, replayed on local desktops.

An agent's actions are clicks at pixels and typed text; a recorded trajectory that solved a task on the
VM solves it here only if every click lands on the same widget and every key does the same thing. So
replaying the VM's recorded runs (`--agent replay`) measures the desktop as agents meet it:

- of the trajectories that scored 1 on the VM, how many score 1 here (a 0 here: the desktop differs
  where the agent acted);
- of those that scored below 1 there, how many score below 1 here (a 1 here: this desktop or its
  evaluator is more lenient than the VM's).

Only tasks that run offline here are replayed (`fidelity.select_tasks`): with `cache_dir`, a cache as
OSWorld's own runs left it (`../shared/osworld_cache`), also the tasks whose downloads it holds; the run
reads a copy of it, so the folder given is never written. Each disagreement can carry its
cause, read from the step screenshots and kept in a causes file (task id -> sentence).
"""
from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from desktop_env.tasks import load_task_set
from mm_agents.replay import RecordedTrajectory, load_trajectories
from osworld_harness.execution.run import RunConfig, run_benchmark
from osworld_harness.results.task_folder import error_text, read_status, read_task

from .fidelity import Excluded, find_meta_file, load_average, select_tasks


def succeeded(score: float | None) -> bool | None:
    """OSWorld's success: a score of 1 (a partial score is not one); None when the run has no score."""
    return None if score is None else score >= 1.0


@dataclass
class ParityOutcome:
    domain: str
    task_id: str
    recorded: float | None          # the score on the VM
    here: float | None              # the score here (None: an error or no result)
    status: str                     # ok | error | incomplete
    error: str | None = None
    cause: str | None = None        # why it disagrees, from the causes file

    @property
    def agrees(self) -> bool | None:
        there, here = succeeded(self.recorded), succeeded(self.here)
        if there is None:
            return None
        return self.status == "ok" and here == there


@dataclass
class ParityReport:
    trajectories: str
    meta_path: str
    pacing: float
    num_envs: int
    minutes: float
    load: dict[str, Any]
    outcomes: list[ParityOutcome]
    excluded: list[Excluded] = field(default_factory=list)
    without_task_file: list[str] = field(default_factory=list)

    def _of(self, success: bool) -> list[ParityOutcome]:
        return [o for o in self.outcomes if succeeded(o.recorded) is success]

    def figures(self) -> dict[str, Any]:
        successes, failures = self._of(True), self._of(False)
        kept = [o for o in successes if o.agrees]
        held = [o for o in failures if o.agrees]
        return {"vm_successes": len(successes), "score_1_here": len(kept),
                "success_parity": round(len(kept) / len(successes), 3) if successes else None,
                "vm_failures": len(failures), "score_below_1_here": len(held),
                "failure_parity": round(len(held) / len(failures), 3) if failures else None,
                "errors": sum(o.status == "error" for o in self.outcomes),
                "unscored_on_vm": sum(succeeded(o.recorded) is None for o in self.outcomes)}

    def disagreements(self) -> list[ParityOutcome]:
        return [o for o in self.outcomes if o.agrees is False]

    def to_json(self) -> str:
        data = asdict(self)
        data["figures"] = self.figures()
        for outcome, record in zip(self.outcomes, data["outcomes"], strict=True):
            record["agrees"] = outcome.agrees
        return json.dumps(data, indent=2, default=str)

    def to_markdown(self) -> str:
        f = self.figures()
        lines = [f"# VM parity: {self.trajectories}", "",
                 f"Replayed on {self.num_envs} local desktop(s), {self.pacing:g} s after each action, in "
                 f"{self.minutes:.1f} min; load average {self.load.get('before')} before, {self.load.get('after')} "
                 f"after, {self.load.get('cpus')} CPUs. Tasks: {self.meta_path} (those that run offline here).", "",
                 "| | on the VM | the same here | parity |", "|---|---|---|---|",
                 f"| scored 1 on the VM | {f['vm_successes']} | {f['score_1_here']} score 1 | "
                 f"{_rate(f['success_parity'])} |",
                 f"| scored below 1 on the VM | {f['vm_failures']} | {f['score_below_1_here']} score below 1 | "
                 f"{_rate(f['failure_parity'])} |", "",
                 f"Errors here: {f['errors']}. Without a score on the VM (not counted): {f['unscored_on_vm']}.", ""]
        disagreements = self.disagreements()
        if disagreements:
            lines += ["## Disagreements", "", "| task | VM | here | cause |", "|---|---|---|---|"]
            for o in disagreements:
                here = o.error if o.status == "error" else ("no result" if o.here is None else f"{o.here:g}")
                lines.append(f"| {o.domain}/{o.task_id} | {_score(o.recorded)} | {here} | "
                             f"{o.cause or 'not yet read from the screenshots'} |")
            lines.append("")
        lines += ["## Every replayed task", "", "| task | VM | here | agrees |", "|---|---|---|---|"]
        for o in self.outcomes:
            here = "error" if o.status == "error" else _score(o.here)
            agrees = {True: "yes", False: "no", None: "-"}[o.agrees]
            lines.append(f"| {o.domain}/{o.task_id} | {_score(o.recorded)} | {here} | {agrees} |")
        if self.excluded:
            lines += ["", f"## Not replayed ({len(self.excluded)}): they do not run offline here", ""]
            lines += [f"- {e.domain}/{e.task_id}: {'; '.join(e.reasons)[:300]}" for e in self.excluded]
        return "\n".join(lines) + "\n"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def load_causes(path: Path | None) -> dict[str, str]:
    if path is None or not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise ValueError(f"{path}: a causes file maps task ids to sentences, got {type(data).__name__}")
    return data


@dataclass
class ParityPlan:
    selected: list[tuple[str, str]]                    # (domain, task id) to replay
    trajectories: dict[str, RecordedTrajectory]
    excluded: list[Excluded]
    without_task_file: list[str]                      # recorded tasks the task set has no file for
    meta_path: Path


def plan_parity(trajectories: Path, osworld: Path, only: list[str] | None = None,
                which: str = "all", cache_dir: Path | None = None) -> ParityPlan:
    """The recorded trajectories whose tasks run offline here (their downloads in `cache_dir`, if given);
    `which`: all, successes or failures."""
    recorded = load_trajectories(trajectories)
    meta = find_meta_file(osworld)
    in_set = {task_id for _, task_id in load_task_set(meta).select()}
    wanted = [task_id for task_id in recorded if not only or task_id in only]
    if which != "all":
        wanted = [t for t in wanted if succeeded(recorded[t].score) is (which == "successes")]
    selection = select_tasks(osworld, [t for t in wanted if t in in_set], cache_dir) if wanted else None
    if selection is None:
        return ParityPlan([], recorded, [], [], meta)
    return ParityPlan(selection.selected, recorded, selection.excluded, sorted(set(wanted) - in_set), meta)


def run_parity(trajectories: Path, osworld: Path, result_dir: Path, num_envs: int = 2, pacing: float = 3.0,
               only: list[str] | None = None, which: str = "all", causes: Path | None = None,
               cache_dir: Path | None = None, **options: Any) -> ParityReport:
    """Replays the plan's trajectories through an ordinary run (a fresh one: nothing resumed); the run's cache
    is a copy of `cache_dir`'s folders for the replayed tasks, beside `result_dir`."""

    plan = plan_parity(trajectories, osworld, only, which, cache_dir)
    if cache_dir is not None:
        run_cache = result_dir.parent / "cache"
        for _, task_id in plan.selected:
            if (cache_dir / task_id).is_dir():
                shutil.copytree(cache_dir / task_id, run_cache / task_id, dirs_exist_ok=True)
        options["cache_dir"] = str(run_cache)
    longest = max((len(plan.trajectories[t].actions) for _, t in plan.selected), default=1)
    config = RunConfig(agent="replay", agent_args={"trajectories": str(trajectories), "pacing": pacing},
                       model="replay", observation_type="screenshot", tasks=str(plan.meta_path),
                       task_ids=[task_id for _, task_id in plan.selected], num_envs=num_envs,
                       result_dir=str(result_dir), resume=False, max_steps=longest + 1, agent_time_budget=0,
                       force=True, **options)
    before, started = load_average(), time.monotonic()
    if plan.selected:
        run_benchmark(config)
    minutes, after = (time.monotonic() - started) / 60, load_average()
    known = load_causes(causes)
    outcomes = []
    for domain, task_id in plan.selected:
        task_dir = config.layout.task_dir(domain, task_id)
        record = read_task(task_dir)
        outcome = ParityOutcome(domain, task_id, plan.trajectories[task_id].score,
                                record.score if record is not None and record.status == "ok" else None,
                                record.status if record is not None else "incomplete")
        if outcome.status == "error":
            outcome.error = error_text(read_status(task_dir))
        if outcome.agrees is False:
            outcome.cause = known.get(task_id)
        outcomes.append(outcome)
    return ParityReport(str(trajectories), str(plan.meta_path), pacing, num_envs, minutes,
                        {"before": before, "after": after, "cpus": os.cpu_count()}, outcomes, plan.excluded,
                        plan.without_task_file)

