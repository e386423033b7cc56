"""The home folder every local desktop starts from, built once and cached.

Each reset copies this template into the env's private home, so a task always
begins from the same state: user folders, an XFCE panel that needs no first-run
choice, and LibreOffice and Chromium with their first-run dialogs already dismissed
(an agent should be scored on the task, not on dismissing a wizard).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .paths import build_aside, sandbox_share_dir

# The template's folder is named by this version and a digest of this module's source, so any
# change to what it writes builds a new folder beside the old one (two branches that each bumped
# the version to the same number cannot share a stale template).
TEMPLATE_VERSION = 10

USER_FOLDERS = ("Desktop", "Documents", "Downloads", "Music", "Pictures", "Videos", "Templates", "Public")

XFCONF = ".config/xfce4/xfconf/xfce-perchannel-xml"

PANEL_XML = """<?xml version="1.0" encoding="UTF-8"?>
<channel name="xfce4-panel" version="1.0">
  <property name="configver" type="int" value="2"/>
  <property name="panels" type="array">
    <value type="int" value="1"/>
    <property name="panel-1" type="empty">
      <property name="position" type="string" value="p=6;x=0;y=0"/>
      <property name="length" type="uint" value="100"/>
      <property name="position-locked" type="bool" value="true"/>
      <property name="size" type="uint" value="28"/>
      <property name="icon-size" type="uint" value="16"/>
      <property name="plugin-ids" type="array">
        <value type="int" value="1"/>
        <value type="int" value="2"/>
        <value type="int" value="3"/>
        <value type="int" value="4"/>
      </property>
    </property>
  </property>
  <property name="plugins" type="empty">
    <property name="plugin-1" type="string" value="applicationsmenu">
      <property name="button-title" type="string" value="Applications"/>
      <property name="show-button-title" type="bool" value="true"/>
    </property>
    <property name="plugin-2" type="string" value="tasklist"/>
    <property name="plugin-3" type="string" value="separator">
      <property name="expand" type="bool" value="true"/>
      <property name="style" type="uint" value="0"/>
    </property>
    <property name="plugin-4" type="string" value="clock"/>
  </property>
</channel>
"""

XFWM4_XML = """<?xml version="1.0" encoding="UTF-8"?>
<channel name="xfwm4" version="1.0">
  <property name="general" type="empty">
    <property name="use_compositing" type="bool" value="false"/>
    <property name="workspace_count" type="int" value="1"/>
    <property name="prevent_focus_stealing" type="bool" value="false"/>
    <property name="focus_delay" type="int" value="0"/>
  </property>
</channel>
"""

def _backdrop(monitor: str) -> str:
    # A solid colour: a photo wallpaper costs ~10x the PNG bytes and encode time
    # of every screenshot an agent gets, and carries no task information.
    return f"""      <property name="{monitor}" type="empty">
        <property name="workspace0" type="empty">
          <property name="image-style" type="int" value="0"/>
          <property name="color-style" type="int" value="0"/>
          <property name="rgba1" type="array">
            <value type="double" value="0.176"/>
            <value type="double" value="0.247"/>
            <value type="double" value="0.337"/>
            <value type="double" value="1"/>
          </property>
        </property>
      </property>
"""


DESKTOP_XML = f"""<?xml version="1.0" encoding="UTF-8"?>
<channel name="xfce4-desktop" version="1.0">
  <property name="backdrop" type="empty">
    <property name="screen0" type="empty">
{_backdrop("monitorscreen")}{_backdrop("monitor0")}    </property>
  </property>
  <property name="desktop-icons" type="empty">
    <property name="style" type="int" value="2"/>
    <property name="file-icons" type="empty">
      <property name="show-home" type="bool" value="true"/>
      <property name="show-filesystem" type="bool" value="false"/>
      <property name="show-trash" type="bool" value="true"/>
      <property name="show-removable" type="bool" value="false"/>
    </property>
  </property>
</channel>
"""

# LibreOffice: no first-start wizard, no tip of the day, no "what's new" bar,
# no automatic update checks (the sandbox is offline).
LIBREOFFICE_XCU = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Setup/Office"><prop oor:name="FirstStartWizardCompleted" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Setup/Product"><prop oor:name="ooSetupLastVersion" oor:op="fuse"><value>7.4</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="ShowTipOfTheDay" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Jobs/Jobs/org.openoffice.Office.Jobs:Job['UpdateCheck']/Arguments"><prop oor:name="AutoCheckEnabled" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Recovery/RecoveryInfo"><prop oor:name="Enabled" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
"""

