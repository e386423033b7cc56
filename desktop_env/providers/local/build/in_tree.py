"""Running one of a tree's own programs, as the desktop would see it: the tree read-only as `/`.

What builds things for desktops from the Ubuntu 22.04 userland (the env server's venv) runs the tree's own
tools, so that what they write names the tree's files by the paths desktops see (a venv's links to its
python3). bubblewrap gives the program the tree as its root, read-only, with a fresh /dev, /proc, /tmp and
/run, no network and nothing of the host but the folders bound in `binds` (writable), and kills it with
this process. The program runs as the caller's uid.
"""
from __future__ import annotations

import subprocess

from ....errors import ProviderError
from ..system_root import SystemRoot

TIMEOUT_S = 300
OUTPUT_CHARS = 800  # of a failed program's output, in its error


class InTreeError(ProviderError):
    """A program in the tree failed: the message names it and ends with what it printed."""


def in_tree_argv(system: SystemRoot, argv: list[str], binds: dict[str, str] | None = None) -> list[str]:
    """bwrap's command line for `argv` in `system`'s tree; `binds`: host folder -> where it shows, under /run."""
    mounts = ["--ro-bind", str(system.path), "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
              "--tmpfs", "/run"]
    for source, target in (binds or {}).items():
        mounts += ["--bind", source, target]
    return ["bwrap", *mounts, "--unshare-all", "--die-with-parent", "--new-session", "--chdir", "/",
            "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8", "--", *argv]


def run_in_tree(system: SystemRoot, argv: list[str], binds: dict[str, str] | None = None) -> str:
    """Runs `argv` in the tree and returns what it printed; InTreeError when it fails or outlasts TIMEOUT_S."""
    try:
        result = subprocess.run(in_tree_argv(system, argv, binds), capture_output=True, text=True,
                                timeout=TIMEOUT_S, env={"PATH": "/usr/bin:/bin"})
    except subprocess.TimeoutExpired:
        raise InTreeError(f"{' '.join(argv)} in {system.path} did not finish in {TIMEOUT_S} s") from None
    except OSError as e:
        raise InTreeError(f"cannot start bwrap for {' '.join(argv)} in {system.path}: {e}") from None
    if result.returncode != 0:
        output = (result.stderr or result.stdout).strip()[-OUTPUT_CHARS:]
        raise InTreeError(f"{' '.join(argv)} in {system.path} exited with {result.returncode}: {output}")
    return result.stdout.strip()
