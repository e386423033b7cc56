"""Ubuntu 22.04's own userland (ubuntu_userland.py): what names a tree, that a build appears whole or not at all
and only once, what its lock and doctor say, and what mmdebstrap is asked for. Nothing here fetches: the build
itself is replaced by one that lays out a small tree. The last test checks the tree built here, when there is
one; it only reads files, so it needs no marker. The build itself is no test: 13 minutes of downloads and
maintainer scripts on 2 cores (`osworld env setup --ubuntu-userland`)."""
from __future__ import annotations

import os
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from desktop_env.providers.local import doctor
from desktop_env.providers.local.build import ubuntu_archive, ubuntu_userland
from desktop_env.providers.local.build.aside_packages import Archive, sha256_file
from desktop_env.providers.local.build.ubuntu_userland import (
    LOCK,
    OS_RELEASE,
    ROOT,
    InstalledPackage,
    UserlandBuildError,
    ensure_userland,
    installed_userland,
)

key, userland_dir = ubuntu_userland.userland_key, ubuntu_userland.userland_dir

OS_RELEASE_TEXT = 'PRETTY_NAME="Ubuntu 22.04.5 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\n'
STATUS = """Package: gnome-shell
Status: install ok installed
Architecture: amd64
Version: 42.9-0ubuntu2.4
Description: graphical shell for the GNOME desktop
 a continuation line: with a colon

Package: libreoffice-core
Status: install ok installed
Architecture: amd64
Version: 1:7.3.7-0ubuntu0.22.04.13

Package: gimp
Status: deinstall ok config-files
Architecture: amd64
Version: 2.10.30-1ubuntu0.1

Package: xvfb
Status: install ok installed
Architecture: amd64
Version: 2:21.1.4-2ubuntu1.7~22.04.16
"""


def package_file(folder: Path, text: str, monkeypatch) -> None:
    path = folder / "ubuntu_packages.txt"
    path.write_text(text)
    monkeypatch.setattr(ubuntu_userland, "PACKAGES_FILE", path)


def lay_out_tree(folder: Path, status: str = STATUS) -> Path:
    """A folder as a build leaves it: a tree with os-release and dpkg's status, and its lock."""
    root = folder / ROOT
    (root / OS_RELEASE).parent.mkdir(parents=True)
    (root / OS_RELEASE).write_text(OS_RELEASE_TEXT)
    (root / ubuntu_userland.DPKG_STATUS).parent.mkdir(parents=True)
    (root / ubuntu_userland.DPKG_STATUS).write_text(status)
    (folder / LOCK).write_text(ubuntu_userland.lock_text(ubuntu_userland.installed_packages(root)))
    return folder


@pytest.fixture
def builds(share, monkeypatch, tmp_path_factory) -> list[Path]:
    """Builds replaced by one that lays out a small tree; lists the staging folder of each build run."""
    package_file(tmp_path_factory.mktemp("repo"), "# a comment\ngnome-shell\n\nxvfb\n", monkeypatch)
    monkeypatch.setattr(ubuntu_userland, "build_blocker", lambda: None)
    staged: list[Path] = []

    def build(staging: Path, progress) -> None:
        staged.append(staging)
        assert not userland_dir().exists()  # nobody sees it before it is whole
        lay_out_tree(staging)

    monkeypatch.setattr(ubuntu_userland, "_build", build)
    return staged


def quiet(line: str) -> None:
    pass


def test_a_tree_is_named_by_its_packages_not_their_order_comments_or_repeats(tmp_path, monkeypatch, share):
    package_file(tmp_path, "# the session\nxvfb\ngnome-shell\nxvfb\n", monkeypatch)
    assert userland_dir() == share / f"ubuntu-22.04-{key(['gnome-shell', 'xvfb'])}"
    assert key(["gnome-shell", "xvfb"]) != key(["gnome-shell", "xvfb", "gimp"])


def test_a_new_recipe_or_archive_names_a_new_tree():
    packages = ["gnome-shell"]
    assert key(packages, recipe=ubuntu_userland.RECIPE + 1) != key(packages)
    assert key(packages, archives=ubuntu_userland.ARCHIVES[:2]) != key(packages)
    assert key(packages, archives=[Archive("http://mirror.example/ubuntu", "jammy")]) != \
        key(packages)


