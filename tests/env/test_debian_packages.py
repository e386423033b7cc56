"""What dpkg says: the one dpkg query, against this machine's real dpkg (Debian 12), and a system's dpkg status
file read as text (a tree's is read without running its dpkg)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from desktop_env.debian_packages import InstalledPackage, installed_packages, missing_packages, package_field

needs_dpkg = pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="needs Debian's dpkg-query")

STATUS = """Package: vlc
Status: install ok installed
Priority: optional
Architecture: amd64
Version: 3.0.16-1build7
Depends: vlc-bin (= 3.0.16-1build7)
Description: multimedia player and streamer
 Version: 9.9 (a continuation line is no field)

Package: gimp
Status: deinstall ok config-files
Architecture: amd64
Version: 2.10.30-1ubuntu0.1

Package: thunderbird
Status: install reinstreq half-installed
Architecture: amd64
Version: 1:115.10.1+build1-0ubuntu0.22.04.1

Package: gnome-shell
Status: install ok installed
Architecture: amd64
Version: 42.9-0ubuntu2.4
"""


def test_a_status_file_gives_the_installed_packages_by_name_and_not_the_removed_or_half_installed(tmp_path):
    status = tmp_path / "status"
    status.write_text(STATUS)
    assert installed_packages(status) == [InstalledPackage("gnome-shell", "42.9-0ubuntu2.4", "amd64"),
                                          InstalledPackage("vlc", "3.0.16-1build7", "amd64")]


@needs_dpkg
def test_this_machines_status_file_says_what_dpkg_query_says():
    versions = package_field(["dpkg"], "Version")
    read = {p.name: p.version for p in installed_packages(Path("/var/lib/dpkg/status"))}
    assert versions is not None and read["dpkg"] == versions["dpkg"]


@needs_dpkg
def test_an_installed_package_has_a_version_and_an_unknown_one_is_left_out():
    versions = package_field(["dpkg", "no-such-package-osworld"], "Version")
    assert versions is not None and versions["dpkg"][0].isdigit()
    assert "no-such-package-osworld" not in versions


@needs_dpkg
def test_missing_packages_names_only_those_not_installed():
    assert missing_packages(["dpkg", "no-such-package-osworld"]) == ["no-such-package-osworld"]


@needs_dpkg
def test_without_dpkg_every_package_is_missing(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert package_field(["dpkg"], "Version") is None
    assert missing_packages(["dpkg"]) == ["dpkg"]
