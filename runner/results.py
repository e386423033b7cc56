"""The owner of a task's result folder: layout, atomic writes, status.json and what state a task is in.

Every reader and writer goes through here (docs/RESULTS.md has the format and its version):
`<root>/<action_space>/<obs_type>/<model>/<domain>/<id>/` holds result.txt, traj.jsonl,
step_<n>_<ts>.png, recording.mp4, runtime.log (OSWorld's files) and status.json (ours, written by
write_status): {format, status: running|ok|error, error?, steps, started, finished, durations,
usage?, warnings?, cut_off?}. A task whose status.json still says "running" was cut off by a killed
run (or a stopped one, which says why in cut_off); one with "error" keeps its record until it is
retried.
"""
from __future__ import annotations

import datetime as dt
import functools
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any


@functools.lru_cache(maxsize=1)
def file_mode() -> int:
    """What open() would give a new file here: 0666 less the process's umask (read without changing it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # not thread-safe, hence the cache and /proc first
    os.umask(mask)
    return 0o666 & ~mask


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Writes `path` whole or not at all, with the permissions any new file gets (mkstemp's are 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: Path, value: Any) -> None:
    write_text_atomic(path, json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def safe_component(name: str) -> str:
    """A model name like `org/model:tag` as one folder name."""
    return name.replace("/", "_").replace(os.sep, "_") or "_"


@dataclass(frozen=True)
class RunLayout:
    root: Path
    action_space: str
    observation_type: str
    model: str

    @property
    def model_dir(self) -> Path:
        return self.root / self.action_space / self.observation_type / safe_component(self.model)

    def task_dir(self, domain: str, task_id: str) -> Path:
        return self.model_dir / domain / task_id


class TaskState(str, Enum):
    NEW = "new"                # never started
    DONE = "done"              # finished with a score
    ERROR = "error"            # finished with a recorded error
    INTERRUPTED = "interrupted"  # started by a run that was killed; to be re-run


RESULT_FILE, STATUS_FILE, TRAJECTORY_FILE = "result.txt", "status.json", "traj.jsonl"
FORMAT_VERSION = 1  # of status.json (docs/RESULTS.md); folders without it are older ones, or OSWorld's


def write_status(task_dir: Path, record: dict[str, Any]) -> None:
    """status.json, the one place a task's state is written, stamped with the format version."""
    write_json_atomic(task_dir / STATUS_FILE,
                      {"format": FORMAT_VERSION, **{k: v for k, v in record.items() if k != "format"}})


def write_score(task_dir: Path, score: float) -> None:
    write_text_atomic(task_dir / RESULT_FILE, f"{score}\n")


def remove_score(task_dir: Path) -> None:
    """An error is never a score: a result.txt written before the episode failed goes."""
    (task_dir / RESULT_FILE).unlink(missing_ok=True)


def write_trajectory(task_dir: Path, lines: list[str]) -> None:
    """traj.jsonl, whole, from the JSON lines of the steps so far."""
    write_text_atomic(task_dir / TRAJECTORY_FILE, "\n".join(lines) + "\n")


def read_status(task_dir: Path) -> dict | None:
    try:
        return json.loads((task_dir / STATUS_FILE).read_text())
    except (OSError, ValueError):
        return None


def error_text(status: dict | None) -> str:
    """An error record's "Type: message", as every reader shows it."""
    error = (status or {}).get("error")
    if isinstance(error, dict):
        return f"{error.get('type', 'Error')}: {error.get('message', '')}".strip()
    return str(error) if error else "the task ended in an error (no error recorded)"


@dataclass
class TaskRecord:
    """What a task folder says, the same for every reader (resume, summaries, reports, tables)."""
    domain: str
    task_id: str
    status: str                  # ok | error | incomplete
    score: float | None = None
    steps: int | None = None
    seconds: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


def _parse_time(value: str | None) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(value) if value else None
    except ValueError:
        return None


@dataclass
class Trajectory:
    """traj.jsonl as read: its entries (one per action) and how many lines could not be read."""
    entries: list[dict]
    bad_lines: int = 0
    present: bool = True

    @property
    def last_action(self) -> Any:
        """The last action taken (what DesktopEnv.evaluate looks at for FAIL), None if none."""
        return next((e["action"] for e in reversed(self.entries) if e.get("action") is not None), None)


def read_trajectory(task_dir: Path) -> Trajectory:
    """A task's traj.jsonl; a line that is not a JSON object is counted, not fatal (a run killed mid-write)."""
    try:
        lines = (task_dir / TRAJECTORY_FILE).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return Trajectory([], present=False)
    trajectory = Trajectory([])
    for line in filter(str.strip, lines):
        try:
            entry = json.loads(line)
        except ValueError:
            entry = None
        if isinstance(entry, dict):
            trajectory.entries.append(entry)
        else:
            trajectory.bad_lines += 1
    return trajectory


def _steps_from_trajectory(task_dir: Path) -> int | None:
    trajectory = read_trajectory(task_dir)
    return len({e.get("step_num") for e in trajectory.entries}) if trajectory.present else None


def find_task_folders(path: Path) -> list[Path]:
    """Every task folder under `path` (any level of the layout) that holds a result or a status."""
    return sorted({p.parent for name in (RESULT_FILE, STATUS_FILE) for p in path.rglob(name)})


