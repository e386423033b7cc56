"""Chromium 120 on the local desktop, host side: reading bullseye's index, what an installed folder must
hold, where desktops see it, which tasks install it, and what an install that cannot be done says.
(The browser inside a desktop: tests/desktop/test_chrome_vm_clicks.py.)"""
from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from desktop_env.providers.local import doctor
from desktop_env.providers.local.boot.sandbox import SANDBOX_CHROMIUM, SandboxSpec, bwrap_argv
from desktop_env.providers.local.build import vm_chromium
from desktop_env.providers.local.build.aside_packages import DebianPackage, drop_special_bits
from desktop_env.providers.local.build.aside_packages import parse_index_record as parse_any_index_record
from desktop_env.providers.local.build.vm_chromium import CHROMIUM_VERSION, ChromiumInstallError
from tests.providers import aside_folder


def parse_index_record(spec: str, text: str) -> DebianPackage:
    return parse_any_index_record(spec, text, "bullseye", ChromiumInstallError)


# `apt-cache show --no-all-versions chromium=120.0.6099.224-1~deb11u1` against bullseye-security, cut short.
CHROMIUM_RECORD = """\
Package: chromium
Version: 120.0.6099.224-1~deb11u1
Installed-Size: 236042
Maintainer: Debian Chromium Team <chromium@packages.debian.org>
Architecture: amd64
Depends: libasound2 (>= 1.0.17), libatk-bridge2.0-0 (>= 2.5.3), chromium-common (= 120.0.6099.224-1~deb11u1)
Description-en: web browser
 Web browser that aims to build a safer, faster, and more stable internet
 browsing experience.
 Size: 1 (a continuation line that looks like a field)
Description-md5: 5b3ec7e1e8a8d4d7e6f4c7b3f2a6f0a1
Section: web
Filename: pool/updates/main/c/chromium/chromium_120.0.6099.224-1~deb11u1_amd64.deb
Size: 68409116
SHA256: a65561253eea1db4b6c06cf829aca2c0ed4a0c23b3ffc1e7502bb1e008d14b62
"""

CHROMIUM = DebianPackage("chromium", CHROMIUM_VERSION,
                         "a65561253eea1db4b6c06cf829aca2c0ed4a0c23b3ffc1e7502bb1e008d14b62", 68409116)
LIBJSONCPP = DebianPackage("libjsoncpp24", "1.9.4-4",
                           "4e43501e9f43f9c8b28ae1480dec83b6f8ffb565acfdab2016e649caf6b9fe5a", 78256)


def test_an_index_record_gives_the_package_its_version_checksum_and_size():
    assert parse_index_record("chromium=" + CHROMIUM_VERSION, CHROMIUM_RECORD) == CHROMIUM


def test_a_record_without_a_checksum_is_refused_by_name():
    record = CHROMIUM_RECORD.replace("SHA256: ", "MD5sum: ")
    with pytest.raises(ChromiumInstallError, match="lists chromium=120.0.6099.224-1~deb11u1 without SHA256"):
        parse_index_record("chromium=" + CHROMIUM_VERSION, record)


def test_a_record_whose_size_is_not_a_number_is_refused():
    with pytest.raises(ChromiumInstallError, match="Size '68 MB', not a number"):
        parse_index_record("chromium", CHROMIUM_RECORD.replace("Size: 68409116", "Size: 68 MB"))


def install(root: Path, packages: list[DebianPackage]) -> Path:
    return aside_folder.install(root, vm_chromium.BROWSER, packages)


def test_the_manifest_lists_each_package_on_a_line_and_reads_back(tmp_path):
    root = install(tmp_path / "c", [CHROMIUM, LIBJSONCPP])
    assert (root / "packages.txt").read_text().splitlines() == [
        f"chromium {CHROMIUM_VERSION} {CHROMIUM.sha256}", f"libjsoncpp24 1.9.4-4 {LIBJSONCPP.sha256}"]
    assert vm_chromium.read_manifest(root) == [("chromium", CHROMIUM_VERSION, CHROMIUM.sha256),
                                               ("libjsoncpp24", "1.9.4-4", LIBJSONCPP.sha256)]


def test_a_built_folder_is_installed_chromium(share):
    install(vm_chromium.chromium_dir(), [CHROMIUM, LIBJSONCPP])
    assert vm_chromium.installed_chromium() == share / f"chromium-120.0.6099.224-r{vm_chromium.RECIPE}"


def test_a_folder_without_its_manifest_is_not_installed(share):
    install(vm_chromium.chromium_dir(), [CHROMIUM]).joinpath("packages.txt").unlink()
    assert vm_chromium.installed_chromium() is None


