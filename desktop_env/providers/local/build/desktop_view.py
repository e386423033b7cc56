"""The desktop's own XDG data and config folders: the VM's apps and defaults on any host.

GNOME finds apps, D-Bus services, Shell extensions and modes, settings schemas, MIME
defaults and autostart entries through XDG_DATA_DIRS and XDG_CONFIG_DIRS. Pointed at the
host's /usr/share and /etc/xdg, a desktop would show whatever the host has installed (a
file indexer started from the host's autostart, extra entries in the app grid, another
default app). So a desktop's XDG folders are this view instead: every entry of /usr/share
and /etc/xdg as a link, except the ones that decide what the desktop shows, which hold
only what vm_desktop lists (and the files written here: the session mode, Chrome's app
entry, the MIME defaults, the settings schemas compiled with the VM's values, the D-Bus
configurations). Built once per host state into the folder every desktop mounts
read-only, and rebuilt when the host's entries change.
"""
from __future__ import annotations

import configparser
import hashlib
import json
import logging
import os
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from collections.abc import Iterable
from pathlib import Path

from ....errors import DesktopEnvError
from ..paths import build_aside, sandbox_share_dir
from ..sandbox_layout import SANDBOX_CHROMIUM, SANDBOX_DESKTOP
from ..system_root import HOST_SYSTEM, SystemRoot
from . import vm_desktop
from .ubuntu_fonts import FontsUnavailable, ensure_ubuntu_fonts

log = logging.getLogger("osworld.local")
VIEW_VERSION = "1"  # bump when the files written here change

SYSTEM_SHARE = Path("/usr/share")
SYSTEM_XDG = Path("/etc/xdg")
# The folders of /usr/share whose content is chosen here (entries listed, or files written).
CURATED_SHARE = ("applications", "dbus-1", "gnome-shell", "glib-2.0", "backgrounds", "gnome-background-properties")
CURATED_XDG = ("autostart",)   # nothing starts by itself: GNOME's session starts what it needs
OWN_EXTENSIONS = Path(__file__).parents[1] / "shell_extensions"   # GNOME Shell extensions of ours


class DesktopViewError(DesktopEnvError, RuntimeError):
    """The host lacks what the view is built from (a package of system_packages.txt)."""


def ensure_desktop_view(system: SystemRoot = HOST_SYSTEM) -> Path:
    """The view of `system`'s /usr/share and /etc/xdg. The host's takes Ubuntu's fonts, fetched aside; an
    Ubuntu tree has its own."""
    fonts = None
    if system.is_host:
        try:
            fonts = ensure_ubuntu_fonts()
        except FontsUnavailable as e:
            log.warning("the desktop uses DejaVu instead of Ubuntu's fonts: %s", e)
    target = sandbox_share_dir() / f"desktop-view-{system.tag()}{_signature(fonts, system)}"
    if target.is_dir():
        return target
    return build_aside(target, lambda staging: fill_view(staging, fonts, system))


def _signature(fonts: Path | None, system: SystemRoot = HOST_SYSTEM) -> str:
    """Changes when the facts, this module, a system folder the view lists, or the fonts change."""
    digest = hashlib.sha256(f"{VIEW_VERSION}\0{fonts}".encode())
    sources = [Path(vm_desktop.__file__), Path(__file__), *sorted(OWN_EXTENSIONS.glob("*/*"))]
    for source in sources:
        digest.update(source.read_bytes())
    share, xdg = system.host_path(SYSTEM_SHARE), system.host_path(SYSTEM_XDG)
    folders = [share, xdg, *(share / name for name in CURATED_SHARE),
               share / "dbus-1" / "services", share / "gnome-shell" / "extensions",
               share / "gnome-shell" / "search-providers", share / "glib-2.0" / "schemas"]
    for folder in folders:
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            info = entry.stat(follow_symlinks=False)
            digest.update(f"{folder}/{entry.name}\0{info.st_mtime_ns}\0{info.st_size}\0".encode())
    return digest.hexdigest()[:12]


