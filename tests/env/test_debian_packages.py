"""The one dpkg query, against this machine's real dpkg (Debian 12)."""
from __future__ import annotations

import shutil

import pytest

from desktop_env.debian_packages import missing_packages, package_field

pytestmark = pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="needs Debian's dpkg-query")


def test_an_installed_package_has_a_version_and_an_unknown_one_is_left_out():
    versions = package_field(["dpkg", "no-such-package-osworld"], "Version")
    assert versions is not None and versions["dpkg"][0].isdigit()
    assert "no-such-package-osworld" not in versions


def test_missing_packages_names_only_those_not_installed():
    assert missing_packages(["dpkg", "no-such-package-osworld"]) == ["no-such-package-osworld"]


def test_without_dpkg_every_package_is_missing(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert package_field(["dpkg"], "Version") is None
    assert missing_packages(["dpkg"]) == ["dpkg"]
