"""OSWorld's own code as the judge of ours: one task and one action list, run both ways, compared.

For each case (a task and the actions to take on it: a built-in task's reference solution, or a trajectory
recorded on OSWorld's VM) the reference run
- boots a fresh local desktop, serves it as a VM is reached (`expose_like_vm`: 127.0.0.N:5000, 9222, 8080)
  and runs OSWorld's own DesktopEnv on it from the reference venv (osworld_reference_driver.py): its reset
  (SetupController over the task's config), its `step` for each action, its `evaluate()` (postconfig,
  getters, metric);
- runs the same task and actions through this harness (`run_benchmark` with the replay agent on a fresh
  desktop of the same build);
- compares each setup and postconfig step's outcome (done, or failed and why), each getter's value (as
  fingerprinted: a file by its bytes' SHA-256) and the final score.

Both sides read the task's files from caches filled the same way: a file the task names by a relative path
or file:// URL (the built-in suite's), or one found in `cache_dir` (a cache as OSWorld's runs leave it), is
put at its cache name in each side's cache before the run, where OSWorld's controller and getters look for
it before downloading. Differences the report expects, because they are deliberate: a setup whose keys did
not take is an error here (SetupNotTaken, before the agent acts) and a run on OSWorld; a file an app saved
on each side differs in its bytes (timestamps) while the score agrees.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from desktop_env.desktop_defaults import DEFAULT_PASSWORD as PASSWORD
from desktop_env.desktop_defaults import DEFAULT_SCREEN_SIZE as SCREEN_SIZE
from desktop_env.providers.local import LocalDesktopConfig, LocalProvider
from desktop_env.resources import local_source
from desktop_env.tasks import Task, load_task_set
from desktop_env.tasks.remote_files import named_files
from mm_agents.oracle import OracleAgent
from mm_agents.replay import ReplayAgent
from osworld_harness.execution.run import RunConfig, run_benchmark
from osworld_harness.results.task_folder import TaskStatus, read_status, read_task

DRIVER = Path(__file__).with_name("osworld_reference_driver.py")
DRIVER_TIMEOUT_S = 1800


@dataclass(frozen=True)
class ReferenceCase:
    """A task and the actions both harnesses take on it."""
    task: Task
    meta: Path                       # the task set's meta file, which the run here is given
    actions: list[Any]
    source: str                      # "solution" or the trajectory file's line
    recorded_score: float | None = None

    @property
    def key(self) -> str:
        return f"{self.task.domain}/{self.task.id}"


@dataclass
class StepOutcome:
    """A setup or postconfig step as one side ran it: `ended` the episode (raised: an error, no score), or went
    on, `failed` or not as far as that side can tell (OSWorld's controller sees only the env server's status:
    an activation of a window that is not there answers 200; ours is told whether a window matched)."""
    phase: str                       # setup | postconfig
    index: int
    type: str
    ended: bool
    failed: bool
    why: str = ""
    ran: bool = True                 # ours: a step after the one that ended the episode never ran


@dataclass
class SideOutcome:
    """What one harness made of a case."""
    score: float | None
    error: str | None
    steps: list[StepOutcome] = field(default_factory=list)
    getters: list[Any] = field(default_factory=list)   # fingerprints, in the order the getters ran


@dataclass
class CaseComparison:
    key: str
    source: str
    recorded_score: float | None
    osworld: SideOutcome
    ours: SideOutcome

    @property
    def same_score(self) -> bool:
        return (self.osworld.error is None) == (self.ours.error is None) and self.osworld.score == self.ours.score

    @property
    def step_differences(self) -> list[str]:
        """Steps that ended the episode on one side and not on the other (a step one side ran and the other
        never reached counts too), as 'postconfig[0] (activate_window): OSWorld went on, ours ended'."""
        theirs = {(s.phase, s.index): s for s in self.osworld.steps}
        ours = {(s.phase, s.index): s for s in self.ours.steps if s.ran}
        differing = []
        for key in sorted(set(theirs) | set(ours)):
            a, b = theirs.get(key), ours.get(key)
            if (a is None) != (b is None) or (a is not None and b is not None and a.ended != b.ended):
                said = [f"{who} {'never ran it' if s is None else 'ended' if s.ended else 'went on'}"
                        for who, s in (("OSWorld", a), ("ours", b))]
                differing.append(f"{key[0]}[{key[1]}] ({(a or b).type}): {', '.join(said)}")  # type: ignore[union-attr]
        return differing

    @property
    def getter_differences(self) -> list[int]:
        """Positions, among the getters both ran, whose values differ."""
        return [i for i, (a, b) in enumerate(zip(self.osworld.getters, self.ours.getters, strict=False)) if a != b]


# -- the cases -------------------------------------------------------------------------------------------
def solution_cases(meta: Path, only: Iterable[str] = ()) -> list[ReferenceCase]:
    """The built-in suite's tasks (or a task set's) with their reference solutions, as the oracle agent plays
    them (the solution's pauses folded into the actions)."""
    task_set = load_task_set(meta)
    wanted = set(only)
    cases = []
    for domain, task_id in task_set.select():
        if wanted and task_id not in wanted:
            continue
        task = task_set.load(domain, task_id)
        agent = OracleAgent()
        agent.start_task(task)
        cases.append(ReferenceCase(task, meta, _played(agent.predict, task.instruction), "solution"))
    return cases


def trajectory_cases(meta: Path, trajectories: Path, pacing: float,
                     selected: Iterable[tuple[str, str]]) -> list[ReferenceCase]:
    """Recorded trajectories (a file the replay agent reads), paced as the replay agent paces them (`pacing` s
    after each action), which is how the parity suite replays them."""
    task_set = load_task_set(meta)
    agent = ReplayAgent(trajectories=str(trajectories), pacing=pacing)
    cases = []
    for domain, task_id in selected:
        task = task_set.load(domain, task_id, check_paths=False)
        agent.start_task(task)
        cases.append(ReferenceCase(task, meta, _played(agent.predict, task.instruction),
                                   agent.trajectories[task_id].source, agent.recorded_score))
    return cases


def _played(predict: Callable[[str, dict[str, Any]], tuple[str, list[Any]]], instruction: str) -> list[Any]:
    actions: list[Any] = []
    while not actions or actions[-1] not in ("DONE", "FAIL"):
        _, step = predict(instruction, {})
        actions += step
    return actions


# -- the caches ------------------------------------------------------------------------------------------
def fill_cache(task: Task, cache: Path, known: Path | None) -> None:
    """Puts each file the task names by URL at its cache name in `cache/<task id>/`: a local one from the
    task's tree, a remote one from `known` (a cache as OSWorld's runs leave it) when it is there."""
    files, _ = named_files(task)
    for file in files:
        target = cache / task.id / file.name
        source = local_source(file.url, task.task_dir, file.field, task.path)
        if source is None and known is not None:
            source = known / task.id / file.name
        if source is not None and source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


# -- OSWorld's side --------------------------------------------------------------------------------------
def run_with_osworld(case: ReferenceCase, python: str, work: Path, known_cache: Path | None = None,
                     pause: float = 0.0) -> SideOutcome:
    """The case through OSWorld's own DesktopEnv (the reference venv's `python`) on a fresh local desktop."""
    cache = work / "osworld-cache"
    fill_cache(case.task, cache, known_cache)
    provider = LocalProvider(config=LocalDesktopConfig(screen_size=SCREEN_SIZE))
    provider.start_emulator()
    try:
        address = provider.expose_like_vm("auto")
        request = {"address": address, "task": case.task.config, "cache_dir": str(cache), "actions": case.actions,
                   "pause": pause, "screen_size": list(SCREEN_SIZE), "password": PASSWORD}
        env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "PYTHONDONTWRITEBYTECODE": "1"}
        written = work / "osworld-outcome.json"
        done = subprocess.run([python, str(DRIVER), str(written)], input=json.dumps(request), capture_output=True,
                              text=True, cwd=case.task.task_dir, env=env, timeout=DRIVER_TIMEOUT_S)
    finally:
        provider.stop_emulator()
    (work / "osworld-driver.log").write_text(done.stdout + done.stderr)
    if done.returncode != 0 or not written.is_file():
        return SideOutcome(None, f"the driver exited {done.returncode}: {done.stderr.strip()[-800:]}")
    outcome = json.loads(written.read_text())
    steps, counters = [], {"setup": 0, "postconfig": 0}
    for step in outcome["steps"]:
        phase = step["phase"]
        why = step["raised"] or "; ".join(step.get("logged") or [])
        steps.append(StepOutcome(phase, counters[phase], step["type"], bool(step["raised"]), bool(why), why[:300]))
        counters[phase] += 1
    getters = [g.get("value", {"raised": g.get("raised")}) for g in outcome["getters"]]
    error = outcome["raised"] and f"in {outcome['where']}: {outcome['raised']}"
    return SideOutcome(outcome["score"], error, steps, getters)