def test_a_build_is_renamed_into_place_whole(builds):
    built = ensure_userland(quiet)
    assert built == userland_dir() == installed_userland()
    assert (built / ROOT / OS_RELEASE).read_text() == OS_RELEASE_TEXT
    assert len(builds) == 1 and not builds[0].exists()
    assert [p.name for p in built.parent.iterdir() if p.name.startswith(".")] == []


def test_a_second_build_of_the_same_list_does_nothing(builds, monkeypatch):
    first = ensure_userland(quiet)
    monkeypatch.setattr(ubuntu_userland, "_build", lambda staging, progress: pytest.fail("built twice"))
    started = time.monotonic()
    assert ensure_userland(quiet) == first
    assert time.monotonic() - started < 0.5


def test_a_failed_build_leaves_nothing_half_made(share, builds, monkeypatch):
    def fail(staging: Path, progress) -> None:
        lay_out_tree(staging)
        raise UserlandBuildError("building the Ubuntu 22.04 userland, step 'mmdebstrap': exited with 1")

    monkeypatch.setattr(ubuntu_userland, "_build", fail)
    with pytest.raises(UserlandBuildError, match="mmdebstrap"):
        ensure_userland(quiet)
    assert installed_userland() is None and not userland_dir().exists()
    assert sorted(p.name for p in share.iterdir()) == [userland_dir().name + ".lock"]


def test_what_a_killed_build_left_is_removed_by_the_next(share, builds):
    leftover = share / f".{userland_dir().name}.k1lled"
    (leftover / ROOT / "usr").mkdir(parents=True)
    other = share / f".{userland_dir().name}-other.x"  # another folder's staging is not this build's
    other.mkdir()
    ensure_userland(quiet)
    assert not leftover.exists() and other.exists()


def test_a_folder_without_its_lock_is_not_built(share, builds):
    lay_out_tree(userland_dir())
    (userland_dir() / LOCK).unlink()
    assert installed_userland() is None


