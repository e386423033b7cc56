"""The host paths a task file names, checked before any desktop starts.

The same rules the setup steps and getters apply when they run (desktop_env.safe_paths),
applied to the task's JSON: cache names (`dest`, `stdout`/`stderr`, cache_file's `path`,
the file name at the end of a download's or content_from_vm_file's desktop `path`) must
stay in the task's cache folder; `file://` URLs and relative paths of download,
upload_file, cloud_file and conference_city_in_order's `csv_path` must resolve, symlinks
included, inside the task's tree.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import UnsafeTaskPath
from ..safe_paths import check_basename, check_relative, resource_path

# Getters whose file name in the cache is the basename of a desktop path they read.
BASENAME_FIELDS = {"content_from_vm_file": "path", "audio_in_slide": "ppt_file_path",
                   "background_image_in_slide": "ppt_file_path"}


# (a check of desktop_env.safe_paths, its positional arguments, the task field it names)
Check = tuple[Callable[..., Any], tuple[Any, ...], str]


def _items(value: Any, field: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield f"{field}[{i}]", item
    else:
        yield field, value


def _step_checks(kind: Any, parameters: dict[str, Any], prefix: str, task_dir: Path | None) -> Iterator[Check]:
    if kind in ("download", "upload_file"):
        files = parameters.get("files")
        for j, entry in enumerate(files if isinstance(files, list) else []):
            if not isinstance(entry, dict):
                continue
            field = f"{prefix}.files[{j}]"
            if kind == "download":
                if "url" in entry:
                    yield resource_path, (entry["url"], task_dir), f"{field}.url"
                if "path" in entry:
                    yield check_basename, (entry["path"],), f"{field}.path"
            elif "local_path" in entry:
                yield resource_path, (entry["local_path"], task_dir), f"{field}.local_path"
    elif kind in ("execute", "command"):
        for key in ("stdout", "stderr"):
            if parameters.get(key):
                yield check_relative, (parameters[key],), f"{prefix}.{key}"


def _getter_checks(spec: dict[str, Any], field: str, task_dir: Path | None) -> Iterator[Check]:
    kind = spec.get("type")
    if "dest" in spec:  # every OSWorld getter's `dest` is a file name in the task's cache folder
        for dest_field, dest in _items(spec["dest"], f"{field}.dest"):
            yield check_relative, (dest,), dest_field
    if kind == "cloud_file" and "path" in spec:
        for path_field, url in _items(spec["path"], f"{field}.path"):
            yield resource_path, (url, task_dir), path_field
    elif kind == "conference_city_in_order" and "csv_path" in spec:
        yield resource_path, (spec["csv_path"], task_dir), f"{field}.csv_path"
    elif kind == "cache_file" and "path" in spec:
        yield check_relative, (spec["path"],), f"{field}.path"
    elif kind in BASENAME_FIELDS and BASENAME_FIELDS[kind] in spec:
        key = BASENAME_FIELDS[kind]
        yield check_basename, (spec[key],), f"{field}.{key}"


def _all_checks(config: dict[str, Any], task_dir: Path | None) -> list[Check]:
    checks: list[Check] = []
    evaluator = config.get("evaluator")
    if not isinstance(evaluator, dict):
        evaluator = {}
    for section, steps in (("config", config.get("config")), ("evaluator.postconfig", evaluator.get("postconfig"))):
        for i, step in enumerate(steps if isinstance(steps, list) else []):
            if isinstance(step, dict) and isinstance(step.get("parameters"), dict):
                checks += _step_checks(step.get("type"), step["parameters"], f"{section}[{i}].parameters", task_dir)
    for role in ("result", "expected"):
        for field, spec in _items(evaluator.get(role), f"evaluator.{role}"):
            if isinstance(spec, dict):
                checks += _getter_checks(spec, field, task_dir)
    return checks


def unsafe_paths(config: dict[str, Any], task_file: str | Path | None, task_dir: str | Path | None
                 ) -> list[UnsafeTaskPath]:
    """Every host path in a task's JSON that would leave its folder, in file order.

    `task_dir` is the task file's folder (relative resources resolve against it and must
    stay in the task's tree); None refuses every host resource path.
    """
    task_dir = Path(task_dir) if task_dir is not None else None
    found = []
    for check, args, field in _all_checks(config, task_dir):
        try:
            check(*args, field=field, task_file=task_file)
        except UnsafeTaskPath as e:
            found.append(e)
    return found


def missing_resources(config: dict[str, Any], task_file: str | Path | None, task_dir: str | Path | None
                      ) -> list[tuple[str, str, Path]]:
    """(field, value, where it was looked for) of each local file the task uploads, downloads or compares
    with (a relative path or `file://` URL inside its tree) that is not there. Escaping paths are
    unsafe_paths' to report; http(s) URLs are fetched when the task runs."""
    task_dir = Path(task_dir) if task_dir is not None else None
    missing = []
    for check, args, field in _all_checks(config, task_dir):
        if check is not resource_path:
            continue
        try:
            local = resource_path(args[0], task_dir, field=field, task_file=task_file)  # args: (the value, task_dir)
        except UnsafeTaskPath:
            continue
        if local is not None and not local.is_file():
            missing.append((field, args[0], local))
    return missing
