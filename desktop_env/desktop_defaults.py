"""What a desktop is unless told otherwise, as OSWorld's VM is: one definition for the harness, the agents
and the env server inside the sandbox (which imports it from the copy server_code.py mounts, so standard
library only)."""

DEFAULT_SCREEN_SIZE: tuple[int, int] = (1920, 1080)
# The desktop user's password, as tasks and agents are told it (OSWorld's `client_password`).
DEFAULT_PASSWORD = "password"
# Each local desktop's limits unless told otherwise, as the command line gives them (`--desktop-memory 4G`):
# the one definition that the local provider's LimitOptions and DesktopLimits and RunConfig's fields take.
DEFAULT_DESKTOP_LIMITS: dict[str, str] = {
    "desktop_memory": "4G",
    "desktop_pids": "1024",
    "desktop_cpu_weight": "100",
    "desktop_tmpfs": "1G",
    "desktop_disk": "2G",
}
