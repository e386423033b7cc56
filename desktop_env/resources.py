"""Files that tasks name by URL: fetched once into a cache, offline when the cache has them.

A task's `download` step and `cloud_file` getter name their files as `http(s)://`
URLs, `file://` URLs, or paths relative to the task file's folder (our own tasks
ship their inputs beside them). Downloads land in the cache under the same name
OSWorld uses (`<uuid5(url)>_<basename of the destination>` in the task's cache
folder), so a cache filled by an OSWorld run works here without the network.
A file `osworld tasks prefetch` recorded in the cache's manifest (desktop_env.cache_manifest)
is read from the cache only, after checking its size and sha256.
"""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
import urllib.request
import uuid
from pathlib import Path

from .cache_manifest import ManifestError, mismatch, prefetched_entry
from .errors import DesktopEnvError
from .safe_paths import check_name, open_for_write, resource_path

# The cache name of the csv that the conference_city_in_order getter reads (tasks/remote_files.py lists it too)
CONFERENCE_CSV = "conference_cities.csv"


class ResourceUnavailable(DesktopEnvError):
    """A task's file is neither in the cache nor reachable; the message says which and where."""


def cache_name(url: str, dest_basename: str, field: str | None = None, task_file: object = None) -> str:
    """`<uuid5(url)>_<basename>`, OSWorld's cache name; the basename must be one plain file name."""
    check_name(dest_basename, field, task_file)
    return f"{uuid.uuid5(uuid.NAMESPACE_URL, url)}_{dest_basename}"


def local_source(url: str, task_dir: str | os.PathLike | None, field: str | None = None,
                 task_file: object = None) -> Path | None:
    """The local file a `file://` URL or a task-relative path names, or None for a remote URL.

    It must resolve (symlinks included) inside the task's tree: the task set's root for a
    task in `<root>/examples/<domain>/`, else the task file's folder (UnsafeTaskPath otherwise).
    """
    return resource_path(url, task_dir, field, task_file)


def _is_cached(target: Path) -> bool:
    """A regular, non-empty file at `target` itself (a symlink there is never taken for the cached file)."""
    try:
        info = os.lstat(target)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size > 0


def _where(task_file: object, field: str | None) -> str:
    """"<task file>: <field> = " for messages, as far as they are known."""
    return "".join(part for part in (f"{task_file}: " if task_file else "", f"{field} = " if field else ""))


def fetch(url: str, target: str | os.PathLike, task_dir: str | os.PathLike | None = None,
          timeout: float = 120.0, field: str | None = None, task_file: object = None,
          cache_folder: str | os.PathLike | None = None) -> Path:
    """Makes `target` hold the resource at `url`; returns `target`.

    Local files are copied every time (cheap, and never stale after a task's files are
    regenerated); remote ones are downloaded once and then served from the cache, and one
    that a prefetch recorded for this task (its cache folder `cache_folder`, `<cache>/<task id>`)
    is only read from there: missing or changed, it is a ResourceUnavailable naming the task and URL.
    `target` is a path the caller has kept inside the cache (safe_paths.join_under); it
    is written without following a symlink there. `field` and `task_file` name the
    task's field in errors.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    source = local_source(url, task_dir, field, task_file)
    if source is not None:
        if not source.is_file():
            raise ResourceUnavailable(f"task resource {url!r} not found at {source}")
        with open(source, "rb") as src, os.fdopen(open_for_write(target, field, task_file, url), "wb") as out:
            shutil.copyfileobj(src, out)
        return target
    if cache_folder is not None:
        try:
            entry = prefetched_entry(cache_folder, target)
        except ManifestError as e:
            raise ResourceUnavailable(str(e)) from None
        if entry is not None:
            why = mismatch(target, entry) if entry.url == url else f"the manifest has {entry.url!r} for it"
            if why is not None:
                raise ResourceUnavailable(f"{_where(task_file, field)}{url!r}: {why}; run `osworld tasks prefetch` "
                                          "for this task again")
            return target
    if _is_cached(target):
        return target
    fd, partial = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as response:
            shutil.copyfileobj(response, out)
        os.replace(partial, target)  # replaces a symlink at target, never writes through it
    except (OSError, ValueError) as e:
        os.unlink(partial)
        raise ResourceUnavailable(
            f"{_where(task_file, field)}{url!r}: cannot download it ({type(e).__name__}: {e}) and it is not in the "
            f"cache at {target}; fetch the task's files first with `osworld tasks prefetch` on a machine with "
            "network access (and the same --cache-dir)") from None
    return target
