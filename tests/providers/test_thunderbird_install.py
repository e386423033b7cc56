"""Thunderbird 115 on the local desktop, host side: how the bullseye packages are laid out as Ubuntu's package
(from small .debs built here as Debian's are laid out, and a small tree as Ubuntu's), what an installed folder must
hold, where desktops see it, which tasks install it, and what is recorded and reported of it.
(Thunderbird inside a desktop: tests/desktop/test_thunderbird_115.py.)"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from desktop_env.providers.local import doctor
from desktop_env.providers.local.boot.sandbox import SANDBOX_THUNDERBIRD, SandboxSpec, bwrap_argv
from desktop_env.providers.local.build import vm_thunderbird
from desktop_env.providers.local.build.aside_packages import DebianPackage
from desktop_env.providers.local.build.vm_thunderbird import THUNDERBIRD_VERSION, ThunderbirdInstallError
from desktop_env.providers.local.desktop_versions import aside_versions
from desktop_env.providers.local.system_root import HOST_SYSTEM, SystemRoot
from tests.providers import aside_folder

THUNDERBIRD = DebianPackage("thunderbird", THUNDERBIRD_VERSION,
                            "4d0cb391c0b85dfd60f13c708975e8c58e54fca118ab915c5c5480cbc36b349c", 59003636)
UBUNTU_LAUNCHER = '#!/bin/sh\nMOZ_LIBDIR=/usr/lib/thunderbird\nEXE=thunderbird\nif false; then\n  :\nelse\n' \
                  '    exec $MOZ_LIBDIR/$EXE "$@"\nfi\n'


def deb(folder: Path, name: str, files: dict[str, str], links: dict[str, str]) -> Path:
    """A .deb of `name` holding `files` (path -> text) and `links` (path -> target)."""
    package = folder / name
    for path, text in files.items():
        (package / path).parent.mkdir(parents=True, exist_ok=True)
        (package / path).write_text(text)
    for path, target in links.items():
        (package / path).parent.mkdir(parents=True, exist_ok=True)
        (package / path).symlink_to(target)
    (package / "DEBIAN").mkdir()
    (package / "DEBIAN" / "control").write_text(f"Package: {name}\nVersion: 1\nArchitecture: amd64\n"
                                                "Maintainer: nobody <nobody@example.org>\nDescription: test\n")
    subprocess.run(["dpkg-deb", "-b", str(package), str(folder / f"{name}.deb")], check=True, capture_output=True)
    return folder / f"{name}.deb"


def debian_debs(folder: Path) -> list[Path]:
    """Laid out as bullseye's: the app's data in /usr/share/thunderbird behind links, the libraries in the
    multiarch folder behind their soname links."""
    app, share = "usr/lib/thunderbird", "usr/share/thunderbird"
    thunderbird = deb(folder, "thunderbird", {
        f"{app}/thunderbird-bin": "ELF", f"{app}/libxul.so": "ELF",
        f"{app}/dependentlibs.list": "libnspr4.so\nlibxul.so\n", f"{app}/application.ini": "[App]\n",
        f"{app}/thunderbird-wrapper-helper.sh": "", f"{share}/omni.ja": "omni",
        f"{share}/chrome/icons/default/default16.png": "png", f"{share}/defaults/pref/vendor.js": "// Debian's\n",
        f"{share}/defaults/pref/channel-prefs.js": "// release\n", "usr/bin/thunderbird": "#!/bin/sh\n"}, {
        f"{app}/thunderbird": "thunderbird-bin", f"{app}/omni.ja": "../../share/thunderbird/omni.ja",
        f"{app}/chrome": "../../share/thunderbird/chrome", f"{app}/defaults": "../../share/thunderbird/defaults",
        f"{app}/dictionaries": "../../share/hunspell", f"{share}/defaults/syspref": "/etc/thunderbird/pref"})
    libraries = [deb(folder, package, {f"usr/lib/x86_64-linux-gnu/{soname}.1.0": package},
                     {f"usr/lib/x86_64-linux-gnu/{soname}": f"{soname}.1.0"})
                 for package, soname in vm_thunderbird.LIBRARIES.items()]
    return [thunderbird, *libraries]


def ubuntu_tree(folder: Path) -> SystemRoot:
    """The userland's Thunderbird 140 as Ubuntu's package lays it out, with the parts the build takes from it."""
    app = folder / "root" / "usr/lib/thunderbird"
    (app / "defaults/pref").mkdir(parents=True)
    (app / "thunderbird.sh").write_text(UBUNTU_LAUNCHER)
    (app / "thunderbird.sh").chmod(0o755)
    (app / "defaults/pref/vendor.js").write_text('pref("mail.shell.checkDefaultMail", false);\n')
    (app / "defaults/pref/syspref.js").symlink_to("/etc/thunderbird/syspref.js")
    (app / "distribution/searchplugins/common").mkdir(parents=True)
    (app / "distribution/extensions").symlink_to("../../thunderbird-addons/distribution/extensions")
    for name in ("extensions", "plugins", "searchplugins"):
        (app / name).symlink_to(f"../thunderbird-addons/{name}")
    return SystemRoot(folder / "root", "ubuntu-22.04")


@pytest.fixture
def assembled(tmp_path) -> Path:
    unpacked = tmp_path / "unpacked"
    unpacked.mkdir()
    for package in debian_debs(tmp_path / "debs"):
        vm_thunderbird._run("unpack", ["dpkg-deb", "-x", str(package), str(unpacked)], unpacked)
    staging = tmp_path / "staging"
    staging.mkdir()
    vm_thunderbird.assemble(unpacked, ubuntu_tree(tmp_path / "tree"), staging)
    return staging / vm_thunderbird.APP_DIR


def test_the_folder_is_complete_in_itself_without_links_into_usr_share(assembled):
    assert (assembled / "omni.ja").read_text() == "omni" and not (assembled / "omni.ja").is_symlink()
    assert (assembled / "chrome/icons/default/default16.png").is_file() and not (assembled / "chrome").is_symlink()
    assert (assembled / "defaults/pref/channel-prefs.js").read_text() == "// release\n"
    assert os.readlink(assembled / "dictionaries") == "../../share/hunspell"  # the tree's dictionaries
    assert os.readlink(assembled / "thunderbird") == "thunderbird-bin"


def test_ubuntus_launcher_prefs_and_add_on_folders_replace_debians(assembled):
    assert (assembled / "defaults/pref/vendor.js").read_text() == 'pref("mail.shell.checkDefaultMail", false);\n'
    assert os.readlink(assembled / "defaults/pref/syspref.js") == "/etc/thunderbird/syspref.js"
    assert os.readlink(assembled / "distribution/extensions") == "../../thunderbird-addons/distribution/extensions"
    assert os.readlink(assembled / "plugins") == "../thunderbird-addons/plugins"
    assert not (assembled / "thunderbird-wrapper-helper.sh").exists()
    assert not (assembled / "defaults/syspref").is_symlink()  # Debian's /etc/thunderbird/pref


def test_the_launcher_gives_the_windows_the_class_the_tasks_close_them_by(assembled):
    launcher = (assembled / "thunderbird.sh").read_text()
    assert '    exec $MOZ_LIBDIR/$EXE --class thunderbird "$@"\n' in launcher
    assert os.access(assembled / "thunderbird.sh", os.X_OK)


def test_the_bullseye_libraries_sit_beside_libxul_and_are_loaded_first(assembled):
    for package, soname in vm_thunderbird.LIBRARIES.items():
        assert (assembled / soname).read_text() == package and not (assembled / soname).is_symlink()
    assert (assembled / "dependentlibs.list").read_text().split() == [
        "libffi.so.7", "libdbus-glib-1.so.2", "libotr.so.5", "libnspr4.so", "libxul.so"]


def test_a_launcher_that_is_not_ubuntus_is_refused_by_name(tmp_path):
    unpacked = tmp_path / "unpacked"
    unpacked.mkdir()
    for package in debian_debs(tmp_path / "debs"):
        vm_thunderbird._run("unpack", ["dpkg-deb", "-x", str(package), str(unpacked)], unpacked)
    tree = ubuntu_tree(tmp_path / "tree")
    tree.host_path("/usr/lib/thunderbird/thunderbird.sh").write_text("#!/bin/sh\nexec thunderbird\n")
    (tmp_path / "staging").mkdir()
    with pytest.raises(ThunderbirdInstallError, match="thunderbird.sh has no line 'exec"):
        vm_thunderbird.assemble(unpacked, tree, tmp_path / "staging")


def install(root: Path, packages: list[DebianPackage]) -> Path:
    return aside_folder.install(root, vm_thunderbird.PROGRAM, packages)


def test_a_built_folder_is_installed_thunderbird(share):
    install(vm_thunderbird.thunderbird_dir(), [THUNDERBIRD])
    assert vm_thunderbird.installed_thunderbird() == share / f"thunderbird-115.12.0-r{vm_thunderbird.RECIPE}"


def test_a_folder_without_its_manifest_or_of_another_version_is_not_installed(share):
    install(vm_thunderbird.thunderbird_dir(), [DebianPackage("thunderbird", "1:140.14.0esr-1~deb11u1", "0" * 64, 1)])
    assert vm_thunderbird.installed_thunderbird() is None
    (vm_thunderbird.thunderbird_dir() / "packages.txt").unlink()
    assert vm_thunderbird.installed_thunderbird() is None


def spec(tmp_path: Path, system: SystemRoot, root_inside: bool) -> SandboxSpec:
    return SandboxSpec(env_dir=tmp_path, src_dir=tmp_path / "src", venv_dir=tmp_path / "venv",
                       desktop_dir=tmp_path / "desktop", thunderbird_dir=tmp_path / "tb", system=system,
                       userns_fd=7 if root_inside else None)


def binds(argv: list[str]) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, a in enumerate(argv) if a == "--ro-bind"]


def test_it_is_mounted_over_the_trees_usr_lib_thunderbird_after_usr(tmp_path):
    argv = bwrap_argv(spec(tmp_path, ubuntu_tree(tmp_path / "tree"), root_inside=False), ["true"])
    mounts = binds(argv)
    assert (str(tmp_path / "tb"), "/usr/lib/thunderbird") in mounts
    assert mounts.index((str(tmp_path / "tb"), "/usr/lib/thunderbird")) > [m[1] for m in mounts].index("/usr")


def test_a_desktop_with_a_root_gets_it_where_its_init_moves_it_from(tmp_path):
    argv = bwrap_argv(spec(tmp_path, ubuntu_tree(tmp_path / "tree"), root_inside=True), ["true"])
    assert (str(tmp_path / "tb"), SANDBOX_THUNDERBIRD) in binds(argv)
    assert "/usr/lib/thunderbird" not in [target for _, target in binds(argv)]


def test_a_system_without_thunderbird_mounts_nothing_for_it(tmp_path):
    (tmp_path / "bare" / "usr").mkdir(parents=True)
    argv = bwrap_argv(spec(tmp_path, SystemRoot(tmp_path / "bare", "ubuntu-22.04"), root_inside=False), ["true"])
    assert str(tmp_path / "tb") not in argv


@pytest.mark.parametrize("task", [
    {"related_apps": ["thunderbird"]},
    {"snapshot": "thunderbird"},
    {"related_apps": ["os"], "config": [{"type": "launch", "parameters": {"command": ["/usr/bin/thunderbird"]}}]},
])
def test_a_task_that_uses_thunderbird_needs_it(task):
    assert vm_thunderbird.needs_thunderbird(task)


def test_tasks_without_thunderbird_install_nothing(monkeypatch, share):
    monkeypatch.setattr(vm_thunderbird, "ensure_thunderbird", lambda progress=None: pytest.fail("installed it"))
    assert vm_thunderbird.ensure_thunderbird_for([{"related_apps": ["chrome"], "config": [
        {"type": "launch", "parameters": {"command": ["google-chrome"]}}]}]) is None


def test_without_the_userland_the_build_says_what_to_build_and_builds_nothing(monkeypatch, share):
    monkeypatch.setattr(vm_thunderbird, "installed_userland_system", lambda: None)
    if vm_thunderbird.build_blocker() is not None and "userland" not in vm_thunderbird.build_blocker():
        pytest.skip(f"this machine cannot fetch it anyway: {vm_thunderbird.build_blocker()}")
    with pytest.raises(ThunderbirdInstallError, match="osworld env setup --ubuntu-userland"):
        vm_thunderbird.ensure_thunderbird(progress=lambda line: pytest.fail(f"started building: {line}"))
    assert list(share.iterdir()) == []


def test_a_tree_desktop_records_115_and_the_hosts_records_its_own(share, tmp_path):
    tree = ubuntu_tree(tmp_path / "tree")
    assert "thunderbird" not in aside_versions(tree)
    install(vm_thunderbird.thunderbird_dir(), [THUNDERBIRD])
    assert aside_versions(tree)["thunderbird"] == "1:115.12.0-1~deb11u1"
    assert "thunderbird" not in aside_versions(HOST_SYSTEM)


def test_doctor_says_which_thunderbird_tree_desktops_get(share):
    check = doctor.check_thunderbird()
    assert not check.ok and not check.required and "run its Thunderbird 140" in check.detail
    install(vm_thunderbird.thunderbird_dir(), [THUNDERBIRD])
    check = doctor.check_thunderbird()
    assert check.ok and "run Thunderbird 115.12.0" in check.detail
