"""What a run records of the local desktops (desktop_versions.py): the VM's apps as the system the desktops boot
from has them, read from that system's dpkg status file (the host's, or a tree's, read without running its
dpkg), Chromium 120 and code-server where they are set aside, and which system it is; the verdict names that
system and quotes its own parity. The trees and builds here are small folders laid out as a build leaves them
(the share fixture keeps them out of the machine's own); nothing is built or started."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from desktop_env.debian_packages import DPKG_STATUS, package_field
from desktop_env.providers import desktop_versions_for
from desktop_env.providers.local.build import vm_chromium, vscode
from desktop_env.providers.local.build.aside_packages import MANIFEST
from desktop_env.providers.local.build.prepare import SYSTEM_VARIABLE
from desktop_env.providers.local.build.ubuntu_userland import USERLAND_NAME
from desktop_env.providers.local.desktop_versions import SYSTEM_APPS, desktop_versions
from desktop_env.providers.local.system_root import HOST_SYSTEM, SystemRoot
from osworld_harness.results.comparability import PARITY_FILE, desktop_info

TREE = "ubuntu-22.04-0123456789abcdef"
TREE_STATUS = """Package: bash
Status: install ok installed
Architecture: amd64
Version: 5.1-6ubuntu1.1

Package: gimp
Status: install ok installed
Architecture: amd64
Version: 2.10.30-1ubuntu0.1

Package: gnome-shell
Status: install ok installed
Architecture: amd64
Version: 42.9-0ubuntu2.4

Package: libreoffice-core
Status: install ok installed
Architecture: amd64
Version: 1:7.3.7-0ubuntu0.22.04.13

Package: thunderbird
Status: deinstall ok config-files
Architecture: amd64
Version: 1:115.10.1+build1-0ubuntu0.22.04.1

Package: vlc
Status: install ok installed
Architecture: amd64
Version: 3.0.16-1build7
"""
TREE_APPS = {"gimp": "2.10.30-1ubuntu0.1", "gnome-shell": "42.9-0ubuntu2.4",
             "libreoffice-core": "1:7.3.7-0ubuntu0.22.04.13", "vlc": "3.0.16-1build7"}


def lay_out_tree(folder: Path, status: str = TREE_STATUS) -> SystemRoot:
    root = folder / TREE / "root"
    (root / DPKG_STATUS).parent.mkdir(parents=True)
    (root / DPKG_STATUS).write_text(status)
    return SystemRoot(root, USERLAND_NAME)


def tree_parity() -> dict:
    return json.loads(PARITY_FILE.read_text())["local"]["systems"][USERLAND_NAME]["measurements"][-1]


def test_a_tree_desktop_records_the_trees_packages_and_the_verdict_names_the_tree_and_quotes_its_parity(share):
    system = lay_out_tree(share / "trees")
    versions = desktop_versions(system)
    assert versions.apps == TREE_APPS  # Thunderbird's configuration files alone are no Thunderbird; no Chromium
    assert versions.system == {"name": USERLAND_NAME, "tree": TREE, "root": str(system.path)}
    info = desktop_info({"provider": "local"}, {"apps": versions.apps, "desktop_system": versions.system})
    figure = tree_parity()  # the newest of the tree's replays (docs/MEASURED.md)
    assert figure["vm_successes"] == 75 and figure["measured"] == "2026-12-02"
    assert info.label() == (f"local desktop (Ubuntu 22.04's own packages (userland {TREE}); "
                            f"VM replay parity {figure['score_1_here']} of 75)")
    assert info.lines()[1] == ("  apps: gimp 2.10.30-1ubuntu0.1, gnome-shell 42.9-0ubuntu2.4, "
                               "libreoffice-core 1:7.3.7-0ubuntu0.22.04.13, vlc 3.0.16-1build7")
    calc = figure["by_domain"]["libreoffice_calc"]
    assert f"libreoffice_calc {calc['score_1_here']} of 10" in info.lines()[2] and "2026-12-02" in info.notes()[0]


def test_chromium_120_and_code_server_set_aside_are_recorded_over_the_systems(share):
    system = lay_out_tree(share / "trees", TREE_STATUS + """
Package: chromium
Status: install ok installed
Architecture: amd64
Version: 1:85.0.4183.83-0ubuntu2.22.04.1
""")
    assert desktop_versions(system).apps["chromium"] == "1:85.0.4183.83-0ubuntu2.22.04.1"
    chromium = vm_chromium.chromium_dir()
    (chromium / vm_chromium.BROWSER).parent.mkdir(parents=True)
    (chromium / vm_chromium.BROWSER).write_text("")
    (chromium / MANIFEST).write_text(f"chromium {vm_chromium.CHROMIUM_VERSION} 0000\n")
    entry = vscode.code_server_entry(vscode.vscode_dir())
    entry.parent.mkdir(parents=True)
    entry.write_text("")
    assert desktop_versions(system).apps == {**TREE_APPS, "chromium": vm_chromium.CHROMIUM_VERSION,
                                             "code-server": vscode.CODE_SERVER_VERSION}


@pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="needs Debian's dpkg-query")
def test_the_host_desktop_records_the_hosts_installed_packages(share, monkeypatch):
    monkeypatch.setenv(SYSTEM_VARIABLE, "host")
    status, version = package_field(SYSTEM_APPS, "Status") or {}, package_field(SYSTEM_APPS, "Version") or {}
    installed = {name: version[name] for name in SYSTEM_APPS if status.get(name, "").endswith(" ok installed")}
    assert desktop_versions(HOST_SYSTEM).apps == installed
    recorded = desktop_versions_for("local")
    assert (recorded.apps, recorded.system) == (installed, {"name": "host"})


def test_a_tree_asked_for_and_not_built_records_its_name_and_no_system_packages(share, monkeypatch):
    monkeypatch.setenv(SYSTEM_VARIABLE, USERLAND_NAME)
    versions = desktop_versions()
    assert (versions.apps, versions.system) == ({}, {"name": USERLAND_NAME})
    info = desktop_info({"provider": "local"}, {"apps": versions.apps, "desktop_system": versions.system})
    assert info.label() == ("local desktop (Ubuntu 22.04's own packages; "
                            f"VM replay parity {tree_parity()['score_1_here']} of 75)")


def test_a_vm_provider_records_no_apps():
    assert desktop_versions_for("vmware").apps == {} and desktop_versions_for("vmware").system == {}
