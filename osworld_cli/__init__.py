"""The `osworld` command. Its own mm_agents and desktop_env come first on the path (own_packages.py) before any
command imports them."""
from .own_packages import put_ours_first

put_ours_first()
