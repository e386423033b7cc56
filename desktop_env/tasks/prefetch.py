"""`osworld tasks prefetch`: every file the selected tasks name by URL, into the cache, once.

Each file goes where a run reads it (`<cache>/<task id>/<name>`, desktop_env.tasks.remote_files)
and into the cache's manifest with its size and sha256 (desktop_env.cache_manifest); runs then
read it from the cache only, so they need no network at all. A download is written to
`.<name>.part` beside its target and continued with an HTTP Range request after an interruption;
its size must be the one the server declared. A file already in the cache that still matches its
manifest entry is not fetched again; one that no longer matches is fetched again, and said so.
"""
from __future__ import annotations

import http.client
import os
import re
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..cache_manifest import CacheManifest, ManifestEntry, manifest_key, mismatch, sha256_of
from ..errors import DesktopEnvError
from ..safe_paths import UnsafeTaskPath, join_under
from .loader import Task
from .remote_files import RemoteFile, remote_files

CHUNK = 1 << 16
CONTENT_RANGE = re.compile(r"bytes\s+(?:(\d+)-(\d+)|\*)/(\d+|\*)")


class DownloadError(DesktopEnvError, OSError):
    """A download that did not complete; the message names the URL and what happened."""


@dataclass
class Progress:
    """What a prefetch reports as it goes, for a progress bar: a file it starts (with the size the
    server declared, if any, and the bytes a partial file already had), each file it is done with,
    and the bytes as they arrive."""
    on_file: Callable[[RemoteFile], None] = lambda file: None
    on_start: Callable[[str, int | None, int], None] = lambda url, total, already: None
    on_bytes: Callable[[int], None] = lambda count: None
    on_done: Callable[[FileOutcome], None] = lambda outcome: None


@dataclass
class FileOutcome:
    file: RemoteFile
    status: str                  # fetched | cached | copied | failed
    message: str = ""            # for failed: why; for fetched: what was wrong with the copy before, if anything


@dataclass
class PrefetchReport:
    outcomes: list[FileOutcome] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # names that would leave a task's cache folder

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes)

    @property
    def failed(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status == "failed"]


def _partial_path(target: Path) -> Path:
    return target.with_name(f".{target.name}.part")


def _content_range(header: str | None) -> tuple[int | None, int | None]:
    """(first byte, total size) of a Content-Range header."""
    match = CONTENT_RANGE.fullmatch((header or "").strip())
    if not match:
        return None, None
    first = int(match.group(1)) if match.group(1) else None
    total = int(match.group(3)) if match.group(3) != "*" else None
    return first, total


def download(url: str, target: Path, progress: Progress | None = None, timeout: float = 60.0) -> int:
    """Downloads `url` to `target` through `.<name>.part`, continuing a partial file with a Range
    request; returns the size. DownloadError (the partial file kept, to continue next time) when
    the connection fails or the bytes received are not the size the server declared."""
    progress = progress or Progress()
    partial = _partial_path(target)
    if partial.is_symlink() or (partial.exists() and not partial.is_file()):
        partial.unlink()  # only a regular file of ours is continued, never written through
    have = partial.stat().st_size if partial.exists() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as e:
        _, total = _content_range(e.headers.get("Content-Range"))
        if e.code == 416 and have and total == have:  # the part is whole already
            os.replace(partial, target)
            return have
        if e.code == 416:  # the part is longer than the file now is: start again
            partial.unlink()
            return download(url, target, progress, timeout)
        raise DownloadError(f"{url}: HTTP {e.code} {e.reason}") from None
    except (OSError, http.client.HTTPException, ValueError) as e:
        raise DownloadError(f"{url}: {type(e).__name__}: {e}") from None
    with response:
        if response.status == 206:
            first, total = _content_range(response.headers.get("Content-Range"))
            if first != have:  # not the part asked for: start again
                partial.unlink()
                response.close()
                return download(url, target, progress, timeout)
        else:  # the server sends the whole file (it takes no Range, or there was nothing yet)
            have = 0
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
        progress.on_start(url, total, have)
        received = have
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_APPEND if have else os.O_TRUNC)
            with os.fdopen(os.open(partial, flags, 0o644), "wb") as out:
                while chunk := response.read(CHUNK):
                    out.write(chunk)
                    received += len(chunk)
                    progress.on_bytes(len(chunk))
        except (OSError, http.client.HTTPException) as e:
            raise DownloadError(f"{url}: interrupted after {received} of {total or '?'} bytes "
                                f"({type(e).__name__}: {e}); run again to continue it") from None
    if total is not None and received != total:
        if received > total:
            partial.unlink()
        raise DownloadError(f"{url}: size mismatch: received {received} of {total} bytes (the size the server "
                            "declared)" + ("; run again to continue it" if received < total else ""))
    os.replace(partial, target)
    return received


def _place(source: Path, target: Path) -> None:
    """`target` becomes a copy of `source`: a copy, never a hard link, since a run may write its own
    files into the task's cache folder and must not change another task's through a shared inode."""
    tmp = _partial_path(target)
    tmp.unlink(missing_ok=True)  # copyfile would write through a symlink there
    shutil.copyfile(source, tmp)
    os.replace(tmp, target)


def prefetch(tasks: Iterable[Task], cache_dir: str | os.PathLike[str], progress: Progress | None = None,
             timeout: float = 60.0) -> PrefetchReport:
    """Puts every file the tasks name by URL into `cache_dir` and its manifest (see the module's doc).
    A URL is downloaded once, however many tasks name it; a failed file is reported and the others go on."""
    cache = Path(cache_dir)
    progress = progress or Progress()
    manifest = CacheManifest(cache)
    report = PrefetchReport()
    fetched: dict[str, Path] = {}  # url -> a verified copy in this cache
    seen: set[str] = set()
    for task in tasks:
        files, refused = remote_files(task)
        report.refused += [str(e) for e in refused]
        for file in files:
            key = manifest_key(file.task_id, file.name)
            if key in seen:
                continue  # a run fetches a name once per task: the first URL under it is the one it reads
            seen.add(key)
            try:
                target = join_under(cache / file.task_id, file.name, file.field, file.task_file)
            except UnsafeTaskPath as e:
                report.refused.append(str(e))
                continue
            progress.on_file(file)
            outcome = _prefetch_one(file, key, target, manifest, fetched, progress, timeout)
            report.outcomes.append(outcome)
            manifest.save()  # after each file: an interrupted prefetch keeps what it finished
            progress.on_done(outcome)
    return report


def _prefetch_one(file: RemoteFile, key: str, target: Path, manifest: CacheManifest, fetched: dict[str, Path],
                  progress: Progress, timeout: float) -> FileOutcome:
    entry = manifest.get(key)
    before = ""
    if entry is not None and entry.url == file.url:
        before = mismatch(target, entry) or ""
        if not before:
            fetched.setdefault(file.url, target)
            return FileOutcome(file, "cached")
    target.parent.mkdir(parents=True, exist_ok=True)
    status = "fetched"
    try:
        if file.url in fetched:
            _place(fetched[file.url], target)
            status = "copied"
        else:
            download(file.url, target, progress, timeout)
    except (DownloadError, OSError) as e:
        return FileOutcome(file, "failed", str(e))
    manifest.record(key, ManifestEntry(file.url, target.stat().st_size, sha256_of(target), file.task_file, file.field))
    fetched.setdefault(file.url, target)
    return FileOutcome(file, status, before)