# -- this harness's side ---------------------------------------------------------------------------------
def run_here(case: ReferenceCase, work: Path, known_cache: Path | None = None, pause: float = 0.0) -> SideOutcome:
    """The case through this harness: an ordinary run of the replay agent over the case's actions."""
    trajectories = work / "actions.jsonl"
    trajectories.write_text(json.dumps({"task_id": case.task.id, "actions": case.actions}) + "\n")
    cache = work / "cache"
    fill_cache(case.task, cache, known_cache)
    config = RunConfig(agent="replay", agent_args={"trajectories": str(trajectories), "pacing": 0}, model="replay",
                       observation_type="screenshot", tasks=str(case.meta), task_ids=[case.task.id],
                       result_dir=str(work / "results"),
                       cache_dir=str(cache), resume=False, max_steps=len(case.actions) + 1, agent_time_budget=0,
                       sleep_after_execution=pause, record=False, force=True)
    run_benchmark(config)
    folder = config.layout.task_dir(case.task.domain, case.task.id)
    record, status = read_task(folder), read_status(folder)
    if record is None or status is None:
        return SideOutcome(None, "the run left no record")
    error = None if record.status == "ok" else (status.error_text() or record.status)
    steps = _our_steps(case.task, status)
    getters: list[Any] = []  # in the order OSWorld's evaluate() calls them: a metric's result getter, its expected one
    for part in status.evaluation.parts if status.evaluation is not None else ():
        values = part.values or {}
        getters += [values[role] for role in ("result", "expected") if role in values]
    return SideOutcome(record.score if record.status == "ok" else None, error, steps, getters)


