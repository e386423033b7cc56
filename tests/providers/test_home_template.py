"""The home template starts where OSWorld's VM starts wherever OSWorld's tasks read the state:
VLC is not the default video player yet (but opens an .mp4), and GNOME keys have the VM's values."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from desktop_env.providers.local import home_template

DATABASE = """[MIME Cache]
audio/mpeg=vlc.desktop;
video/mp4=vlc.desktop;
video/x-matroska=vlc.desktop;
video/webm=chromium.desktop;vlc.desktop;
text/html=chromium.desktop;
"""


def test_every_video_type_but_mp4_opens_with_the_stand_in_for_gnome_videos(tmp_path):
    (tmp_path / "mimeinfo.cache").write_text(DATABASE)
    assert home_template.video_defaults(tmp_path / "mimeinfo.cache") == {
        "video/mp4": "vlc.desktop", "video/x-matroska": "chromium.desktop", "video/webm": "chromium.desktop"}
    assert home_template.video_defaults(tmp_path / "missing.cache") == {"video/mp4": "vlc.desktop"}


def test_mimeapps_list_names_one_app_per_type():
    lines = home_template.mimeapps_list().splitlines()
    assert lines[0] == "[Default Applications]"
    types = [line.split("=")[0] for line in lines[1:]]
    assert len(types) == len(set(types))
    assert "video/mp4=vlc.desktop" in lines and "text/html=chromium.desktop" in lines


needs_gsettings = pytest.mark.skipif(
    not (shutil.which("gsettings") and shutil.which("glib-compile-schemas")
         and (home_template.SYSTEM_SCHEMAS / "org.gnome.desktop.screensaver.gschema.xml").exists()),
    reason="gsettings, glib-compile-schemas or GNOME's schemas are not installed")


@needs_gsettings
def test_the_vms_gnome_values_are_the_defaults_gsettings_reads_in_the_home(tmp_path):
    home_template.compile_vm_gsettings(tmp_path)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "XDG_DATA_HOME": str(tmp_path / ".local" / "share"), "GSETTINGS_BACKEND": "memory"}

    def get(schema: str, key: str) -> str:
        return subprocess.run(["gsettings", "get", schema, key], env=env, capture_output=True, text=True,
                              check=True).stdout.strip()

    assert get("org.gnome.desktop.screensaver", "lock-enabled") == "false"  # GNOME's own default is true
    assert get("org.gnome.desktop.screensaver", "lock-delay") == "uint32 0"  # the rest of the schema as it was
    assert get("org.gnome.desktop.notifications", "show-banners") == "true"  # other schemas from the system
