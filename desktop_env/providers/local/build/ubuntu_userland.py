"""Ubuntu 22.04's own root filesystem, with OSWorld's VM's apps: built once with mmdebstrap from Ubuntu's archive.

The VM's own packages (GNOME Shell 42.9, LibreOffice 7.3.7, GIMP 2.10.30, VLC 3.0.16...) instead of Debian
12's dressed as Ubuntu 22.04's (VM_DIFFERENCES.md): desktops boot from this tree where it is built
(build/prepare.py's desktop_system).

What goes in: the packages of ubuntu_packages.txt and what they depend on, not what they recommend, on top
of Essential and apt (mmdebstrap's apt variant), from jammy, jammy-updates and jammy-security, main and
universe. apt checks each suite's signed index with Ubuntu's 2018 archive key alone (ubuntu_archive.py), and
each .deb against that index. Manual pages, documentation and every translation but English's are left out
(dpkg path-exclude rules, which stay in the tree for what is installed later). Maintainer scripts run as root
in a chroot (mmdebstrap --mode=root), inside a mount and PID namespace of their own: when the build ends or
is killed, its mounts and processes go with it. The tree keeps no setuid or setgid file (it sits in a folder
every user can read) and no device node (bwrap gives a desktop its /dev).

Where: one folder in the sandbox share named by a hash of the package list, the archives and RECIPE, holding
root/ (the tree), build.json (what the build measured) and packages.lock (every installed package, version
and architecture, as dpkg lists them; written last). It is built in a folder beside it and renamed into place
only when complete, under a lock: a second build of the same list returns at once, a concurrent one waits
for the first, and what a killed build left is removed by the next. The last attempt's output is kept
beside it (<folder>.log).

The repo's ubuntu_packages.lock is a copy of the lock of the last tree built and checked; `osworld env
doctor` says which versions the built tree has and whether it differs from that copy.
"""
from __future__ import annotations

import contextlib
import ctypes
import fcntl
import hashlib
import json
import os
import shlex
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .... import debian_packages
from ....debian_packages import DPKG_STATUS, InstalledPackage, read_package_list
from ....errors import MissingDependency
from ..paths import sandbox_share_dir
from ..system_root import SystemRoot
from .aside_packages import Archive
from .one_time_build import Progress, install_once, progress_to_stderr, run_step
from .ubuntu_archive import UBUNTU, UBUNTU_SECURITY, fetch_keyring

PACKAGES_FILE = Path(__file__).with_name("ubuntu_packages.txt")
REPO_LOCK = Path(__file__).with_name("ubuntu_packages.lock")
# Bump when what the build does changes (its options, hooks, what it removes): a new folder is built
# beside the old one.
RECIPE = 2
SUITE = "jammy"
COMPONENTS = ("main", "universe")
ARCHIVES = (Archive(UBUNTU, "jammy", COMPONENTS), Archive(UBUNTU, "jammy-updates", COMPONENTS),
            Archive(UBUNTU_SECURITY, "jammy-security", COMPONENTS))
ARCHITECTURE = "amd64"
LOCALE = "en_US.UTF-8"  # the VM's

ROOT = "root"
LOCK = "packages.lock"
BUILD_INFO = "build.json"
OS_RELEASE = Path("usr/lib/os-release")  # /etc/os-release links to it

# Ubuntu's own minimal images leave out the same, but for the locales: English's are kept.
DPKG_PATHS = ("exclude=/usr/share/man/*", "exclude=/usr/share/info/*", "exclude=/usr/share/doc/*",
              "include=/usr/share/doc/*/copyright", "exclude=/usr/share/help/*", "exclude=/usr/share/gnome/help/*",
              "exclude=/usr/share/omf/*", "exclude=/usr/share/lintian/*", "exclude=/usr/share/locale/*",
              "include=/usr/share/locale/en/*", "include=/usr/share/locale/en_*/*",
              "include=/usr/share/locale/locale.alias")
# What the build's own hooks run (locale-gen) and what its sources.list trusts, whatever the list says.
RECIPE_PACKAGES = ("locales", "ubuntu-keyring")
# 22.04 is merged-/usr (/bin a link to usr/bin...), as debootstrap makes it; its packages do not do it themselves.
MERGED_USR_HOOK = "/usr/share/mmdebstrap/hooks/merged-usr/setup00.sh"
BUILD_TOOLS = ("mmdebstrap", "unshare", "chroot", "dpkg-deb", "apt-get", "du")
SYSTEM_PACKAGES_FILE = "desktop_env/providers/local/system_packages.txt"

