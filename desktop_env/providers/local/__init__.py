"""The local provider: a sandboxed desktop on this machine (bubblewrap + Xvfb + GNOME Shell)."""
from .provider import LocalDesktopConfig, LocalProvider

__all__ = ["LocalDesktopConfig", "LocalProvider"]
