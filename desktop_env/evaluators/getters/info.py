"""Getters that describe the desktop: screen, windows, wallpaper, folders."""
from __future__ import annotations

from ..context import EvalContext
from ..registry import getter, requires
from .files import cache_target, save_in_cache


@getter("vm_screen_size")
def vm_screen_size(ctx: EvalContext, config: dict) -> dict:
    return ctx.screen_size()


@getter("vm_window_size")
@requires("app_class_name")
def vm_window_size(ctx: EvalContext, config: dict) -> dict | None:
    return ctx.window_size(config["app_class_name"])


@getter("vm_wallpaper")
def vm_wallpaper(ctx: EvalContext, config: dict) -> str | None:
    dest = config.get("dest", "wallpaper.png")
    cache_target(ctx, config, dest)
    data = ctx.wallpaper()
    if data is None:
        return None
    return save_in_cache(ctx, config, dest, data)


@getter("list_directory")
@requires("path")
def list_directory(ctx: EvalContext, config: dict) -> dict | None:
    return ctx.directory_tree(config["path"])
