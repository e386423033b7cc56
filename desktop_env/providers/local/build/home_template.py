"""The home folder every local desktop starts from, built once and cached.

Each reset copies this template into the env's private home, so a task always
begins from the same state: user folders, GNOME Shell past its first-run notices, and
LibreOffice and Chromium with their first-run dialogs already dismissed (an agent should
be scored on the task, not on dismissing a wizard). The desktop's apps, defaults and
GNOME settings are not here but in its XDG view (desktop_view), as a distribution's are.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path

from ..paths import build_aside, sandbox_share_dir

# The template's folder is named by this version and a digest of this module's source, so any
# change to what it writes builds a new folder beside the old one (two branches that each bumped
# the version to the same number cannot share a stale template).
TEMPLATE_VERSION = 12

USER_FOLDERS = ("Desktop", "Documents", "Downloads", "Music", "Pictures", "Videos", "Templates", "Public")


def _xcu_item(path: str, name: str, value: str) -> str:
    """One setting of LibreOffice's registrymodifications.xcu."""
    return f'<item oor:path="{path}"><prop oor:name="{name}" oor:op="fuse"><value>{value}</value></prop></item>\n'


# LibreOffice: no first-start wizard, no tip of the day, no "what's new" bar,
# no automatic update checks (the sandbox is offline). And, as on the VM, no "Keep current format?"
# question when a document is saved in a format other than ODF (WarnAlienFormat): OSWorld's task files
# save .xlsx/.docx/.pptx in postconfig with one Ctrl+S and no key after it (106 such steps in the 296 shared
# task files), and so do the VM's recorded successes (23 Ctrl+S in UI-TARS's Office runs, none followed by a
# confirmation); with the question, each of those saves stops at Confirm File Format and the file is not written.
LIBREOFFICE_XCU = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema"'
    ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
    + _xcu_item("/org.openoffice.Setup/Office", "FirstStartWizardCompleted", "true")
    + _xcu_item("/org.openoffice.Setup/Product", "ooSetupLastVersion", "7.4")
    + _xcu_item("/org.openoffice.Office.Common/Misc", "ShowTipOfTheDay", "false")
    + _xcu_item("/org.openoffice.Office.Common/Misc", "FirstRun", "false")
    + _xcu_item("/org.openoffice.Office.Jobs/Jobs/org.openoffice.Office.Jobs:Job['UpdateCheck']/Arguments",
                "AutoCheckEnabled", "false")
    + _xcu_item("/org.openoffice.Office.Recovery/RecoveryInfo", "Enabled", "false")
    + _xcu_item("/org.openoffice.Office.Common/Save/Document", "WarnAlienFormat", "false")
    + "</oor:items>\n"
)

# Only first-run choices and Chrome's own defaults where Debian's Chromium has others: every other
# value is Chrome's default, as in the VM's profile, since getters read this file (a site-setting
# default here once made "delete site data on close" look already set: OSWorld's getter takes any
# profile.default_content_setting_values for it).
CHROMIUM_PREFERENCES = {
    "browser": {"has_seen_welcome_page": True, "check_default_browser": False},
    "distribution": {"skip_first_run_ui": True, "suppress_first_run_default_browser_prompt": True},
    # Google, Chrome's default search engine, as Chromium records it when a user picks it (Debian's
    # Chromium defaults to DuckDuckGo). With it Chromium shows Google's New Tab page (logo, search box,
    # shortcuts), as the VM's Chrome did, and its ⋮ menu gains "Search this tab with Image Search"
    # below Print, where Chrome has "Search with Google Lens": without that row, the VM's recorded
    # clicks on Print (y = 579-582), More tools (732-734) and Settings (808-816) land one row too
    # low. OSWorld's default_search_engine getter reads "Google" either way (its fallback).
    "default_search_provider_data": {"template_url_data": {
        "short_name": "Google",
        "keyword": "google.com",
        "prepopulate_id": 1,
        "synced_guid": "485bf7d3-0215-45af-87dc-538868000001",
        "url": ("{google:baseURL}search?q={searchTerms}&{google:RLZ}{google:originalQueryForSuggestion}"
                "{google:assistedQueryStats}{google:searchFieldtrialParameter}{google:language}"
                "{google:prefetchSource}{google:searchClient}{google:sourceId}{google:searchSource}"
                "{google:contextualSearchVersion}ie={inputEncoding}"),
        "suggestions_url": ("{google:baseSuggestURL}{google:suggestPath}?{google:searchFieldtrialParameter}"
                            "client={google:suggestClient}&gs_ri={google:suggestRid}&xssi=t&q={searchTerms}&"
                            "{google:inputType}{google:omniboxFocusType}{google:cursorPosition}"
                            "{google:currentPageUrl}{google:pageClassification}{google:clientCacheTimeToLive}"
                            "{google:searchVersion}{google:sessionToken}{google:prefetchQuery}"
                            "sugkey={google:suggestAPIKeyParameter}"),
        "favicon_url": "https://www.google.com/images/branding/product/ico/googleg_alldp.ico",
    }},
}

