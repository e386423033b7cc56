"""Where things are inside the local provider's sandboxed desktop, as the env server and its
commands see them.

The server's one copy of the harness's table (desktop_env/providers/local/sandbox_layout.py):
the server runs inside the desktop from a copy of its own package and never imports the
harness's code. tests/providers/test_sandbox_paths.py checks that the two agree. No imports at
all, so the commands that run alone on the system Python (code_command, sudo_client) can load
it by its path.
"""

USER_UID = 1000
HOME = "/home/user"
RUNTIME_DIR = "/run/osworld"                     # the session's logs, its bus, recordings
SUDO_UNAVAILABLE_NOTE = RUNTIME_DIR + "/sudo-unavailable"  # the harness writes it when there is no sudo broker
VSCODE_DIR = "/run/osworld-lib/vscode"           # VS Code (code-server), when installed
CHROMIUM_DIR = "/run/osworld-lib/chromium"       # Chromium 120, when installed (the google-chrome shim's vm_chromium)
SETTINGS_DIR = "/run/osworld-lib/gnome-control-center"  # GNOME Settings 41, when installed (its shim's)
# Thunderbird 115 (a tree desktop's, when installed), staged here for root_init to move over /usr/lib/thunderbird
THUNDERBIRD_DIR = "/run/osworld-lib/thunderbird"
THUNDERBIRD_TARGET = "/usr/lib/thunderbird"
