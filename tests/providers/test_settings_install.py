"""GNOME Settings 41, Ubuntu 22.04's (vm_settings.py): when a folder counts as installed, the archive key it
trusts, its own compiled schemas, where desktops see it and what doctor says. (Inside a desktop:
tests/desktop/test_vm_shell.py and tests/desktop/test_gnome_apps.py.)"""
from __future__ import annotations

import http.server
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_env.providers.local import doctor
from desktop_env.providers.local.boot.sandbox import SANDBOX_SETTINGS, SandboxSpec, bwrap_argv
from desktop_env.providers.local.build import vm_settings
from desktop_env.providers.local.build.aside_packages import DebianPackage, read_manifest, sha256_file
from desktop_env.providers.local.build.desktop_view import vm_gsettings
from tests.providers import aside_folder

SETTINGS_41 = DebianPackage("gnome-control-center", "1:41.7-0ubuntu0.22.04.9", "1" * 64, 1785422)
SETTINGS_43 = DebianPackage("gnome-control-center", "1:43.6-2", "2" * 64, 1)
SYSTEM_SCHEMAS = Path("/usr/share/glib-2.0/schemas")


def install(root: Path, packages: list[DebianPackage]) -> Path:
    return aside_folder.install(root, vm_settings.PROGRAM, packages)


def test_a_built_folder_of_settings_41_is_installed(share):
    install(vm_settings.settings_dir(), [SETTINGS_41])
    assert vm_settings.installed_settings() == share / "gnome-control-center-41-r1"


def test_a_folder_whose_manifest_names_settings_43_is_not_installed(share):
    install(vm_settings.settings_dir(), [SETTINGS_43])
    assert vm_settings.installed_settings() is None


def test_nothing_built_is_not_installed(share):
    assert vm_settings.installed_settings() is None


def test_an_installed_settings_is_mounted_read_only_where_the_shim_looks(tmp_path):
    spec = SandboxSpec(env_dir=tmp_path, src_dir=tmp_path / "src", venv_dir=tmp_path / "venv",
                       desktop_dir=tmp_path / "desktop", settings_dir=tmp_path / "settings")
    argv = bwrap_argv(spec, ["true"])
    at = argv.index(str(tmp_path / "settings"))
    assert argv[at - 1:at + 2] == ["--ro-bind", str(tmp_path / "settings"), SANDBOX_SETTINGS]
    shim = (Path(vm_settings.__file__).parents[3] / "server" / "shims" / "gnome-control-center").read_text()
    assert f"vm_settings=${{OSWORLD_VM_SETTINGS_DIR:-{SANDBOX_SETTINGS}}}" in shim
    assert f'"$vm_settings/{vm_settings.PROGRAM}"' in shim


def test_without_settings_41_no_folder_is_mounted(tmp_path):
    spec = SandboxSpec(env_dir=tmp_path, src_dir=tmp_path / "src", venv_dir=tmp_path / "venv",
                       desktop_dir=tmp_path / "desktop")
    assert SANDBOX_SETTINGS not in bwrap_argv(spec, ["true"])


@pytest.fixture
def keyring_server(tmp_path) -> Iterator[tuple[str, Path]]:
    """A local HTTP server with a real .deb laid out as ubuntu-keyring's, holding a key file that is
    not Ubuntu's; yields its URL and the key file."""
    package = tmp_path / "pkg"
    key = package / vm_settings.KEYRING_MEMBER
    key.parent.mkdir(parents=True)
    key.write_bytes(b"not Ubuntu's archive key\n")
    (package / "DEBIAN").mkdir()
    (package / "DEBIAN" / "control").write_text("Package: ubuntu-keyring\nVersion: 2021.03.26\nArchitecture: all\n"
                                                "Maintainer: nobody <nobody@example.org>\nDescription: test\n")
    served = tmp_path / "served"
    served.mkdir()
    subprocess.run(["dpkg-deb", "-b", str(package), str(served / "ubuntu-keyring.deb")], check=True,
                   capture_output=True)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(served), **kwargs)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/ubuntu-keyring.deb", key
    server.shutdown()


def test_a_keyring_package_whose_key_is_not_ubuntus_is_refused(keyring_server, monkeypatch, tmp_path):
    url, _ = keyring_server
    monkeypatch.setattr(vm_settings, "KEYRING_DEB", url)
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(vm_settings.SettingsInstallError, match="refusing to trust it"):
        vm_settings.fetch_keyring(work)


def test_the_key_whose_checksum_is_pinned_is_the_one_apt_is_given(keyring_server, monkeypatch, tmp_path):
    url, key = keyring_server
    monkeypatch.setattr(vm_settings, "KEYRING_DEB", url)
    monkeypatch.setattr(vm_settings, "KEYRING_SHA256", sha256_file(key))
    work = tmp_path / "work"
    work.mkdir()
    trusted = vm_settings.fetch_keyring(work)
    assert trusted.read_bytes() == key.read_bytes() and trusted.is_relative_to(work)