# Only first-run choices: every other value is Chrome's default, as in the VM's profile, since
# getters read this file (a site-setting default here once made "delete site data on close"
# look already set: OSWorld's getter takes any profile.default_content_setting_values for it).
CHROMIUM_PREFERENCES = {
    "browser": {"has_seen_welcome_page": True, "check_default_browser": False},
    "distribution": {"skip_first_run_ui": True, "suppress_first_run_default_browser_prompt": True},
}

USER_DIRS = "".join(f'XDG_{key}_DIR="$HOME/{folder}"\n' for key, folder in (
    ("DESKTOP", "Desktop"), ("DOCUMENTS", "Documents"), ("DOWNLOAD", "Downloads"), ("MUSIC", "Music"),
    ("PICTURES", "Pictures"), ("VIDEOS", "Videos"), ("TEMPLATES", "Templates"), ("PUBLICSHARE", "Public")))


# Which app `xdg-open` (and the file manager) uses per type, as on a configured desktop.
DEFAULT_APPS = {
    "org.xfce.mousepad.desktop": ("text/plain", "text/csv", "text/x-python", "text/markdown", "application/json",
                                  "application/x-shellscript", "text/x-log"),
    "libreoffice-calc.desktop": ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                                 "application/vnd.oasis.opendocument.spreadsheet", "application/vnd.ms-excel"),
    "libreoffice-writer.desktop": ("application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                                   "application/vnd.oasis.opendocument.text", "application/msword", "application/rtf"),
    "libreoffice-impress.desktop": ("application/vnd.openxmlformats-officedocument.presentationml.presentation",
                                    "application/vnd.oasis.opendocument.presentation", "application/vnd.ms-powerpoint"),
    # Videos: see video_defaults().
    "vlc.desktop": ("audio/mpeg", "audio/x-wav", "audio/ogg", "audio/flac"),
    "chromium.desktop": ("text/html", "x-scheme-handler/http", "x-scheme-handler/https", "application/pdf"),
    "gimp.desktop": ("image/png", "image/jpeg", "image/gif", "image/bmp", "image/tiff", "image/webp"),
    "thunderbird.desktop": ("x-scheme-handler/mailto", "message/rfc822"),
}
DESKTOP_DATABASE = Path("/usr/share/applications/mimeinfo.cache")


def video_defaults(database: Path = DESKTOP_DATABASE) -> dict[str, str]:
    """{video type: app} as on OSWorld's VM, where VLC is not the default video player (a task
    asks the agent to make it so) but opens an .mp4 (a task opens one and waits for VLC's
    window). GNOME Videos, the VM's player, is not installed here: Chromium, which plays
    common video formats, stands in for it. Every video type an installed app claims is set.
    """
    try:
        lines = database.read_text(errors="replace").splitlines()
    except OSError:
        lines = []
    types = sorted({line.split("=", 1)[0] for line in lines if line.startswith("video/") and "=" in line})
    return {mime: "vlc.desktop" if mime == "video/mp4" else "chromium.desktop" for mime in {*types, "video/mp4"}}


def mimeapps_list() -> str:
    defaults = {mime: app for app, mimes in DEFAULT_APPS.items() for mime in mimes} | video_defaults()
    return "[Default Applications]\n" + "".join(f"{mime}={app}\n" for mime, app in sorted(defaults.items()))


# GNOME settings where OSWorld's VM starts from other values than GNOME's defaults and an
# OSWorld task reads them: compiled as vendor defaults (as a distribution sets its own) into
# the home's schema folder, which GLib reads before the system's. The user's own changes
# still go to dconf, and `gsettings reset` comes back to these.
VM_GSETTINGS = {
    # A task asks for the screen to lock when left: on the VM it does not yet.
    "org.gnome.desktop.screensaver": {"lock-enabled": "false"},
}
SYSTEM_SCHEMAS = Path("/usr/share/glib-2.0/schemas")
USER_SCHEMAS = ".local/share/glib-2.0/schemas"


def compile_vm_gsettings(home: Path, system: Path = SYSTEM_SCHEMAS) -> None:
    """Writes home/USER_SCHEMAS/gschemas.compiled with VM_GSETTINGS as the schemas' defaults.

    Raises OSError or CalledProcessError when the system's schemas or glib-compile-schemas
    are missing (packages gsettings-desktop-schemas and libglib2.0-bin).
    """
    target = home / USER_SCHEMAS
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for schema in VM_GSETTINGS:
            shutil.copy(system / f"{schema}.gschema.xml", work)
        for enums in system.glob("*.enums.xml"):  # the types the schemas' keys may name
            shutil.copy(enums, work)
        override = "".join(f"[{schema}]\n" + "".join(f"{key}={value}\n" for key, value in keys.items())
                           for schema, keys in VM_GSETTINGS.items())
        (work / "50_osworld-vm.gschema.override").write_text(override)
        subprocess.run(["glib-compile-schemas", "--strict", str(work)], check=True, capture_output=True, timeout=60)
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(work / "gschemas.compiled", target / "gschemas.compiled")