USER_DIRS = "".join(f'XDG_{key}_DIR="$HOME/{folder}"\n' for key, folder in (
    ("DESKTOP", "Desktop"), ("DOCUMENTS", "Documents"), ("DOWNLOAD", "Downloads"), ("MUSIC", "Music"),
    ("PICTURES", "Pictures"), ("VIDEOS", "Videos"), ("TEMPLATES", "Templates"), ("PUBLICSHARE", "Public")))


# VLC: no privacy prompt on first start; and the HTTP interface on (port 8080, password
# "password") that OSWorld's VLC getters read the player's state from. Its audio goes to the
# session's sound server, as on the VM.
VLCRC = "[qt]\nqt-privacy-ask=0\n\n[core]\nextraintf=http\n\n[lua]\nhttp-password=password\n"


# GNOME Settings' sidebar where Settings 41 (Ubuntu 22.04's, GTK 3) has its rows on the VM, so that the
# VM's recorded clicks reach the same panels in Settings 43 (GTK 4, which reads this file; no other app
# of the desktop has this widget path). Settings 41 lists its panels 45 px apart with no group
# separators, from the top of the list [clicks: Network 209, Bluetooth 254, Notifications 389,
# Privacy 569, Displays 794 in a window whose list starts at 187]. Settings 43 has no Background
# panel (its Appearance panel holds the wallpapers and the style, which the VM's Background and
# Appearance panels hold), so its Appearance row (the main list's third) spans both rows.
# Its Privacy page cannot follow the VM's order (see VM_DIFFERENCES.md): a click goes to the row
# laid out there, whatever a CSS transform would show.
SIDEBAR = "leaflet > box > scrolledwindow > viewport > widget > stack > list.navigation-sidebar"
SIDEBAR_ROW_PX = 45
SETTINGS_SIDEBAR_CSS = (
    f"{SIDEBAR} {{ padding-top: 0; padding-bottom: 0; }}\n"
    f"{SIDEBAR} > separator {{ min-height: 0; margin: 0; background: none; }}\n"
    f"{SIDEBAR} > row {{ min-height: {SIDEBAR_ROW_PX - 2}px; margin-top: 0; margin-bottom: 2px; }}\n"
    f"{SIDEBAR}:nth-child(1) > row:nth-child(3) {{ min-height: {2 * SIDEBAR_ROW_PX - 2}px; }}\n"
)


def qt_window_geometry(x: int, y: int, width: int, height: int, screen_width: int = 1920) -> str:
    """A window's place as Qt 5's QWidget::saveGeometry() writes it into an ini file (format 3.0: frame,
    normal and plain geometry, screen 0, neither maximized nor full screen), the client area at (x, y).
    restoreGeometry() puts the window back there, within the screen's available area."""
    def rect() -> bytes:  # QRect in a QDataStream: left, top, right, bottom
        return struct.pack(">iiii", x, y, x + width - 1, y + height - 1)
    blob = (struct.pack(">IHH", 0x1D9D0CB, 3, 0) + rect() + rect()
            + struct.pack(">iBBi", 0, 0, 0, screen_width) + rect())
    return "@ByteArray(" + "".join(f"\\x{byte:02x}" for byte in blob) + ")"


