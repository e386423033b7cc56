"""What OSWorld's Ubuntu 22.04 VM shows and starts from, as data: its apps, favourites,
default apps, GNOME settings and GNOME Shell's session mode.

Each fact names its source (VM_DIFFERENCES.md lists them with what differs here):
- [tree] the accessibility tree of the VM's desktop right after reset that OSWorld's own
  agent code carries as a prompt example (mm_agents/autoglm/prompt/deduplicate_node.py in
  xlang-ai/OSWorld forks): the dock's buttons in order, their 70x64 px cells, the Home icon
  at the bottom-right of the desktop, the top bar's Activities, clock and System menu.
- [tasks] OSWorld's task files and getters: `gsettings get org.gnome.shell favorite-apps`,
  `xdg-mime query default video/*` (default_video_player), screensaver `lock-enabled`.
- [ubuntu] Ubuntu 22.04's own defaults (ubuntu-settings' schema overrides, the Ubuntu dock:
  a fork of dash-to-dock fixed on the left, full height, 48 px icons; Yaru themes; the
  Ubuntu font family).
- [clicks] the actions UI-TARS recorded on the VM (the trajectories of OSWorld-Verified): where
  its clicks land on a window says where and how large the window was.
desktop_view builds the desktop's XDG folders from these lists, so what the desktop
shows does not depend on what else the host has installed.
"""
from __future__ import annotations

import fnmatch

# [tree] the dock from top to bottom. Ubuntu Software (a snap) and Help (yelp) are not
# installed here; VS Code (code.desktop) may not be: the dock shows only the favourites that
# are installed, as GNOME Shell does on the VM, and `gsettings get` still returns all of them.
FAVORITE_APPS = (
    "google-chrome.desktop",
    "thunderbird.desktop",
    "code.desktop",
    "vlc.desktop",
    "libreoffice-writer.desktop",
    "libreoffice-calc.desktop",
    "libreoffice-impress.desktop",
    "gimp.desktop",
    "org.gnome.Nautilus.desktop",
    "snap-store_ubuntu-software.desktop",
    "yelp.desktop",
)

# App entries (desktop ids, shell patterns) the app grid, the dock and `xdg-open` may use:
# the VM's apps that Debian packages. Anything else the host has installed stays unseen.
APP_ENTRIES = (
    "google-chrome.desktop",   # written by desktop_view: Chromium through the google-chrome shim
    "thunderbird.desktop",
    "code.desktop",
    "vlc.desktop",
    "libreoffice-startcenter.desktop", "libreoffice-writer.desktop", "libreoffice-calc.desktop",
    "libreoffice-impress.desktop", "libreoffice-draw.desktop", "libreoffice-math.desktop",
    "gimp.desktop",
    "org.gnome.Nautilus.desktop", "nautilus-autorun-software.desktop",
    "org.gnome.Terminal.desktop",
    "org.gnome.gedit.desktop",
    "org.gnome.Settings.desktop", "gnome-*-panel.desktop",   # GNOME Settings and its panels
    "gnome-control-center.desktop",  # Settings 41's id (the userland's): the system menu's Settings row needs it
    "org.gnome.Totem.desktop",
    "vim.desktop",             # an OSWorld task removes it from the favourites
    "yelp.desktop",
)

# App entries whose name on the VM (Ubuntu's package) differs from Debian's [tree].
APP_NAMES = {"thunderbird.desktop": "Thunderbird Mail"}

# Session D-Bus services (by file name) the desktop's apps may start on demand. Left out:
# Tracker (a file indexer), Evolution's data server and GNOME Shell's calendar server over
# it, online accounts, keyrings, udisks' volume monitor, portals: none runs on an idle VM
# desktop that the tasks rely on, and each costs memory and start time.
SESSION_SERVICES = (
    "ca.desrt.dconf.service",          # writes settings (gsettings set)
    "org.a11y.Bus.service",
    "org.gtk.vfs.Daemon.service", "org.gtk.vfs.Metadata.service",  # Nautilus' trash, recent files
    "org.gnome.Nautilus.service", "org.freedesktop.FileManager1.service",
    "org.gnome.Terminal.service",      # gnome-terminal-server: every terminal window lives in it
    "org.gnome.gedit.service",
    "org.gnome.Totem.service",
    "org.gnome.Settings.service", "org.gnome.Settings.SearchProvider.service",
    "org.gnome.Shell.Notifications.service", "org.gnome.Shell.Extensions.service",
    "org.gnome.ScreenSaver.service",
)