def _our_steps(task: Task, status: TaskStatus) -> list[StepOutcome]:
    """Each setup and postconfig step as this run did it: failed where status.json's warnings say so, or where
    the error names it."""
    failed = {w.get("field"): str(w.get("message")) for w in status.warnings if w.get("failed")}
    error = status.error.message if status.error is not None else ""
    steps: list[StepOutcome] = []
    ended = False
    for phase, section, listed in (("setup", "config", task.config.get("config") or []),
                                   ("postconfig", "evaluator.postconfig", task.evaluator.get("postconfig") or [])):
        for index, step in enumerate(listed):
            ends = not ended and error.startswith(f"{phase} step {index} ")
            why = error if ends else failed.get(f"{section}[{index}]", "")
            steps.append(StepOutcome(phase, index, str(step.get("type")), ends, bool(why), why[:300], ran=not ended))
            ended = ended or ends
    return steps


# -- the whole comparison --------------------------------------------------------------------------------
def compare_case(case: ReferenceCase, python: str, work: Path, known_cache: Path | None = None,
                 pause: float = 0.0) -> CaseComparison:
    osworld_work, our_work = work / "osworld", work / "ours"
    osworld_work.mkdir(parents=True, exist_ok=True)
    our_work.mkdir(parents=True, exist_ok=True)
    theirs = run_with_osworld(case, python, osworld_work, known_cache, pause)
    ours = run_here(case, our_work, known_cache, pause)
    return CaseComparison(case.key, case.source, case.recorded_score, theirs, ours)


@dataclass
class ReferenceReport:
    comparisons: list[CaseComparison]
    minutes: float

    def figures(self) -> dict[str, int]:
        c = self.comparisons
        return {"cases": len(c), "same_score": sum(x.same_score for x in c),
                "same_steps": sum(not x.step_differences for x in c),
                "same_getters": sum(not x.getter_differences for x in c),
                "osworld_errors": sum(x.osworld.error is not None for x in c),
                "our_errors": sum(x.ours.error is not None for x in c)}

    def to_json(self) -> str:
        return json.dumps({"figures": self.figures(), "minutes": round(self.minutes, 1),
                           "cases": [{**asdict(c), "same_score": c.same_score, "step_differences": c.step_differences,
                                      "getter_differences": c.getter_differences} for c in self.comparisons]},
                          indent=1)

    def to_markdown(self) -> str:
        f = self.figures()
        lines = ["# OSWorld's own code beside this harness", "",
                 f"{f['cases']} case(s) in {self.minutes:.1f} min: the same score in {f['same_score']}, every setup "
                 f"and postconfig step with the same outcome in {f['same_steps']}, every getter's value the same in "
                 f"{f['same_getters']}; errors: OSWorld {f['osworld_errors']}, ours {f['our_errors']}.", "",
                 "| task | OSWorld | ours | steps that differ | getters that differ |", "|---|---|---|---|---|"]
        for c in self.comparisons:
            lines.append(f"| {c.key} | {_shown(c.osworld)} | {_shown(c.ours)} | "
                         f"{'; '.join(c.step_differences) or '-'} | "
                         f"{', '.join(map(str, c.getter_differences)) or '-'} |")
        lines += ["", "## Where the scores differ", ""]
        for c in self.comparisons:
            if not c.same_score:
                lines.append(f"- {c.key}: OSWorld {_shown(c.osworld, long=True)}; ours {_shown(c.ours, long=True)}")
        return "\n".join(lines) + "\n"


def _shown(side: SideOutcome, long: bool = False) -> str:
    if side.error is not None:
        text = side.error.replace("|", "/").replace("\n", " ")
        return f"error: {text[:300] if long else text[:60]}"
    return "no score" if side.score is None else f"{side.score:g}"


def run_reference(cases: list[ReferenceCase], python: str, out: Path, known_cache: Path | None = None,
                  pause: float = 0.0, on_case: Callable[[CaseComparison], None] = lambda c: None) -> ReferenceReport:
    started = time.monotonic()
    comparisons = []
    out.mkdir(parents=True, exist_ok=True)
    for case in cases:  # each case's runs stay in out/<domain>/<id>/ (screenshots, status.json, the driver's log)
        work = out / case.task.domain / case.task.id
        if work.exists():
            shutil.rmtree(work)
        comparison = compare_case(case, python, work, known_cache, pause)
        comparisons.append(comparison)
        on_case(comparison)
    return ReferenceReport(comparisons, (time.monotonic() - started) / 60)
