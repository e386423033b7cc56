"""`sudo` inside the desktop: the options OSWorld's tasks use, answered as sudo answers them.

The password comes from stdin with -S (one line, read byte by byte so the rest of stdin
stays the command's), else from the terminal; without either sudo's own message says
why not. The broker (sudo_broker) checks it and runs the command with this process's
stdin, stdout and stderr. In a desktop without a root of its own (a harness that is not
root) there is no broker, and sudo says so in one line and exits 1.

Runs on the system Python without the desktop_env package (`python3 -I`), so it works
whatever the caller's environment.
"""
from __future__ import annotations

import array
import json
import os
import pwd
import runpy
import signal
import socket
import sys
import termios

SOCKET_PATH = "/run/sudo/osworld-broker.sock"  # sudo_broker.SOCKET_PATH
# Run alone (python3 -I puts no folder of ours on the path), so the server's table is loaded by its path.
UNAVAILABLE_NOTE = runpy.run_path(os.path.join(os.path.dirname(__file__), "sandbox_paths.py"))["SUDO_UNAVAILABLE_NOTE"]
ATTEMPTS = 3
USAGE = ("usage: sudo -h | -K | -k | -V\n"
         "usage: sudo [-ABbEHknPS] [-g group] [-h host] [-p prompt] [-u user] [VAR=value] [-i|-s] [<command>]\n")
NO_TERMINAL = ("sudo: a terminal is required to read the password; either use the -S option to read from "
               "standard input or configure an askpass helper\nsudo: a password is required\n")
WITH_VALUE = {"-u": "user", "-g": "group", "-p": "prompt", "-C": "close_from", "-D": "chdir",
              "-U": "other_user", "-r": "role", "-t": "type", "-T": "timeout"}
LONG = {"--stdin": "-S", "--user": "-u", "--group": "-g", "--prompt": "-p", "--preserve-env": "-E",
        "--set-home": "-H", "--login": "-i", "--shell": "-s", "--non-interactive": "-n", "--reset-timestamp": "-k",
        "--remove-timestamp": "-K", "--validate": "-v", "--list": "-l", "--version": "-V", "--help": "-h",
        "--background": "-b", "--chdir": "-D"}


class Usage(Exception):
    pass


def _value(args: list[str], i: int, inline: str, missing: str) -> tuple[str, int]:
    """An option's value: written with it (`-uroot`, `--user=root`), else the next argument
    (then `i` moves past it)."""
    if inline:
        return inline, i
    if i + 1 >= len(args):
        raise Usage(missing)
    return args[i + 1], i + 1


def parse(args: list[str]) -> tuple[set[str], dict[str, str], list[str]]:
    flags: set[str] = set()
    values: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if arg.startswith("--"):
            name, _, value = arg.partition("=")
            if name not in LONG:
                raise Usage(f"sudo: unrecognized option '{arg}'")
            short = LONG[name]
            if short in WITH_VALUE:
                values[WITH_VALUE[short]], i = _value(args, i, value, f"sudo: option '{name}' requires an argument")
            else:
                flags.add(short)
            i += 1
            continue
        if not arg.startswith("-") or arg == "-":
            break
        j = 1
        while j < len(arg):
            short = "-" + arg[j]
            if short in WITH_VALUE:
                values[WITH_VALUE[short]], i = _value(args, i, arg[j + 1:],
                                                      f"sudo: option requires an argument -- '{arg[j]}'")
                break
            flags.add(short)
            j += 1
        i += 1
    return flags, values, args[i:]


def _unavailable() -> int:
    try:
        with open(UNAVAILABLE_NOTE) as f:
            reason = f.read().strip()
    except OSError:
        reason = "this desktop has no root of its own"
    sys.stderr.write(f"sudo: not available in this desktop: {reason}\n")
    return 1


def _read_line(fd: int) -> str | None:
    """One line from `fd`, byte by byte, so what follows stays there for the command."""
    data = bytearray()
    while True:
        byte = os.read(fd, 1)
        if not byte:
            return data.decode(errors="replace") if data else None
        if byte == b"\n":
            return data.decode(errors="replace")
        data += byte


