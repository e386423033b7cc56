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

from ...resources import CONFERENCE_CSV, cache_name, fetch
from ...safe_paths import check_basename
from ..archives import check_zip_file
from ..context import EvalContext
from ..registry import getter, requires


def getter_field(ctx: EvalContext, config: dict) -> str:
    """Where `config` sits in the running task's evaluator (`evaluator.result[1]`), else its type."""
    evaluator = ctx.task_config.get("evaluator")
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


def cache_target(ctx: EvalContext, config: dict, name: Any, key: str = "dest") -> Path:
    """The path `name` (from config[key]) names in the task's cache folder; UnsafeTaskPath when it leaves it."""
    return ctx.cache_path(name, f"{getter_field(ctx, config)}.{key}")


def save_in_cache(ctx: EvalContext, config: dict, name: Any, data: bytes, key: str = "dest") -> str:
    """Writes `data` under `name` in the task's cache folder (never through a symlink); returns the path."""
    return str(ctx.save_to_cache(name, data, f"{getter_field(ctx, config)}.{key}"))


def _paths_and_dests(ctx: EvalContext, config: dict) -> tuple[list[str], list[str], list[int]]:
    """(paths, dests, gives); every dest is checked here, before anything is fetched or written."""
    if config.get("multi"):
        paths, dests = list(config["path"]), list(config["dest"])
        gives = config.get("gives", [0])
        keys = [f"dest[{i}]" for i in range(len(dests))]
    else:
        paths, dests, gives, keys = [config["path"]], [config["dest"]], [0], ["dest"]
    for dest, key in zip(dests, keys, strict=True):
        cache_target(ctx, config, dest, key)
    return paths, dests, gives


def _dest_key(config: dict, i: int) -> str:
    return f"dest[{i}]" if config.get("multi") else "dest"


def _single_or_list(values: list) -> Any:
    return values[0] if len(values) == 1 else values


@getter("vm_file")
@requires("path", "dest")
def vm_file(ctx: EvalContext, config: dict) -> str | list | None:
    """Fetches file(s) from the desktop into the task's cache; None for a file that is not there.

    With `multi`, `path`/`dest` are lists and `gives` lists the indices returned.
    """
    paths, dests, gives = _paths_and_dests(ctx, config)
    out = []
    # A task file's `path` and `dest` lists may differ in length: OSWorld's getter stops at the shorter.
    for i, (path, dest) in enumerate(zip(paths, dests, strict=False)):
        local = _copy_to_cache(ctx, config, path, dest, _dest_key(config, i))
        if i in gives:
            out.append(local)
    return _single_or_list(out)


def _copy_to_cache(ctx: EvalContext, config: dict, path: str, dest: Any, key: str) -> str | None:
    data = ctx.read_file(path)
    return None if data is None else save_in_cache(ctx, config, dest, data, key)


def desktop_file(ctx: EvalContext, path: str, dest: Any) -> str | None:
    """One desktop file copied into the task's cache as `dest` (vm_file without `multi`, for getters
    that know the path themselves); None when the desktop has no such file."""
    config = {"path": path, "dest": dest}
    cache_target(ctx, config, dest)
    return _copy_to_cache(ctx, config, path, dest, "dest")


@getter("cloud_file")
@requires("path", "dest")
def cloud_file(ctx: EvalContext, config: dict) -> str | list:
    """Expected files named by URL, `file://` URL or a path relative to the task's folder."""
    paths, dests, gives = _paths_and_dests(ctx, config)
    field, task_file = getter_field(ctx, config), ctx.task_file
    out = []
    for i, (url, dest) in enumerate(zip(paths, dests, strict=False)):  # the shorter list decides, as in vm_file
        path_key = f"path[{i}]" if config.get("multi") else "path"
        local = fetch(url, cache_target(ctx, config, dest, _dest_key(config, i)), task_dir=ctx.task_dir,
                      field=f"{field}.{path_key}", task_file=task_file, cache_folder=ctx.cache_dir)
        if i in gives:
            out.append(str(local))
    return _single_or_list(out)


@getter("cache_file")
@requires("path")
def cache_file(ctx: EvalContext, config: dict) -> str:
    """A file a setup step left in the task's cache folder (e.g. an execute step's `stdout`), by name."""
    path = ctx.cached_file(config["path"], f"{getter_field(ctx, config)}.path")
    if path is None:
        raise FileNotFoundError(f"cache_file: {config['path']!r} is not in the task's cache folder")
    return str(path)


@getter("content_from_vm_file")
@requires("path")
def content_from_vm_file(ctx: EvalContext, config: dict) -> list | None:
    """A piece of a desktop file's content; OSWorld defines xlsx + last_row (values as strings)."""
    from openpyxl import load_workbook
    check_basename(config["path"], f"{getter_field(ctx, config)}.path", ctx.task_file)
    local = desktop_file(ctx, config["path"], os.path.basename(config["path"]))
    if local is None:
        return None
    file_type, content = config.get("file_type"), config.get("file_content")
    if (file_type, content) != ("xlsx", "last_row"):
        raise ValueError(f"content_from_vm_file supports file_type 'xlsx' with file_content 'last_row', "
                         f"got {file_type!r}/{content!r}")
    check_zip_file(local)
    sheet = load_workbook(local, data_only=True, read_only=True).active
    if sheet is None:
        raise ValueError(f"content_from_vm_file: {config['path']!r} has no worksheet")
    rows = list(sheet.iter_rows(values_only=True))
    return [str(v) for v in rows[-1]] if len(rows) > 1 else None


@getter("conference_city_in_order")
@requires("csv_path")
def conference_city_in_order(ctx: EvalContext, config: dict) -> list[str]:
    """The third column of a CSV file, in row order, its header row left out.

    `csv_path` names the file as cloud_file's `path` does (a URL, a file:// URL or a path
    relative to the task's folder): OSWorld opens it on the harness's machine, not the desktop.
    A row with fewer than three columns gives "".
    """
    field, task_file = getter_field(ctx, config), ctx.task_file
    url = config["csv_path"]
    name = cache_name(url, CONFERENCE_CSV) if isinstance(url, str) else CONFERENCE_CSV
    local = fetch(url, cache_target(ctx, config, name), task_dir=ctx.task_dir,
                  field=f"{field}.csv_path", task_file=task_file, cache_folder=ctx.cache_dir)
    with open(local, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    return [row[2] if len(row) > 2 else "" for row in rows[1:]]