def test_builds_at_once_build_once_the_others_wait_and_find_it(builds, monkeypatch):
    lay_out = ubuntu_userland._build

    def slow(staging: Path, progress) -> None:
        time.sleep(0.3)
        lay_out(staging, progress)

    monkeypatch.setattr(ubuntu_userland, "_build", slow)
    found: list[Path] = []
    threads = [threading.Thread(target=lambda: found.append(ensure_userland(quiet))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1 and found == [userland_dir()] * 3


def test_without_root_or_mmdebstrap_the_build_says_what_it_needs(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert "needs root" in (ubuntu_userland.build_blocker() or "")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(ubuntu_userland, "BUILD_TOOLS", ("osworld-no-such-tool",))
    assert "osworld-no-such-tool" in (ubuntu_userland.build_blocker() or "")
    assert "apt-get install mmdebstrap" in (ubuntu_userland.build_blocker() or "")


def test_the_lock_lists_what_dpkg_says_is_installed(tmp_path):
    folder = lay_out_tree(tmp_path / "folder")
    dpkg = subprocess.run(["dpkg-query", f"--admindir={folder / ROOT / 'var/lib/dpkg'}", "-W",
                           "-f=${db:Status-Status} ${Package} ${Version} ${Architecture}\n"],
                          capture_output=True, text=True, check=True).stdout
    installed = sorted(line.split(" ", 1)[1] + "\n" for line in dpkg.splitlines() if line.startswith("installed "))
    assert (folder / LOCK).read_text() == "".join(installed)
    assert "gimp" not in ubuntu_userland.read_lock((folder / LOCK).read_text())  # its config files only


def test_the_lock_differences_name_each_package_that_moved():
    built = {"gnome-shell": "42.9-0ubuntu2.4", "xvfb": "2:21.1.4-2ubuntu1.7~22.04.16", "gimp": "2.10.30-1"}
    pinned = {"gnome-shell": "42.9-0ubuntu2.3", "xvfb": "2:21.1.4-2ubuntu1.7~22.04.16", "vlc": "3.0.16-1build7"}
    assert ubuntu_userland.lock_differences(built, pinned) == ["gimp", "gnome-shell", "vlc"]


@pytest.mark.parametrize("version, upstream", [
    ("42.9-0ubuntu2.4", "42.9"), ("1:7.3.7-0ubuntu0.22.04.13", "7.3.7"), ("2:21.1.4-2ubuntu1.7~22.04.16", "21.1.4"),
    ("1:140.7.1+build1-0ubuntu0.22.04.1", "140.7.1"), ("3.0.16-1build7", "3.0.16"), ("1.07", "1.07"),
])
def test_an_apps_version_is_its_packages_upstream_part(version, upstream):
    assert ubuntu_userland.upstream_version(version) == upstream


def test_the_versions_are_read_from_the_tree(tmp_path):
    versions = ubuntu_userland.userland_versions(lay_out_tree(tmp_path / "folder"))
    assert versions.version_id == "22.04"
    assert versions.summary() == "Ubuntu 22.04.5 LTS: GNOME Shell 42.9, LibreOffice 7.3.7, Xvfb 21.1.4"


def test_doctor_says_whether_it_is_built_and_its_versions(builds, monkeypatch, tmp_path):
    check = doctor.check_ubuntu_userland()
    assert not check.ok and not check.required and "not built" in check.detail
    assert check.fix == "osworld env setup --ubuntu-userland"
    built = ensure_userland(quiet)
    pinned = tmp_path / "ubuntu_packages.lock"
    pinned.write_text((built / LOCK).read_text())
    monkeypatch.setattr(ubuntu_userland, "REPO_LOCK", pinned)
    check = doctor.check_ubuntu_userland()
    assert check.ok and not check.required
    assert f"built in {built}, Ubuntu 22.04.5 LTS: GNOME Shell 42.9, LibreOffice 7.3.7" in check.detail
    assert check.detail.endswith("as ubuntu_packages.lock")
    pinned.write_text("gnome-shell 42.5-0ubuntu1 amd64\n")
    assert doctor.check_ubuntu_userland().detail.endswith("3 packages differ from ubuntu_packages.lock")


def test_the_tree_keeps_no_setuid_file_and_no_device_node(tmp_path):
    root = tmp_path / "root"
    (root / "usr/bin").mkdir(parents=True)
    for name, mode in (("sudo", 0o4755), ("crontab", 0o2755), ("ls", 0o755)):
        (root / "usr/bin" / name).write_text("#!/bin/sh\n")
        os.chmod(root / "usr/bin" / name, mode)
    (root / "usr/bin/sudoedit").symlink_to("sudo")
    (root / "dev").mkdir()
    if os.geteuid() == 0:
        os.mknod(root / "dev/null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    ubuntu_userland.strip_privileges(root)
    modes = {name: stat.S_IMODE((root / "usr/bin" / name).stat().st_mode) for name in ("sudo", "crontab", "ls")}
    assert modes == {"sudo": 0o755, "crontab": 0o755, "ls": 0o755}
    assert (root / "usr/bin/sudoedit").is_symlink() and list((root / "dev").iterdir()) == []


def test_mmdebstrap_is_asked_for_the_list_trusting_the_pinned_key_alone(tmp_path):
    key = tmp_path / "ubuntu-keyring-2018-archive.gpg"
    argv = ubuntu_userland.mmdebstrap_argv(tmp_path / "root", key, ["gnome-shell", "gimp", "locales"],
                                           tmp_path / "bytes")
    sources = argv[argv.index(str(tmp_path / "root")) + 1:]
    assert sources == [f"deb [signed-by={key}] http://archive.ubuntu.com/ubuntu jammy main universe",
                       f"deb [signed-by={key}] http://archive.ubuntu.com/ubuntu jammy-updates main universe",
                       f"deb [signed-by={key}] http://security.ubuntu.com/ubuntu jammy-security main universe"]
    assert argv[:3] == ["mmdebstrap", "--mode=root", "--variant=apt"]
    assert "--include=gnome-shell,gimp,locales,ubuntu-keyring" in argv  # what the build's hooks need, once
    assert '--aptopt=APT::Install-Recommends "false"' in argv
    assert {"--dpkgopt=path-exclude=/usr/share/man/*", "--dpkgopt=path-exclude=/usr/share/doc/*",
            "--dpkgopt=path-exclude=/usr/share/locale/*", "--dpkgopt=path-include=/usr/share/locale/en/*"} <= set(argv)


def test_mmdebstrap_runs_in_a_mount_and_pid_namespace_that_dies_with_it():
    argv = ubuntu_userland.isolated(["mmdebstrap"])
    assert argv[0] == "unshare" and {"--mount", "--pid", "--fork", "--kill-child"} <= set(argv)
    assert argv[-1] == "mmdebstrap"


def test_a_failed_step_names_itself_and_ends_with_its_output_its_info_lines_told_as_progress(tmp_path):
    heard: list[str] = []
    log = tmp_path / "build.log"
    with pytest.raises(UserlandBuildError, match=r"step 'mmdebstrap': exited with 3 \(its output: .*build.log"
                                                 r"\):\nI: downloading\nE: no space left"):
        ubuntu_userland.run_logged("mmdebstrap", ["sh", "-c", "echo 'I: downloading'; echo 'E: no space left' >&2; "
                                                              "exit 3"], tmp_path, log, heard.append)
    assert heard == ["     downloading"] and log.read_text() == "I: downloading\nE: no space left\n"


def test_a_step_that_outlasts_its_timeout_is_killed(tmp_path):
    started = time.monotonic()
    with pytest.raises(UserlandBuildError, match="did not finish in 0 s"):
        ubuntu_userland.run_logged("mmdebstrap", ["sleep", "30"], tmp_path, tmp_path / "log", quiet, timeout=0.2)
    assert time.monotonic() - started < 5


def test_the_log_of_a_build_sits_beside_its_folder(share):
    staging = share / ".ubuntu-22.04-0123456789abcdef.x1y2z3"
    assert ubuntu_userland.log_path(staging) == share / "ubuntu-22.04-0123456789abcdef.log"


def keyring_package(tmp_path: Path, key_bytes: bytes) -> str:
    """A real .deb laid out as ubuntu-keyring's, holding `key_bytes` as the archive key; its file:// URL."""
    package = tmp_path / "pkg"
    key = package / ubuntu_archive.KEYRING_MEMBER
    key.parent.mkdir(parents=True)
    key.write_bytes(key_bytes)
    (package / "DEBIAN").mkdir()
    (package / "DEBIAN" / "control").write_text("Package: ubuntu-keyring\nVersion: 2021.03.26\nArchitecture: all\n"
                                                "Maintainer: nobody <nobody@example.org>\nDescription: test\n")
    subprocess.run(["dpkg-deb", "-b", str(package), str(tmp_path / "ubuntu-keyring.deb")], check=True,
                   capture_output=True)
    return (tmp_path / "ubuntu-keyring.deb").as_uri()


def test_the_userlands_build_refuses_a_key_whose_checksum_is_not_pinned(tmp_path):
    url = keyring_package(tmp_path, b"not Ubuntu's archive key\n")
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(UserlandBuildError, match="refusing to trust it"):
        ubuntu_archive.fetch_keyring(work, ubuntu_userland.WHAT, UserlandBuildError, ubuntu_userland._run, url)


def test_the_pinned_key_is_the_one_the_build_trusts(tmp_path):
    url = keyring_package(tmp_path, b"a key\n")
    work = tmp_path / "work"
    work.mkdir()
    pinned = sha256_file(tmp_path / "pkg" / ubuntu_archive.KEYRING_MEMBER)
    key = ubuntu_archive.fetch_keyring(work, ubuntu_userland.WHAT, UserlandBuildError, ubuntu_userland._run, url,
                                       pinned)
    assert key.read_bytes() == b"a key\n" and key.is_relative_to(work)


@pytest.mark.skipif(installed_userland() is None, reason="the Ubuntu 22.04 userland is not built here "
                                                         "(osworld env setup --ubuntu-userland)")
def test_the_built_tree_has_the_vms_versions():
    folder = installed_userland()
    assert folder is not None
    versions = ubuntu_userland.userland_versions(folder)
    upstream = {app: ubuntu_userland.upstream_version(version) for app, version in versions.packages.items()}
    assert versions.version_id == "22.04"
    assert upstream["GNOME Shell"].startswith("42.") and upstream["mutter"].startswith("42.")
    assert upstream["LibreOffice"].startswith("7.3.")
    assert (upstream["GIMP"], upstream["VLC"], upstream["Xvfb"]) == ("2.10.30", "3.0.16", "21.1.4")
    assert upstream["Python"].startswith("3.10.")
    assert not [p for p in ubuntu_userland.installed_packages(folder / ROOT)
                if p.name in ("firefox", "chromium-browser", "snapd")]  # no snap stand-ins
    assert InstalledPackage("ubuntu-keyring", "2021.03.26", "all") in \
        ubuntu_userland.installed_packages(folder / ROOT)
