"""File endpoints: /file, /setup/upload, /list_directory, /setup/download_file, wallpaper.

The server only ever sees the sandbox's own filesystem view (host root read-only,
private home and /tmp), so confinement comes from the sandbox; here we make sure a
bad path is a clear 4xx, a write never leaves a half-written file behind, and file
contents, in or out, pass through a small buffer whatever their size.
"""
from __future__ import annotations

import errno
import os
import shutil
import subprocess
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

from .httpd import MAX_STREAMED_BODY, HTTPError, Request, Response, Router
from .state import ServerState

if TYPE_CHECKING:
    from _typeshed import SupportsRead

# /list_directory answers with the whole tree or, past these bounds, with a 413 saying
# so: a silently truncated tree could make an evaluator compare the wrong listing, and
# /proc or / would otherwise cost the server minutes and gigabytes.
MAX_TREE_DEPTH = 32
MAX_TREE_ENTRIES = 20_000
NOT_A_DIRECTORY = "The provided path is not a directory"  # OSWorld's text
_COPY_CHUNK = 1 << 20


def os_error(e: OSError, path: Path | str, doing: str) -> HTTPError:
    """The 4xx (or 507) a failed file operation on a client's path deserves."""
    status = {errno.ENOENT: 404, errno.ENOTDIR: 404, errno.EACCES: 403, errno.EPERM: 403, errno.EROFS: 403,
              errno.ENOSPC: 507, errno.EDQUOT: 507}.get(e.errno or 0, 400)
    return HTTPError(status, f"cannot {doing} {str(path)!r:.300}: {e.strerror or e}")


def resolve_path(raw: str, state: ServerState, field: str = "path") -> Path:
    if not isinstance(raw, str) or not raw.strip():
        raise HTTPError(400, f"field '{field}' must be a non-empty path, got {raw!r:.200}")
    if "\0" in raw:
        raise HTTPError(400, f"field '{field}' contains a NUL byte")
    expanded = os.path.expandvars(raw)
    if expanded == "~" or expanded.startswith("~/"):
        expanded = state.home + expanded[1:]
    path = Path(expanded)
    if not path.is_absolute():
        path = Path(state.home) / path
    return path


