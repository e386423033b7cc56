"""GIMP getters: its configuration files."""
from __future__ import annotations

from ..context import EvalContext
from ..registry import getter, requires
from .files import cache_target, desktop_file

GIMP_CONFIG_DIR = ".config/GIMP/2.10"


@getter("gimp_config_file")
@requires("file_name", "dest")
def gimp_config_file(ctx: EvalContext, config: dict) -> str | None:
    """~/.config/GIMP/2.10/<file_name> (gimprc, sessionrc...), saved as config["dest"]; None when absent."""
    cache_target(ctx, config, config["dest"])  # refused before the desktop is asked
    return desktop_file(ctx, str(ctx.home() / GIMP_CONFIG_DIR / config["file_name"]), config["dest"])