def test_a_folder_whose_manifest_names_another_chromium_is_not_installed(share):
    install(vm_chromium.chromium_dir(), [DebianPackage("chromium", "119.0.6045.199-1~deb11u1", "0" * 64, 1)])
    assert vm_chromium.installed_chromium() is None


def test_nothing_built_is_not_installed(share):
    assert vm_chromium.installed_chromium() is None


def test_an_installed_chromium_is_mounted_read_only_where_the_shim_looks(tmp_path):
    spec = SandboxSpec(env_dir=tmp_path, src_dir=tmp_path / "src", venv_dir=tmp_path / "venv",
                       desktop_dir=tmp_path / "desktop", chromium_dir=tmp_path / "chromium")
    argv = bwrap_argv(spec, ["true"])
    binds = [(argv[i + 1], argv[i + 2]) for i, a in enumerate(argv) if a == "--ro-bind"]
    assert (str(tmp_path / "chromium"), SANDBOX_CHROMIUM) in binds
    shim = (Path(vm_chromium.__file__).parents[3] / "server" / "shims" / "google-chrome").read_text()
    assert f'vm_chromium={SANDBOX_CHROMIUM}\n' in shim and f'"$vm_chromium/{vm_chromium.BROWSER}"' in shim


@pytest.mark.parametrize("task", [
    {"related_apps": ["chrome"]},
    {"snapshot": "chrome"},
    {"related_apps": ["os"], "config": [{"type": "launch", "parameters": {
        "command": ["google-chrome", "--remote-debugging-port=1337"]}}]},
    {"related_apps": ["vscode"]},  # VS Code's window is a Chromium app window
])
def test_a_task_that_uses_chrome_or_vs_code_needs_it(task):
    assert vm_chromium.needs_chrome(task)


def test_tasks_without_chrome_install_nothing(monkeypatch, share):
    monkeypatch.setattr(vm_chromium, "ensure_chromium", lambda progress=None: pytest.fail("installed Chromium"))
    assert vm_chromium.ensure_chromium_for([{"related_apps": ["gimp"], "config": [
        {"type": "launch", "parameters": {"command": ["gimp"]}}]}]) is None


def test_without_the_archive_keyring_the_install_says_what_to_install_and_builds_nothing(monkeypatch, share):
    monkeypatch.setattr(vm_chromium, "KEYRING", share / "no-keyring.gpg")
    with pytest.raises(ChromiumInstallError, match="apt-get install debian-archive-keyring"):
        vm_chromium.ensure_chromium(progress=lambda line: pytest.fail(f"started building: {line}"))
    assert list(share.iterdir()) == []


def test_without_apt_the_blocker_names_the_missing_tools(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert vm_chromium.build_blocker() == ("fetching Chromium 120.0.6099.224 from Debian's archive needs apt-get and "
                                           "apt-cache and dpkg-deb (a Debian host)")


def test_doctor_says_which_chromium_desktops_get(share):
    check = doctor.check_chromium()
    assert not check.ok and not check.required
    assert "desktops run the system's Chromium" in check.detail and check.fix == "osworld env setup"
    install(vm_chromium.chromium_dir(), [CHROMIUM])
    check = doctor.check_chromium()
    assert check.ok and "desktops run Chromium 120.0.6099.224" in check.detail


def test_a_failing_build_step_is_named_with_its_command_and_output(tmp_path):
    with pytest.raises(ChromiumInstallError) as raised:
        vm_chromium._run("fetch bullseye's package index",
                         ["sh", "-c", "echo 'E: The repository is not signed.' >&2; exit 100"], tmp_path)
    message = str(raised.value)
    assert "step 'fetch bullseye's package index'" in message and "exited with 100" in message
    assert "E: The repository is not signed." in message


def test_what_desktops_mount_has_no_setuid_bit_and_is_readable_by_them(tmp_path):
    helper = tmp_path / "usr" / "lib" / "chromium" / "chrome-sandbox"
    helper.parent.mkdir(parents=True)
    helper.write_text("")
    helper.chmod(0o4700)
    data = tmp_path / "usr" / "share" / "data.pak"
    data.parent.mkdir(parents=True)
    data.write_text("")
    data.chmod(0o600)
    drop_special_bits(tmp_path)
    assert stat.S_IMODE(helper.stat().st_mode) == 0o755
    assert stat.S_IMODE(data.stat().st_mode) == 0o644


@pytest.mark.skipif(vm_chromium.installed_chromium() is None, reason="Chromium 120 is not installed here")
def test_the_installed_browser_runs_on_this_systems_libraries_and_says_120():
    root = vm_chromium.installed_chromium()
    assert root is not None
    done = subprocess.run([str(root / vm_chromium.BROWSER), "--version"], capture_output=True, text=True,
                          env={**os.environ, "LD_LIBRARY_PATH": str(root / vm_chromium.LIBRARIES)}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Chromium 120.0.6099.224")
