"""`osworld rescore`: score a finished task again, offline, by replaying its recorded evaluation.

During the live evaluation, getters see the desktop only through the evaluation context
(desktop_env.evaluators.context), and a DesktopEnv records every call they make with its
answer (desktop_env.evaluators.recording). At the end of an episode, `save_rescore_inputs`
also runs, through the recording, the getters the evaluation never reached (an "and" that
stopped at a 0), then writes `<task_dir>/rescore/manifest.json` (the calls, the evaluator,
a fingerprint of each metric's code) and `rescore/files/` (the bytes answered, by hash,
within a size bound).

Rescoring (`rescore_task`) runs the task's evaluator as it is now against a replay of those
calls: changed rules, expected files, metric code and plugins all count; a getter that asks
for something that was not recorded (another path, a live-only service such as Chrome's
DevTools websocket, the env reached directly) makes the task "not rescorable" with that
reason. Getters that read only the task file (rule, cloud_file...) simply run again, and
relative dates resolve against the time of the live evaluation.

The old score stays in result.txt; the new one, with its explanation, goes to
`<task_dir>/rescore.json`.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from desktop_env.desktop_env import decided_by_last_action
from desktop_env.evaluators.context import NotRecorded
from desktop_env.evaluators.outcome import Evaluation
from desktop_env.evaluators.recording import MANIFEST_VERSION, RecordingContext, ReplayContext, record_unreached_getters
from desktop_env.evaluators.registry import get_metric
from desktop_env.evaluators.scoring import evaluate_task
from desktop_env.tasks import load_task_set

from .summary import find_runs
from .task_folder import RESCORE_FILE, now_iso, read_status, read_task, read_trajectory, split_trial, write_json_atomic

log = logging.getLogger("osworld.rescore")

RESCORE_DIR = "rescore"
FILES_DIR = "files"
MANIFEST = "manifest.json"
RESULT_FILE = RESCORE_FILE


class NotRescorable(Exception):
    """This task cannot be rescored from what was recorded; the message says why."""


class RescoreError(Exception):
    """Rescoring ran but the evaluator failed (a metric crashed, a task file is missing...)."""


def metric_fingerprints(evaluator: dict[str, Any]) -> dict[str, str | None]:
    """A short hash of each metric's source code: shows whether a metric changed between run and rescore."""

    funcs = evaluator.get("func")
    out: dict[str, str | None] = {}
    for name in funcs if isinstance(funcs, list) else [funcs]:
        if not isinstance(name, str) or name in out:
            continue
        try:
            out[name] = hashlib.sha256(inspect.getsource(get_metric(name)).encode()).hexdigest()[:16]
        except Exception:  # unknown name, or no source (a builtin)
            out[name] = None
    return out


def osworld_version() -> str:
    try:
        return metadata.version("osworld")
    except metadata.PackageNotFoundError:
        return "unknown"


# -- saving at the end of an episode --------------------------------------------------------------