def _read_from_terminal(prompt: str) -> str | None:
    fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    try:
        os.write(fd, prompt.encode())
        old = termios.tcgetattr(fd)
        new = list(old)
        new[3] &= ~termios.ECHO  # no echo; TCSADRAIN keeps what was typed ahead, as sudo does
        termios.tcsetattr(fd, termios.TCSADRAIN, new)
        try:
            line = _read_line(fd)
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, old)
            os.write(fd, b"\n")
        return line
    finally:
        os.close(fd)


class Broker:
    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(SOCKET_PATH)
        self.reader = self.sock.makefile("rb")

    def ask(self, message: dict, fds: list[int] | None = None) -> dict:
        data = json.dumps(message).encode() + b"\n"
        if fds:
            self.sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())])
        else:
            self.sock.sendall(data)
        line = self.reader.readline()
        if not line:
            raise ConnectionError("the sudo broker closed the connection")
        return json.loads(line)


def authenticate(broker: Broker, flags: set[str], prompt: str) -> int:
    """0 once the broker accepts a password, else sudo's exit status (1) with its messages."""
    if "-n" in flags:
        sys.stderr.write("sudo: a password is required\n")
        return 1
    failures = 0
    for _ in range(ATTEMPTS):
        if "-S" in flags:
            sys.stderr.write(prompt)
            sys.stderr.flush()
            password = _read_line(0)
        else:
            try:
                password = _read_from_terminal(prompt)
            except OSError:
                sys.stderr.write(NO_TERMINAL)
                return 1
        if password is None:
            if "-S" in flags:
                sys.stderr.write("\n")
            sys.stderr.write("sudo: no password was provided\n")
            break
        answer = broker.ask({"op": "auth", "password": password})
        if answer.get("ok"):
            return 0
        if "error" in answer:
            sys.stderr.write(f"sudo: {answer['error']}\n")
            return 1
        failures += 1
        if failures < ATTEMPTS:
            sys.stderr.write("Sorry, try again.\n")
    if failures:
        plural = "s" if failures > 1 else ""
        sys.stderr.write(f"sudo: {failures} incorrect password attempt{plural}\n")
    return 1


def main(args: list[str]) -> int:
    try:
        flags, values, command = parse(args)
    except Usage as e:
        sys.stderr.write(f"{e}\n{USAGE}")
        return 1
    if "-V" in flags:
        print("Sudo version 1.9.13p3 (OSWorld desktop broker)")
        return 0
    if "-h" in flags and not command:
        sys.stdout.write(USAGE)
        return 0
    if ("-k" in flags or "-K" in flags) and not command and not ({"-v", "-l", "-i", "-s"} & flags):
        return 0  # no cached credentials to forget: every sudo asks again
    assignments = {}
    while command and "=" in command[0] and not command[0].startswith("="):  # VAR=value before the command
        key, _, value = command.pop(0).partition("=")
        assignments[key] = value
    if not command and not ({"-v", "-l", "-i", "-s"} & flags):
        sys.stderr.write(USAGE)
        return 1
    if not os.path.exists(SOCKET_PATH):
        return _unavailable()
    me = pwd.getpwuid(os.getuid()).pw_name
    prompt = values.get("prompt", "[sudo] password for %p: ").replace("%p", me).replace("%u", me)
    try:
        broker = Broker()
        if os.getuid() != 0:  # root runs sudo without a password
            status = authenticate(broker, flags, prompt)
            if status:
                return status
        if "-v" in flags and not command:
            return 0
        if "-l" in flags:
            print(f"User {me} may run the following commands on osworld:\n    (ALL : ALL) ALL")
            return 0
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # closing the socket ends the command
            signal.signal(sig, lambda number, _: os._exit(128 + number))
        request = {"op": "run", "argv": command, "user": values.get("user", "root"), "cwd": os.getcwd(),
                   "env": dict(os.environ), "set_env": assignments, "login": "-i" in flags,
                   "preserve_env": "-E" in flags}
        answer = broker.ask(request, fds=[0, 1, 2])
    except (OSError, ValueError) as e:
        sys.stderr.write(f"sudo: cannot reach the desktop's sudo broker: {e}\n")
        return 1
    if "error" in answer:
        sys.stderr.write(f"sudo: {answer['error']}\n")
        return 1
    return int(answer.get("status", 1))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
