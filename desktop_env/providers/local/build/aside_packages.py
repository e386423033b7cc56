"""Packages of another Debian-family release, fetched and unpacked aside: never installed on the system.

Chromium 120 (Debian 11's) and GNOME Settings 41 (Ubuntu 22.04's) come this way. A private apt state
(its own sources list, lists and cache, in a folder thrown away after) runs `apt-get update` against the
release's archives, whose InRelease apt checks against the keyring given; `apt-get download` then fetches
each .deb, which apt checks against that signed index, and each file's SHA256 is checked again here
against the index's before `dpkg-deb -x` unpacks it. No maintainer script runs. What went in is listed
in the folder's packages.txt (name, version, SHA256).
"""
from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ....errors import MissingDependency

MANIFEST = "packages.txt"

# run_step bound to one build: (step, argv, cwd, env) -> stdout
StepRunner = Callable[[str, list[str], Path, "dict[str, str] | None"], str]


@dataclass(frozen=True)
class Archive:
    """One line of the private sources list."""
    url: str
    suite: str
    components: tuple[str, ...] = ("main",)


@dataclass(frozen=True)
class DebianPackage:
    """One package as a signed index lists it."""
    name: str
    version: str
    sha256: str
    size: int


def parse_index_record(spec: str, text: str, index: str, error: type[MissingDependency]) -> DebianPackage:
    """The package of one record of a signed index, as `apt-cache show` prints it (RFC 822 style fields;
    a continuation line starts with a space). `index` names the release in messages."""
    fields = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line and not line.startswith(" "))
    missing = [name for name in ("Package", "Version", "SHA256", "Size") if name not in fields]
    if missing:
        raise error(f"{index}'s index lists {spec} without {', '.join(missing)}")
    try:
        size = int(fields["Size"])
    except ValueError:
        raise error(f"{index}'s index lists {spec} with Size {fields['Size']!r}, not a number") from None
    return DebianPackage(fields["Package"], fields["Version"], fields["SHA256"], size)


def manifest_text(packages: Iterable[DebianPackage]) -> str:
    """packages.txt: one line per package that went in, its name, version and SHA256."""
    return "".join(f"{p.name} {p.version} {p.sha256}\n" for p in packages)


def read_manifest(root: Path) -> list[tuple[str, str, str]]:
    """(name, version, SHA256) of each package in an installed folder's packages.txt."""
    return [(name, version, sha256) for name, version, sha256 in
            (line.split() for line in (root / MANIFEST).read_text().splitlines() if line.strip())]


class PrivateApt:
    """apt-get and apt-cache on `archives` with a state of their own in `root`: the system's sources,
    lists, cache and installed packages are neither read nor changed. The host's apt.conf.d still applies
    (a proxy set there is used). `index` names the release in messages; `run` runs one step."""

    def __init__(self, root: Path, archives: Iterable[Archive], keyring: Path, index: str,
                 error: type[MissingDependency], run: StepRunner) -> None:
        self.root, self.index, self.error, self.run = root, index, error, run
        self.debs = root / "debs"
        for folder in ("lists/partial", "cache/archives/partial", "sources.list.d", "preferences.d", "debs"):
            (root / folder).mkdir(parents=True)
        (root / "status").write_text("")
        (root / "sources.list").write_text("".join(
            f"deb [signed-by={keyring}] {a.url} {a.suite} {' '.join(a.components)}\n" for a in archives))
        settings = {
            "Dir::State": root, "Dir::State::lists": root / "lists", "Dir::State::status": root / "status",
            "Dir::Cache": root / "cache", "Dir::Etc::sourcelist": root / "sources.list",
            "Dir::Etc::sourceparts": root / "sources.list.d", "Dir::Etc::preferencesparts": root / "preferences.d",
            "Acquire::Languages": "none",
            # apt drops to its _apt user to download; that user cannot enter this private folder.
            "APT::Sandbox::User": pwd.getpwuid(os.geteuid()).pw_name,
        }
        (root / "apt.conf").write_text("".join(f'{key} "{value}";\n' for key, value in settings.items()))
        self.env = {**os.environ, "APT_CONFIG": str(root / "apt.conf"), "LC_ALL": "C.UTF-8"}

    def update(self) -> None:
        self.run(f"fetch {self.index}'s package index", ["apt-get", "update", "-q"], self.root, self.env)

    def show(self, spec: str) -> DebianPackage:
        """The index's record of `spec` (name or name=version)."""
        text = self.run(f"find {spec} in {self.index}'s index", ["apt-cache", "show", "--no-all-versions", spec],
                        self.root, self.env)
        return parse_index_record(spec, text, self.index, self.error)

    def download(self, packages: list[DebianPackage]) -> list[Path]:
        """Each package's .deb, fetched by apt (which checks it against the signed index) and checked here
        again: its SHA256 must be the index's."""
        self.run("download", ["apt-get", "download", "-q", *(f"{p.name}={p.version}" for p in packages)],
                 self.debs, self.env)
        debs = []
        for package in packages:
            found = sorted(self.debs.glob(f"{package.name}_*.deb"))
            if len(found) != 1:
                raise self.error(f"apt-get download left {len(found)} files for {package.name} in {self.debs}")
            digest = sha256_file(found[0])
            if digest != package.sha256:
                raise self.error(f"{found[0].name}: SHA256 {digest}, but {self.index}'s signed index says "
                                 f"{package.sha256}")
            debs.append(found[0])
        return debs


def fetch_blocker(what: str, keyring: Path,
                  tools: tuple[str, ...] = ("apt-get", "apt-cache", "dpkg-deb")) -> str | None:
    """Why `what` cannot be fetched from Debian's archive here (None when it can): a tool or the keyring missing."""
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        return f"fetching {what} from Debian's archive needs {' and '.join(missing)} (a Debian host)"
    if not keyring.is_file():
        return (f"fetching {what} checks Debian's signatures with {keyring}, which is missing: "
                "apt-get install debian-archive-keyring")
    return None


def library_dir(root: Path, marker: str, error: type[MissingDependency]) -> Path:
    """Where an unpacked tree's libraries are: the usr/lib/<multiarch triplet> that holds `marker` (a soname
    the build unpacked)."""
    found = sorted(path.parent for path in (root / "usr" / "lib").glob(f"*/{marker}"))
    if not found:
        raise error(f"no {marker} under {root / 'usr' / 'lib'}: the build is incomplete")
    return found[0]


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def drop_special_bits(root: Path) -> None:
    """No setuid, setgid or sticky file in what every desktop mounts; everything readable by the desktops' uid."""
    for path in [root, *root.rglob("*")]:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            continue
        mode = stat.S_IMODE(info.st_mode) & ~(stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX)
        mode |= 0o555 if stat.S_ISDIR(info.st_mode) or mode & 0o100 else 0o444
        os.chmod(path, mode)