def fill_view(view: Path, fonts: Path | None = None, system: SystemRoot = HOST_SYSTEM) -> None:
    share, xdg = view / "share", view / "xdg"
    system_share = system.host_path(SYSTEM_SHARE)
    _write_fonts(view, fonts)
    _link_all_but(system_share, share, CURATED_SHARE)
    _link_all_but(system.host_path(SYSTEM_XDG), xdg, CURATED_XDG)
    (xdg / "autostart").mkdir()
    _write_applications(share / "applications", system_share)
    _write_dbus(share / "dbus-1", view / "dbus", system_share)
    _write_gnome_shell(share / "gnome-shell", system_share, system)
    _write_wallpaper(share / "backgrounds", share / "gnome-background-properties")
    _link_all_but(system_share / "glib-2.0", share / "glib-2.0", ("schemas",))
    compile_schemas(share / "glib-2.0" / "schemas", system_share / "glib-2.0" / "schemas")
    compile_dconf(view / "dconf")
    _write_sound_server(view / "pulse")
    if not system.is_host:
        _links_as_seen_inside(view, system)
    for folder, _, files in os.walk(view):
        os.chmod(folder, 0o755)  # mkdtemp made the top 0700; the desktops' uid must read it all
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, 0o644)


# fontconfig's configuration for the desktop (FONTCONFIG_FILE): the system's, and the
# Ubuntu fonts when they could be fetched.
FONTS_CONF = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
{dirs}</fontconfig>
"""


def _write_fonts(view: Path, fonts: Path | None) -> None:
    (view / "fontconfig").mkdir(parents=True)
    dirs = ""
    if fonts is not None:
        (view / "fonts").mkdir()
        for font in sorted(fonts.glob("*.ttf")):
            shutil.copy(font, view / "fonts" / font.name)
        dirs = f"  <dir>{SANDBOX_DESKTOP}/fonts</dir>\n"
    (view / "fontconfig" / "fonts.conf").write_text(FONTS_CONF.format(dirs=dirs))


def _link_all_but(source: Path, target: Path, curated: tuple[str, ...]) -> None:
    target.mkdir(parents=True, exist_ok=True)
    try:
        names = sorted(os.listdir(source))
    except FileNotFoundError:
        return
    for name in names:
        if name not in curated:
            (target / name).symlink_to(source / name)


def _links_as_seen_inside(view: Path, system: SystemRoot) -> None:
    """The view's links into a tree retargeted at the paths the desktop sees the tree's files at."""
    for folder, folders, files in os.walk(view):
        for name in [*folders, *files]:
            path = Path(folder) / name
            if path.is_symlink():
                target = Path(os.readlink(path))
                if target.is_relative_to(system.path):
                    path.unlink()
                    path.symlink_to(system.inside_path(target))


def _write_applications(folder: Path, share: Path = SYSTEM_SHARE) -> None:
    folder.mkdir()
    system = share / "applications"
    for path in sorted(system.glob("*.desktop")):
        if not vm_desktop.app_entry_allowed(path.name) or path.name == "google-chrome.desktop":
            continue
        if path.name in vm_desktop.APP_NAMES:
            (folder / path.name).write_text(renamed_entry(path.read_text(errors="replace"),
                                                          vm_desktop.APP_NAMES[path.name]))
        else:
            (folder / path.name).symlink_to(path)
    (folder / "google-chrome.desktop").write_text(chrome_entry(share))
    (folder / "mimeapps.list").write_text(mimeapps_list(system))
    (folder / "mimeinfo.cache").write_text(mimeinfo_cache(folder))


# Chrome's entry as the VM has it (its id is what `favorite-apps` and task files name), run
# through the `google-chrome` shim (on the session's PATH): the same profile, flags and
# process name as the browser a task file starts, --force-renderer-accessibility included.
# StartupWMClass ties Chromium's windows to this entry, so the dock shows them under it.
CHROME_ENTRY = """[Desktop Entry]
Version=1.0
Type=Application
Name=Google Chrome
GenericName=Web Browser
Comment=Access the Internet
Exec=google-chrome %U
Icon={icon}
Terminal=false
Categories=Network;WebBrowser;
MimeType=text/html;x-scheme-handler/http;x-scheme-handler/https;application/pdf;
StartupNotify=true
StartupWMClass=chromium
Actions=new-window;new-private-window;

[Desktop Action new-window]
Name=New Window
Exec=google-chrome

