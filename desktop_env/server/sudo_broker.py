"""Root's side of `sudo` inside a desktop: runs a command as root (or another user) for `user`.

Inside the sandbox no setuid program can work (bwrap's seccomp use sets no_new_privs),
so `sudo` (shims/sudo, sudo_client) asks this broker, which root_init started as the
desktop's root, over a Unix socket. The broker trusts nothing the client says but what
the kernel vouches for: the caller's uid (SO_PEERCRED) must be `user` (the sudoer, as on
OSWorld's VM) or root, and the password must be the VM's. The command runs with the
caller's stdin, stdout and stderr (passed as descriptors), its working folder, and the
environment sudo gives (env_reset, secure_path); its exit status goes back to the
client. A client that goes away (killed, timed out) takes its command's process group
with it.

Messages are one JSON object per line, each way:
  -> {"op": "auth", "password": "..."}            <- {"ok": true} | {"ok": false, "error": ...}
  -> {"op": "run", "argv": [...], "user": "root", "cwd": "...", "env": {...}, "set_env": {...}, "login": false}
     with the client's fds 0, 1, 2 attached (SCM_RIGHTS)
                                                  <- {"status": N} | {"error": "..."}
A message that is not a JSON object, or a field of the wrong type, gets {"error": ...} naming it.
"""
from __future__ import annotations

import array
import json
import os
import pwd
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
from dataclasses import dataclass, field

from ..desktop_defaults import DEFAULT_PASSWORD

SOCKET_DIR = "/run/sudo"
SOCKET_PATH = f"{SOCKET_DIR}/osworld-broker.sock"
BROKER_LOG = "sudo-broker.log"
SUDOERS = (0, 1000)  # root and `user`, who is in the sudo group on OSWorld's VM
SECURE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# What sudo's env_reset keeps of the caller's environment (Debian's defaults).
KEPT_VARIABLES = ("DISPLAY", "XAUTHORITY", "TERM", "COLORTERM", "COLORS", "LS_COLORS", "LANG", "LANGUAGE",
                  "LINGUAS", "TZ", "XDG_SESSION_COOKIE")
MAX_MESSAGE = 1 << 20


def read_password(session_json: str) -> str:
    with open(session_json) as f:
        return json.load(f).get("client_password", DEFAULT_PASSWORD)


def sudo_environment(caller_env: dict[str, str], target: pwd.struct_passwd, caller: pwd.struct_passwd,
                     argv: list[str], preserve: bool) -> dict[str, str]:
    if preserve:
        env = dict(caller_env)
    else:
        env = {k: v for k, v in caller_env.items() if k in KEPT_VARIABLES or k.startswith("LC_")}
    env.update({"PATH": SECURE_PATH, "HOME": target.pw_dir, "USER": target.pw_name, "LOGNAME": target.pw_name,
                "SHELL": target.pw_shell or "/bin/sh", "SUDO_USER": caller.pw_name, "SUDO_UID": str(caller.pw_uid),
                "SUDO_GID": str(caller.pw_gid), "SUDO_COMMAND": " ".join(argv)[:4096]})
    return env


class BadRequest(ValueError):
    """A request the broker cannot use; the client gets the message as its error."""


