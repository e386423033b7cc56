"""Opening archives an agent made, within bounds.

A metric that unpacks or reads a zip or tar from the desktop reads a file the agent wrote:
a few megabytes of zip64 can declare gigabytes of highly compressible members. So before
anything is written or read into memory, the members are counted and their declared sizes
summed, and an archive past `Bounds` (512 MiB, 10,000 members) is refused with
ArchiveTooLarge, whose message says what it declared. While writing, the bytes are counted
again (a zip's declared size is what its reader stops at, never what is trusted alone); a
tar is read as a stream, each member checked before its data is read.

Member names never leave the folder they are unpacked into: a zip's absolute and ".." parts
are dropped, and a tar's go through tarfile's "data" filter (no absolute path, no link
leading out, no device file).
"""
from __future__ import annotations

import os
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..errors import DesktopEnvError

CHUNK = 1 << 20


@dataclass(frozen=True)
class Bounds:
    max_bytes: int = 512 << 20     # unpacked bytes, all members together
    max_members: int = 10_000


class ArchiveTooLarge(DesktopEnvError, ValueError):
    """An archive that would unpack past its bounds; the message names it and what it declared."""


class NotAnArchive(DesktopEnvError, ValueError):
    """Neither a zip nor a tar (compressed or not)."""


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB"


def _too_large(archive: str, what: str, bounds: Bounds) -> ArchiveTooLarge:
    return ArchiveTooLarge(f"{os.path.basename(archive)} {what}, past the bound of {_mib(bounds.max_bytes)} "
                           f"and {bounds.max_members} members: not unpacked")


def inner_folder_problem(value: object) -> str:
    """Why `value` cannot name a folder inside an unpacked archive ("" when it can)."""
    if not isinstance(value, str):
        return f"is a {type(value).__name__}; it must be a folder inside the unpacked archive"
    if "\0" in value:
        return "contains a NUL byte"
    if value.startswith("/"):
        return "is an absolute path; it must be a folder inside the unpacked archive"
    if ".." in value.split("/"):
        return "has a '..' segment, which would leave the unpacked archive"
    return ""


def check_zip(archive: str, zf: zipfile.ZipFile, bounds: Bounds = Bounds()) -> None:
    """Raises ArchiveTooLarge when the zip declares more members or bytes than `bounds`."""
    members = zf.infolist()
    declared = sum(info.file_size for info in members)
    if len(members) > bounds.max_members or declared > bounds.max_bytes:
        raise _too_large(archive, f"declares {len(members)} members of {_mib(declared)}", bounds)


def check_zip_file(path: str | os.PathLike, bounds: Bounds = Bounds()) -> None:
    """Raises ArchiveTooLarge when `path` is a zip (an office document, an epub) that declares more
    than `bounds`; a file that is no zip passes, for its own reader to refuse. Office libraries
    read a document's parts into memory: this runs before them."""
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        return
    with zf:
        check_zip(os.fspath(path), zf, bounds)


def read_member(archive: str, zf: zipfile.ZipFile, name: str, bounds: Bounds = Bounds()) -> bytes:
    """One member's bytes, refused (ArchiveTooLarge) past `bounds.max_bytes`; KeyError when absent."""
    size = zf.getinfo(name).file_size
    if size > bounds.max_bytes:
        raise _too_large(archive, f"declares {_mib(size)} for its member {name}", bounds)
    return zf.read(name)  # zipfile reads no more than the declared size (and checks the CRC)


def unpack(archive: str, into: str, bounds: Bounds = Bounds()) -> None:
    """Unpacks a zip or a (compressed) tar into folder `into`.

    Raises ArchiveTooLarge past `bounds` (whatever was written by then stays in `into`, for the
    caller's temporary folder to take away), NotAnArchive, or zipfile.BadZipFile,
    tarfile.TarError and OSError for a corrupt one."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            _unpack_zip(archive, zf, into, bounds)
    elif tarfile.is_tarfile(archive):
        _unpack_tar(archive, into, bounds)
    else:
        raise NotAnArchive(f"{os.path.basename(archive)} is neither a zip nor a tar archive")


def _member_path(name: str) -> str | None:
    """Where a zip member goes, relative to the folder: no absolute or ".." part (as zipfile does)."""
    parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("/", ".", "..")]
    return os.path.join(*parts) if parts else None


def _unpack_zip(archive: str, zf: zipfile.ZipFile, into: str, bounds: Bounds) -> None:
    check_zip(archive, zf, bounds)
    written = 0
    for info in zf.infolist():
        relative = _member_path(info.filename)
        if relative is None:
            continue
        target = os.path.join(into, relative)
        if info.is_dir():
            os.makedirs(target, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with zf.open(info) as source, open(target, "wb") as sink:
            while chunk := source.read(CHUNK):
                written += len(chunk)
                if written > bounds.max_bytes:
                    raise _too_large(archive, f"unpacks to more than it declares ({_mib(written)} so far)", bounds)
                sink.write(chunk)


def _unpack_tar(archive: str, into: str, bounds: Bounds) -> None:
    has_data_filter = hasattr(tarfile, "data_filter")
    members = written = 0
    # As a stream: each header is checked before its member's data is decompressed.
    with tarfile.open(archive, "r|*") as tf:
        for member in tf:
            members += 1
            written += member.size if member.isreg() else 0
            if members > bounds.max_members or written > bounds.max_bytes:
                raise _too_large(archive, f"holds at least {members} members of {_mib(written)}", bounds)
            if has_data_filter:
                tf.extract(member, into, filter="data")
            else:
                tf.extract(member, into)
