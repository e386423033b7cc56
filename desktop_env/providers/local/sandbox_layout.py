"""Where things are inside a sandboxed desktop: its user, home and runtime folders, and where
the read-only mounts go. The harness's one table of in-sandbox paths.

A leaf module, so that the parts that build the sandbox's mounts (sandbox, desktop_storage,
root_inside, etc_view) can share these names without importing each other. The env server keeps
its own copy (desktop_env/server/sandbox_paths.py, for it cannot import the harness);
tests/providers/test_sandbox_paths.py checks that the two agree.
"""
from __future__ import annotations

SANDBOX_UID = 1000
SANDBOX_USER = "user"
SANDBOX_HOME = "/home/user"
SANDBOX_RUNTIME = "/run/osworld"
SANDBOX_SRC = "/run/osworld-lib/src"  # under /run, a tmpfs, where mount points can be made
SANDBOX_VENV = "/run/osworld-lib/venv"
SANDBOX_HOME_TEMPLATE = "/run/osworld-lib/home-template"  # copied into the home at each boot (desktop_storage)
SANDBOX_VSCODE = "/run/osworld-lib/vscode"  # VS Code (code-server), when installed: see vscode.py
SANDBOX_CHROMIUM = "/run/osworld-lib/chromium"  # Chromium 120, when installed: see vm_chromium.py
SANDBOX_SETTINGS = "/run/osworld-lib/gnome-control-center"  # GNOME Settings 41, when installed: vm_settings.py
# Thunderbird 115, when installed on a tree desktop (vm_thunderbird.py): where a desktop with a root of its own
# sees it until its init has overlaid /usr and moved it to /usr/lib/thunderbird (root_init.py).
SANDBOX_THUNDERBIRD = "/run/osworld-lib/thunderbird"
SANDBOX_DESKTOP = "/run/osworld-lib/desktop"  # the desktop's XDG view (desktop_view)

UNAVAILABLE_NOTE = "sudo-unavailable"  # in the runtime folder; the sudo command reads it