[Desktop Action new-private-window]
Name=New Incognito Window
Exec=google-chrome --incognito
"""


def renamed_entry(entry: str, name: str) -> str:
    """An app entry with its main entry's untranslated Name replaced (the actions' stay)."""
    return re.sub(r"^Name=.*$", f"Name={name}", entry, count=1, flags=re.MULTILINE)


# Chromium 120's own icon, where desktops mount it (vm_chromium.py): for a system without a Chromium package.
ASIDE_CHROMIUM_ICON = f"{SANDBOX_CHROMIUM}/usr/share/icons/hicolor/256x256/apps/chromium.png"


def chrome_entry(share: Path = SYSTEM_SHARE) -> str:
    # No distribution has Chrome's icon; Chromium's is the closest. Ubuntu 22.04's Chromium is a snap,
    # left out of its tree: there the icon is the one of the Chromium set aside.
    themed = any((share / "icons" / "hicolor").glob("*/apps/chromium.*"))
    return CHROME_ENTRY.format(icon="chromium" if themed else ASIDE_CHROMIUM_ICON)


def declared_types(entry: Path) -> list[str]:
    """The types an app entry declares it opens (its MimeType key)."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read(entry, encoding="utf-8")
        declared = parser.get("Desktop Entry", "MimeType", fallback="")
    except (OSError, configparser.Error):
        return []
    return [mime for mime in declared.split(";") if mime]


def media_types(entry: Path) -> list[str]:
    """The video and audio types an app entry declares."""
    return [mime for mime in declared_types(entry) if mime.startswith(("video/", "audio/"))]


def mimeinfo_cache(applications: Path) -> str:
    """The index GIO reads to find the apps that open a type (what update-desktop-database
    writes): without it, "Open With" in Files and Settings' Default Applications list only
    the default app, where the VM lists every app that declares the type (VLC beside Videos)."""
    apps: dict[str, list[str]] = {}
    for entry in sorted(applications.glob("*.desktop")):
        for mime in declared_types(entry):
            apps.setdefault(mime, []).append(entry.name)
    return "[MIME Cache]\n" + "".join(f"{mime}={';'.join(ids)};\n" for mime, ids in sorted(apps.items()))


def mimeapps_list(applications: Path = SYSTEM_SHARE / "applications") -> str:
    defaults = {mime: vm_desktop.MEDIA_PLAYER for mime in media_types(applications / vm_desktop.MEDIA_PLAYER)}
    defaults |= {mime: app for app, mimes in vm_desktop.DEFAULT_APPS.items() for mime in mimes}
    return "[Default Applications]\n" + "".join(f"{mime}={app}\n" for mime, app in sorted(defaults.items()))


SESSION_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <!-- replaced by the address the session gives dbus-daemon on its command line -->
  <listen>unix:tmpdir=/tmp</listen>
  <keep_umask/>
  <auth>EXTERNAL</auth>
  <servicedir>{services}</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
  <limit name="reply_timeout">300000</limit>
  <!-- Debian's and Ubuntu's session.conf limits: the built-in ones are a system bus's (25 s to
       start a service, 128 pending replies, 512 match rules per connection); the desktop's
       cgroup caps its memory. -->
  <limit name="max_incoming_bytes">1000000000</limit>
  <limit name="max_incoming_unix_fds">250000000</limit>
  <limit name="max_outgoing_bytes">1000000000</limit>
  <limit name="max_outgoing_unix_fds">250000000</limit>
  <limit name="max_message_size">1000000000</limit>
  <limit name="service_start_timeout">120000</limit>
  <limit name="auth_timeout">240000</limit>
  <limit name="pending_fd_timeout">150000</limit>
  <limit name="max_completed_connections">100000</limit>
  <limit name="max_incomplete_connections">10000</limit>
  <limit name="max_connections_per_user">100000</limit>
  <limit name="max_pending_service_starts">10000</limit>
  <limit name="max_names_per_connection">50000</limit>
  <limit name="max_match_rules_per_connection">50000</limit>
  <limit name="max_replies_per_connection">50000</limit>
</busconfig>
"""
# GNOME Shell and Settings need a system bus (the shell dies at start without one); the
# desktop's own, private one, which nothing but the desktop's processes can reach.
SYSTEM_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:tmpdir=/tmp</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_type="method_return"/>
    <allow send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="signal"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
  </policy>
</busconfig>
"""


def _write_dbus(share_dbus: Path, configs: Path, share: Path = SYSTEM_SHARE) -> None:
    _link_all_but(share / "dbus-1", share_dbus, ("services",))
    services = share_dbus / "services"
    services.mkdir()
    for name in vm_desktop.SESSION_SERVICES:
        source = share / "dbus-1" / "services" / name
        if source.exists() and _service_is_gnomes(source):
            (services / name).symlink_to(source)
    configs.mkdir()
    session_services = f"{SANDBOX_DESKTOP}/share/dbus-1/services"
    (configs / "session.conf").write_text(SESSION_BUS_CONFIG.format(services=session_services))
    (configs / "system.conf").write_text(SYSTEM_BUS_CONFIG)


