"""The prefetch manifest: which task files `osworld tasks prefetch` put in the cache, with their size and sha256.

The cache holds a task's files in `<cache>/<task id>/<name>` (desktop_env.resources); the
manifest sits beside the task folders as `<cache>/prefetch-manifest.json`:

    {"format": 1, "files": {"<task id>/<name>": {"url", "size", "sha256", "task_file", "field"}}}

A run that finds its file in the manifest reads only the cache: a file that is missing or no
longer matches its size and sha256 is an error naming the task and the URL, never a download.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import DesktopEnvError

MANIFEST_NAME = "prefetch-manifest.json"
FORMAT = 1


class ManifestError(DesktopEnvError, ValueError):
    """The manifest file cannot be read; the message names it."""


@dataclass(frozen=True)
class ManifestEntry:
    url: str
    size: int
    sha256: str
    task_file: str   # the task file that names the URL, and where (for messages)
    field: str


def sha256_of(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def manifest_key(task_id: str, name: str) -> str:
    return f"{task_id}/{name}"


class CacheManifest:
    """The manifest of one cache folder (`base`); empty when there is none yet."""

    def __init__(self, base: str | os.PathLike):
        self.base = Path(base)
        self.path = self.base / MANIFEST_NAME
        self.entries: dict[str, ManifestEntry] = {}
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as e:
            raise ManifestError(f"the prefetch manifest {self.path} cannot be read: {e}") from None
        if not isinstance(raw, dict) or raw.get("format") != FORMAT or not isinstance(raw.get("files"), dict):
            raise ManifestError(f"the prefetch manifest {self.path} is not format {FORMAT} "
                                "({'format': 1, 'files': {...}}); run `osworld tasks prefetch` again")
        for key, entry in raw["files"].items():
            try:
                self.entries[key] = ManifestEntry(**entry)
            except TypeError as e:
                raise ManifestError(f"the prefetch manifest {self.path}: entry {key!r} is malformed: {e}") from None

    def get(self, key: str) -> ManifestEntry | None:
        return self.entries.get(key)

    def record(self, key: str, entry: ManifestEntry) -> None:
        self.entries[key] = entry

    def save(self) -> None:
        """Writes the manifest whole (a temporary file renamed into place)."""
        self.base.mkdir(parents=True, exist_ok=True)
        body = {"format": FORMAT, "files": {k: asdict(v) for k, v in sorted(self.entries.items())}}
        fd, tmp = tempfile.mkstemp(dir=self.base, prefix=f".{MANIFEST_NAME}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(body, f, indent=1)
            os.replace(tmp, self.path)
        except BaseException:
            os.unlink(tmp)
            raise


def mismatch(path: Path, entry: ManifestEntry) -> str | None:
    """Why the cached file at `path` is not the one the manifest recorded (None: it is)."""
    try:
        size = os.lstat(path).st_size
    except FileNotFoundError:
        return f"the prefetched file {path} is missing"
    if not path.is_file() or path.is_symlink():
        return f"the prefetched file {path} is not a regular file"
    if size != entry.size:
        return f"the prefetched file {path} has changed: {size} bytes, the manifest says {entry.size}"
    digest = sha256_of(path)
    if digest != entry.sha256:
        return f"the prefetched file {path} has changed: sha256 {digest}, the manifest says {entry.sha256}"
    return None


def prefetched_entry(cache_folder: str | os.PathLike, target: Path) -> ManifestEntry | None:
    """The manifest entry of `target`, a file in the task's cache folder `<cache>/<task id>`, if a
    prefetch recorded it."""
    folder = Path(cache_folder).resolve()
    try:
        relative = Path(target).resolve().relative_to(folder)
    except ValueError:
        return None
    return CacheManifest(folder.parent).get(manifest_key(folder.name, relative.as_posix()))
