"""Reading OSWorld task files as they are.

Layout: `<root>/examples/<domain>/<id>.json`, indexed by a meta file such as
`<root>/test_all.json` = `{"<domain>": ["<id>", ...]}`. A task keeps its raw dict
(what DesktopEnv.reset takes) plus where it came from, so relative resource paths
resolve against its folder.
"""
from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ..errors import TaskFileError, UnsafeTaskPath
from ..safe_paths import check_name
from .paths import unsafe_paths

BUILTIN_ROOT = Path(__file__).resolve().parents[2] / "evaluation_examples"
ALL_DOMAINS = "all"


class UnknownSelection(TaskFileError):
    """A domain or task id asked for that the meta file does not list; `field` is "domain" or "task_id"."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


@dataclass
class Task:
    id: str
    domain: str
    path: Path
    config: dict[str, Any] = field(repr=False)

    @property
    def instruction(self) -> str:
        return cast(str, self.config.get("instruction", ""))  # load_task checked that it is a string

    @property
    def task_dir(self) -> Path:
        return self.path.parent

    @property
    def evaluator(self) -> dict[str, Any]:
        return self.config.get("evaluator") or {}

    @property
    def infeasible(self) -> bool:
        return self.evaluator.get("func") == "infeasible"

    @property
    def sha256(self) -> str:
        """The hash of the task as loaded (its JSON, keys sorted): two runs that record the same one ran
        the same task, whatever the file's spacing."""
        canonical = json.dumps(self.config, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def read_json(path: Path, what: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise TaskFileError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        metas = sorted(p.name for p in Path(path).glob("test_*.json"))
        hint = f"; it holds {', '.join(metas)}" if metas else ""
        raise TaskFileError(f"{what} {path} is a folder, not a JSON file{hint}") from None
    except OSError as e:
        raise TaskFileError(f"{what} {path} cannot be read: {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise TaskFileError(f"{what} {path} is not valid JSON: line {e.lineno} column {e.colno}: {e.msg}") from None
    except UnicodeDecodeError as e:
        raise TaskFileError(f"{what} {path} is not UTF-8 text: {e}") from None


def load_task(path: str | Path, domain: str | None = None, check_paths: bool = True) -> Task:
    """Reads a task file; refuses (TaskFileError) a file that is not a usable task.

    With `check_paths` (the default), a host path the task names that would leave the
    harness's folders (desktop_env.tasks.paths) is refused too, as UnsafeTaskPath naming
    the file, the field and the value: a run never starts such a task.
    """
    path = Path(path)
    config = read_json(path, "task file")
    if not isinstance(config, dict):
        raise TaskFileError(f"task file {path}: expected a JSON object, got {type(config).__name__}")
    task_id = config.get("id")
    if not isinstance(task_id, str) or not task_id:
        raise TaskFileError(f"task file {path}: field 'id' must be a non-empty string, got {task_id!r}")
    if task_id != path.stem:
        raise TaskFileError(f"task file {path}: field 'id' is {task_id!r} but the file is named {path.stem!r}")
    if task_id in (".", ".."):  # the id names the task's cache and result folders
        raise TaskFileError(f"task file {path}: field 'id' is {task_id!r}, which names a parent folder, not a task")
    if not isinstance(config.get("instruction"), str):
        raise TaskFileError(f"task file {path}: field 'instruction' must be a string, "
                            f"got {config.get('instruction')!r:.80}")
    steps = config.get("config")
    if steps is not None and not isinstance(steps, list):
        raise TaskFileError(f"task file {path}: field 'config' must be a list of setup steps, "
                            f"got {type(steps).__name__}")
    evaluator = config.get("evaluator")
    if not isinstance(evaluator, dict) or "func" not in evaluator:
        raise TaskFileError(f"task file {path}: field 'evaluator' must be an object with 'func', "
                            f"got {evaluator!r:.120}")
    if check_paths:
        problems = unsafe_paths(config, path, path.parent)
        if problems:
            first = problems[0]
            if len(problems) > 1:
                more = ", ".join(f"{p.field} = {p.value!r}" for p in problems[1:])
                first = type(first)(first.value, f"{first.reason} (and {len(problems) - 1} more: {more})",
                                    first.field, first.task_file)
            raise first
    return Task(id=task_id, domain=domain or path.parent.name, path=path, config=config)


@dataclass
class TaskSet:
    """The tasks a meta file lists, in its order."""
    meta_path: Path
    examples_dir: Path
    index: dict[str, list[str]]

    def select(self, domains: list[str] | None = None, task_ids: list[str] | None = None) -> list[tuple[str, str]]:
        """(domain, id) of the tasks in the domains and with the ids asked for (all when none are); the
        domain `all` (OSWorld's run.py default) is every domain, unless the meta file has one so named."""
        if domains and ALL_DOMAINS in domains and ALL_DOMAINS not in self.index:
            domains = None
        if domains:
            unknown = sorted(set(domains) - set(self.index))
            if unknown:
                raise UnknownSelection(f"domain(s) {', '.join(unknown)} not in {self.meta_path}; "
                                       f"known: {', '.join(sorted(self.index))}", "domain")
        pairs = [(d, i) for d, ids in self.index.items() if not domains or d in domains for i in ids]
        if task_ids:
            known = {i for _, i in pairs}
            missing = [t for t in task_ids if t not in known]
            if missing:
                close = [c for t in missing for c in difflib.get_close_matches(t, sorted(known), n=2, cutoff=0.6)]
                raise UnknownSelection(f"task id(s) {', '.join(missing)} not in {self.meta_path}"
                                       + (f" for domain(s) {', '.join(domains)}" if domains else "")
                                       + (f"; did you mean {', '.join(dict.fromkeys(close))}?" if close else ""),
                                       "task_id")
            pairs = [(d, i) for d, i in pairs if i in task_ids]
        return pairs

    def task_path(self, domain: str, task_id: str) -> Path:
        return self.examples_dir / domain / f"{task_id}.json"

    def load(self, domain: str, task_id: str, check_paths: bool = True) -> Task:
        return load_task(self.task_path(domain, task_id), domain, check_paths=check_paths)

    def __iter__(self) -> Iterator[Task]:
        for domain, task_id in self.select():
            yield self.load(domain, task_id)

    def __len__(self) -> int:
        return sum(len(ids) for ids in self.index.values())


def load_task_set(meta: str | Path | None = None) -> TaskSet:
    """A meta file and the `examples/` folder beside it (OSWorld's layout)."""
    meta_path = Path(meta) if meta else BUILTIN_ROOT / "test_all.json"
    index = read_json(meta_path, "meta file")
    if not isinstance(index, dict) or not all(isinstance(v, list) for v in index.values()):
        raise TaskFileError(f"meta file {meta_path}: expected {{domain: [task ids]}}, got {str(index)[:120]}")
    for domain, ids in index.items():
        bad = [i for i in ids if not isinstance(i, str)]
        if bad:
            raise TaskFileError(f"meta file {meta_path}: domain {domain!r} lists non-string ids {bad[:3]}")
        # Domains and ids name folders (examples/<domain>/<id>.json, results/.../<domain>/<id>/).
        try:
            check_name(domain, field="domain", task_file=meta_path)
            for i, task_id in enumerate(ids):
                check_name(task_id, field=f"{domain}[{i}]", task_file=meta_path)
        except UnsafeTaskPath as e:
            raise UnsafeTaskPath(e.value, e.reason, e.field, e.task_file, what="meta file") from None
    return TaskSet(meta_path, meta_path.parent / "examples", index)