def _service_is_gnomes(service: Path) -> bool:
    """org.freedesktop.FileManager1 may be another file manager's (Thunar's, Dolphin's)."""
    if service.name != "org.freedesktop.FileManager1.service":
        return True
    return "nautilus" in service.read_text(errors="replace")


def _write_gnome_shell(folder: Path, share: Path = SYSTEM_SHARE, root: SystemRoot = HOST_SYSTEM) -> None:
    system = share / "gnome-shell"
    _link_all_but(system, folder, ("modes", "extensions", "search-providers"))
    (folder / "modes").mkdir()
    mode, own = session_mode(system, root)
    mode_file = folder / "modes" / f"{vm_desktop.SESSION_MODE_NAME}.json"
    mode_file.write_text(json.dumps(mode, indent=2))
    (folder / "extensions").mkdir()
    for uuid in mode["enabledExtensions"]:
        if (system / "extensions" / uuid).is_dir():
            (folder / "extensions" / uuid).symlink_to(system / "extensions" / uuid)
    for uuid in own:  # copied: the desktop does not see this checkout
        shutil.copytree(OWN_EXTENSIONS / uuid, folder / "extensions" / uuid)
    if "vm-window-places@osworld" in own:
        (folder / "extensions" / "vm-window-places@osworld" / "places.json").write_text(
            json.dumps(vm_desktop.WINDOW_PLACES))
    (folder / "search-providers").mkdir()
    for provider in sorted((system / "search-providers").glob("*.ini")):
        if vm_desktop.app_entry_allowed(_provider_app(provider)):
            (folder / "search-providers" / provider.name).symlink_to(provider)


def session_mode(shell: Path, root: SystemRoot = HOST_SYSTEM) -> tuple[dict, tuple[str, ...]]:
    """The session mode the desktop's shell runs in, and which of our own extensions it enables. On the host,
    ours (Debian has no `ubuntu` mode) with our extensions that make GNOME 43 look as the VM's 42; in an Ubuntu
    tree, the tree's own `ubuntu` mode, which is the VM's, past GNOME's tour as the VM's user is, with the VM's
    wired connection (vm_desktop.USERLAND_EXTENSIONS)."""
    if root.is_host:
        return vm_desktop.SESSION_MODE, vm_desktop.OWN_EXTENSIONS
    own_mode = shell / "modes" / f"{vm_desktop.SESSION_MODE_NAME}.json"
    try:
        mode = json.loads(own_mode.read_text())
    except (OSError, ValueError) as e:
        raise DesktopViewError(f"{own_mode}: cannot read the {root.name} tree's session mode ({e})") from None
    own_extensions = vm_desktop.USERLAND_EXTENSIONS
    enabled = [*mode.get("enabledExtensions", []), *own_extensions]
    return {**mode, "enabledExtensions": enabled, "showWelcomeDialog": False}, own_extensions


def _provider_app(provider: Path) -> str:
    match = re.search(r"^DesktopId=(.+)$", provider.read_text(errors="replace"), re.MULTILINE)
    return match.group(1).strip() if match else ""


# Settings' Background panel lists the wallpapers of these files: the VM's only (the host's
# distribution would otherwise add its own).
WALLPAPER_LIST = """<?xml version="1.0"?>
<!DOCTYPE wallpapers SYSTEM "gnome-wp-list.dtd">
<wallpapers>
  <wallpaper deleted="false">
    <name>Ubuntu</name>
    <filename>{path}</filename>
    <options>zoom</options>
    <shade_type>solid</shade_type>
    <pcolor>{colour}</pcolor>
    <scolor>{colour}</scolor>
  </wallpaper>
</wallpapers>
"""


def _write_wallpaper(folder: Path, listing: Path) -> None:
    folder.mkdir()
    colour = vm_desktop.WALLPAPER_COLOUR.lstrip("#")
    red, green, blue = (int(colour[i:i + 2], 16) for i in (0, 2, 4))
    (folder / vm_desktop.WALLPAPER_NAME).write_bytes(solid_png(16, 9, (red, green, blue)))
    listing.mkdir()
    (listing / "ubuntu.xml").write_text(WALLPAPER_LIST.format(path=f"{SANDBOX_DESKTOP}/share/backgrounds/"
                                                              f"{vm_desktop.WALLPAPER_NAME}",
                                                              colour=vm_desktop.WALLPAPER_COLOUR))