def read_task(task_dir: Path) -> TaskRecord | None:
    """The task's record, or None for a folder that holds nothing of a run (ours or OSWorld's).

    A score is a readable result.txt of a run that finished (status ok, or OSWorld's, which has no
    status.json); a result.txt that cannot be read is an error, not a score, for every reader."""
    status = read_status(task_dir)
    result_file = task_dir / RESULT_FILE
    record = TaskRecord(domain=task_dir.parent.name, task_id=task_dir.name, status="incomplete")
    if result_file.is_file() and (status is None or status.get("status") == "ok"):
        try:
            record.score = float(result_file.read_text().strip())
            record.status = "ok"
        except (OSError, ValueError):
            record.status = "error"  # an unreadable result is not a score
    elif status is not None and status.get("status") == "error":
        record.status = "error"
    elif status is None:
        return None if not (task_dir / TRAJECTORY_FILE).exists() else record
    if status:
        record.steps = status.get("steps")
        started, finished = _parse_time(status.get("started")), _parse_time(status.get("finished"))
        if started and finished:
            record.seconds = (finished - started).total_seconds()
        usage = status.get("usage") or {}
        record.input_tokens = usage.get("input_tokens")
        record.output_tokens = usage.get("output_tokens")
        record.cost_usd = usage.get("cost_usd")
    if record.steps is None:
        record.steps = _steps_from_trajectory(task_dir)
    return record


def task_state(task_dir: Path) -> TaskState:
    """What a resumed run does with the folder, from the same record summaries read."""
    if not task_dir.is_dir():
        return TaskState.NEW
    record = read_task(task_dir)
    if record is None:
        return TaskState.INTERRUPTED if any(task_dir.iterdir()) else TaskState.NEW
    return {"ok": TaskState.DONE, "error": TaskState.ERROR}.get(record.status, TaskState.INTERRUPTED)


def clear_task_dir(task_dir: Path, keep_error_history: bool = True) -> list[dict]:
    """Empties a task folder before a re-run; returns the earlier error records to carry over."""
    history: list[dict] = []
    status = read_status(task_dir) if keep_error_history else None
    if status:
        history = list(status.get("previous_errors", []))
        if status.get("status") == "error" and status.get("error"):
            history.append({"error": status["error"], "finished": status.get("finished")})
        elif status.get("status") == "running":
            history.append({"error": {"type": "Interrupted",
                                      "message": status.get("cut_off") or "the run was killed while this task ran"},
                            "finished": None})
    if task_dir.exists():
        shutil.rmtree(task_dir)
    task_dir.mkdir(parents=True)
    return history


def record_worker_died(task_dir: Path, task_id: str, reason: str, **extra: Any) -> None:
    """Marks a task whose worker (process, Ray actor or node) died under it as an error, keeping
    what its status already said; a re-run carries it over as history (clear_task_dir)."""
    status = read_status(task_dir) or {}
    write_status(task_dir, {
        **status, **extra, "status": "error", "task_id": task_id, "finished": now_iso(),
        "error": {"type": "WorkerDied", "message": reason, "traceback": ""}})


INVALID_TASK = "InvalidTask"  # the error type of a task the plan refused: no desktop was started for it


def refused_by_plan(task_dir: Path) -> bool:
    status = read_status(task_dir) or {}
    return status.get("status") == "error" and (status.get("error") or {}).get("type") == INVALID_TASK


def record_invalid_task(task_dir: Path, task_id: str, problems: list[dict], message: str) -> None:
    """The error record of a task that cannot run: each problem with its file, field and value.
    Refused again, the record is replaced, not stacked onto its history."""
    again = refused_by_plan(task_dir)
    history = list((read_status(task_dir) or {}).get("previous_errors", [])) if again else clear_task_dir(task_dir)
    if again:
        clear_task_dir(task_dir, keep_error_history=False)
    record = {"status": "error", "task_id": task_id, "steps": 0, "finished": now_iso(), "durations": {},
              "error": {"type": INVALID_TASK, "message": f"the task cannot run: {message}", "traceback": "",
                        "problems": problems}}
    if history:
        record["previous_errors"] = history
    write_status(task_dir, record)


def start_task(task_dir: Path, task_id: str, attempt: int = 1) -> list[dict]:
    """Marks a task "running" before it is handed to a worker, so a run killed from then on leaves it
    to be re-run; returns the earlier errors the worker carries over (clear_task_dir)."""
    previous = clear_task_dir(task_dir)
    write_status(task_dir, {"status": "running", "task_id": task_id, "started": now_iso(), "attempt": attempt,
                            "previous_errors": previous})
    return previous


def record_cut_off(task_dir: Path, task_id: str, reason: str, previous_errors: list[dict] = ()) -> None:
    """A task a stopped run cut off: still "running" (a resumed run runs it again) and saying why,
    with the history it had when it started (the episode's own record may not have it yet)."""
    status = read_status(task_dir) or {}
    write_status(task_dir, {"previous_errors": list(previous_errors), **status, "status": "running",
                            "task_id": task_id, "cut_off": reason})


def write_returned_files(task_dir: Path, files: dict[str, bytes], **status_extra: Any) -> None:
    """Writes a task folder's files sent from elsewhere (a Ray actor's scratch folder), status.json
    last with `status_extra` added: the task counts as finished only once everything else is here."""
    root = task_dir.resolve()
    files = dict(files)
    status = files.pop(STATUS_FILE, None)
    for relative, data in files.items():
        target = (task_dir / relative).resolve()
        if root not in target.parents:
            raise ValueError(f"{task_dir}: a returned file would land outside the task folder: {relative!r}")
        write_bytes_atomic(target, data)
    if status is not None:
        write_status(task_dir, {**json.loads(status), **status_extra})
