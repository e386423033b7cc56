"""desktop_env/server/PROTOCOL.md is the env server's specification: its route tables list exactly the
routes the server registers, and its namespace table is the one the server writes and readers parse."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from desktop_env.a11y_namespaces import A11Y_NAMESPACES

REPO = Path(__file__).resolve().parents[2]
PROTOCOL = REPO / "desktop_env" / "server" / "PROTOCOL.md"
# The server runs on the system Python, which has python-xlib (routes_windows imports it).
SERVER_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
ROUTE_CELL = re.compile(r"^\| `((?:GET|POST)(?:, (?:GET|POST))*) (/[^` ]*)`")
NAMESPACE_ROW = re.compile(r"^\| `(\w+)` \| `(https://[^`]+)` \|")


def registered_endpoints() -> set[tuple[str, str]]:
    script = ("import json\n"
              "from desktop_env.server.app import build_router\n"
              "from desktop_env.server.state import ServerState\n"
              "print(json.dumps(build_router(ServerState(env={}, runtime_dir='/tmp')).endpoints()))\n")
    done = subprocess.run([SERVER_PYTHON, "-c", script], cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return {tuple(pair) for pair in json.loads(done.stdout)}


def section(title: str) -> str:
    text = PROTOCOL.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


def documented_endpoints() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for line in section("Routes").splitlines():
        match = ROUTE_CELL.match(line)
        if match:
            found.update((method, match.group(2)) for method in match.group(1).split(", "))
    return found


def test_every_registered_route_is_documented_and_nothing_else():
    registered, documented = registered_endpoints(), documented_endpoints()
    assert sorted(registered - documented) == [], "registered but missing from PROTOCOL.md"
    assert sorted(documented - registered) == [], "in PROTOCOL.md but not registered"


def test_the_namespace_table_is_the_one_the_server_writes():
    rows = dict(NAMESPACE_ROW.match(line).groups() for line in section("Accessibility tree XML").splitlines()
                if NAMESPACE_ROW.match(line))
    assert rows == A11Y_NAMESPACES
