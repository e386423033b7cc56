"""Host paths a task file names stay inside the harness's folders.

A task file is input a user brings, often from someone else, and the files its getters
fetch come from the desktop, which the agent controls. So every path a task names on the
host goes through here:

- cache names (`dest` of getters, `stdout`/`stderr` of execute steps, `path` of
  cache_file, download cache names): relative to the task's cache folder, with no
  absolute path, no `..` segment, no NUL byte, not empty, and still inside the folder
  once symlinks are resolved (`join_under`); written without following a symlink at
  the final component (`write_under`, `open_for_write`);
- task resources (`file://` URLs and task-relative paths of download, cloud_file and
  upload_file): inside the task's own tree after symlink resolution (`resource_path`).

A path that breaks these rules raises UnsafeTaskPath, a TaskFileError whose message
names the task file, the field (e.g. `evaluator.result.dest`, `config[2].parameters.stdout`)
and the value.
"""
from __future__ import annotations

import errno
import os
import stat
import urllib.parse
from pathlib import Path
from typing import Any

from .errors import UnsafeTaskPath

__all__ = ["UnsafeTaskPath", "check_relative", "check_name", "check_basename", "join_under", "write_under",
           "open_for_write", "task_tree", "resource_path", "cache_folder", "task_file_of"]


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _resolve(path: Path, value: Any, field: str | None, task_file: Any) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError) as e:  # a symlink loop
        raise UnsafeTaskPath(value, f"cannot be resolved ({e})", field, task_file) from None


def check_relative(value: Any, field: str | None = None, task_file: Any = None) -> str:
    """`value` if it is a relative path that cannot leave the folder it is joined to (static rule)."""
    def refuse(reason: str) -> UnsafeTaskPath:
        return UnsafeTaskPath(value, reason, field, task_file)

    if not isinstance(value, str):
        raise refuse(f"is not a file name (a {type(value).__name__}); it must be a name inside the task's cache folder")
    if "\0" in value:
        raise refuse("contains a NUL byte")
    if not value:
        raise refuse("is empty; it must name a file")
    if value.startswith("/"):
        raise refuse("is an absolute path; it must be a file name inside the task's cache folder")
    parts = value.split("/")
    if ".." in parts:
        raise refuse("has a '..' segment, which would leave the task's cache folder")
    if parts[-1] in ("", "."):
        raise refuse("does not name a file")
    return value


def check_name(value: Any, field: str | None = None, task_file: Any = None) -> str:
    """`value` if it is one plain file name: no '/', not '', '.' or '..', no NUL."""
    if isinstance(value, str) and "/" in value:
        raise UnsafeTaskPath(value, "is not a plain file name (it contains '/')", field, task_file)
    if value == "..":
        raise UnsafeTaskPath(value, "is not a file name ('..' is the parent folder)", field, task_file)
    return check_relative(value, field, task_file)


def check_basename(path: Any, field: str | None = None, task_file: Any = None) -> str:
    """The file name at the end of a desktop path, which names a file in the cache (OSWorld's
    `os.path.basename(path)`); refused when it is not one plain file name."""
    if not isinstance(path, str):
        raise UnsafeTaskPath(path, f"is not a path (a {type(path).__name__})", field, task_file)
    name = os.path.basename(path)
    try:
        return check_name(name, field, task_file)
    except UnsafeTaskPath as e:
        raise UnsafeTaskPath(path, f"ends in {name!r}, which is not a file name for the task's cache folder "
                                   f"(the name {e.reason})", field, task_file) from None


def join_under(base: str | os.PathLike, value: Any, field: str | None = None, task_file: Any = None,
               what: str = "the task's cache folder") -> Path:
    """`base / value`, refusing absolute paths, '..', NUL, empty names and symlinks that lead out of `base`.

    The returned path is not resolved: a symlink at its final component is left for
    the caller to refuse (writers open with O_NOFOLLOW).
    """
    check_relative(value, field, task_file)
    root = Path(base).resolve()
    joined = root / value
    real = _resolve(joined, value, field, task_file)
    if not _within(real, root):
        raise UnsafeTaskPath(value, f"resolves to {real} (through a symbolic link), outside {what} {root}",
                             field, task_file)
    return joined