# Chromium from the app menu, a link or `xdg-open` runs through the `google-chrome` shim
# (desktop_env/server/shims, on the session's PATH): the same profile, flags and process
# name as the browser a task file starts, --force-renderer-accessibility included, so its
# accessibility tree has the page. A user entry of the same name hides the system's.
SYSTEM_CHROMIUM_ENTRY = Path("/usr/share/applications/chromium.desktop")
CHROMIUM_ENTRY = ".local/share/applications/chromium.desktop"
CHROMIUM_EXEC = re.compile(r"^(Exec=)(?:/usr/bin/)?chromium\b", re.MULTILINE)
MINIMAL_CHROMIUM_ENTRY = """[Desktop Entry]
Version=1.0
Type=Application
Name=Chromium Web Browser
Exec=/usr/bin/chromium %U
Icon=chromium
Categories=Network;WebBrowser;
MimeType=text/html;x-scheme-handler/http;x-scheme-handler/https;application/pdf;
StartupWMClass=chromium
"""


def chromium_entry(system: Path = SYSTEM_CHROMIUM_ENTRY) -> str:
    """Debian's chromium.desktop (its names, icon and types) with every Exec through the shim."""
    try:
        entry = system.read_text()
    except OSError:
        entry = MINIMAL_CHROMIUM_ENTRY
    return CHROMIUM_EXEC.sub(r"\1google-chrome", entry)


# VLC: no privacy prompt on first start; the HTTP interface on (port 8080, password
# "password") that OSWorld's VLC getters read the player's state from; and a dummy audio
# output, since the sandbox has no sound device and VLC would show an error dialog.
VLCRC = "[qt]\nqt-privacy-ask=0\n\n[core]\nextraintf=http\naout=dummy\n\n[lua]\nhttp-password=password\n"


def write_template(home: Path) -> None:
    for folder in USER_FOLDERS:
        (home / folder).mkdir(parents=True, exist_ok=True)
    files = {
        f"{XFCONF}/xfce4-panel.xml": PANEL_XML,
        f"{XFCONF}/xfwm4.xml": XFWM4_XML,
        f"{XFCONF}/xfce4-desktop.xml": DESKTOP_XML,
        ".config/libreoffice/4/user/registrymodifications.xcu": LIBREOFFICE_XCU,
        ".config/chromium/First Run": "",
        ".config/chromium/Default/Preferences": json.dumps(CHROMIUM_PREFERENCES),
        ".config/user-dirs.dirs": USER_DIRS,
        ".config/user-dirs.locale": "C\n",
        ".config/mimeapps.list": mimeapps_list(),
        ".bashrc": "PS1='\\u@osworld:\\w\\$ '\n",
        ".config/vlc/vlcrc": VLCRC,
        CHROMIUM_ENTRY: chromium_entry(),
        # XFCE opens web links (xdg-open, exo-open) with its preferred browser, not through
        # mimeapps.list: XFCE's own "Google Chrome" helper runs `google-chrome`, the shim.
        ".config/xfce4/helpers.rc": "WebBrowser=google-chrome\n",
    }
    for relative, content in files.items():
        path = home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    # OSWorld's tasks name Chrome's profile folder; one profile serves both names.
    (home / ".config" / "google-chrome").symlink_to("chromium")
    compile_vm_gsettings(home)
    # VS Code has run on the VM's image: its user folder is there (a task writes settings.json
    # into it with a shell command). Whether it holds a settings.json OSWorld's files do not say: here it does not.
    (home / ".config" / "Code" / "User").mkdir(parents=True)


def ensure_home_template() -> Path:
    """The template, where every desktop can read it: each boot copies it into its home
    (desktop_storage)."""
    target = sandbox_share_dir() / f"home-template-v{TEMPLATE_VERSION}-{_source_digest()}"
    if target.is_dir():
        return target
    return build_aside(target, _write_readable_template)


def _source_digest() -> str:
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def _write_readable_template(home: Path) -> None:
    write_template(home)
    os.chmod(home, 0o755)  # made by mkdtemp (0700); a root harness's desktops run as other uids
