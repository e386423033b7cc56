"""The owner of a task's result folder: layout, atomic writes, status.json and what state a task is in.

Every reader and writer goes through here (docs/RESULTS.md has the format and its version):
`<root>/<action_space>/<obs_type>/<model>/<domain>/<id>/` holds result.txt, traj.jsonl,
step_<n>_<ts>.png, recording.mp4, runtime.log (OSWorld's files) and status.json (ours: a TaskStatus,
written by write_status). That folder is the task's first trial, where OSWorld's tools look; trial
k >= 2 of `--trials K` is a folder of the same kind at `<id>/trials/<k>/`. A trial whose status.json
still says "running" was cut off by a killed run (or a stopped one, which says why in cut_off); one
with "error" keeps its record until it is retried.
"""
from __future__ import annotations

import datetime as dt
import functools
import json
import os
import shutil
import tempfile
import traceback
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from desktop_env.evaluators.outcome import Evaluation

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Record = TypeVar("Record", bound="DataclassInstance")  # a record with an `extra` field, read by _record_from_json


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
    variant: str = ""   # a part of a run (config.folder_variant: -shard-I-of-N, -limit-N), in a folder of its own

    @property
    def model_dir(self) -> Path:
        return self.root / self.action_space / self.observation_type / (safe_component(self.model) + self.variant)

    def task_dir(self, domain: str, task_id: str, trial: int = 1) -> Path:
        """The folder of one trial of a task (the first: the task's own folder, as OSWorld has it)."""
        return trial_dir(self.model_dir / domain / task_id, trial)


TRIALS_DIR = "trials"  # inside a task's folder: trials/<k>/ for trials 2..K


def trial_dir(task_dir: Path, trial: int) -> Path:
    return task_dir if trial == 1 else task_dir / TRIALS_DIR / str(trial)


def split_trial(folder: Path) -> tuple[Path, int]:
    """(the task's folder, which trial) of a trial's folder: `<id>/trials/<k>/` is trial k of `<id>`,
    any other folder is the first trial of the task it names."""
    if folder.parent.name == TRIALS_DIR and folder.name.isdigit() and int(folder.name) >= 2:
        return folder.parent.parent, int(folder.name)
    return folder, 1


class TaskState(str, Enum):
    NEW = "new"                # never started
    DONE = "done"              # finished with a score
    ERROR = "error"            # finished with a recorded error
    INTERRUPTED = "interrupted"  # started by a run that was killed; to be re-run


RESULT_FILE, STATUS_FILE, TRAJECTORY_FILE = "result.txt", "status.json", "traj.jsonl"
FORMAT_VERSION = 2  # of status.json (docs/RESULTS.md); folders without it are older ones, or OSWorld's


def _of(*types: type) -> Callable[[Any], Any]:
    """A reader that takes a JSON value of one of `types` as it is (a bool is not a number)."""
    def read(value: Any) -> Any:
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise TypeError(f"expected {' or '.join(t.__name__ for t in types)}, got {type(value).__name__}")
        return value
    return read


def _one_of(*values: str) -> Callable[[Any], str]:
    def read(value: Any) -> str:
        if not isinstance(value, str) or value not in values:
            raise ValueError(f"expected one of {values}, got {value!r}")
        return value
    return read


def _list_of(read: Callable[[Any], Any]) -> Callable[[Any], list[Any]]:
    return lambda value: [read(item) for item in _of(list)(value)]


def _to_json(value: Any) -> Any:
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, list):
        return [_to_json(item) for item in value]
    return value