BUILD_TIMEOUT_S = 3 * 3600
STEP_TIMEOUT_S = 600
OUTPUT_LINES = 30  # of a failed build's output, kept in its error

WHAT = "the Ubuntu 22.04 userland"

# The apps `osworld env doctor` names, and the package whose version each one's is.
APPS = (("GNOME Shell", "gnome-shell"), ("mutter", "mutter"), ("LibreOffice", "libreoffice-core"),
        ("GIMP", "gimp"), ("VLC", "vlc-bin"), ("Thunderbird", "thunderbird"), ("Nautilus", "nautilus"),
        ("gedit", "gedit"), ("GNOME Terminal", "gnome-terminal"), ("Xvfb", "xvfb"), ("Python", "python3.10"))


class UserlandBuildError(MissingDependency):
    """The Ubuntu 22.04 userland could not be built: the message names the step and what it printed."""


@dataclass(frozen=True)
class UserlandVersions:
    """What a built tree says it is: /etc/os-release's name and VERSION_ID, and each app's package version."""
    release: str
    version_id: str
    packages: dict[str, str]  # app name (APPS) -> its package's Debian version

    def summary(self) -> str:
        apps = ", ".join(f"{app} {upstream_version(version)}" for app, version in self.packages.items())
        return f"{self.release}: {apps}"


def package_list() -> list[str]:
    return read_package_list(PACKAGES_FILE)


def userland_key(packages: Iterable[str], recipe: int = RECIPE, archives: Sequence[Archive] = ARCHIVES) -> str:
    """What names a tree: its packages (in any order, each once), the archives and the recipe."""
    recipe_text = json.dumps({"recipe": recipe, "architecture": ARCHITECTURE, "packages": sorted(set(packages)),
                              "archives": [[a.url, a.suite, *a.components] for a in archives]})
    return hashlib.sha256(recipe_text.encode()).hexdigest()[:16]


def userland_dir(packages: Iterable[str] | None = None) -> Path:
    key = userland_key(package_list() if packages is None else packages)
    return sandbox_share_dir() / f"ubuntu-22.04-{key}"


def installed_userland() -> Path | None:
    """The built folder of the current package list, None when not built (never builds)."""
    target = userland_dir()
    return target if (target / LOCK).is_file() and (target / ROOT / OS_RELEASE).is_file() else None


USERLAND_NAME = "ubuntu-22.04"


def installed_userland_system() -> SystemRoot | None:
    """The built tree as the root desktops boot from, None when not built."""
    found = installed_userland()
    return SystemRoot(found / ROOT, USERLAND_NAME) if found is not None else None


def build_blocker() -> str | None:
    """Why the userland cannot be built here (None when it can)."""
    if os.geteuid() != 0:
        return (f"building {WHAT} needs root (mmdebstrap --mode=root runs its packages' maintainer scripts in "
                "a chroot): run `osworld env setup --ubuntu-userland` as root")
    missing = [tool for tool in BUILD_TOOLS if shutil.which(tool) is None]
    if missing or not Path(MERGED_USR_HOOK).is_file():
        return (f"building {WHAT} needs {' and '.join(missing) or MERGED_USR_HOOK}: apt-get install mmdebstrap "
                f"(listed in {SYSTEM_PACKAGES_FILE})")
    return None


def ensure_userland(progress: Progress = progress_to_stderr) -> Path:
    """The built folder, building it once (see the module's docstring); UserlandBuildError names what failed."""
    found = installed_userland()
    if found is not None:
        return found
    target = userland_dir()
    with build_lock(target):
        remove_leftovers(target)
        return install_once(WHAT, target, installed_userland, build_blocker, UserlandBuildError, _build,
                            f"building {WHAT} into {target}: a one-time download of about 650 MB from Ubuntu's "
                            "archive, 2.4 GB on disk (13 minutes on 2 cores)", progress)


