"""Runs the env server on 127.0.0.1 without a desktop, for tests (standard library only).

    python -m tests.server.serve_bare HOME [--public] [--token T] [--idle-timeout S] [--head-timeout S]
                                          [--max-connections N]

prints `READY <port>` once it listens.
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
from pathlib import Path

from desktop_env.server import routes_exec, routes_files, routes_observe, routes_windows
from desktop_env.server.httpd import Router, make_server
from desktop_env.server.state import ServerState


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("home")
    parser.add_argument("--public", action="store_true")
    parser.add_argument("--token")
    parser.add_argument("--idle-timeout", type=float, default=60.0)
    parser.add_argument("--head-timeout", type=float, default=None)
    parser.add_argument("--max-connections", type=int, default=64)
    args = parser.parse_args()

    runtime = Path(args.home) / ".runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {"HOME": args.home, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    state = ServerState(env=env, runtime_dir=str(runtime))
    router = Router()
    # routes_windows needs python-xlib when it registers, which the system Python has
    for module in (routes_observe, routes_exec, routes_files, routes_windows):
        module.register(router, state)
    # Listening as the desktop's own listeners do (the harness hands it sockets with a backlog of 128):
    # with socketserver's default of 5, a burst of connections waits out the kernel's 1 s SYN retries.
    listener = socket.create_server(("127.0.0.1", 0), backlog=128)
    server = make_server(router, sock=listener, public=args.public, token=args.token,
                         max_connections=args.max_connections, idle_timeout=args.idle_timeout,
                         **({"head_timeout": args.head_timeout} if args.head_timeout is not None else {}))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    address = server.server_address
    assert isinstance(address, tuple)  # a TCP listener's (host, port)
    print(f"READY {address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        state.close()


if __name__ == "__main__":
    main()
