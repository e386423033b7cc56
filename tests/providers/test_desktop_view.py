"""The desktop's XDG view: the VM's apps, services, defaults and settings whatever else the
host has installed (built from a copy of the host's /usr/share with extra packages in it)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from desktop_env.providers.local.build import desktop_view, vm_desktop

SYSTEM_SCHEMAS = Path("/usr/share/glib-2.0/schemas")
needs_gnome = pytest.mark.skipif(
    not (shutil.which("glib-compile-schemas") and shutil.which("gsettings")
         and (SYSTEM_SCHEMAS / "org.gnome.shell.extensions.dash-to-dock.gschema.xml").exists()),
    reason="GNOME's schemas (system_packages.txt) or glib's tools are not installed")

EXTRA_APP = """[Desktop Entry]
Type=Application
Name=Host Only Editor
Exec=host-only-editor %F
MimeType=text/plain;video/mp4;
"""
INDEXER_SERVICE = "[D-BUS Service]\nName=org.freedesktop.Tracker3.Miner.Files\nExec=/usr/libexec/tracker-miner-fs-3\n"
INDEXER_AUTOSTART = "[Desktop Entry]\nType=Application\nName=Tracker\nExec=/usr/libexec/tracker-miner-fs-3\n"


@pytest.fixture
def host_with_extras(tmp_path, monkeypatch):
    """A host /usr/share and /etc/xdg: the real ones, plus an app, a D-Bus service, a Shell
    extension and an autostart entry that OSWorld's VM does not have."""
    share, xdg = tmp_path / "usr-share", tmp_path / "etc-xdg"
    for fake, real, extended in ((share, Path("/usr/share"), ("applications", "dbus-1", "gnome-shell")),
                                 (xdg, Path("/etc/xdg"), ("autostart",))):
        fake.mkdir()
        for entry in os.listdir(real):
            if entry not in extended:
                (fake / entry).symlink_to(real / entry)
        for name in extended:
            if (real / name).is_dir():
                shutil.copytree(real / name, fake / name, symlinks=True)
            else:
                (fake / name).mkdir()
    (share / "applications" / "host-only-editor.desktop").write_text(EXTRA_APP)
    (share / "dbus-1" / "services").mkdir(parents=True, exist_ok=True)
    (share / "dbus-1" / "services" / "org.freedesktop.Tracker3.Miner.Files.service").write_text(INDEXER_SERVICE)
    (share / "gnome-shell" / "extensions" / "host-only@example.org").mkdir(parents=True)
    (xdg / "autostart" / "tracker-miner-fs-3.desktop").write_text(INDEXER_AUTOSTART)
    monkeypatch.setattr(desktop_view, "SYSTEM_SHARE", share)
    monkeypatch.setattr(desktop_view, "SYSTEM_XDG", xdg)
    return share, xdg


@needs_gnome
def test_what_else_the_host_installed_stays_out_of_the_desktop(host_with_extras, tmp_path):
    view = tmp_path / "view"
    view.mkdir()
    desktop_view.fill_view(view)
    apps = sorted(os.listdir(view / "share" / "applications"))
    assert "host-only-editor.desktop" not in apps
    assert all(vm_desktop.app_entry_allowed(app) for app in apps if app.endswith(".desktop"))
    assert "google-chrome.desktop" in apps and "org.gnome.Nautilus.desktop" in apps
    assert not any("Tracker" in name for name in os.listdir(view / "share" / "dbus-1" / "services"))
    assert "org.gnome.Terminal.service" in os.listdir(view / "share" / "dbus-1" / "services")
    assert sorted(os.listdir(view / "share" / "gnome-shell" / "extensions")) == sorted(vm_desktop.EXTENSIONS)
    assert os.listdir(view / "xdg" / "autostart") == []
    mimeapps = (view / "share" / "applications" / "mimeapps.list").read_text()
    assert "text/plain=org.gnome.gedit.desktop" in mimeapps and "video/mp4=org.gnome.Totem.desktop" in mimeapps
    assert "Name=Thunderbird Mail\n" in (view / "share" / "applications" / "thunderbird.desktop").read_text()
    # everything else of /usr/share is there, as links
    assert os.readlink(view / "share" / "icons") == str(host_with_extras[0] / "icons")