@contextlib.contextmanager
def build_lock(target: Path) -> Iterator[None]:
    """Held while `target` is built: one build at a time, the others wait and then find it built."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_name(target.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def remove_leftovers(target: Path) -> None:
    """The staging folders of builds of `target` that were killed (the build lock is held: none is running)."""
    for leftover in target.parent.glob(f".{target.name}.*"):
        shutil.rmtree(leftover, ignore_errors=True)


def _build(staging: Path, progress: Progress) -> None:
    packages = package_list()
    scratch = staging / "build"
    scratch.mkdir()
    progress("  1/4 Ubuntu's archive key")
    key = fetch_keyring(scratch, WHAT, UserlandBuildError, _run)
    suites = ", ".join(archive.suite for archive in ARCHIVES)
    progress(f"  2/4 mmdebstrap: {len(packages)} packages of {PACKAGES_FILE.name} and what they depend on, "
             f"from {suites}")
    downloaded = scratch / "downloaded-bytes"
    started = time.monotonic()
    run_logged("mmdebstrap", isolated(mmdebstrap_argv(staging / ROOT, key, packages, downloaded)),
               staging.parent, log_path(staging), progress)
    seconds = time.monotonic() - started
    progress("  3/4 no setuid file or device node")
    strip_privileges(staging / ROOT)
    progress("  4/4 the lock of what went in")
    installed = installed_packages(staging / ROOT)
    tree_bytes = int(_run("measure the tree", ["du", "-sxB1", str(staging / ROOT)], staging).split()[0])
    info = {"recipe": RECIPE, "key": userland_key(packages), "packages": len(installed),
            "mmdebstrap_s": round(seconds), "download_bytes": int(downloaded.read_text().strip() or 0),
            "tree_bytes": tree_bytes}
    (staging / BUILD_INFO).write_text(json.dumps(info, indent=1) + "\n")
    shutil.rmtree(scratch)
    (staging / LOCK).write_text(lock_text(installed))
    os.chmod(staging, 0o755)  # mkdtemp made it 0700; the desktops' uid must read it


# As Ubuntu's installer writes it, for the desktops' host name (the sandbox's --hostname).
ETC_HOSTS = ("127.0.0.1\tlocalhost\n127.0.1.1\tosworld\n\n"
             "# The following lines are desirable for IPv6 capable hosts\n"
             "::1     ip6-localhost ip6-loopback\nfe00::0 ip6-localnet\nff00::0 ip6-mcastprefix\n"
             "ff02::1 ip6-allnodes\nff02::2 ip6-allrouters\n")


def mmdebstrap_argv(root: Path, key: Path, packages: Sequence[str], downloaded: Path) -> list[str]:
    """mmdebstrap's command for a tree at `root` from ARCHIVES trusted by `key` alone; its customize hooks
    write the size of the .debs it fetched to `downloaded`, generate the VM's locale and leave the tree's
    sources.list trusting what its own ubuntu-keyring installs."""
    sources = [f"deb [signed-by={key}] {a.url} {a.suite} {' '.join(a.components)}" for a in ARCHIVES]
    include = list(dict.fromkeys([*packages, *RECIPE_PACKAGES]))
    return ["mmdebstrap", "--mode=root", "--variant=apt", f"--architectures={ARCHITECTURE}",
            f"--include={','.join(include)}",
            '--aptopt=APT::Install-Recommends "false"', '--aptopt=Acquire::Languages "none"',
            *(f"--dpkgopt=path-{rule}" for rule in DPKG_PATHS),
            # the .debs stay in the cache until mmdebstrap's cleanup, after the hook that counts them
            "--skip=essential/unlink", f"--setup-hook={MERGED_USR_HOOK}",
            # apt's package lists stay, as on the VM's image: `apt-get install x` offline fails resolving the
            # archive, as the VM's would, not with "Unable to locate package"
            "--skip=cleanup/apt/lists",
            f'--customize-hook=du -cb "$1"/var/cache/apt/archives/*.deb | tail -n 1 | cut -f 1 '
            f'> {shlex.quote(str(downloaded))}',
            f'--customize-hook=chroot "$1" locale-gen {LOCALE}',
            f'--customize-hook=chroot "$1" update-locale LANG={LOCALE}',
            '--customize-hook=sed -i "s/ \\[signed-by=[^]]*\\]//" "$1"/etc/apt/sources.list',
            # Ubuntu's installer writes /etc/hosts (no package does): localhost and the machine's own name
            f'--customize-hook=printf {shlex.quote(ETC_HOSTS)} > "$1"/etc/hosts',
            SUITE, str(root), *sources]


def isolated(argv: list[str]) -> list[str]:
    """`argv` in a mount and PID namespace of its own: its mounts (the chroot's /proc, /sys, /dev) are never
    seen outside, and all its processes die with it, so a failed or killed build leaves none behind."""
    return ["unshare", "--mount", "--propagation", "private", "--pid", "--fork", "--kill-child", "--mount-proc",
            *argv]


def log_path(staging: Path) -> Path:
    """<folder>.log beside the folder a staging folder (.<folder>.<random>) is built for."""
    return staging.with_name(staging.name[1:].rsplit(".", 1)[0] + ".log")


def run_logged(step: str, argv: list[str], cwd: Path, log: Path, progress: Progress,
               timeout: float = BUILD_TIMEOUT_S) -> None:
    """Runs `argv`, its output written to `log` and its info lines ("I: ...") said to `progress`;
    UserlandBuildError with the last OUTPUT_LINES when it fails or outlasts `timeout`. It dies with this
    process."""
    tail: deque[str] = deque(maxlen=OUTPUT_LINES)
    with log.open("w", buffering=1) as out:
        process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   env={**os.environ, "LC_ALL": "C.UTF-8"}, preexec_fn=_die_with_parent)
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            process.kill()

        timer = threading.Timer(timeout, expire)
        timer.start()
        try:
            assert process.stdout is not None
            for line in process.stdout:
                out.write(line)
                tail.append(line.rstrip())
                if line.startswith("I: "):
                    progress(f"     {line[3:].rstrip()}")
            code = process.wait()
        finally:
            timer.cancel()
            if process.poll() is None:
                process.kill()
                process.wait()
    if expired.is_set():
        raise UserlandBuildError(f"building {WHAT}, step '{step}': did not finish in {timeout:.0f} s (its "
                                 f"output: {log})")
    if code != 0:
        output = "\n".join(tail)
        raise UserlandBuildError(f"building {WHAT}, step '{step}': exited with {code} (its output: {log}):\n"
                                 f"{output}")


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def strip_privileges(root: Path) -> None:
    """No setuid or setgid file and no device node under `root` (symlinks are left as they are)."""
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode):
                os.unlink(path)
            elif stat.S_ISREG(info.st_mode) and info.st_mode & (stat.S_ISUID | stat.S_ISGID):
                os.chmod(path, stat.S_IMODE(info.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))


def installed_packages(root: Path) -> list[InstalledPackage]:
    """Every package dpkg's status file in `root` says is installed, by name."""
    return debian_packages.installed_packages(root / DPKG_STATUS)


def lock_text(packages: Iterable[InstalledPackage]) -> str:
    return "".join(f"{p.name} {p.version} {p.architecture}\n" for p in packages)


def read_lock(text: str) -> dict[str, str]:
    """Package name -> version of a packages.lock (the repo's copy starts with a comment naming its tree)."""
    return {name: version for name, version, _ in
            (line.split() for line in text.splitlines() if line.strip() and not line.startswith("#"))}


def lock_differences(built: dict[str, str], pinned: dict[str, str]) -> list[str]:
    """The packages whose version differs between two locks, or that only one has."""
    return sorted(name for name in built.keys() | pinned.keys() if built.get(name) != pinned.get(name))


def userland_versions(folder: Path) -> UserlandVersions:
    """The release and the apps' versions of a built folder, read from its tree."""
    release = _os_release(folder / ROOT / OS_RELEASE)
    installed = {p.name: p.version for p in installed_packages(folder / ROOT)}
    return UserlandVersions(release.get("PRETTY_NAME", "(no PRETTY_NAME)"), release.get("VERSION_ID", ""),
                            {app: installed[package] for app, package in APPS if package in installed})


def _os_release(path: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    return {key: value.strip().strip('"') for key, value in pairs}


def upstream_version(version: str) -> str:
    """The upstream part of a Debian version: no epoch, no Debian or Ubuntu revision, no +build or ~ suffix
    ("1:7.3.7-0ubuntu0.22.04.13" -> "7.3.7")."""
    upstream = version.split(":", 1)[-1].rsplit("-", 1)[0]
    return upstream.split("+", 1)[0].split("~", 1)[0]


def _run(step: str, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    return run_step(WHAT, UserlandBuildError, STEP_TIMEOUT_S, step, argv, cwd, env)