def open_for_write(path: str | os.PathLike, field: str | None = None, task_file: Any = None,
                   value: Any = None) -> int:
    """A descriptor open for writing (created, truncated) that never follows a symlink at `path` itself."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnsafeTaskPath(value if value is not None else str(path),
                                 f"is a symbolic link at {path}; the harness does not write through it",
                                 field, task_file) from None
        if e.errno == errno.ENXIO:  # a FIFO nobody reads
            raise UnsafeTaskPath(value if value is not None else str(path), f"is not a regular file at {path}",
                                 field, task_file) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafeTaskPath(value if value is not None else str(path), f"is not a regular file at {path}",
                             field, task_file)
    os.set_blocking(fd, True)
    return fd


def write_under(base: str | os.PathLike, value: Any, data: bytes, field: str | None = None,
                task_file: Any = None) -> Path:
    """Writes `data` to `base / value` (see join_under), creating subfolders; returns the path."""
    path = join_under(base, value, field, task_file)
    path.parent.mkdir(parents=True, exist_ok=True)
    with os.fdopen(open_for_write(path, field, task_file, value), "wb") as f:
        f.write(data)
    return path


def task_tree(task_dir: str | os.PathLike) -> Path:
    """The folder a task's files must stay in: the task set's root for `<root>/examples/<domain>/`,
    else the task's folder."""
    folder = Path(os.path.abspath(task_dir))
    if folder.parent.name == "examples":
        return folder.parent.parent
    return folder


def resource_path(url: Any, task_dir: str | os.PathLike | None, field: str | None = None,
                  task_file: Any = None) -> Path | None:
    """The host file a `file://` URL or a task-relative path names, resolved, inside the task's tree.

    None for an http(s) URL. Refuses (UnsafeTaskPath) anything that resolves outside the
    tree, symlinks included. With no task folder (a task dict from the caller's own code),
    an absolute file:// URL is taken as it is and a relative path is refused.
    """
    if not isinstance(url, str):
        raise UnsafeTaskPath(url, f"is not a URL or path (a {type(url).__name__})", field, task_file)
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme in ("http", "https"):
        return None
    raw = urllib.parse.unquote(parsed.path) if parsed.scheme == "file" else url
    if "\0" in raw:
        raise UnsafeTaskPath(url, "contains a NUL byte", field, task_file)
    if not raw:
        raise UnsafeTaskPath(url, "names no file", field, task_file)
    if task_dir is None:
        # A task given as a dict by the caller's own code, not read from a task file: an
        # absolute file:// URL is taken as the caller wrote it; a relative path has nothing
        # to be relative to.
        if parsed.scheme == "file" and os.path.isabs(raw):
            return Path(raw)
        raise UnsafeTaskPath(url, "is relative but the task's folder is unknown "
                                  "(give it: reset(task, options={'task_dir': ...}))", field, task_file)
    # The tree of the task file where it really is: a meta file beside symlinked examples/
    # and files/ folders keeps each task in its own (real) tree.
    root = task_tree(Path(task_dir).resolve()).resolve()
    real = _resolve(Path(os.path.abspath(task_dir)) / raw, url, field, task_file)
    if not _within(real, root):
        raise UnsafeTaskPath(url, f"resolves to {real}, outside the task's folder {root}", field, task_file)
    return real


# -- what a running env knows about its task ----------------------------------------------------

def task_file_of(env: Any) -> str | None:
    """The task file an env runs (its folder + `<id>.json`, as the loader requires), else `task <id>`."""
    task_id = (getattr(env, "task_config", None) or {}).get("id")
    task_dir = getattr(env, "task_dir", None)
    if task_dir and isinstance(task_id, str) and task_id:
        return str(Path(task_dir) / f"{task_id}.json")
    return f"(id {task_id!r})" if task_id is not None else None


def cache_folder(env: Any) -> Path:
    """env.cache_dir, refused when the task's id made it leave the cache base (an id such as '..')."""
    base = getattr(env, "cache_dir_base", None)
    return checked_cache_dir(Path(env.cache_dir), Path(base) if base is not None else None,
                             (getattr(env, "task_config", None) or {}).get("id"), task_file_of(env))


def checked_cache_dir(cache_dir: Path, base: Path | None, task_id: Any, task_file: str | None) -> Path:
    """`cache_dir`, refused when a task's id made it leave the cache `base` (an id such as '..')."""
    if base is not None and task_id is not None:
        cache = cache_dir.resolve()
        if not _within(cache, base.resolve()) or cache == base.resolve():
            raise UnsafeTaskPath(task_id, f"makes the task's cache folder {cache}, which is not "
                                 f"inside the cache {base.resolve()}", "id", task_file)
    return cache_dir