def test_an_unreachable_archive_is_an_install_error_naming_the_url(monkeypatch, tmp_path):
    monkeypatch.setattr(vm_settings, "KEYRING_DEB", "http://127.0.0.1:9/ubuntu-keyring.deb")
    with pytest.raises(vm_settings.SettingsInstallError, match="fetch Ubuntu's archive key.*127.0.0.1:9"):
        vm_settings.fetch_keyring(tmp_path)


def ubuntu_schemas(root: Path) -> None:
    """22.04's two schemas as the build unpacks them: the screensaver one with Ubuntu's extra key, and
    Settings 41's own, whose id Debian 12 no longer has."""
    schemas = root / vm_settings.SCHEMAS
    schemas.mkdir(parents=True)
    screensaver = (SYSTEM_SCHEMAS / "org.gnome.desktop.screensaver.gschema.xml").read_text()
    (schemas / "org.gnome.desktop.screensaver.gschema.xml").write_text(screensaver.replace(
        '<key name="lock-enabled"',
        '<key name="ubuntu-lock-on-suspend" type="b"><default>true</default></key>\n    <key name="lock-enabled"', 1))
    (schemas / "org.gnome.ControlCenter.gschema.xml").write_text(
        '<schemalist><schema id="org.gnome.ControlCenter" path="/org/gnome/control-center/">'
        '<key name="last-panel" type="s"><default>""</default></key></schema></schemalist>')


def gsettings(root: Path, *args: str) -> str:
    return subprocess.run(["gsettings", "--schemadir", str(root / vm_settings.SCHEMAS), *args], check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.mark.skipif(shutil.which("gsettings") is None or not SYSTEM_SCHEMAS.is_dir(), reason="no GSettings here")
def test_settings_own_schemas_have_ubuntus_keys_and_the_vms_values(tmp_path):
    ubuntu_schemas(tmp_path)
    vm_settings.compile_settings_schemas(tmp_path)
    assert "ubuntu-lock-on-suspend" in gsettings(tmp_path, "list-keys", "org.gnome.desktop.screensaver").split()
    assert gsettings(tmp_path, "list-keys", "org.gnome.ControlCenter") == "last-panel"
    assert gsettings(tmp_path, "get", "org.gnome.desktop.interface", "gtk-theme") == \
        vm_settings_value("org.gnome.desktop.interface", "gtk-theme")
    assert (tmp_path / vm_settings.SCHEMAS_STAMP).read_text() == vm_settings.schemas_stamp()


def vm_settings_value(schema: str, key: str) -> str:
    return vm_gsettings()[schema][key]


@pytest.mark.skipif(shutil.which("gsettings") is None or not SYSTEM_SCHEMAS.is_dir(), reason="no GSettings here")
def test_an_installed_folder_whose_schemas_are_stale_gets_them_compiled_again_not_rebuilt(share, monkeypatch):
    root = install(vm_settings.settings_dir(), [SETTINGS_41])
    ubuntu_schemas(root)
    (root / vm_settings.SCHEMAS_STAMP).write_text("made from other values")
    monkeypatch.setattr(vm_settings, "_build", lambda staging, progress: pytest.fail("rebuilt Settings 41"))
    assert vm_settings.ensure_settings(progress=lambda line: None) == root
    assert (root / vm_settings.SCHEMAS_STAMP).read_text() == vm_settings.schemas_stamp()
    assert (root / vm_settings.SCHEMAS / "gschemas.compiled").is_file()


def test_doctor_says_which_settings_desktops_get(share):
    check = doctor.check_settings()
    assert not check.ok and not check.required and "desktops run the system's Settings" in check.detail
    install(vm_settings.settings_dir(), [SETTINGS_41])
    check = doctor.check_settings()
    assert check.ok and "desktops run GNOME Settings 41 (Ubuntu 22.04's" in check.detail


@pytest.mark.skipif(vm_settings.installed_settings() is None, reason="GNOME Settings 41 is not installed here")
def test_the_installed_settings_links_everything_on_this_system_and_no_libsoup_2():
    root = vm_settings.installed_settings()
    assert root is not None
    vm_settings.check_links(root)
    assert [name for name, *_ in read_manifest(root)][0] == "gnome-control-center"


def test_a_failed_fetch_is_remembered_so_each_run_does_not_wait_on_it_again(share, monkeypatch):
    attempts = []

    def unreachable(staging, progress):
        attempts.append(staging)
        raise vm_settings.SettingsInstallError("installing GNOME Settings 41, step 'fetch': no route to host")

    monkeypatch.setattr(vm_settings, "_build", unreachable)
    monkeypatch.setattr(vm_settings, "build_blocker", lambda: None)
    for _ in range(2):
        with pytest.raises(vm_settings.SettingsInstallError, match="no route to host"):
            vm_settings.ensure_settings(progress=lambda line: None)
    assert len(attempts) == 1
    with pytest.raises(vm_settings.SettingsInstallError, match="no route to host"):
        vm_settings.ensure_settings(progress=lambda line: None, retry=True)  # osworld env setup
    assert len(attempts) == 2
