"""The files a task names by web address, and the name each gets in the task's cache folder.

A run fetches them on the harness's machine (desktop_env.resources.fetch): a `download` step's
files (setup and postconfig) under `<uuid5(url)>_<basename of path>`, a `cloud_file` getter's
(result or expected) under its `dest`, `conference_city_in_order`'s CSV under
`<uuid5(url)>_conference_cities.csv`. `osworld tasks prefetch` downloads exactly these, to
exactly these names, so a later run finds them without the network. Local files (task-relative
paths, `file://` URLs) are not listed: they are copied from the task's folder on every run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator
from urllib.parse import urlsplit

from ..resources import cache_name
from ..safe_paths import UnsafeTaskPath, check_basename, check_relative
from .loader import Task


@dataclass(frozen=True)
class RemoteFile:
    task_id: str
    domain: str
    task_file: str
    field: str       # where the URL is, e.g. config[0].parameters.files[1].url
    url: str
    name: str        # its name in the task's cache folder (<cache>/<task id>/<name>)


def _getter_specs(task: Task) -> Iterator[tuple[str, dict]]:
    for role in ("result", "expected"):
        spec = task.evaluator.get(role)
        if isinstance(spec, dict):
            yield f"evaluator.{role}", spec
        elif isinstance(spec, list):
            for i, item in enumerate(spec):
                if isinstance(item, dict):
                    yield f"evaluator.{role}[{i}]", item


def _steps(task: Task) -> Iterator[tuple[str, dict]]:
    for section, steps in (("config", task.config.get("config")), ("evaluator.postconfig", task.evaluator.get("postconfig"))):
        for i, step in enumerate(steps if isinstance(steps, list) else []):
            if isinstance(step, dict):
                yield f"{section}[{i}]", step


def _named(task: Task) -> Iterator[tuple[str, Any, Any]]:
    """(field of the URL, the URL, a function of the URL that gives its cache name, or raises
    UnsafeTaskPath as the run would) of every file the task fetches by URL or path."""
    from ..evaluators.getters.files import CONFERENCE_CSV

    for where, step in _steps(task):
        if step.get("type") != "download":
            continue
        files = (step.get("parameters") or {}).get("files")
        for j, entry in enumerate(files if isinstance(files, list) else []):
            if isinstance(entry, dict):
                field = f"{where}.parameters.files[{j}]"
                yield f"{field}.url", entry.get("url"), lambda url, path=entry.get("path"), key=f"{field}.path": \
                    cache_name(url, check_basename(path, key, task.path), key, task.path)
    for where, spec in _getter_specs(task):
        kind = spec.get("type")
        if kind == "cloud_file":
            if spec.get("multi"):
                paths, dests = spec.get("path"), spec.get("dest")
                if isinstance(paths, list) and isinstance(dests, list):
                    for i, (url, dest) in enumerate(zip(paths, dests)):
                        yield f"{where}.path[{i}]", url, lambda url, dest=dest, i=i: check_relative(
                            dest, f"{where}.dest[{i}]", task.path)
            else:
                dest = spec.get("dest")
                yield f"{where}.path", spec.get("path"), lambda url, dest=dest: check_relative(
                    dest, f"{where}.dest", task.path)
        elif kind == "conference_city_in_order":
            yield f"{where}.csv_path", spec.get("csv_path"), lambda url: cache_name(url, CONFERENCE_CSV)


def remote_files(task: Task) -> tuple[list[RemoteFile], list[UnsafeTaskPath]]:
    """The task's files named by an http(s) URL, each with its cache name; and the names that would
    leave the task's cache folder (validation reports those too; they are never fetched)."""
    found, refused = [], []
    for field, url, name_of in _named(task):
        if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https"):
            continue
        try:
            name = name_of(url)
        except UnsafeTaskPath as e:
            refused.append(e)
            continue
        found.append(RemoteFile(task.id, task.domain, str(task.path), field, url, name))
    return found, refused