def solid_png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\0" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


# PulseAudio's startup script for the session (session.SOUND_SERVER_SCRIPT): the system's own
# (sandbox.ETC_ALLOWED lets the desktop read /etc/pulse), then the VM's starting volume on the
# sink PulseAudio makes when there is no sound card. A `pulseaudio --start` after the daemon
# was killed runs the system's script alone; module-device-restore gives the sink back the
# volume it last had.
SOUND_SERVER_SCRIPT = """.include /etc/pulse/default.pa
set-sink-volume auto_null {volume}
"""
PA_VOLUME_NORM = 0x10000   # PulseAudio's 100 %


def _write_sound_server(folder: Path) -> None:
    folder.mkdir()
    volume = round(PA_VOLUME_NORM * vm_desktop.INITIAL_VOLUME_PERCENT / 100)
    (folder / "default.pa").write_text(SOUND_SERVER_SCRIPT.format(volume=volume))


def compile_dconf(folder: Path) -> None:
    """vm_desktop.DCONF as a dconf database, and the profile (DCONF_PROFILE) that puts it
    under the user's own: what the user changes wins, `gsettings reset` comes back to it."""
    keyfiles = folder / "vm.d"
    keyfiles.mkdir(parents=True)
    (keyfiles / "00-vm").write_text("".join(f"[{path}]\n" + "".join(f"{key}={value}\n" for key, value in keys.items())
                                           for path, keys in vm_desktop.DCONF.items()))
    result = subprocess.run(["dconf", "compile", str(folder / "vm"), str(keyfiles)], capture_output=True, text=True,
                            timeout=60)
    if result.returncode != 0:
        raise DesktopViewError(f"dconf compile refused {keyfiles / '00-vm'}: {result.stderr.strip()}")
    (folder / "profile").write_text(f"user-db:user\nfile-db:{SANDBOX_DESKTOP}/dconf/vm\n")


def vm_gsettings() -> dict[str, dict[str, str]]:
    """vm_desktop.GSETTINGS with the wallpaper where a desktop sees it."""
    wallpaper = f"'file://{SANDBOX_DESKTOP}/share/backgrounds/{vm_desktop.WALLPAPER_NAME}'"
    settings = {schema: dict(keys) for schema, keys in vm_desktop.GSETTINGS.items()}
    settings["org.gnome.desktop.background"] |= {"picture-uri": wallpaper, "picture-uri-dark": wallpaper}
    settings.setdefault("org.gnome.desktop.screensaver", {})["picture-uri"] = wallpaper
    return settings


def compile_schemas(target: Path, system: Path = SYSTEM_SHARE / "glib-2.0" / "schemas",
                    replacements: Iterable[Path] = ()) -> None:
    """Compiles the system's schemas with the VM's values as their defaults into `target`; each file of
    `replacements` stands in for the system's file of its name (vm_settings: GNOME Settings 41's own).

    The host's own override files are left out: they are its distribution's choices, not
    the VM's. Raises DesktopViewError naming the schema when one the VM's values need is
    missing (a package of system_packages.txt is not installed).
    """
    settings = vm_gsettings()
    schemas = [path for path in system.iterdir() if path.name.endswith((".gschema.xml", ".enums.xml"))]
    known = {match.group(1) for path in schemas
             for match in re.finditer(r"""<schema\b[^>]*\bid=["']([^"']+)["']""", path.read_text(errors="replace"))}
    missing = [schema for schema in settings if schema not in known]
    if missing:
        raise DesktopViewError(f"{system} has no schema {', '.join(missing)}: install the packages of "
                               "desktop_env/providers/local/system_packages.txt (osworld env doctor)")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for path in [*schemas, *replacements]:
            shutil.copy(path, work)
        override = "".join(f"[{schema}]\n" + "".join(f"{key}={value}\n" for key, value in keys.items())
                           for schema, keys in settings.items())
        (work / "50_osworld-vm.gschema.override").write_text(override)
        result = subprocess.run(["glib-compile-schemas", "--strict", str(work)], capture_output=True, text=True,
                                timeout=120)
        if result.returncode != 0:
            raise DesktopViewError(f"glib-compile-schemas refused the VM's settings: {result.stderr.strip()}")
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(work / "gschemas.compiled", target / "gschemas.compiled")
