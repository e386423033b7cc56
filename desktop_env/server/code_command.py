"""`code` inside the desktop: VS Code as OSWorld's VM has it, made of code-server and Chromium.

The VM's `code` opens files and folders in VS Code's window and manages extensions. Here
VS Code is code-server (VS Code OSS as a web app; the harness installs it and mounts it
read-only at VSCODE_DIR) shown in a Chromium window in app mode, which has no browser UI:
- The server runs once per desktop, started by the first `code` that needs it, on a free
  loopback port of the desktop (its own network namespace), with VS Code's folders: user
  settings in ~/.config/Code/User, extensions in ~/.vscode/extensions.
- `code PATH` opens a folder (or a .code-workspace) in a new window, and a file in the
  window already open (in a new window when there is none), as VS Code does by default.
- `code --install-extension/--uninstall-extension/--list-extensions/--show-versions` and
  `--version` are code-server's own extension CLI, on the same folders.

Runs on the system Python with the standard library and Debian's python-xlib (the shim starts it
with -I), reading windows through the server's ewmh.py.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import http.client
import json
import os
import runpy
import signal
import socket
import subprocess
import sys
import time
import types
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Run alone (python3 -I puts no folder of ours on the path), so the server's table is loaded by its path.
SANDBOX_PATHS = runpy.run_path(str(Path(__file__).with_name("sandbox_paths.py")))
VSCODE_DIR = Path(SANDBOX_PATHS["VSCODE_DIR"])
SYSTEM_CHROMIUM = "/usr/lib/chromium/chromium"
# Chromium 120 set aside (vm_chromium.py), as the google-chrome shim runs it: VS Code of early 2024 was an Electron of
# Chromium 118-120, and Ubuntu 22.04's userland has no Chromium of its own (its chromium-browser is a snap).
ASIDE_CHROMIUM = Path(SANDBOX_PATHS["CHROMIUM_DIR"])
HOME = Path(os.environ.get("HOME", SANDBOX_PATHS["HOME"]))
USER_DATA = HOME / ".config" / "Code"        # VS Code's: User/settings.json, User/keybindings.json...
EXTENSIONS = HOME / ".vscode" / "extensions"  # VS Code's extensions folder
BROWSER_PROFILE = USER_DATA / "Browser"      # the window's own Chromium profile, apart from Chrome's
SESSION_SOCKET = USER_DATA / "code-server-ipc.sock"  # code-server's registry of open windows
WINDOW_CLASS = "Code"                        # VS Code's WM_CLASS, which code.desktop names

ARCHITECTURES = {"x86_64": "x64", "aarch64": "arm64"}
SERVER_START_S = 60.0
WINDOW_CONNECT_S = 60.0
BROWSER_EXIT_S = 10.0
SHOW_FILE_S = 10.0  # how long a file sent to an open window may take to show in its title
POLL_S = 0.1  # this file runs alone (python3 -I), without the server's poll_until: its waits are written out

CLI_FLAGS = {"--install-extension", "--uninstall-extension", "--list-extensions", "--show-versions",
             "--locate-extension", "--version", "-v", "--help", "-h", "--force"}
WINDOW_FLAGS = {"-n": "new_window", "--new-window": "new_window",
                "-r": "reuse_window", "--reuse-window": "reuse_window"}
UNSUPPORTED_HINT = ("this desktop's VS Code (code-server) takes paths, -n/--new-window, -r/--reuse-window and the "
                    "extension options (--install-extension, --uninstall-extension, --list-extensions, "
                    "--show-versions, --version)")


class CodeError(Exception):
    """What `code` prints before exiting with status 1."""


def state_dir() -> Path:
    """Per-desktop runtime state (the server's port and log); gone when the desktop stops."""
    folder = Path(os.environ.get("XDG_RUNTIME_DIR") or f"/tmp/code-{os.getuid()}") / "vscode"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


def note(message: str) -> None:
    """A line in the desktop's code.log: what each `code` did, for a window that never showed."""
    with contextlib.suppress(OSError), open(state_dir() / "code.log", "a") as log:
        log.write(f"{time.strftime('%H:%M:%S')} [{os.getpid()}] {message}\n")


def code_server_argv() -> list[str]:
    entry = VSCODE_DIR / "code-server" / "node_modules" / "code-server" / "out" / "node" / "entry.js"
    return [str(VSCODE_DIR / "node" / "bin" / "node"), str(entry), "--config", str(VSCODE_DIR / "config.yaml"),
            "--user-data-dir", str(USER_DATA), "--extensions-dir", str(EXTENSIONS)]


def check_installed() -> None:
    if not (VSCODE_DIR / "config.yaml").exists():
        raise CodeError("VS Code is not installed on this desktop's host: run `osworld env setup --vscode` "
                        "there (`osworld env doctor` says whether it is installed)")


# -- the server -----------------------------------------------------------------------------------
def _http_get(port: int, path: str, timeout: float = 2.0) -> int | None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        return connection.getresponse().status
    except OSError:
        return None
    finally:
        connection.close()


def running_port() -> int | None:
    """The port of this desktop's code-server when it runs and answers."""
    try:
        port = int((state_dir() / "port").read_text())
    except (OSError, ValueError):
        return None
    return port if _http_get(port, "/healthz") == 200 else None


def free_port() -> int:
    """A free loopback port, chosen before the server starts so that its window can open meanwhile.
    The desktop's loopback is its own (without --network): nothing else takes the port in between."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(while_starting: Callable[[int], None]) -> int:
    """Starts code-server on a free loopback port, calls `while_starting(port)` (the first window
    opens while the server starts: Chromium's start and the server's overlap), and waits until the
    server answers."""
    started = time.monotonic()
    log_path = state_dir() / "server.log"
    offset = log_path.stat().st_size if log_path.exists() else 0
    USER_DATA.mkdir(parents=True, exist_ok=True)
    EXTENSIONS.mkdir(parents=True, exist_ok=True)  # this release creates only the last level of each
    port = free_port()
    with open(log_path, "ab") as log, open(os.devnull, "rb") as devnull:
        server = subprocess.Popen([*code_server_argv(), "--bind-addr", f"127.0.0.1:{port}"], stdin=devnull,
                                  stdout=log, stderr=subprocess.STDOUT, cwd=HOME, start_new_session=True)
    while_starting(port)
    deadline = time.monotonic() + SERVER_START_S
    while _http_get(port, "/healthz") != 200:
        if server.poll() is not None or time.monotonic() > deadline:
            with open(log_path, "rb") as log:
                log.seek(offset)
                tail = log.read().decode(errors="replace").splitlines()[-10:]
            state = f"exited with status {server.returncode}" if server.poll() is not None else \
                f"did not answer in {SERVER_START_S:.0f} s"
            raise CodeError(f"VS Code's server {state}; its log ({log_path}) ends:\n" + "\n".join(tail))
        time.sleep(POLL_S)
    (state_dir() / "port").write_text(str(port))
    note(f"server answering on port {port} after {time.monotonic() - started:.1f} s")
    return port


@contextlib.contextmanager
def _lock():
    """One `code` at a time starts the server (a task may run two at once)."""
    with open(state_dir() / "lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def ensure_server(while_starting: Callable[[int], None]) -> int:
    """The running server's port; when none runs, starts one, calling `while_starting(port)` meanwhile."""
    with _lock():
        return running_port() or start_server(while_starting)


# -- windows --------------------------------------------------------------------------------------
def _unix_http(socket_path: str, method: str, path: str, body: dict | None = None,
               timeout: float = 2.0) -> tuple[int, bytes]:
    """One HTTP request over a Unix socket: code-server's session registry, or a window's IPC socket."""
    class UnixConnection(http.client.HTTPConnection):
        def connect(self):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(self.timeout)
            self.sock.connect(socket_path)

    connection = UnixConnection("localhost", timeout=timeout)
    try:
        data = None if body is None else json.dumps(body).encode()
        connection.request(method, path, data, {"Content-Type": "application/json"} if data else {})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def connected_window(path: str) -> str | None:
    """The IPC socket of the open window best suited to `path` (one whose folder holds it, else the
    latest), None when no window is connected."""
    try:
        status, body = _unix_http(str(SESSION_SOCKET), "GET", "/session?filePath=" + urllib.parse.quote(path))
        return (json.loads(body) or {}).get("socketPath") or None if status == 200 else None
    except (OSError, ValueError):
        return None


@functools.cache
def ewmh() -> Any:
    """The server's EWMH module (ewmh.py), loaded by its path: this file runs alone."""
    return types.SimpleNamespace(**runpy.run_path(str(Path(__file__).with_name("ewmh.py"))))


def vscode_windows() -> list[Any]:
    """VS Code's windows on screen (none when the display or its window manager cannot be asked)."""
    try:
        with ewmh().connect() as connection:
            return [window for window in ewmh().list_windows(connection) if window.wm_class[1] == WINDOW_CLASS]
    except ewmh().WindowControlError:
        return []


def code_window_titles() -> list[str]:
    return [window.title for window in vscode_windows()]


def windows_on_screen() -> bool:
    return bool(code_window_titles())


def forget_closed_windows() -> bool:
    """A closed window's extension host lives on (code-server keeps it for the window to reconnect)
    and stays in the registry, where a file would be sent to it and shown nowhere. With no VS Code
    window on screen, every registered one is such a window. Returns whether one is on screen."""
    if windows_on_screen():
        return True
    while (stale := connected_window(str(HOME))) is not None:
        with contextlib.suppress(OSError):
            _unix_http(str(SESSION_SOCKET), "POST", "/delete-session", {"socketPath": stale})
        if connected_window(str(HOME)) == stale:
            raise CodeError(f"VS Code's server keeps the closed window {stale} registered; see {state_dir()}")
    return False


def closing_browser() -> int | None:
    """The pid of the window's Chromium while it runs (its profile's SingletonLock names it), None."""
    try:
        pid = int(os.readlink(BROWSER_PROFILE / "SingletonLock").rsplit("-", 1)[1])
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError, IndexError):
        return None
    return pid if f"--user-data-dir={BROWSER_PROFILE}".encode() in cmdline else None


