"""GIMP getters: its configuration files."""
from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from ..registry import getter
from .files import cache_target, vm_file

GIMP_CONFIG_DIR = ".config/GIMP/2.10"


@getter("gimp_config_file")
def gimp_config_file(env: Any, config: dict) -> str | None:
    """~/.config/GIMP/2.10/<file_name> (gimprc, sessionrc...), saved as config["dest"]; None when absent."""
    cache_target(env, config, config["dest"])  # refused before the desktop is asked
    home = PurePosixPath(env.controller.get_vm_desktop_path()).parent
    return vm_file(env, {"path": str(home / GIMP_CONFIG_DIR / config["file_name"]), "dest": config["dest"]})
