"""The files a task names by web address, and the name each gets in the task's cache folder.

A run fetches them on the harness's machine (desktop_env.resources.fetch): a `download` step's
files (setup and postconfig) under `<uuid5(url)>_<basename of path>`, a `cloud_file` getter's
(result or expected) under its `dest`, `conference_city_in_order`'s CSV under
`<uuid5(url)>_conference_cities.csv`. `osworld tasks prefetch` downloads exactly these, to
exactly these names, so a later run finds them without the network. Local files (task-relative
paths, `file://` URLs) are not listed: they are copied from the task's folder on every run.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..resources import CONFERENCE_CSV, cache_name
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


def _getter_specs(task: Task) -> Iterator[tuple[str, dict[str, Any]]]:
    for role in ("result", "expected"):
        spec = task.evaluator.get(role)
        if isinstance(spec, dict):
            yield f"evaluator.{role}", spec
        elif isinstance(spec, list):
            for i, item in enumerate(spec):
                if isinstance(item, dict):
                    yield f"evaluator.{role}[{i}]", item


def task_steps(task: Task) -> Iterator[tuple[str, dict[str, Any]]]:
    """(field, step) of each setup step and postconfig step, e.g. ("config[2]", {...})."""
    for section, steps in (("config", task.config.get("config")),
                           ("evaluator.postconfig", task.evaluator.get("postconfig"))):
        for i, step in enumerate(steps if isinstance(steps, list) else []):
            if isinstance(step, dict):
                yield f"{section}[{i}]", step


@dataclass(frozen=True)
class _Named:
    """A URL a task names, with what its cache name comes from: a download's desktop path (its basename
    after OSWorld's uuid5 of the URL), a getter's `dest`, or a fixed name after the uuid5."""
    field: str
    url: Any
    rule: str          # "download" | "dest" | "fixed"
    value: Any         # the desktop path, the dest, or the fixed name
    value_field: str

    def cache_name(self, url: str, task_file: Any) -> str:
        """The name a run gives the file in the task's cache folder; UnsafeTaskPath as the run would raise."""
        if self.rule == "download":
            return cache_name(url, check_basename(self.value, self.value_field, task_file), self.value_field, task_file)
        if self.rule == "dest":
            return check_relative(self.value, self.value_field, task_file)
        return cache_name(url, self.value)


def _named(task: Task) -> Iterator[_Named]:
    """Every file the task fetches by URL or path (task-relative, file://, web), with where its name comes from."""
    for where, step in task_steps(task):
        files = (step.get("parameters") or {}).get("files") if step.get("type") == "download" else None
        for j, entry in enumerate(files if isinstance(files, list) else []):
            if isinstance(entry, dict):
                field = f"{where}.parameters.files[{j}]"
                yield _Named(f"{field}.url", entry.get("url"), "download", entry.get("path"), f"{field}.path")
    for where, spec in _getter_specs(task):
        kind = spec.get("type")
        if kind == "cloud_file" and spec.get("multi"):
            paths, dests = spec.get("path"), spec.get("dest")
            if isinstance(paths, list) and isinstance(dests, list):
                for i, (url, dest) in enumerate(zip(paths, dests, strict=False)):  # as the getter pairs them
                    yield _Named(f"{where}.path[{i}]", url, "dest", dest, f"{where}.dest[{i}]")
        elif kind == "cloud_file":
            yield _Named(f"{where}.path", spec.get("path"), "dest", spec.get("dest"), f"{where}.dest")
        elif kind == "conference_city_in_order":
            yield _Named(f"{where}.csv_path", spec.get("csv_path"), "fixed", CONFERENCE_CSV, f"{where}.csv_path")


def remote_files(task: Task) -> tuple[list[RemoteFile], list[UnsafeTaskPath]]:
    """The task's files named by an http(s) URL, each with its cache name; and the names that would
    leave the task's cache folder (validation reports those too; they are never fetched)."""
    return named_files(task, remote_only=True)


def named_files(task: Task, remote_only: bool = False) -> tuple[list[RemoteFile], list[UnsafeTaskPath]]:
    """Every file the task names by URL or path (task-relative, file:// and http(s); only the last with
    `remote_only`), each with its cache name, and the names that would leave the task's cache folder."""
    found: list[RemoteFile] = []
    refused: list[UnsafeTaskPath] = []
    for named in _named(task):
        url = named.url
        if not isinstance(url, str) or (remote_only and urlsplit(url).scheme not in ("http", "https")):
            continue
        try:
            name = named.cache_name(url, task.path)
        except UnsafeTaskPath as e:
            refused.append(e)
            continue
        found.append(RemoteFile(task.id, task.domain, str(task.path), named.field, url, name))
    return found, refused
