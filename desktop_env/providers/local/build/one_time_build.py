"""What every one-time build of the local desktop (VS Code, Chromium 120) does alike: announce itself,
refuse early with what is missing, build aside and rename into place, run each step as a command
whose failure names the step, the command and the end of what it printed."""
from __future__ import annotations

import logging
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from ....errors import MissingDependency
from ...base import Progress, progress_to_stderr
from ..paths import build_aside

__all__ = ["Progress", "install_once", "progress_to_stderr", "run_step"]

log = logging.getLogger("osworld.build")

OUTPUT_LINES = 30  # of a failed step's output, kept in its error


def install_once(what: str, target: Path, installed: Callable[[], Path | None], blocker: Callable[[], str | None],
                 error: type[MissingDependency], build: Callable[[Path, Progress], None], announcement: str,
                 progress: Progress) -> Path:
    """`installed()` when there is one; else `build` fills a staging folder renamed to `target`, once
    `blocker()` has nothing against it (else `error(blocker)`). `progress` hears the announcement, each
    step `build` reports and how long it took."""
    found = installed()
    if found is not None:
        return found
    reason = blocker()
    if reason is not None:
        raise error(reason)
    progress(announcement)
    started = time.monotonic()
    build_aside(target, lambda staging: build(staging, progress))
    progress(f"{what} installed in {time.monotonic() - started:.0f} s")
    return target


def run_step(what: str, error: type[MissingDependency], timeout: float, step: str, argv: list[str], cwd: Path,
             env: dict[str, str] | None = None) -> str:
    """The command's stdout; `error` naming `what` is being installed, the step, the command and the last
    OUTPUT_LINES of its output when it fails or outlasts `timeout`."""
    log.info("installing %s, %s: %s (in %s)", what, step, " ".join(argv), cwd)
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise error(f"installing {what}, step '{step}': {' '.join(argv)} did not finish in {timeout} s") from None
    if done.returncode != 0:
        output = "\n".join((done.stderr.strip() + "\n" + done.stdout.strip()).strip().splitlines()[-OUTPUT_LINES:])
        raise error(f"installing {what}, step '{step}': {' '.join(argv)} exited with {done.returncode}:\n{output}")
    return done.stdout
