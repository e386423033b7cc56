"""The warm spare: the next desktop, booted while a task runs on this one, so that a reset is a switch to a
ready desktop. Its sandbox is started in the caller's thread (bwrap dies with the thread that started it,
--die-with-parent, and a waiting thread ends); a background thread waits until it is ready."""
from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable

from .sandbox_process import namespace_pids
from .sequence import Boot

log = logging.getLogger("osworld.local")


class WarmSpare:
    def __init__(self) -> None:
        self.boot: Boot | None = None
        self._thread: threading.Thread | None = None

    def start(self, launch: Callable[[], Boot], wait_ready: Callable[[Boot], None]) -> None:
        """Starts the spare's sandbox and its wait; a sandbox that cannot start is logged (the next
        reset boots a desktop itself)."""
        try:
            spare = launch()
        except Exception as e:
            log.warning("cannot start the spare desktop: %s", e)
            return
        self.boot = spare

        def wait_for_spare() -> None:
            try:
                wait_ready(spare)
            except Exception as e:
                spare.error = e

        self._thread = threading.Thread(target=wait_for_spare, name="spare-desktop", daemon=True)
        self._thread.start()

    def take(self, kill: bool = False) -> Boot | None:
        """The spare once its boot has finished (ready or not), or None. With `kill`, a spare still
        booting is killed rather than waited for."""
        thread, self._thread = self._thread, None
        if kill and self.boot is not None:
            with contextlib.suppress(OSError):
                self.boot.sandbox.process.kill()
        if thread is not None:
            thread.join()
        spare, self.boot = self.boot, None
        return spare

    def wait(self) -> float | None:
        """Waits until the spare has finished booting; its boot time in seconds (None without a spare,
        or when it failed)."""
        thread, spare = self._thread, self.boot
        if thread is not None:
            thread.join()
        return spare.ready_s if spare is not None and spare.error is None else None

    def process_ids(self) -> list[int]:
        """Host PIDs of the spare's sandbox (empty while none is booted)."""
        return [] if self.boot is None else namespace_pids(self.boot.sandbox)
