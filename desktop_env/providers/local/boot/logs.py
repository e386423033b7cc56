"""What a desktop's logs say, read from the host: the tail of its sandbox's output and of the session's
logs, which live in the sandbox's memory (read them before it is killed)."""
from __future__ import annotations

from .desktop_storage import log_tails
from .sandbox_process import Sandbox

# How much of the desktop's logs a failed task keeps (desktop_logs): the last 8 KiB of each of
# the first 16 logs by name.
SAVED_LOG_BYTES = 8 * 1024
SAVED_LOGS = 16


def saved_logs(sandbox: Sandbox | None) -> dict[str, str]:
    """{name: last bytes} of a running desktop's logs, what a failed task keeps; {} once it is gone."""
    if sandbox is None or sandbox.child_pid is None or not sandbox.running():
        return {}
    return log_tails(sandbox.child_pid, limit=SAVED_LOG_BYTES, max_files=SAVED_LOGS)


def log_tail(sandbox: Sandbox, lines: int = 15) -> str:
    """The last lines of the sandbox's output and, while it runs, of each of the session's logs."""
    sandbox.output.wait(0.5 if not sandbox.running() else 0)  # what a dead one wrote last
    texts = {"sandbox output": sandbox.output.text()}
    if sandbox.child_pid is not None and sandbox.running():
        texts.update(log_tails(sandbox.child_pid))
    out = []
    for name, text in texts.items():
        last = text.strip().splitlines()[-lines:]
        if last:
            out.append(f"--- {name} ---\n" + "\n".join(last))
    return "\n".join(out)
