"""Getters that describe the desktop: screen, windows, wallpaper, folders."""
from __future__ import annotations

from typing import Any

from ..registry import getter
from .files import cache_target, save_in_cache


@getter("vm_screen_size")
def vm_screen_size(env: Any, config: dict) -> dict:
    return env.controller.get_vm_screen_size()


@getter("vm_window_size")
def vm_window_size(env: Any, config: dict) -> dict | None:
    return env.controller.get_vm_window_size(config["app_class_name"])


@getter("vm_wallpaper")
def vm_wallpaper(env: Any, config: dict) -> str | None:
    dest = config.get("dest", "wallpaper.png")
    cache_target(env, config, dest)
    data = env.controller.get_vm_wallpaper()
    if data is None:
        return None
    return save_in_cache(env, config, dest, data)


@getter("list_directory")
def list_directory(env: Any, config: dict) -> dict | None:
    return env.controller.get_vm_directory_tree(config["path"])
