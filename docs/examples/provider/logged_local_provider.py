"""An example provider: the local desktop, with a log of how long each start, revert and stop took.

Use it from Python: `DesktopEnv(provider=LoggedLocalProvider(screen_size=(1280, 720)))`, or by
name: `osworld run --plugin docs/examples/provider/logged_local_provider.py --provider logged-local`.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from desktop_env.providers import provider
from desktop_env.providers.local import LocalProvider


@provider("logged-local")
class LoggedLocalProvider(LocalProvider):
    def __init__(self, **options):
        super().__init__(**options)
        self.events: list[tuple[str, float]] = []  # (what, seconds)

    @contextmanager
    def _timed(self, what: str) -> Iterator[None]:
        started = time.monotonic()
        yield
        self.events.append((what, time.monotonic() - started))

    def start_emulator(self, path_to_vm=None, headless=True, os_type="Ubuntu") -> None:
        with self._timed("start"):
            super().start_emulator(path_to_vm, headless, os_type)

    def revert_to_snapshot(self, path_to_vm=None, snapshot_name="init_state") -> None:
        with self._timed("revert"):
            super().revert_to_snapshot(path_to_vm, snapshot_name)

    def stop_emulator(self, path_to_vm=None) -> None:
        with self._timed("stop"):
            super().stop_emulator(path_to_vm)