# VLC's main window where the VM's VLC opens it (client area at (641, 361), 600x420, the size VLC gives a
# first window), not centered on the work area as a first start places it (695, 343). The VM's image
# was set up through VLC's own Tools > Preferences (OSWorld's desktop_env/server/README.md), so VLC
# saved its window there on exit and restores it at each start. The VM's recorded clicks (vlc tasks
# launched without a file): Tools at (940.8, 370.44) and View at (984.96, 370.44), 54 px left of and
# 18 px below where VLC's menus are on a first start here (995 and 1038.5, 352.5). The dialogs GNOME
# attaches centered on this window put the VM's clicks on the same buttons here: Preferences' "All"
# (633.6, 897.48) and Save (1192.32, 899.64), Open Network Stream's Play (1059.84, 750.6; bba3381f
# scored 1), the file dialog's Open (1242.24, 662.04; 59f21cfb scored 1). VLC rewrites the file on
# exit, as on the VM.
VLC_QT_INTERFACE = f"[General]\ngeometry={qt_window_geometry(641, 361, 600, 420)}\n"


# GIMP: its single-window mode's window maximized, as on the VM, whose recorded clicks find GIMP's menus in
# a maximized window beside the dock (Windows at (535, 73): 70 + GIMP's own 468 px from its left edge). This is
# the session GIMP 2.10 writes itself after its window was maximized at 1920x1080 (position and size are
# what it restores when unmaximized); its docks are GIMP's defaults.
GIMP_SESSIONRC = """\
# GIMP sessionrc

(session-info "toplevel"
    (factory-entry "gimp-single-image-window")
    (position 70 27)
    (size 1850 1016)
    (open-on-exit)
    (aux-info
        (left-docks-width "188")
        (right-docks-width "208")
        (maximized "yes"))
    (gimp-toolbox
        (side left)
        (book
            (current-page 0)
            (dockable "gimp-tool-options" (tab-style automatic) (aux-info (show-button-bar "true")))
            (dockable "gimp-device-status" (tab-style automatic) (aux-info (show-button-bar "true")))
            (dockable "gimp-undo-history" (tab-style automatic) (aux-info (show-button-bar "true")))
            (dockable "gimp-image-list" (tab-style automatic) (aux-info (show-button-bar "true")))))
    (gimp-dock
        (side right)
        (book
            (current-page 0)
            (dockable "gimp-brush-grid" (tab-style automatic) (aux-info (show-button-bar "true")))
            (dockable "gimp-pattern-grid" (tab-style automatic) (aux-info (show-button-bar "true")))
            (dockable "gimp-font-list" (tab-style automatic) (aux-info (show-button-bar "true")))
            (dockable "gimp-document-list" (tab-style automatic) (aux-info (show-button-bar "true"))))
        (book
            (position 449)
            (current-page 0)
            (dockable "gimp-layer-list" (tab-style automatic) (preview-size 32) (aux-info (show-button-bar "true")))
            (dockable "gimp-channel-list" (tab-style automatic) (preview-size 32)
                (aux-info (show-button-bar "true")))
            (dockable "gimp-vectors-list" (tab-style automatic) (preview-size 32)
                (aux-info (show-button-bar "true"))))))

(hide-docks no)
(single-window-mode yes)
(show-tabs yes)
(tabs-position 0)
(last-tip-shown 0)

# end of sessionrc
"""


def write_template(home: Path) -> None:
    for folder in USER_FOLDERS:
        (home / folder).mkdir(parents=True, exist_ok=True)
    files = {
        ".config/libreoffice/4/user/registrymodifications.xcu": LIBREOFFICE_XCU,
        ".config/chromium/First Run": "",
        ".config/chromium/Default/Preferences": json.dumps(CHROMIUM_PREFERENCES),
        ".config/user-dirs.dirs": USER_DIRS,
        ".config/user-dirs.locale": "C\n",
        ".bashrc": "PS1='\\u@osworld:\\w\\$ '\n",
        ".config/vlc/vlcrc": VLCRC,
        ".config/vlc/vlc-qt-interface.conf": VLC_QT_INTERFACE,
        ".config/GIMP/2.10/sessionrc": GIMP_SESSIONRC,
        ".config/gtk-4.0/gtk.css": SETTINGS_SIDEBAR_CSS,
        # GNOME Shell warns once per home that it cannot lock the screen without GDM; the
        # VM has GDM and shows no such notice.
        ".local/share/gnome-shell/lock-warning-shown": "",
    }
    for relative, content in files.items():
        path = home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    # OSWorld's tasks name Chrome's profile folder; one profile serves both names.
    (home / ".config" / "google-chrome").symlink_to("chromium")
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
