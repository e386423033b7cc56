"""The local provider: a sandboxed desktop on this machine (bubblewrap + Xvfb + GNOME Shell)."""
from .config import LocalDesktopConfig
from .provider import LocalProvider

__all__ = ["LocalDesktopConfig", "LocalProvider"]