# GNOME Shell extensions of the Ubuntu session (ubuntu-dock, appindicators, desktop icons).
# Debian's dash-to-dock is the project Ubuntu's dock is a fork of; its settings below are
# the Ubuntu dock's defaults.
SYSTEM_EXTENSIONS = ("dash-to-dock@micxgx.gmail.com", "ubuntu-appindicators@ubuntu.com", "ding@rastersoft.com")
# Our own, shipped in shell_extensions/: GNOME 42's system menu at the top right (volume,
# network, power mode, Settings, Lock, Power Off / Log Out) in place of GNOME 43's quick
# settings, where the VM's recorded clicks expect it; and the VM's window places below.
OWN_EXTENSIONS = ("ubuntu-system-menu@osworld", "vm-window-places@osworld")
# What the Ubuntu 22.04 userland's own GNOME 42 is given of ours: the one system service a sandbox cannot run
# (NetworkManager), as the VM's menu shows it.
USERLAND_EXTENSIONS = ("vm-wired-connection@osworld",)
EXTENSIONS = SYSTEM_EXTENSIONS + OWN_EXTENSIONS

# Where (x, y) and how large (width, height) the first window of an app (by WM_CLASS) shows on the
# VM, shadows left out, for apps whose release here opens elsewhere [clicks]:
# - GNOME Settings 41 (Ubuntu 22.04's, GTK 3) centres its 980 px wide window in the work area; the
#   VM's runs click its header bar at y 162-165 (the sidebar's search button at x 528), the first
#   sidebar row (Network) at 209 with 45 px between rows, and after scrolling the sidebar to its
#   end Date & Time at 886 (its last row, About, ends near 953). Settings 43 opens 640 px tall
#   where mutter's placement puts it (y 164).
WINDOW_PLACES = {"gnome-control-center": (505, 140, 980, 813)}

# Our session mode (Ubuntu's `ubuntu` mode is not in Debian): the user session with Yaru's
# shell theme and Ubuntu's extensions.
SESSION_MODE_NAME = "ubuntu"
SESSION_MODE = {
    "parentMode": "user",
    "stylesheetName": "Yaru/gnome-shell.css",
    "themeResourceName": "theme/Yaru/gnome-shell-theme.gresource",
    "enabledExtensions": list(EXTENSIONS),
    "showWelcomeDialog": False,   # the VM's user is past GNOME's tour
}

# The sound server's output: with no sound card (OSWorld's VM runs on cloud machines without
# one), PulseAudio makes its "Dummy Output" sink (auto_null). The VM's volume is not recorded
# anywhere public; OSWorld's task "my system's volume is too small, turn it up to the max"
# (pactl's first sink volume must read 100) says it starts below the maximum, so it starts at
# this percentage here and a desktop left alone never passes that task.
INITIAL_VOLUME_PERCENT = 40

# XDG_CURRENT_DESKTOP on Ubuntu's GNOME session; apps and xdg-utils read it.
CURRENT_DESKTOP = "ubuntu:GNOME"

# A solid colour stands in for Ubuntu's photo wallpaper (ubuntu-wallpapers is not in Debian):
# its dominant colour, and a PNG of a few hundred bytes instead of a photo that would make
# every screenshot several times larger and slower to encode.
WALLPAPER_COLOUR = "#4a1b3f"
WALLPAPER_NAME = "warty-final-ubuntu.png"   # the VM's file name, so tasks that read it match

# Where each type opens ([ubuntu]: GNOME's apps; [tasks]: GNOME Videos is the video player,
# which a task asks the agent to change to VLC). Types with no app of the VM's set here
# (images, PDFs) open in the VM's apps that can: GIMP and Chrome.
DEFAULT_APPS = {
    "org.gnome.gedit.desktop": ("text/plain", "text/csv", "text/x-python", "text/markdown", "application/json",
                                "application/x-shellscript", "text/x-log", "application/x-zerosize"),
    "org.gnome.Nautilus.desktop": ("inode/directory",),
    "libreoffice-calc.desktop": ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                                 "application/vnd.oasis.opendocument.spreadsheet", "application/vnd.ms-excel"),
    "libreoffice-writer.desktop": ("application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                                   "application/vnd.oasis.opendocument.text", "application/msword", "application/rtf"),
    "libreoffice-impress.desktop": ("application/vnd.openxmlformats-officedocument.presentationml.presentation",
                                    "application/vnd.oasis.opendocument.presentation", "application/vnd.ms-powerpoint"),
    "google-chrome.desktop": ("text/html", "x-scheme-handler/http", "x-scheme-handler/https", "application/pdf"),
    "gimp.desktop": ("image/png", "image/jpeg", "image/gif", "image/bmp", "image/tiff", "image/webp"),
    "thunderbird.desktop": ("x-scheme-handler/mailto", "message/rfc822"),
    "org.gnome.Terminal.desktop": ("x-scheme-handler/terminal",),
}
# Every video and audio type GNOME Videos declares opens in it, as on the VM.
MEDIA_PLAYER = "org.gnome.Totem.desktop"

