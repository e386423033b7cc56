"""Where things are inside a sandboxed desktop: its user, home and runtime folders.

A leaf module, so that the parts that build the sandbox's mounts (sandbox, desktop_storage,
root_inside, etc_view) can share these names without importing each other.
"""
from __future__ import annotations

SANDBOX_UID = 1000
SANDBOX_USER = "user"
SANDBOX_HOME = "/home/user"
SANDBOX_RUNTIME = "/run/osworld"
SANDBOX_SRC = "/run/osworld-lib/src"  # under /run, a tmpfs, where mount points can be made
SANDBOX_VENV = "/run/osworld-lib/venv"

UNAVAILABLE_NOTE = "sudo-unavailable"  # in the runtime folder; sudo_client.UNAVAILABLE_NOTE reads it
