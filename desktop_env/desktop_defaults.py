"""What a desktop is unless told otherwise, as OSWorld's VM is: one definition for the harness, the agents
and the env server inside the sandbox (which imports it from the copy server_code.py mounts, so standard
library only)."""

DEFAULT_SCREEN_SIZE: tuple[int, int] = (1920, 1080)
# The desktop user's password, as tasks and agents are told it (OSWorld's `client_password`).
DEFAULT_PASSWORD = "password"