def save_rescore_inputs(env: Any, task_config: dict[str, Any], task_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Writes the evaluation's recording to `<task_dir>/rescore/`; returns the manifest.

    Call it after `env.evaluate()`, with the desktop still up: getters the evaluation never
    reached are run now, through the recording, so that their answers are there too. An
    env that recorded nothing (record_evaluation=False, or FAIL/infeasible decided it) gives a
    manifest without calls. Only a rescore folder that cannot be written raises.
    """
    out_dir = Path(task_dir) / RESCORE_DIR
    evaluator = dict(task_config.get("evaluator") or {})
    manifest: dict[str, Any] = {"version": MANIFEST_VERSION, "task_id": task_config.get("id"), "saved_at": now_iso(),
                                "evaluator": evaluator, "metrics": metric_fingerprints(evaluator),
                                "osworld": osworld_version(), "calls": [], "notes": []}
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    ctx = getattr(env, "evaluation_context", None)
    if isinstance(ctx, RecordingContext):
        if ctx.getters_run:  # the evaluator ran (not decided by FAIL or infeasible)
            record_unreached_getters(ctx, evaluator)
        ctx.write_blobs(out_dir / FILES_DIR)
        manifest.update(ctx.manifest())
    else:
        manifest["notes"].append("the evaluation was not recorded (the env's record_evaluation was off)")
    write_json_atomic(out_dir / MANIFEST, manifest)
    return manifest


# -- rescoring ------------------------------------------------------------------------------------

def read_manifest(task_dir: Path) -> dict[str, Any] | None:
    try:
        manifest = json.loads((task_dir / RESCORE_DIR / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def last_action(task_dir: Path) -> Any:
    """The last action of the trajectory (what DesktopEnv.evaluate looks at for FAIL), None if none."""
    return read_trajectory(task_dir).last_action


def evaluate_offline(task_dir: Path, task_config: dict[str, Any],
                     task_files_dir: str | os.PathLike[str] | None = None,
                     evaluator_fixes: bool = False) -> Evaluation:
    """The task's evaluation from its recording and trajectory (0 again for a desktop the agent broke),
    with OSWorld's verdicts or, with `evaluator_fixes`, ours; raises NotRescorable or RescoreError."""

    status = read_status(task_dir)
    if status is not None and status.agent_fault is not None:  # no evaluator ran on a desktop the agent broke
        return Evaluation(0.0, f"scored 0: {status.agent_fault.text()}")
    evaluator = task_config.get("evaluator") or {}
    if not evaluator.get("func"):
        raise NotRescorable("the task config has no evaluator")
    decided = decided_by_last_action(evaluator, last_action(task_dir))
    if decided is not None:
        return decided
    manifest = read_manifest(task_dir)
    if manifest is None:
        raise NotRescorable(f"nothing was recorded when the task was scored ({RESCORE_DIR}/{MANIFEST} is missing): "
                            "it was scored before recording existed, or by another harness")
    try:
        with tempfile.TemporaryDirectory(prefix="osworld-rescore-") as tmp:
            ctx = ReplayContext(manifest, task_dir / RESCORE_DIR / FILES_DIR, Path(tmp),
                                str(task_files_dir) if task_files_dir else None, task_config)
            return evaluate_task(ctx, evaluator, evaluator_fixes)
    except NotRecorded as e:
        raise NotRescorable(str(e)) from None
    except Exception as e:  # EvaluationError, a task file that cannot be found, an unknown metric...
        raise RescoreError(f"{type(e).__name__}: {e}") from None


def _same(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) < 1e-9


def rescore_record(task_dir: str | os.PathLike[str], task_config: Any,
                   task_files_dir: str | os.PathLike[str] | None = None, write: bool = True,
                   evaluator_fixes: bool = False) -> dict[str, Any]:
    """Rescores one task folder and returns what rescore.json says (written beside result.txt, which is
    kept): old and new score, the new evaluation's explanation, or why there is no new score
    (`rescorable` false with a `reason`, or an `error`), and whether our evaluator fixes were applied.

    `task_config` is the task's dict, or a loaded `Task`, whose folder then resolves the task's
    relative file paths (else pass `task_files_dir`).
    """
    task_dir = Path(task_dir)
    if hasattr(task_config, "config") and hasattr(task_config, "task_dir"):
        task_files_dir = task_files_dir or task_config.task_dir
        task_config = task_config.config
    record = read_task(task_dir)
    old = record.score if record is not None and record.status == "ok" else None
    manifest = read_manifest(task_dir) or {}
    evaluator = task_config.get("evaluator") or {}
    result: dict[str, Any] = {
        "task_id": task_config.get("id", task_dir.name), "domain": split_trial(task_dir)[0].parent.name,
        "old_score": old, "old_status": record.status if record else "incomplete",
        "new_score": None, "changed": None, "rescorable": True, "rescored_at": now_iso(),
        "evaluator_fixes": evaluator_fixes,
        "osworld": osworld_version(), "scored_with": manifest.get("osworld"), "saved_at": manifest.get("saved_at"),
        "metrics": {name: {"when_scored": (manifest.get("metrics") or {}).get(name), "now": digest}
                    for name, digest in metric_fingerprints(evaluator).items()},
        "evaluator_changed": (manifest["evaluator"] != evaluator) if "evaluator" in manifest else None,
    }
    try:
        evaluation = evaluate_offline(task_dir, task_config, task_files_dir, evaluator_fixes)
        result.update(new_score=evaluation.score, changed=not _same(old, evaluation.score),
                      evaluation=evaluation.to_json())
    except NotRescorable as e:
        result.update(rescorable=False, reason=str(e))
    except RescoreError as e:
        result.update(error=str(e))
    if write:
        write_json_atomic(task_dir / RESULT_FILE, result)
    return result


def rescore_task(task_dir: str | os.PathLike[str], task_config: Any,
                 task_files_dir: str | os.PathLike[str] | None = None,
                 write: bool = True) -> tuple[float | None, float]:
    """rescore_record's (old score or None when it errored, new score); raises NotRescorable or
    RescoreError when there is no new score (rescore.json says so too)."""
    result = rescore_record(task_dir, task_config, task_files_dir, write)
    if not result["rescorable"]:
        raise NotRescorable(result["reason"])
    if "error" in result:
        raise RescoreError(result["error"])
    return result["old_score"], result["new_score"]


# -- many result folders ----------------------------------------------------------------------------

@dataclass
class RescoreRow:
    domain: str
    task_id: str
    task_dir: str
    old: float | None
    new: float | None
    rescorable: bool
    changed: bool = False
    note: str | None = None
    old_status: str = "ok"
    explanation: str | None = None   # why the new score is what it is
    trial: int = 1

    @property
    def old_text(self) -> str:
        return f"{self.old:g}" if self.old is not None else self.old_status

    @property
    def new_text(self) -> str:
        return f"{self.new:g}" if self.new is not None else "-"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def short(text: str, limit: int = 160) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def find_task(task_set: Any, domain: str, task_id: str) -> Any | None:
    """The task of a result folder: by domain and id in the meta file, else by id in any domain."""
    if task_id in task_set.index.get(domain, []):
        return task_set.load(domain, task_id)
    for other, ids in task_set.index.items():
        if task_id in ids:
            return task_set.load(other, task_id)
    return None


def recorded_task_set(run: Any) -> Any:
    """The task set a run recorded in its args.json: ours (`config.tasks`, the built-in suite when None)
    or OSWorld's (`test_all_meta_path`); the built-in suite when nothing says."""

    args = run.args or {}
    config = args.get("config")
    meta = config.get("tasks") if isinstance(config, dict) else args.get("test_all_meta_path")
    return load_task_set(meta if isinstance(meta, str) and meta else None)


def rescore_results(paths: Iterable[str | os.PathLike[str]], task_set: Any = None,
                    evaluator_fixes: bool = False) -> list[RescoreRow]:
    """Rescores every finished task under `paths` (any level of the results layout), tasks from `task_set`,
    or, when None, from the task set each run recorded (recorded_task_set); `evaluator_fixes`: with our
    fixes of OSWorld's metrics instead of its verdicts."""
    rows = []
    for path in paths:
        for run in find_runs(Path(path)):
            tasks = task_set if task_set is not None else recorded_task_set(run)
            # every folder, those not in the run's task set too: rescoring reads a folder, it scores no run
            for record in sorted(run.records + run.scope.strays, key=lambda r: (r.domain, r.task_id, r.trial)):
                task_dir = run.folder(record)
                row = RescoreRow(record.domain, record.task_id, str(task_dir), record.score, None, False,
                                 old_status=record.status, trial=record.trial)
                rows.append(row)
                if record.status == "incomplete":
                    row.note = "did not finish: nothing to rescore"
                    continue
                try:
                    task = find_task(tasks, record.domain, record.task_id)
                except Exception as e:  # a task file that cannot be read
                    row.note = f"task file: {e}"
                    continue
                if task is None:
                    row.note = f"not in {tasks.meta_path}"
                    continue
                result = rescore_record(task_dir, task, evaluator_fixes=evaluator_fixes)
                if not result["rescorable"]:
                    row.note = f"not rescorable: {result['reason']}"
                elif "error" in result:
                    row.note = f"error: {result['error']}"
                else:
                    row.old, row.new = result["old_score"], result["new_score"]
                    row.rescorable, row.changed = True, bool(result["changed"])
                    row.explanation = result["evaluation"]["explanation"]
                    row.note = short(row.explanation)
    return rows
