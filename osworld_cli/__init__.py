"""The `osworld` command. Its own mm_agents and desktop_env come first on the path before any command imports
them: importing the library's package puts them there (osworld_harness/own_packages.py)."""
import osworld_harness  # noqa: F401  (for put_ours_first())
