"""Whether a run's score can stand beside OSWorld's published numbers (the OSWorld-Verified leaderboard),
and if not, why.

Comparable means: OSWorld-Verified's tasks (`--osworld CHECKOUT`, all of them), one of the leaderboard's
step budgets, OSWorld's screen, nothing that changes what the agent sees or how tasks are scored, the
network on when tasks need it, every selected task file sound (a broken one counts as 0 for a reason that
is not the agent's, where a valid task that cannot run offline is only a note), and, once it ran, every
task finished with nothing cut short by a time budget OSWorld does not have. Each setting is one row of
SETTING_CHECKS: (field of the run's options, a test of its value that makes the number incomparable, the
reason in words). A field a run did not record is not checked, so an option added later (such as
`evaluator_fixes`) is one more row, and older runs read as they were. Notes are said but do not make the
number incomparable (a task that cannot run here costs at most its share of the score).

The verdict names the desktop the run was made on (DesktopInfo): its provider and build (for the local
desktop, the system its desktops booted from and the apps' versions, as args.json recorded them, and the VM
replay parity measured for that system, from desktop_parity.json, which a local-desktop score is comparable
only as far as), and warns when more desktops ran at once than the machine has cores (the replay parity drops
under load).

The same verdict is printed before a run (`--dry-run`, and at the start of a real one; `--strict`
refuses an incomparable run) and by `summarize`, from what args.json recorded.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_env.desktop_defaults import DEFAULT_SCREEN_SIZE
from desktop_env.providers import builds_its_desktop
from desktop_env.tasks.loader import ALL_DOMAINS

from .suite import LEADERBOARD_STEPS, OFFICIAL_TASKS
from .task_folder import RESCORE_FILE, read_status
from .task_scope import covered, missing_tasks, named, recorded_runs

if TYPE_CHECKING:
    from .summary import RunResults

PARITY_FILE = Path(__file__).with_name("desktop_parity.json")
SCREEN = list(DEFAULT_SCREEN_SIZE)
SECONDS_PER_STEP = 60   # a time budget under this per step can cut a slow (reasoning) model short
OVER_BUDGET = "AgentOverBudget"  # the error type of a task whose agent ran out of --agent-time-budget
# The local desktop's system when a run recorded none (recorded before it could boot from another): the host's.
HOST = "host"


@dataclass(frozen=True)
class Check:
    field: str
    incomparable: Callable[[Any, Mapping[str, Any]], bool]   # (value, the whole record) -> not comparable?
    reason: Callable[[Any, Mapping[str, Any]], str]


def _facts(record: Mapping[str, Any]) -> Mapping[str, Any]:
    facts = record.get("plan")
    return facts if isinstance(facts, Mapping) else {}


SETTING_CHECKS: tuple[Check, ...] = (
    Check("osworld", lambda v, r: not v,
          lambda v, r: "its tasks are not OSWorld-Verified's (run with --osworld CHECKOUT to select them)"),
    # A run records `--domain all` as no domain chosen; one recorded before that may still say `all`.
    Check("domains", lambda v, r: bool(v) and ALL_DOMAINS not in v,
          lambda v, r: f"only some domains ran (--domain {' '.join(v)})"),
    Check("task_ids", lambda v, r: bool(v), lambda v, r: f"only {len(v)} chosen task(s) ran (--task-id)"),
    Check("limit", lambda v, r: v is not None, lambda v, r: f"a smoke run of {v} task(s) (--limit {v})"),
    Check("shard", lambda v, r: v is not None,
          lambda v, r: f"one shard ({v[0]}/{v[1]}) of the task set: summarize the {v[1]} shards' folders together "
                       "for the run's score"),
    Check("max_steps", lambda v, r: v not in LEADERBOARD_STEPS,
          lambda v, r: f"a step budget of {v}: the leaderboard's are {', '.join(map(str, LEADERBOARD_STEPS))} "
                       "(--max-steps)"),
    Check("screen_size", lambda v, r: list(v) != SCREEN,
          lambda v, r: f"a {v[0]}x{v[1]} screen: OSWorld's is {SCREEN[0]}x{SCREEN[1]} (--screen-size)"),
    Check("screenshot_scale", lambda v, r: v != 1,
          lambda v, r: f"the agent saw screenshots scaled by {v} (--screenshot-scale)"),
    Check("perturb", lambda v, r: v is not None, lambda v, r: f"the desktop was disturbed after setup (--perturb {v})"),
    Check("network", lambda v, r: not v and _facts(r).get("needs_network", 0) > 0,
          lambda v, r: f"the network was off while {_facts(r)['needs_network']} task(s) need a live website or an "
                       "account (they score 0 without it; --network)"),
    Check("evaluator_fixes", lambda v, r: bool(v),
          lambda v, r: "OSWorld's metrics were changed by the opt-in evaluator fixes (--evaluator-fixes)"),
    Check("plan", lambda v, r: bool(_facts(r).get("broken")),
          lambda v, r: f"{_facts(r)['broken']} task file(s) are broken (unreadable, or naming what no code knows), so "
                       "they count as 0 for a reason that is not the agent's (`osworld tasks validate` lists them)"),
    Check("osworld", lambda v, r: bool(v) and _facts(r).get("suite_tasks", OFFICIAL_TASKS) != OFFICIAL_TASKS,
          lambda v, r: f"the checkout's OSWorld-Verified selection has {_facts(r)['suite_tasks']} task(s), not the "
                       f"leaderboard's {OFFICIAL_TASKS}"),
)


@dataclass(frozen=True)
class Parity:
    """One measurement of the VM replay suite: of `vm_successes` runs that scored 1 on OSWorld's VM,
    `score_1_here` scored 1 on this desktop (None: being measured)."""
    what: str
    measured: str
    vm_successes: int
    score_1_here: int | None
    source: str = ""
    by_domain: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # where measured per domain
    load: str = ""

    def text(self) -> str:
        return f"VM replay parity {self.score_1_here} of {self.vm_successes}"

    def domain_text(self) -> str:
        return ", ".join(f"{domain} {f['score_1_here']} of {f['vm_successes']}" for domain, f in self.by_domain.items())


def read_parity(path: Path = PARITY_FILE) -> dict[str, Any]:
    """desktop_parity.json: per provider, its build and the replay suite's measurements, newest last; under
    `systems`, the same for each other system its desktops may boot from."""
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def parity_entry(provider: str, system: str = HOST, data: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    """desktop_parity.json's entry for a provider's desktops booted from `system` ({} when it has none)."""
    entry = (read_parity() if data is None else data).get(provider) or {}
    return entry if system == HOST else (entry.get("systems") or {}).get(system) or {}


def measured_parity(provider: str, data: Mapping[str, Any] | None = None,
                    system: str = HOST) -> tuple[Parity | None, list[Parity]]:
    """(the newest measurement with a figure, those after it still being measured) of a provider's build on
    `system`."""
    entries = [Parity(**{k: v for k, v in entry.items() if k in Parity.__dataclass_fields__})
               for entry in parity_entry(provider, system, data).get("measurements", [])]
    done = [p for p in entries if p.score_1_here is not None]
    latest = done[-1] if done else None
    pending = [p for p in entries[entries.index(latest) + 1 if latest else 0:] if p.score_1_here is None]
    return latest, pending


@dataclass(frozen=True)
class DesktopInfo:
    """Which desktop a run was made on: the provider, its build (the local desktop's system and apps'
    versions, a VM's image) and, for the local desktop, the replay parity measured for that system."""
    provider: str
    build: str
    apps: Mapping[str, str] = field(default_factory=dict)
    parity: Parity | None = None
    pending: tuple[Parity, ...] = ()
    system: Mapping[str, str] = field(default_factory=dict)  # as the run recorded it: name, and a tree's folder

    def label(self) -> str:
        if not builds_its_desktop(self.provider):
            return f"{self.provider} VM ({self.build})"
        parity = f"; {self.parity.text()}" if self.parity else "; VM replay parity not measured"
        return f"local desktop ({self.build}{parity})"

    def lines(self) -> list[str]:
        lines = [f"desktop: {self.label()}"]
        if self.apps:
            lines.append("  apps: " + ", ".join(f"{name} {version}" for name, version in sorted(self.apps.items())))
        if self.parity and self.parity.by_domain:
            lines.append(f"  parity by domain: {self.parity.domain_text()}")
        return lines

    def notes(self) -> list[str]:
        if not builds_its_desktop(self.provider):
            return []
        if self.parity is None:
            return ["a local-desktop score is comparable only as far as its VM replay parity, which is not measured "
                    "for this build"]
        load = f"; load {self.parity.load}" if self.parity.load else ""
        note = (f"a local-desktop score is comparable only as far as its VM replay parity: of {self.parity.what}, "
                f"{self.parity.score_1_here} scored 1 here ({self.parity.measured}, scripts/vm_parity.py{load})")
        return [note + "".join(f"; {p.what}: being measured" for p in self.pending)]


def desktop_info(options: Mapping[str, Any], versions: Mapping[str, Any] | None = None,
                 parity: Mapping[str, Any] | None = None) -> DesktopInfo:
    """The desktop a run's options (args.json's config) name, with the versions it recorded: the apps, and
    the system its desktops booted from, whose parity is quoted (the host's when none is recorded)."""
    provider = str(options.get("provider") or "local")
    data = read_parity() if parity is None else parity
    apps = dict((versions or {}).get("apps") or {})
    if not builds_its_desktop(provider):
        image = options.get("path_to_vm") or "the provider's default image"
        return DesktopInfo(provider, str(image))
    system = recorded_system(versions)
    name = system.get("name") or HOST
    build = parity_entry("local", name, data).get("build") or \
        ("this machine's packages" if name == HOST else f"the {name} system's packages")
    if system.get("tree"):
        build += f" (userland {system['tree']})"
    latest, pending = measured_parity("local", data, name)
    return DesktopInfo(provider, build, apps, latest, tuple(pending), system)


def recorded_system(versions: Mapping[str, Any] | None) -> dict[str, str]:
    """The system a run's versions say its local desktops booted from ({} for a run that did not say)."""
    system = (versions or {}).get("desktop_system")
    return {str(k): str(v) for k, v in system.items()} if isinstance(system, Mapping) else {}


def load_warning(num_envs: Any, cores: Any, parity: Mapping[str, Any] | None = None,
                 system: str = HOST) -> str | None:
    """A warning when more desktops ran at once than the machine has cores: the replay parity drops (by as
    much as measured on `system`, where it was)."""
    if not isinstance(num_envs, int) or not isinstance(cores, int) or num_envs <= cores:
        return None
    load = parity_entry("local", system, parity).get("under_load") or {}
    drop = (f" (the VM replay parity drops from {load['quiet']} to {load['score_1_here']} of {load['vm_successes']} "
            "under load)") if load else ""
    return (f"{num_envs} desktops at once on {cores} core(s): a loaded desktop scores lower{drop}; "
            f"--num-envs {cores} or fewer")


@dataclass
class Verdict:
    """`comparable`: True, False, or None when nothing says (no args.json of ours)."""
    comparable: bool | None
    reasons: list[str] = field(default_factory=list)   # why not
    notes: list[str] = field(default_factory=list)     # said, but not a reason
    desktop: DesktopInfo | None = None
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        if self.comparable is None:
            head = "comparable with OSWorld's leaderboard: not known"
        else:
            head = f"comparable with OSWorld's leaderboard: {'yes' if self.comparable else 'no'}"
        desktop = [f"  {line}" for line in self.desktop.lines()] if self.desktop else []
        return ([head] + desktop + [f"  - {reason}" for reason in self.reasons]
                + [f"  warning: {warning}" for warning in self.warnings] + [f"  note: {note}" for note in self.notes])

    def to_json(self) -> dict[str, Any]:
        desktop = None if self.desktop is None else {
            "provider": self.desktop.provider, "build": self.desktop.build, "label": self.desktop.label(),
            "system": dict(self.desktop.system), "apps": dict(self.desktop.apps),
            "parity": None if self.desktop.parity is None else {
                "what": self.desktop.parity.what, "measured": self.desktop.parity.measured,
                "vm_successes": self.desktop.parity.vm_successes, "score_1_here": self.desktop.parity.score_1_here,
                "by_domain": dict(self.desktop.parity.by_domain)}}
        return {"comparable": self.comparable, "reasons": self.reasons, "notes": self.notes, "warnings": self.warnings,
                "desktop": desktop}


# What says which tasks a run selected: not checked on a run whose tasks another run into the folder covers
SELECTION_FIELDS = frozenset({"osworld", "domains", "task_ids", "limit", "shard"})


def setting_reasons(record: Mapping[str, Any], skip: frozenset[str] = frozenset()) -> list[str]:
    """Why the options (and plan facts) in `record` make the number incomparable; [] when they do not.
    The checks of the fields in `skip` are left out."""
    return [check.reason(record[check.field], record) for check in SETTING_CHECKS
            if check.field in record and check.field not in skip and check.incomparable(record[check.field], record)]


def setting_notes(record: Mapping[str, Any]) -> list[str]:
    """What the options leave to chance without making the number incomparable."""
    notes = []
    facts = _facts(record)
    # The budget the run had: as the plan decided it (the option may be left to the default).
    budget, steps = facts.get("time_budget", record.get("agent_time_budget")), record.get("max_steps")
    if isinstance(budget, (int, float)) and budget > 0 and isinstance(steps, int) \
            and budget < SECONDS_PER_STEP * steps:
        notes.append(f"the agent has {budget:g} s per task ({budget / steps:.0f} s a step over {steps} steps): a "
                     "task it runs out of is an error, counted as 0, where OSWorld waits (--agent-time-budget 0 "
                     "lifts it)")
    if facts.get("cannot_run"):
        notes.append(f"{facts['cannot_run']} task(s) cannot run here and count as 0 (at most "
                     f"{100 * facts['cannot_run'] / max(facts.get('tasks') or 1, 1):.1f} points)")
    return notes


def plan_verdict(options: Mapping[str, Any], facts: Mapping[str, Any],
                 versions: Mapping[str, Any] | None = None) -> Verdict:
    """The verdict on a run about to start: its options, what its plan found and, when given, the versions
    its desktops run (environment_versions(), which name their system)."""
    record = {**options, "plan": dict(facts)}
    reasons = setting_reasons(record)
    desktop = desktop_info(options, versions)
    warning = load_warning(options.get("num_envs"), os.cpu_count(), system=desktop.system.get("name") or HOST)
    return Verdict(not reasons, reasons, setting_notes(record) + desktop.notes(), desktop,
                   [warning] if warning else [])


def outcome_reasons(statuses: Sequence[tuple[str, str | None]], incomplete: int) -> list[str]:
    """What the finished run's records make incomparable: (status, error type) of each trial."""
    reasons = []
    over = sum(error == OVER_BUDGET for _, error in statuses)
    if over:
        reasons.append(f"{over} task(s) ran out of the agent's time budget (errors, counted as 0; OSWorld has no "
                       "such budget)")
    if incomplete:
        reasons.append(f"{incomplete} task(s) have not finished (run the same command again to finish them)")
    return reasons


def run_comparability(run: RunResults) -> Verdict:
    """The verdict on a result folder: the settings its args.json records for each run made into it, and
    its records. A folder without our args.json (OSWorld's own) cannot say."""
    runs = recorded_runs(run.args)
    if not runs:
        return Verdict(None, notes=["the folder has no args.json of this harness (OSWorld's own run.py, or none), "
                                    "so its settings are not known"])
    latest = runs[-1]
    record = {**latest["config"], "plan": latest.get("plan") or {}}
    # Every run made into the folder counts: a resumed run whose plan had nothing left that needs the
    # network says nothing of the run before it that ran those tasks offline. Only which tasks it chose is
    # left out for a run whose tasks another run covers (a smoke test with --domain before the full run).
    reasons = list(dict.fromkeys(reason for r, part in zip(runs, covered(runs), strict=True)
                                 for reason in setting_reasons({**r["config"], "plan": r.get("plan") or {}},
                                                               SELECTION_FIELDS if part else frozenset())))
    if run.scope.missing_shards:
        shards = run.scope.shards
        reasons.append(f"shard(s) {', '.join(f'{i}/{shards}' for i in run.scope.missing_shards)} of {shards} are "
                       "missing (give every shard's folder: osworld summarize DIR1 DIR2 ...)")
    missing = missing_tasks(run.scope.tasks, run.records)
    if missing:
        reasons.append(f"{len(missing)} task(s) of its task set have no result (never started: run the same "
                       f"command again): {named(missing)}")
    if any(r.get("forced") for r in runs):
        reasons.append("runs with other settings were mixed into this folder (--force)")
    statuses = []
    for task in run.records:
        status = read_status(run.folder(task)) if task.status == "error" else None
        statuses.append((task.status, status.error.type if status and status.error else None))
    reasons += outcome_reasons(statuses, sum(r.status == "incomplete" for r in run.records))
    fixed = sum(_rescored_with_fixes(run.folder(r)) for r in run.records if r.rescored)
    if fixed:
        reasons.append(f"{fixed} score(s) were rescored with the evaluator fixes (rescore --evaluator-fixes)")
    notes = setting_notes(record)
    errors = sum(r.status == "error" for r in run.records)
    if errors:
        notes.append(f"{errors} error(s) count as 0 (OSWorld's own summary leaves them out of the denominator); "
                     "--retry-errors runs them again")
    versions = latest.get("versions") or {}
    desktop = desktop_info(latest["config"], versions)
    warnings = list(dict.fromkeys(w for r in runs if (w := load_warning(
        r["config"].get("num_envs"), (r.get("versions") or {}).get("cpus"),
        system=recorded_system(r.get("versions")).get("name") or HOST))))
    return Verdict(not reasons, reasons, notes + desktop.notes(), desktop, warnings)


def _rescored_with_fixes(folder: Path) -> bool:
    try:
        return bool(json.loads((folder / RESCORE_FILE).read_text()).get("evaluator_fixes"))
    except (OSError, ValueError, AttributeError):
        return False


def comparability_lines(run: RunResults) -> list[str]:
    return run_comparability(run).lines()