def let_closed_browser_exit() -> None:
    """With its last window closed, Chromium takes a moment to exit; a new Chromium on the same
    profile meanwhile hands its window to the exiting one, which drops it. Wait for the exit (and
    end a Chromium that keeps running without a window)."""
    if windows_on_screen() or (pid := closing_browser()) is None:
        return
    for sig, wait_s in ((None, BROWSER_EXIT_S), (signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
        if sig is not None:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait_s
        while closing_browser() == pid and time.monotonic() < deadline:
            time.sleep(POLL_S)
        if closing_browser() != pid:
            return


# The page a new window opens first. Titled as VS Code's window is from the moment it maps, it waits
# for the server (the first window opens while the server starts) and then goes to VS Code's page,
# given after '#'. It waits for an image of the server's own, which loads once the server serves
# its pages: its port answers a moment before (with "Cannot GET"). It goes nowhere but this
# desktop's own loopback.
OPENING_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Visual Studio Code</title>
<style>html, body { background: #1f1f1f; margin: 0; }</style></head>
<body><script>
const target = decodeURIComponent(location.hash.slice(1));
if (/^http:\\/\\/127\\.0\\.0\\.1:\\d+\\//.test(target)) {
  const probe = new URL("/_static/src/browser/media/favicon.ico", target).href;
  const poll = () => {
    const image = new Image();
    image.onload = () => location.replace(target);
    image.onerror = () => setTimeout(poll, 100);
    image.src = probe + "?" + Date.now();
  };
  poll();
}
</script></body></html>
"""


def opening_page() -> Path:
    page = state_dir() / "opening.html"
    if not page.exists():
        page.write_text(OPENING_PAGE)
    return page


def chromium_command() -> tuple[str, dict[str, str]]:
    """The browser VS Code's window runs in and its environment: the aside Chromium 120 with its own libraries
    when the desktop has it mounted, else the system's."""
    env = dict(os.environ, CHROME_DESKTOP="code.desktop")
    aside = ASIDE_CHROMIUM / "usr" / "lib" / "chromium" / "chromium"
    if os.access(aside, os.X_OK):
        env["LD_LIBRARY_PATH"] = ":".join(filter(None, [str(ASIDE_CHROMIUM / "lib"), env.get("LD_LIBRARY_PATH")]))
        return str(aside), env
    if not os.access(SYSTEM_CHROMIUM, os.X_OK):
        raise CodeError("VS Code's window needs Chromium, and this desktop has none: run `osworld env setup` on "
                        "its host (it builds Chromium 120)")
    return SYSTEM_CHROMIUM, env


def open_window(port: int, query: dict[str, str]) -> None:
    """A Chromium app window (no tabs, no address bar) on VS Code's page, in its own profile."""
    let_closed_browser_exit()
    url = f"http://127.0.0.1:{port}/" + (f"?{urllib.parse.urlencode(query)}" if query else "")
    app = opening_page().as_uri() + "#" + urllib.parse.quote(url, safe="")
    browser, env = chromium_command()
    with open(state_dir() / "window.log", "ab") as log, open(os.devnull, "rb") as devnull:
        subprocess.Popen([browser, f"--app={app}", f"--user-data-dir={BROWSER_PROFILE}", f"--class={WINDOW_CLASS}",
                          "--no-first-run", "--no-default-browser-check", "--disable-dev-shm-usage",
                          "--password-store=basic", "--force-renderer-accessibility", "--start-maximized",
                          "--disable-features=Translate", "--hide-crash-restore-bubble", "--force-dark-mode",
                          "--disable-gpu"],
                         stdin=devnull, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def wait_for_window(path: str) -> str:
    deadline = time.monotonic() + WINDOW_CONNECT_S
    while (socket_path := connected_window(path)) is None:
        if time.monotonic() > deadline:
            raise CodeError(f"VS Code's window did not connect to its server in {WINDOW_CONNECT_S:.0f} s; "
                            f"see {state_dir() / 'window.log'} and {state_dir() / 'server.log'}")
        time.sleep(POLL_S)
    return socket_path


def open_in_window(socket_path: str, files: list[str], folders: list[str], reuse: bool) -> None:
    """Asks an open window (its IPC socket) to open files and folders, as VS Code's CLI does."""
    body = {"type": "open", "fileURIs": files, "folderURIs": folders, "forceReuseWindow": reuse,
            "forceNewWindow": False, "gotoLineMode": True}
    try:
        status, answer = _unix_http(socket_path, "POST", "/", body, timeout=10.0)
    except OSError as e:
        raise CodeError(f"VS Code's window could not be reached to open {files + folders}: {e}") from None
    if status != 200:
        raise CodeError(f"VS Code's window refused to open {files + folders}: HTTP {status} {answer[:200]!r}")


def raise_window() -> None:
    """VS Code's first window to the front with the focus, if there is one."""
    try:
        with ewmh().connect() as connection:
            for window in ewmh().list_windows(connection):
                if window.wm_class[1] == WINDOW_CLASS:
                    ewmh().activate(connection, window.id)
                    return
    except (ewmh().WindowControlError, *ewmh().WINDOW_GONE):
        return


# -- the command ----------------------------------------------------------------------------------
def parse(argv: list[str]) -> tuple[dict[str, bool], list[str]]:
    flags = {"new_window": False, "reuse_window": False}
    paths = []
    for arg in argv:
        if arg in WINDOW_FLAGS:
            flags[WINDOW_FLAGS[arg]] = True
        elif arg.startswith("-"):
            raise CodeError(f"option {arg!r} is not supported: {UNSUPPORTED_HINT}")
        else:
            paths.append(os.path.abspath(arg))
    return flags, paths


def open_paths(argv: list[str]) -> None:
    flags, paths = parse(argv)
    folders = [p for p in paths if os.path.isdir(p)]
    workspaces = [p for p in paths if p.endswith(".code-workspace") and os.path.isfile(p)]
    files = [p for p in paths if p not in folders and p not in workspaces]
    started: list[int] = []

    def open_while_starting(port: int) -> None:
        # A server that is only starting has no window: this command's open now, their page waits.
        note(f"code {' '.join(argv)}: starting the server; its window opens meanwhile")
        open_new_windows(port, flags, paths, folders, workspaces, files, window=None)
        started.append(port)

    port = ensure_server(open_while_starting)
    if started:
        if files:
            show_files(port, None, flags, files)
        return
    on_screen = forget_closed_windows()
    probe = (files or folders or workspaces or [str(HOME)])[0]
    window = connected_window(probe)
    note(f"code {' '.join(argv)}: window {window or 'none'}, {'some' if on_screen else 'none'} on screen")
    if window is not None and flags["reuse_window"]:
        open_in_window(window, files, folders, reuse=True)
        raise_window()
        return
    open_new_windows(port, flags, paths, folders, workspaces, files, window)
    if files:
        show_files(port, window, flags, files)
    elif not paths and window is not None and not flags["new_window"]:
        raise_window()


def open_new_windows(port: int, flags: dict[str, bool], paths: list[str], folders: list[str],
                     workspaces: list[str], files: list[str], window: str | None) -> None:
    """The windows a command opens, given the window already connected (None: none): one per folder
    and workspace, and an empty one for files or nothing when no window takes them."""
    for folder in folders:
        open_window(port, {"folder": folder})
    for workspace in workspaces:
        open_window(port, {"workspace": workspace})
    if window is not None and not flags["new_window"]:
        return
    if not paths:
        open_window(port, {"ew": "true"} if flags["new_window"] else {})
    elif files and not folders and not workspaces:
        open_window(port, {"ew": "true"})


def show_files(port: int, window: str | None, flags: dict[str, bool], files: list[str]) -> None:
    """Opens `files` in `window`, or in the window just opened for them once it connects."""
    reused = window is not None and not flags["new_window"]
    if not reused:
        window = wait_for_window(files[0])
    assert window is not None  # wait_for_window raises rather than give none
    try:
        open_in_window(window, files, [], reuse=True)
        closing = reused and not shown_on_screen(os.path.basename(files[-1]))
    except CodeError as e:
        if not reused:
            raise
        note(f"the window {window} did not take the files: {e}")
        closing = True
    if closing:  # a window asked to close a moment ago is still on screen and registered for a while
        reopen_after_close(port, window, files)
    raise_window()


def reopen_after_close(port: int, closing: str, files: list[str]) -> None:
    """Opens `files` in another window once the window they were sent to, which was closing, is gone."""
    note(f"the window {closing} was closing; opening the files in another")
    with contextlib.suppress(OSError):
        _unix_http(str(SESSION_SOCKET), "POST", "/delete-session", {"socketPath": closing})
    deadline = time.monotonic() + BROWSER_EXIT_S
    while windows_on_screen() and time.monotonic() < deadline:
        time.sleep(POLL_S)
    forget_closed_windows()
    window = connected_window(files[0])
    if window is None:
        open_window(port, {"ew": "true"})
        window = wait_for_window(files[0])
    open_in_window(window, files, [], reuse=True)


def shown_on_screen(name: str, seconds: float = SHOW_FILE_S) -> bool:
    """False once no VS Code window is on screen before one's title names `name` (the window the
    file went to was closing); True when one does, or when one stays for `seconds` without."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        titles = code_window_titles()
        if not titles:
            return False
        if any(title.startswith(f"{name} ") or f" {name} " in title for title in titles):
            return True
        time.sleep(POLL_S * 2)
    return True


def print_version() -> None:
    """VS Code's three lines (version, commit, architecture): those of the VS Code release code-server
    is built from, from its product.json (code-server's own --version names code-server's commit)."""
    product_file = VSCODE_DIR / "code-server" / "node_modules" / "code-server" / "lib" / "vscode" / "product.json"
    try:
        product = json.loads(product_file.read_text())
        version, commit = product["version"], product["commit"]
    except (OSError, ValueError, KeyError) as e:
        raise CodeError(f"VS Code's version is not readable in {product_file}: {e}") from None
    print(f"{version}\n{commit}\n{ARCHITECTURES.get(os.uname().machine, os.uname().machine)}")


def main(argv: list[str]) -> int:
    try:
        check_installed()
        if argv in (["--version"], ["-v"]):
            print_version()
            return 0
        if any(arg in CLI_FLAGS or arg.split("=", 1)[0] in CLI_FLAGS for arg in argv):
            # code-server's own CLI for extensions and --version: output and exit status as its.
            # This release creates only the last level of the folders it is given.
            USER_DATA.mkdir(parents=True, exist_ok=True)
            EXTENSIONS.mkdir(parents=True, exist_ok=True)
            os.execv(code_server_argv()[0], [*code_server_argv(), *argv])
        open_paths(argv)
    except CodeError as e:
        note(f"failed: {e}")
        print(f"code: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
