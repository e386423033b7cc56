"""Fixtures of the server tests: the env server in a subprocess of its own (serverproc.py)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.serverproc import ServedProcess, serve


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServedProcess]:
    with serve(tmp_path / "home") as served:
        yield served


@pytest.fixture
def public_server(tmp_path: Path) -> Iterator[ServedProcess]:
    with serve(tmp_path / "home", "--public") as served:
        yield served