def _record_to_json(record: Any, keep_empty: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The record's fields (`read` in their metadata) as JSON, those that are None or empty left out,
    then the keys it was read with but does not know, as they were."""
    out: dict[str, Any] = {}
    for f in fields(record):
        value = getattr(record, f.name)
        if "read" in f.metadata and not (value is None or (value in ({}, []) and f.name not in keep_empty)):
            out[f.name] = _to_json(value)
    return {**out, **{k: v for k, v in record.extra.items() if k not in out}}


def _record_from_json(cls: type[Record], data: dict[str, Any]) -> Record:
    """`cls` from a JSON object: each field through its reader; a value its reader refuses, and a
    key no field has, stay in `extra` as read, so writing the record back loses nothing."""
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    readers = {f.name: f.metadata["read"] for f in fields(cls) if "read" in f.metadata}
    for key, value in data.items():
        try:
            values[key] = readers[key](value)
        except (KeyError, TypeError, ValueError, AttributeError):
            extra[key] = value
    return cls(**{**values, "extra": extra})  # `extra` has no reader, so it is never in `values`


def _json_field(read: Callable[[Any], Any], default: Any = None, factory: Any = None) -> Any:
    if factory is not None:
        return field(default_factory=factory, metadata={"read": read})
    return field(default=default, metadata={"read": read})


def fatal_cause(exc: BaseException | None) -> dict[str, str] | None:
    """The `fatal_cause` of `exc`, or of an exception that caused it; None when none will fail every task alike
    (what such an exception carries, and how a run stops on it: osworld_harness/execution/breaker.py)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        carried = getattr(exc, "fatal_cause", None)
        if isinstance(carried, dict):
            return carried
        exc = exc.__cause__ or exc.__context__
    return None


@dataclass
class ErrorRecord:
    """status.json's `error`: what ended a task, its traceback, and `fatal` when it will end every
    task alike (`fatal_cause`: {kind, signature, message})."""
    type: str = _json_field(_of(str), "Error")
    message: str = _json_field(_of(str), "")
    traceback: str | None = _json_field(_of(str))
    fatal: dict[str, str] | None = _json_field(_of(dict))
    # why the plan refused the task (InvalidTask)
    problems: list[dict[str, Any]] | None = _json_field(_list_of(_of(dict)))
    extra: dict[str, Any] = field(default_factory=dict)  # keys of a newer format, kept as read

    @classmethod
    def from_exception(cls, e: BaseException, message: str | None = None) -> ErrorRecord:
        """The record of an exception: its type, message and traceback, and `fatal`."""
        return cls(type(e).__name__, str(e) if message is None else message,
                   "".join(traceback.format_exception(type(e), e, e.__traceback__)), fatal_cause(e))

    def text(self) -> str:
        """"Type: message", as every reader shows an error."""
        return f"{self.type}: {self.message}".strip()

    def to_json(self) -> dict[str, Any]:
        return _record_to_json(self, keep_empty=frozenset({"problems"}))

    @classmethod
    def from_json(cls, data: Any) -> ErrorRecord:
        if not isinstance(data, dict):  # not a record this harness wrote: its text is the message
            return cls(message=str(data))
        return _record_from_json(cls, data)


@dataclass
class PreviousError:
    """An error of an earlier run of the task (`finished` None: that run was cut off or killed)."""
    error: ErrorRecord = field(metadata={"read": ErrorRecord.from_json})
    finished: str | None = _json_field(_of(str, type(None)))

    def to_json(self) -> dict[str, Any]:
        return {"error": self.error.to_json(), "finished": self.finished}

    @classmethod
    def from_json(cls, data: Any) -> PreviousError:
        data = _of(dict)(data)
        return cls(ErrorRecord.from_json(data.get("error") or {}), _of(str, type(None))(data.get("finished")))


AgentFaultKind = Literal["resource_limit", "server_gone", "unresponsive"]


@dataclass
class AgentFault:
    """status.json's `agent_fault`: the desktop broke because of the agent's own actions, so the task
    scored 0 instead of ending in an error. `kind`: "resource_limit" (a process or memory limit, or the
    full home folder), "server_gone" (its env server died or was stopped), "unresponsive" (the desktop
    stopped answering, or lost a part of its session); `step`: the agent's answer after which it was
    noticed."""
    kind: AgentFaultKind = _json_field(_one_of(*typing.get_args(AgentFaultKind)), "unresponsive")
    message: str = _json_field(_of(str), "")
    step: int | None = _json_field(_of(int))
    extra: dict[str, Any] = field(default_factory=dict)  # keys of a newer format, kept as read

    def text(self) -> str:
        return f"the agent's own actions broke the desktop ({self.kind}): {self.message}"

    def to_json(self) -> dict[str, Any]:
        return _record_to_json(self)

    @classmethod
    def from_json(cls, data: Any) -> AgentFault:
        return _record_from_json(cls, _of(dict)(data))


StatusValue = Literal["running", "ok", "error"]


@dataclass
class TaskStatus:
    """status.json: a task's state and what its episode recorded (docs/RESULTS.md, tested against it).

    A field is read with its reader and written when it is not None or empty; a new field needs only
    a line here and a row in the table. `format` is the version it was read from (None: a folder
    older than format 1); it is always written as FORMAT_VERSION."""
    status: StatusValue = _json_field(_one_of("running", "ok", "error"), "running")
    format: int | None = _json_field(_of(int))
    task_id: str | None = _json_field(_of(str))
    instruction: str | None = _json_field(_of(str))
    trial: int | None = _json_field(_of(int))
    task_sha256: str | None = _json_field(_of(str))
    attempt: int | None = _json_field(_of(int))
    started: str | None = _json_field(_of(str))
    finished: str | None = _json_field(_of(str))
    steps: int | None = _json_field(_of(int))
    durations: dict[str, float] = _json_field(_of(dict), factory=dict)
    usage: dict[str, Any] | None = _json_field(_of(dict))
    recorded_score: float | None = _json_field(_of(int, float))
    model_calls: dict[str, Any] | None = _json_field(_of(dict))
    screen_size: list[int] | None = _json_field(_list_of(_of(int)))
    readiness: dict[str, Any] | None = _json_field(_of(dict))
    evaluation: Evaluation | None = _json_field(Evaluation.from_json)
    agent_fault: AgentFault | None = _json_field(AgentFault.from_json)
    warnings: list[dict[str, Any]] = _json_field(_list_of(_of(dict)), factory=list)
    perturbation: dict[str, Any] | None = _json_field(_of(dict))
    error: ErrorRecord | None = _json_field(ErrorRecord.from_json)
    previous_errors: list[PreviousError] = _json_field(_list_of(PreviousError.from_json), factory=list)
    cut_off: str | None = _json_field(_of(str))
    ray_worker: dict[str, Any] | None = _json_field(_of(dict))
    live_view: str | None = _json_field(_of(str))
    extra: dict[str, Any] = field(default_factory=dict)  # keys of a newer format, kept as read

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT_VERSION, **{k: v for k, v in _record_to_json(self).items() if k != "format"}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskStatus:
        return _record_from_json(cls, data)

    def error_text(self) -> str:
        return self.error.text() if self.error else "the task ended in an error (no error recorded)"

    def carried_errors(self) -> list[PreviousError]:
        """What a re-run of the task keeps of this record: its history, and its own end if that was an error
        or a cut-off run."""
        history = list(self.previous_errors)
        if self.status == "error" and self.error:
            history.append(PreviousError(self.error, self.finished))
        elif self.status == "running":
            history.append(PreviousError(ErrorRecord("Interrupted", self.cut_off or
                                                     "the run was killed while this task ran"), None))
        return history


def write_status(task_dir: Path, status: TaskStatus) -> None:
    """status.json, the one place a task's state is written, stamped with the format version."""
    write_json_atomic(task_dir / STATUS_FILE, status.to_json())


def write_score(task_dir: Path, score: float) -> None:
    write_text_atomic(task_dir / RESULT_FILE, f"{score}\n")


def remove_score(task_dir: Path) -> None:
    """An error is never a score: a result.txt written before the episode failed goes."""
    (task_dir / RESULT_FILE).unlink(missing_ok=True)


def write_trajectory(task_dir: Path, lines: list[str]) -> None:
    """traj.jsonl, whole, from the JSON lines of the steps so far."""
    write_text_atomic(task_dir / TRAJECTORY_FILE, "\n".join(lines) + "\n")


def read_status(task_dir: Path) -> TaskStatus | None:
    """The folder's status.json, of any format; None when there is none (OSWorld's folders) or it
    cannot be read."""
    try:
        data = json.loads((task_dir / STATUS_FILE).read_text())
    except (OSError, ValueError):
        return None
    return TaskStatus.from_json(data) if isinstance(data, dict) else None


def error_text(status: TaskStatus | None) -> str:
    """An error record's "Type: message", as every reader shows it."""
    return (status or TaskStatus()).error_text()


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
    trial: int = 1
    task_sha256: str | None = None   # of the task file the trial ran with (format 2)
    rescored: bool = False           # `score` is rescore.json's new score, not result.txt's
    recorded_score: float | None = None  # a replayed trajectory's score where it was recorded (status.json)


def _parse_time(value: str | None) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(value) if value else None
    except ValueError:
        return None


@dataclass
class Trajectory:
    """traj.jsonl as read: its entries (one per action) and how many lines could not be read."""
    entries: list[dict[str, Any]]
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
    """Every trial's folder under `path` (any level of the layout) that holds a result, a status or a
    trajectory (a task that started and never finished, OSWorld's included): a task's own folder (its
    first trial) and its trials/<k>/ folders."""
    return sorted({p.parent for name in (RESULT_FILE, STATUS_FILE, TRAJECTORY_FILE) for p in path.rglob(name)})


RESCORE_FILE = "rescore.json"  # written by `osworld rescore` (osworld_harness/results/rescore.py) beside result.txt


def rescored_score(task_dir: Path) -> float | None:
    """The new score `osworld rescore` wrote for the folder, None when it has none (not rescored, not
    rescorable, or the rescore failed)."""
    try:
        data = json.loads((task_dir / RESCORE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    score = data.get("new_score") if isinstance(data, dict) else None
    return float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None


def read_task(task_dir: Path, rescored: bool = False) -> TaskRecord | None:
    """The task's record, or None for a folder that holds nothing of a run (ours or OSWorld's).

    A score is a readable result.txt of a run that finished (status ok, or OSWorld's, which has no
    status.json); a result.txt that cannot be read is an error, not a score, for every reader. With
    `rescored`, a finished task's score is the one `osworld rescore` wrote, where it wrote one (an
    error stays an error)."""
    status = read_status(task_dir)
    result_file = task_dir / RESULT_FILE
    task_folder, trial = split_trial(task_dir)
    record = TaskRecord(domain=task_folder.parent.name, task_id=task_folder.name, status="incomplete", trial=trial)
    if result_file.is_file() and (status is None or status.status == "ok"):
        try:
            record.score = float(result_file.read_text().strip())
            record.status = "ok"
        except (OSError, ValueError):
            record.status = "error"  # an unreadable result is not a score
    elif status is not None and status.status == "error":
        record.status = "error"
    elif status is None:
        return None if not (task_dir / TRAJECTORY_FILE).exists() else record
    if status:
        record.steps, record.task_sha256 = status.steps, status.task_sha256
        started, finished = _parse_time(status.started), _parse_time(status.finished)
        if started and finished:
            record.seconds = (finished - started).total_seconds()
        usage = status.usage or {}
        record.input_tokens = usage.get("input_tokens")
        record.output_tokens = usage.get("output_tokens")
        record.cost_usd = usage.get("cost_usd")
        record.recorded_score = status.recorded_score
    if record.steps is None:
        record.steps = _steps_from_trajectory(task_dir)
    new_score = rescored_score(task_dir) if rescored and record.status == "ok" else None
    if new_score is not None:
        record.score, record.rescored = new_score, True
    return record


def task_state(task_dir: Path) -> TaskState:
    """What a resumed run does with the folder, from the same record summaries read."""
    if not task_dir.is_dir():
        return TaskState.NEW
    record = read_task(task_dir)
    if record is None:
        return TaskState.INTERRUPTED if any(p.name != TRIALS_DIR for p in task_dir.iterdir()) else TaskState.NEW
    return {"ok": TaskState.DONE, "error": TaskState.ERROR}.get(record.status, TaskState.INTERRUPTED)


def clear_task_dir(task_dir: Path, keep_error_history: bool = True) -> list[PreviousError]:
    """Empties a trial's folder before a re-run, the task's other trials (trials/) kept; returns the
    earlier error records to carry over."""
    status = read_status(task_dir) if keep_error_history else None
    history = status.carried_errors() if status else []
    task_dir.mkdir(parents=True, exist_ok=True)
    for entry in task_dir.iterdir():
        if entry.name == TRIALS_DIR and entry.is_dir() and not entry.is_symlink():
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    return history


def record_worker_died(task_dir: Path, task_id: str, reason: str, attempt: int | None = None) -> None:
    """Marks a task whose worker (process, Ray actor or node) died under it as an error, keeping
    what its status already said; a re-run carries it over as history (clear_task_dir)."""
    status = read_status(task_dir) or TaskStatus()
    status.status, status.task_id, status.finished = "error", task_id, now_iso()
    status.error = ErrorRecord("WorkerDied", reason, "")
    if attempt is not None:
        status.attempt = attempt
    write_status(task_dir, status)


INVALID_TASK = "InvalidTask"  # the error type of a task the plan refused: no desktop was started for it


def refused_by_plan(task_dir: Path) -> bool:
    status = read_status(task_dir)
    return bool(status and status.status == "error" and status.error and status.error.type == INVALID_TASK)


def record_invalid_task(task_dir: Path, task_id: str, problems: list[dict[str, Any]], message: str,
                        trial: int = 1) -> None:
    """The error record of a task that cannot run: each problem with its file, field and value.
    Refused again, the record is replaced, not stacked onto its history."""
    again = refused_by_plan(task_dir)
    history = (read_status(task_dir) or TaskStatus()).previous_errors if again else clear_task_dir(task_dir)
    if again:
        clear_task_dir(task_dir, keep_error_history=False)
    write_status(task_dir, TaskStatus(
        "error", task_id=task_id, trial=trial, steps=0, finished=now_iso(), previous_errors=history,
        error=ErrorRecord(INVALID_TASK, f"the task cannot run: {message}", "", problems=problems)))


def start_task(task_dir: Path, task_id: str, attempt: int = 1, trial: int = 1) -> list[PreviousError]:
    """Marks a trial of a task "running" before it is handed to a worker, so a run killed from then on
    leaves it to be re-run; returns the earlier errors the worker carries over (clear_task_dir)."""
    previous = clear_task_dir(task_dir)
    write_status(task_dir, TaskStatus("running", task_id=task_id, trial=trial, started=now_iso(), attempt=attempt,
                                      previous_errors=list(previous)))
    return previous


def record_cut_off(task_dir: Path, task_id: str, reason: str, previous_errors: Sequence[PreviousError] = ()) -> None:
    """A task a stopped run cut off: still "running" (a resumed run runs it again) and saying why,
    with the history it had when it started (the episode's own record may not have it yet). A task whose
    worker wrote its final record before the run heard it had finished (Ctrl-C between the two) was not
    cut off: its record stays as it is."""
    status = read_status(task_dir) or TaskStatus()
    if status.status in ("ok", "error"):
        return
    status.status, status.task_id, status.cut_off = "running", task_id, reason
    status.previous_errors = status.previous_errors or list(previous_errors)
    write_status(task_dir, status)


def write_returned_files(task_dir: Path, files: dict[str, bytes], ray_worker: dict[str, Any] | None = None) -> None:
    """Writes a task folder's files sent from elsewhere (a Ray actor's scratch folder), status.json
    last with where it ran: the task counts as finished only once everything else is here."""
    root = task_dir.resolve()
    files = dict(files)
    status = files.pop(STATUS_FILE, None)
    for relative, data in files.items():
        target = (task_dir / relative).resolve()
        if root not in target.parents:
            raise ValueError(f"{task_dir}: a returned file would land outside the task folder: {relative!r}")
        write_bytes_atomic(target, data)
    if status is not None:
        record = TaskStatus.from_json(json.loads(status))
        record.ray_worker = ray_worker or record.ray_worker
        write_status(task_dir, record)
