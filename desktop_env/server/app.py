"""Builds the env server: routes on top of the HTTP plumbing, plus the port relays.

`python -m desktop_env.server.app --port 5000` serves an existing X session over
TCP (inside a VM, like OSWorld's server); the local provider instead starts it
through `desktop_env.server.session` on a Unix socket.
"""
from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

from ..desktop_defaults import DEFAULT_PASSWORD
from . import routes_exec, routes_files, routes_observe, routes_windows
from .access_policy import is_loopback
from .httpd import EnvServer, Router, configure_access, make_server
from .relay import UnixToTcpRelay
from .state import ServerState


def build_router(state: ServerState) -> Router:
    router = Router()
    for module in (routes_observe, routes_exec, routes_files, routes_windows):
        module.register(router, state)
    return router


def build_server(env: dict[str, str], unix_socket: str | None = None, host: str = "127.0.0.1", port: int = 5000,
                 forward_ports: list[int] | None = None, runtime_dir: str | None = None,
                 client_password: str = DEFAULT_PASSWORD, started: float | None = None,
                 children: dict[str, subprocess.Popen] | None = None,
                 announced: set[str] | None = None) -> tuple[EnvServer, ServerState]:
    runtime = runtime_dir or os.path.dirname(unix_socket or "") or "/tmp"
    state = ServerState(env=dict(env), runtime_dir=runtime, client_password=client_password,
                        started=started or time.monotonic(), children=children or {},
                        announced=announced if announced is not None else set())
    for port_number in forward_ports or []:
        state.relays.append(UnixToTcpRelay(str(Path(runtime) / f"port-{port_number}.sock"), "127.0.0.1", port_number))
    server = make_server(build_router(state), unix_socket=unix_socket, host=host, port=port)
    return server, state


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve the current X session over the OSWorld env protocol.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5000)
    parser.add_argument("--unix-socket", help="listen on this Unix socket instead of TCP")
    parser.add_argument("--token", default=os.environ.get("OSWORLD_SERVER_TOKEN") or None,
                        help="require 'Authorization: Bearer TOKEN' on every request (default: $OSWORLD_SERVER_TOKEN); "
                             "needed when --host is not a loopback address")
    args = parser.parse_args(argv)
    if not args.unix_socket and not args.token and not is_loopback(args.host):
        print(f"error: --host {args.host} is not a loopback address: anyone who reaches it could run commands here; "
              "give --token (or set OSWORLD_SERVER_TOKEN), or use --host 127.0.0.1", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    server, state = build_server(dict(os.environ), unix_socket=args.unix_socket, host=args.host, port=args.port)
    # Its TCP port is reachable by any browser on the machine: held to the browser-safe policy.
    configure_access(server, public=not args.unix_socket, token=args.token)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        state.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