def test_every_video_type_gnome_videos_declares_opens_in_it_and_one_app_per_type(tmp_path):
    (tmp_path / vm_desktop.MEDIA_PLAYER).write_text(
        "[Desktop Entry]\nName=Videos\nMimeType=video/mp4;video/webm;audio/ogg;application/ogg;\n")
    lines = desktop_view.mimeapps_list(tmp_path).splitlines()
    assert lines[0] == "[Default Applications]"
    types = [line.split("=")[0] for line in lines[1:]]
    assert len(types) == len(set(types))
    for mime in ("video/mp4", "video/webm", "audio/ogg"):
        assert f"{mime}={vm_desktop.MEDIA_PLAYER}" in lines
    assert "application/ogg" not in types and "text/html=google-chrome.desktop" in lines


@needs_gnome
def test_the_vms_gnome_values_are_the_defaults_gsettings_reads(tmp_path):
    desktop_view.compile_schemas(tmp_path / "glib-2.0" / "schemas")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "XDG_DATA_DIRS": str(tmp_path), "GSETTINGS_BACKEND": "memory"}

    def get(schema: str, key: str) -> str:
        return subprocess.run(["gsettings", "get", schema, key], env=env, capture_output=True, text=True,
                              check=True).stdout.strip()

    assert get("org.gnome.desktop.screensaver", "lock-enabled") == "false"  # GNOME's own default is true
    assert get("org.gnome.desktop.screensaver", "lock-delay") == "uint32 0"  # the rest of the schema as it was
    assert get("org.gnome.shell", "favorite-apps") == str(list(vm_desktop.FAVORITE_APPS))
    assert get("org.gnome.shell.extensions.dash-to-dock", "dock-position") == "'LEFT'"
    assert get("org.gnome.desktop.interface", "gtk-theme") == "'Yaru'"
    assert get("org.gnome.nautilus.window-state", "maximized") == "true"
    # GTK's own schemas name their ids in single quotes
    assert get("org.gtk.Settings.FileChooser", "sort-directories-first") == "true"


def test_a_vm_setting_for_a_schema_the_host_lacks_names_the_schema(tmp_path):
    (tmp_path / "org.example.gschema.xml").write_text(
        '<schemalist><schema id="org.example" path="/org/example/"></schema></schemalist>')
    with pytest.raises(desktop_view.DesktopViewError, match="org.gnome.shell"):
        desktop_view.compile_schemas(tmp_path / "out", system=tmp_path)


def test_gio_finds_every_app_of_the_view_that_opens_a_type_not_only_the_default(tmp_path):
    (tmp_path / "org.gnome.Totem.desktop").write_text("[Desktop Entry]\nName=Videos\nMimeType=video/mp4;video/ogg;\n")
    (tmp_path / "vlc.desktop").write_text("[Desktop Entry]\nName=VLC media player\nMimeType=video/mp4;audio/ogg;\n")
    (tmp_path / "gimp.desktop").write_text("[Desktop Entry]\nName=GIMP\n")
    assert desktop_view.mimeinfo_cache(tmp_path).splitlines() == [
        "[MIME Cache]", "audio/ogg=vlc.desktop;", "video/mp4=org.gnome.Totem.desktop;vlc.desktop;",
        "video/ogg=org.gnome.Totem.desktop;"]


@needs_gnome
def test_the_view_ships_our_shell_extensions_the_window_places_and_the_sound_servers_script(tmp_path):
    view = tmp_path / "view"
    view.mkdir()
    desktop_view.fill_view(view)
    extensions = view / "share" / "gnome-shell" / "extensions"
    for uuid in vm_desktop.OWN_EXTENSIONS:
        assert (extensions / uuid / "metadata.json").is_file() and not (extensions / uuid).is_symlink()
    places = json.loads((extensions / "vm-window-places@osworld" / "places.json").read_text())
    assert places == {wm_class: list(rect) for wm_class, rect in vm_desktop.WINDOW_PLACES.items()}
    script = (view / "pulse" / "default.pa").read_text().splitlines()
    assert script[0] == ".include /etc/pulse/default.pa"
    assert script[1] == f"set-sink-volume auto_null {round(0x10000 * vm_desktop.INITIAL_VOLUME_PERCENT / 100)}"
    assert "video/mp4=" in (view / "share" / "applications" / "mimeinfo.cache").read_text()