def _strings(value: object, field: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise BadRequest(f"'{field}' must be a list of strings, got {json.dumps(value)[:100]}")
    return value


def _variables(value: object, field: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise BadRequest(f"'{field}' must be an object of strings (NAME: value), got {json.dumps(value)[:100]}")
    return dict(value)


def _string(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise BadRequest(f"'{field}' must be a string, got {json.dumps(value)[:100]}")
    return value


@dataclass(frozen=True)
class RunRequest:
    """A "run" message, each field of the type the broker uses (BadRequest naming the field otherwise)."""
    argv: list[str]
    user: str = "root"
    cwd: str = "/"
    env: dict[str, str] = field(default_factory=dict)
    set_env: dict[str, str] = field(default_factory=dict)
    login: bool = False
    preserve_env: bool = False

    @classmethod
    def parse(cls, message: dict) -> RunRequest:
        def given(name: str, default: object) -> object:  # an absent or null field takes its default
            value = message.get(name)
            return default if value is None else value

        return cls(argv=_strings(given("argv", []), "argv"),
                   user=_string(given("user", "root"), "user") or "root",
                   cwd=_string(given("cwd", "/"), "cwd") or "/",
                   env=_variables(given("env", {}), "env"),
                   set_env=_variables(given("set_env", {}), "set_env"),
                   login=bool(message.get("login")), preserve_env=bool(message.get("preserve_env")))


class Connection:
    def __init__(self, sock: socket.socket, password: str):
        self.sock = sock
        self.password = password
        self.buffer = b""
        self.fds: list[int] = []
        self.authenticated = False  # root is, once its uid is known (serve)

    def receive(self) -> dict | None:
        while b"\n" not in self.buffer:
            fds = array.array("i")
            data, ancillary, _, _ = self.sock.recvmsg(65536, socket.CMSG_SPACE(16 * fds.itemsize))
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
            self.fds.extend(fds)
            if not data:
                return None
            self.buffer += data
            if len(self.buffer) > MAX_MESSAGE:
                raise ValueError("message too long")
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except ValueError as e:
            raise BadRequest(f"a request must be one JSON object per line: {e}") from None
        if not isinstance(message, dict):
            raise BadRequest(f"a request must be a JSON object, got {type(message).__name__}")
        return message

    def send(self, message: dict) -> None:
        self.sock.sendall(json.dumps(message).encode() + b"\n")

    def close_fds(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()

    def serve(self) -> None:
        uid = struct.unpack("3i", self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
        try:
            caller = pwd.getpwuid(uid)
        except KeyError:
            self.send({"error": f"you do not exist in the passwd database (uid {uid})"})
            return
        if uid not in SUDOERS:
            self.send({"error": f"{caller.pw_name} is not in the sudoers file.  This incident will be reported."})
            return
        self.authenticated = uid == 0
        while True:
            message = self.receive()
            if message is None:
                return
            if message.get("op") == "auth":
                self.authenticated = self.authenticated or message.get("password") == self.password
                self.send({"ok": self.authenticated})
            elif message.get("op") == "run":
                self.run(message, caller)
                return
            else:
                self.send({"error": f"unknown request {message.get('op')!r}"})
                return

    def run(self, message: dict, caller: pwd.struct_passwd) -> None:
        fds, self.fds = self.fds[:3], self.fds[3:]
        try:
            if not self.authenticated:
                self.send({"error": "a password is required"})
                return
            if len(fds) != 3:
                self.send({"error": "the request did not carry stdin, stdout and stderr"})
                return
            request = RunRequest.parse(message)
            name = request.user
            try:
                target = pwd.getpwnam(name) if not name.startswith("#") else pwd.getpwuid(int(name[1:]))
            except (KeyError, ValueError):
                self.send({"error": f"unknown user {name}"})
                return
            argv = request.argv
            if request.login or not argv:  # sudo -i / -s: the target's shell
                shell = target.pw_shell or "/bin/sh"
                argv = [shell, *(["-l"] if request.login else []), *(["-c", " ".join(argv)] if argv else [])]
            env = sudo_environment(request.env, target, caller, argv, preserve=request.preserve_env)
            env.update(request.set_env)  # `sudo VAR=value cmd`: ALL commands carry SETENV
            cwd = target.pw_dir if request.login else request.cwd
            self.spawn(argv, target, env, cwd, fds)
        finally:
            for fd in fds:
                os.close(fd)
            self.close_fds()

    def spawn(self, argv: list[str], target: pwd.struct_passwd, env: dict[str, str], cwd: str, fds: list[int]) -> None:
        groups = os.getgrouplist(target.pw_name, target.pw_gid)
        try:
            # A process group of its own (which _kill_group ends), made with a session of its own: the
            # broker has no terminal to lose, and Python 3.10 (Ubuntu 22.04's, which the broker runs on in
            # its userland) has no process_group argument.
            process = subprocess.Popen(
                argv, stdin=fds[0], stdout=fds[1], stderr=fds[2], env=env,
                cwd=cwd if os.path.isdir(cwd) else "/", user=target.pw_uid,
                group=target.pw_gid, extra_groups=groups, start_new_session=True,
                executable=_which(argv[0], env["PATH"]))
        except FileNotFoundError:
            self.send({"error": f"{argv[0]}: command not found"})
            return
        except OSError as e:
            self.send({"error": f"unable to execute {argv[0]}: {e.strerror}"})
            return
        pidfd = os.pidfd_open(process.pid)
        watched: list[int | socket.socket] = [pidfd, self.sock]
        try:
            while True:
                ready, _, _ = select.select(watched, [], [])
                if pidfd in ready:
                    break
                if not self.sock.recv(1, socket.MSG_PEEK):  # the client is gone: so is its command
                    _kill_group(process.pid)
                    break
        finally:
            os.close(pidfd)
        status = process.wait()
        try:
            self.send({"status": status if status >= 0 else 128 - status})
        except OSError:
            pass


def _which(command: str, path: str) -> str:
    if "/" in command:
        return command
    for folder in path.split(":"):
        candidate = os.path.join(folder, command)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(command)


def _kill_group(pid: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return


def handle(sock: socket.socket, password: str) -> None:
    with sock:
        connection = Connection(sock, password)
        try:
            connection.serve()
        except BadRequest as e:
            try:
                connection.send({"error": str(e)})
            except OSError:
                pass
        except (OSError, ValueError) as e:
            print(f"sudo broker: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        finally:
            connection.close_fds()


def main(argv: list[str] | None = None) -> None:
    args = argv if argv is not None else sys.argv[1:]
    password = read_password(args[0])
    os.makedirs(SOCKET_DIR, mode=0o755, exist_ok=True)
    if os.path.lexists(SOCKET_PATH):
        os.unlink(SOCKET_PATH)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(SOCKET_PATH)
    os.chmod(SOCKET_PATH, 0o666)  # anyone inside may ask; SO_PEERCRED says who did
    server.listen(16)
    print("sudo broker: listening", flush=True)
    while True:
        sock, _ = server.accept()
        threading.Thread(target=handle, args=(sock, password), daemon=True).start()


if __name__ == "__main__":
    main()
