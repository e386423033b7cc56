"""Getters that bring files to the harness: from the desktop, from the task's resources, from the cache.

Every file name a getter config gives for the host (`dest`, cache_file's `path`) stays in
the task's cache folder and every resource it reads stays in the task's tree
(desktop_env.safe_paths): otherwise the getter raises UnsafeTaskPath (an error record,
never a score of 0) naming the task file, the field and the value, and writes nothing.
"""
from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

from ...resources import cache_name, fetch
from ...safe_paths import cache_folder, check_basename, join_under, task_file_of, write_under
from ..registry import getter


def getter_field(env: Any, config: dict) -> str:
    """Where `config` sits in the running task's evaluator (`evaluator.result[1]`), else its type."""
    evaluator = (getattr(env, "task_config", None) or {}).get("evaluator")
    if isinstance(evaluator, dict):
        for same in (lambda a, b: a is b, lambda a, b: a == b):
            for role in ("result", "expected"):
                spec = evaluator.get(role)
                if isinstance(spec, dict) and same(spec, config):
                    return f"evaluator.{role}"
                for i, item in enumerate(spec if isinstance(spec, list) else []):
                    if isinstance(item, dict) and same(item, config):
                        return f"evaluator.{role}[{i}]"
    return f"{config.get('type', 'getter')}"


def cache_target(env: Any, config: dict, name: Any, key: str = "dest") -> Path:
    """The path `name` (from config[key]) names in the task's cache folder; UnsafeTaskPath when it leaves it."""
    return join_under(cache_folder(env), name, f"{getter_field(env, config)}.{key}", task_file_of(env))


def save_in_cache(env: Any, config: dict, name: Any, data: bytes, key: str = "dest") -> str:
    """Writes `data` under `name` in the task's cache folder (never through a symlink); returns the path."""
    return str(write_under(cache_folder(env), name, data, f"{getter_field(env, config)}.{key}", task_file_of(env)))


def _paths_and_dests(env: Any, config: dict) -> tuple[list[str], list[str], list[int]]:
    """(paths, dests, gives); every dest is checked here, before anything is fetched or written."""
    if config.get("multi"):
        paths, dests = list(config["path"]), list(config["dest"])
        gives = config.get("gives", [0])
        keys = [f"dest[{i}]" for i in range(len(dests))]
    else:
        paths, dests, gives, keys = [config["path"]], [config["dest"]], [0], ["dest"]
    for dest, key in zip(dests, keys):
        cache_target(env, config, dest, key)
    return paths, dests, gives


def _dest_key(config: dict, i: int) -> str:
    return f"dest[{i}]" if config.get("multi") else "dest"


def _single_or_list(values: list) -> Any:
    return values[0] if len(values) == 1 else values


@getter("vm_file")
def vm_file(env: Any, config: dict) -> str | list | None:
    """Fetches file(s) from the desktop into the task's cache; None for a file that is not there.

    With `multi`, `path`/`dest` are lists and `gives` lists the indices returned.
    """
    paths, dests, gives = _paths_and_dests(env, config)
    out = []
    for i, (path, dest) in enumerate(zip(paths, dests)):
        data = env.controller.get_file(path)
        local = None
        if data is not None:
            local = save_in_cache(env, config, dest, data, _dest_key(config, i))
        if i in gives:
            out.append(local)
    return _single_or_list(out)


@getter("cloud_file")
def cloud_file(env: Any, config: dict) -> str | list:
    """Expected files named by URL, `file://` URL or a path relative to the task's folder."""
    paths, dests, gives = _paths_and_dests(env, config)
    field, task_file = getter_field(env, config), task_file_of(env)
    out = []
    for i, (url, dest) in enumerate(zip(paths, dests)):
        path_key = f"path[{i}]" if config.get("multi") else "path"
        local = fetch(url, cache_target(env, config, dest, _dest_key(config, i)), task_dir=getattr(env, "task_dir", None),
                      field=f"{field}.{path_key}", task_file=task_file)
        if i in gives:
            out.append(str(local))
    return _single_or_list(out)


@getter("cache_file")
def cache_file(env: Any, config: dict) -> str:
    """A file a setup step left in the task's cache folder (e.g. an execute step's `stdout`), by name."""
    path = cache_target(env, config, config["path"], "path")
    if not path.is_file():
        raise FileNotFoundError(f"cache_file: {path} not found")
    return str(path)


@getter("content_from_vm_file")
def content_from_vm_file(env: Any, config: dict) -> list | None:
    """A piece of a desktop file's content; OSWorld defines xlsx + last_row (values as strings)."""
    check_basename(config["path"], f"{getter_field(env, config)}.path", task_file_of(env))
    local = vm_file(env, {"path": config["path"], "dest": os.path.basename(config["path"])})
    if local is None:
        return None
    file_type, content = config.get("file_type"), config.get("file_content")
    if (file_type, content) != ("xlsx", "last_row"):
        raise ValueError(f"content_from_vm_file supports file_type 'xlsx' with file_content 'last_row', "
                         f"got {file_type!r}/{content!r}")
    from openpyxl import load_workbook
    rows = list(load_workbook(local, data_only=True, read_only=True).active.iter_rows(values_only=True))
    return [str(v) for v in rows[-1]] if len(rows) > 1 else None


CONFERENCE_CSV = "conference_cities.csv"


@getter("conference_city_in_order")
def conference_city_in_order(env: Any, config: dict) -> list[str]:
    """The third column of a CSV file, in row order, its header row left out.

    `csv_path` names the file as cloud_file's `path` does (a URL, a file:// URL or a path
    relative to the task's folder): OSWorld opens it on the harness's machine, not the desktop.
    A row with fewer than three columns gives "".
    """
    field, task_file = getter_field(env, config), task_file_of(env)
    url = config["csv_path"]
    name = cache_name(url, CONFERENCE_CSV) if isinstance(url, str) else CONFERENCE_CSV
    local = fetch(url, cache_target(env, config, name), task_dir=getattr(env, "task_dir", None),
                  field=f"{field}.csv_path", task_file=task_file)
    with open(local, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    return [row[2] if len(row) > 2 else "" for row in rows[1:]]