# GNOME settings the VM starts from where they differ from the schemas' defaults, compiled
# in as vendor defaults (as a distribution sets its own): `gsettings get/reset` give these.
GSETTINGS = {
    # what GNOME Shell's own override sets in every GNOME session, Ubuntu's included
    "org.gnome.mutter": {"attach-modal-dialogs": "true", "edge-tiling": "true", "dynamic-workspaces": "true",
                         "workspaces-only-on-primary": "true", "focus-change-on-pointer-rest": "true"},
    "org.gnome.desktop.interface": {"gtk-theme": "'Yaru'", "icon-theme": "'Yaru'", "cursor-theme": "'Yaru'",
                                    "font-name": "'Ubuntu 11'", "monospace-font-name": "'Ubuntu Mono 13'",
                                    "document-font-name": "'Sans 11'", "toolkit-accessibility": "true"},
    "org.gnome.desktop.wm.preferences": {"button-layout": "':minimize,maximize,close'",
                                         "titlebar-font": "'Ubuntu Bold 11'"},
    "org.gnome.desktop.background": {"picture-options": "'zoom'", "show-desktop-icons": "true"},
    # [tasks] a task asks for the screen to lock when left: on the VM it does not yet
    "org.gnome.desktop.screensaver": {"lock-enabled": "false"},
    "org.gnome.shell": {"favorite-apps": repr(list(FAVORITE_APPS))},
    # apps that open "a terminal" run this; Debian's default is its alternatives' terminal
    "org.gnome.desktop.default-applications.terminal": {"exec": "'gnome-terminal'"},
    "org.gnome.shell.extensions.dash-to-dock": {
        "dock-position": "'LEFT'", "dock-fixed": "true", "extend-height": "true", "dash-max-icon-size": "48",
        "custom-theme-shrink": "true", "show-trash": "true", "show-mounts": "true",
        "click-action": "'focus-or-previews'", "disable-overview-on-startup": "true",
        "running-indicator-style": "'DOTS'", "background-opacity": "0.8"},
    # [tree] the Home icon at the bottom-right, no Trash icon on the desktop
    "org.gnome.shell.extensions.ding": {"start-corner": "'bottom-right'", "show-trash": "false"},
    # nothing to update or report from an offline sandbox
    "org.gnome.desktop.privacy": {"report-technical-problems": "false"},
    # [clicks] Files opens maximized on the VM (its image was left with a maximized Files window, which
    # Nautilus remembers): the VM's recorded clicks right after opening Files from the dock hit its sidebar
    # at x = 144 and its first row of icons at y = 114-130 (tasks 7e287123, e2392362, f918266a,
    # 8e116af7, 6766f2b8), and its "Open With" dialog is centered on the work area (a503b07f: x = 990,
    # y = 365-730). A window of the default 890x550 would start at (104, 194).
    "org.gnome.nautilus.window-state": {"maximized": "true"},
    # [ubuntu] ubuntu-settings' defaults: Files' icons at 48 px, GTK 3 file dialogs with folders first,
    # opening where the app is; the terminal's dark variant
    "org.gnome.nautilus.icon-view": {"default-zoom-level": "'small'"},
    "org.gtk.Settings.FileChooser": {"sort-directories-first": "true", "startup-mode": "'cwd'"},
    "org.gnome.Terminal.Legacy.Settings": {"theme-variant": "'dark'"},
}

# Values of paths no schema's default can give (relocatable schemas), served to the desktop
# as a read-only dconf database under the user's own: Ubuntu's Ctrl+Alt+T opens a terminal
# (Ubuntu's settings daemon has it built in; Debian's dropped it, so here it is a custom
# shortcut that runs the same command).
TERMINAL_SHORTCUT = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/terminal/"
DCONF = {
    "org/gnome/settings-daemon/plugins/media-keys": {"custom-keybindings": repr([TERMINAL_SHORTCUT])},
    TERMINAL_SHORTCUT.strip("/"): {"name": "'Launch terminal'", "command": "'gnome-terminal'",
                                   "binding": "'<Primary><Alt>t'"},
}


def app_entry_allowed(desktop_id: str) -> bool:
    return any(fnmatch.fnmatchcase(desktop_id, pattern) for pattern in APP_ENTRIES)