def write_atomically(path: Path, source: bytes | SupportsRead[bytes]) -> None:
    """Writes `source` (bytes, or a stream read in chunks) to a temporary file beside
    `path`, then renames it into place: readers see the old file or the whole new one,
    and a failure (a client that vanishes mid-upload, a full disk) leaves nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # mkstemp creates with O_EXCL under a random name: it never follows a planted symlink.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(source, bytes):
                f.write(source)
            else:
                while chunk := source.read(_COPY_CHUNK):
                    f.write(chunk)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


class TreeTooLarge(Exception):
    pass


def directory_tree(path: Path, max_depth: int = MAX_TREE_DEPTH, max_entries: int = MAX_TREE_ENTRIES) -> dict:
    """The {type, name, children} tree under `path`; symlinks are listed, never followed.

    Deeper than `max_depth`, a directory is listed without children (as before); more
    than `max_entries` entries in all raises TreeTooLarge.
    """
    count = 0

    def walk(directory: str, name: str, depth: int) -> dict:
        nonlocal count
        children = []
        if depth < max_depth:
            try:
                with os.scandir(directory) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError:  # unreadable, or gone meanwhile (/proc)
                entries = []
            count += len(entries)
            if count > max_entries:
                raise TreeTooLarge
            for entry in entries:
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                children.append(walk(entry.path, entry.name, depth + 1) if is_dir
                                else {"type": "file", "name": entry.name})
        return {"type": "directory", "name": name, "children": children}

    return walk(str(path), path.name, 0)


# GNOME's wallpaper setting, which OSWorld's server reads and writes the same way.
WALLPAPER_KEY = ("org.gnome.desktop.background", "picture-uri")


def current_wallpaper(state: ServerState) -> str | None:
    """The file GNOME shows as the wallpaper (None when it is not a local file)."""
    try:
        out = subprocess.run(["gsettings", "get", *WALLPAPER_KEY], env=state.env, capture_output=True, text=True,
                             timeout=5).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    uri = out.strip("'")
    if not uri.startswith("file://"):
        return None
    return urllib.parse.unquote(uri[len("file://"):])


def set_wallpaper(path: Path, state: ServerState) -> None:
    """Points GNOME's wallpaper (light and dark) at `path`. Raises CalledProcessError when
    gsettings refuses."""
    uri = Path(path).resolve().as_uri()
    for key in ("picture-uri", "picture-uri-dark"):
        subprocess.run(["gsettings", "set", WALLPAPER_KEY[0], key, uri], env=state.env, capture_output=True,
                       timeout=5, check=True)


def _send_file(path: Path, content_type: str = "application/octet-stream", headers: dict | None = None) -> Response:
    try:
        if not path.is_file():
            raise HTTPError(404, f"file not found: {path}")
        return Response.from_file(path, content_type, headers)
    except OSError as e:
        raise os_error(e, path, "read") from None


def _receive_upload(request: Request, state: ServerState) -> Path:
    """Streams the multipart upload to its destination; returns the path written."""
    request.stream.limit = MAX_STREAMED_BODY
    raw_path = request.query.get("file_path") if request.query_fields else None
    spooled = None
    try:
        for part in request.multipart():
            if part.name == "file_data":
                if raw_path is None:  # the file came before its destination: keep it aside until then
                    spooled = tempfile.TemporaryFile()
                    shutil.copyfileobj(part, spooled, _COPY_CHUNK)
                    spooled.seek(0)
                    continue
                path = resolve_path(raw_path, state, "file_path")
                _write(path, part)
                return path
            if part.name == "file_path" and part.filename is None:
                raw_path = part.text()
        if raw_path is None or raw_path == "":
            raise HTTPError(400, "missing required field 'file_path'")
        if spooled is None:
            raise HTTPError(400, "missing multipart file field 'file_data'")
        path = resolve_path(raw_path, state, "file_path")
        _write(path, spooled)
        return path
    finally:
        if spooled is not None:
            spooled.close()


def _write(path: Path, source: bytes | SupportsRead[bytes]) -> None:
    try:
        write_atomically(path, source)
    except OSError as e:
        raise os_error(e, path, "write") from None


def register(router: Router, state: ServerState) -> None:
    @router.route("/file", methods=("POST", "GET"), accepts=("json", "form"))
    def get_file(request: Request) -> Response:
        path = resolve_path(request.require("file_path"), state, "file_path")
        return _send_file(path, headers={"Content-Disposition": f'attachment; filename="{path.name}"'})

    @router.route("/setup/upload", methods=("POST",), accepts=("multipart",))
    def upload(request: Request) -> Response:
        if not request.content_type.startswith("multipart/form-data"):
            raise HTTPError(400, "missing multipart file field 'file_data' (send multipart/form-data)")
        path = _receive_upload(request, state)
        return Response.text(f"File uploaded to {path}")

    @router.route("/list_directory", methods=("POST",))
    def list_directory(request: Request) -> Response:
        # As OSWorld's server: the path is taken as written (no `~` or `$VAR`), and what is
        # not a directory is a 400 with its text in `error`.
        raw = request.require("path")
        resolve_path(raw, state)  # refuses an empty path or a NUL byte
        path = Path(state.home) / raw
        try:
            if not path.is_dir():
                raise HTTPError(400, f"not a directory: {raw!r:.300}", error=NOT_A_DIRECTORY)
            return Response.json({"directory_tree": directory_tree(path)})
        except TreeTooLarge:
            raise HTTPError(413, f"the tree under {str(path)!r:.300} has more than {MAX_TREE_ENTRIES} entries; "
                                 "list a smaller folder") from None
        except OSError as e:
            raise os_error(e, path, "list") from None

    @router.route("/setup/download_file", methods=("POST",))
    def download_file(request: Request) -> Response:
        url = request.require("url")
        path = resolve_path(request.require("path"), state)
        try:
            with urllib.request.urlopen(url, timeout=60) as resp:
                _write(path, resp)
        except HTTPError:
            raise
        except (OSError, ValueError) as e:
            raise HTTPError(502, f"download of {url!r:.300} failed inside the desktop: {e}") from None
        return Response.text(f"File downloaded to {path}")

    @router.route("/desktop_path", methods=("POST", "GET"))
    def desktop_path(request: Request) -> Response:
        return Response.json({"desktop_path": str(Path(state.home) / "Desktop")})

    @router.route("/setup/change_wallpaper", methods=("POST",))
    def change_wallpaper(request: Request) -> Response:
        path = resolve_path(request.require("path"), state)
        try:
            if not path.is_file():
                raise HTTPError(404, f"wallpaper file not found: {path}")
        except OSError as e:
            raise os_error(e, path, "read") from None
        try:
            set_wallpaper(path, state)
        except (OSError, subprocess.SubprocessError) as e:
            raise HTTPError(500, f"cannot set the wallpaper with gsettings: {e}") from None
        return Response.text(f"Wallpaper changed to {path}")

    @router.route("/wallpaper", methods=("POST", "GET"))
    def wallpaper(request: Request) -> Response:
        current = current_wallpaper(state)
        if not current:
            raise HTTPError(404, "no wallpaper file is set")
        return _send_file(Path(current))
