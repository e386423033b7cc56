"""Where a desktop may write (desktop_env/providers/local/boot/desktop_storage.py), in small real sandboxes.

Each test starts bwrap with the desktop's own storage mounts around a shell command (no
desktop: milliseconds), and reads inside as the harness does.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from desktop_env.providers.local.boot.desktop_storage import (
    LOG_TAIL_BYTES,
    OutputTail,
    Storage,
    home_full,
    log_tails,
    mounts,
    start_command,
)

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


def sandbox(tmp_path: Path, command: list[str], disk_bytes: int = 8 << 20) -> tuple[subprocess.Popen, OutputTail]:
    """`command` in a bwrap sandbox with the desktop's runtime folder and home; its output in an OutputTail."""
    template = tmp_path / "template"
    (template / "Documents").mkdir(parents=True, exist_ok=True)
    (template / ".bashrc").write_text("PS1='$ '\n")
    harness = tmp_path / "run-0"
    harness.mkdir(exist_ok=True)
    (harness / "session.json").write_text('{"width": 800}')
    links = [arg for name in ("bin", "lib", "lib64", "sbin") if os.path.islink(f"/{name}")
             for arg in ("--symlink", os.readlink(f"/{name}"), f"/{name}")]
    argv = ["bwrap", "--ro-bind", "/usr", "/usr", *links, "--proc", "/proc", "--dev", "/dev",
            "--size", str(1 << 20), "--tmpfs", "/run", "--dir", "/home",
            *mounts(Storage(disk_bytes=disk_bytes, home_template=template, harness_dir=harness)),
            "--remount-ro", "/", "--unshare-user", "--uid", "1000", "--gid", "1000", "--unshare-pid",
            "--die-with-parent", "--clearenv", "--setenv", "HOME", "/home/user", "--setenv", "PATH", "/usr/bin:/bin",
            "--", *start_command(command)]
    output = OutputTail()
    try:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=output.write_fd, stderr=output.write_fd)
    finally:
        output.close_writer()
    return process, output


def parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2:].split()[1])


def inner_pid(process: subprocess.Popen, ready: str = "/run/osworld/logs/ready", timeout: float = 10) -> int:
    """Host PID of the `sleep` the sandbox's command ends in, once `ready` exists inside."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in map(int, filter(str.isdigit, os.listdir("/proc"))):
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() != "sleep":
                    continue
                ancestor = pid
                while ancestor > 1 and ancestor != process.pid:
                    ancestor = parent_of(ancestor)
                if ancestor == process.pid and os.path.exists(f"/proc/{pid}/root{ready}"):
                    return pid
            except OSError:
                continue
        assert process.poll() is None, "the sandbox exited"
        time.sleep(0.02)
    raise AssertionError("the sandbox's command did not get ready")


def stop(process: subprocess.Popen) -> None:
    process.kill()
    process.wait()


def test_the_home_is_copied_from_the_template_and_capped(tmp_path):
    process, output = sandbox(tmp_path, ["sh", "-c", "ls -A ~; stat -c %a ~; df -B1 --output=size ~ | tail -1; "
                                                     "dd if=/dev/zero of=$HOME/fill bs=1M count=64 2>&1; "
                                                     "cat /run/osworld/session.json; "
                                                     "echo >> /run/osworld/session.json 2>&1"])
    assert process.wait(30) == 2  # the last write: to the harness's file, read-only inside
    output.wait(5)
    lines = [line.strip() for line in output.text().splitlines()]
    assert lines[:5] == [".bashrc", "Documents", "700", str(8 << 20), "dd: error writing '/home/user/fill': "
                                                                        "No space left on device"], lines
    assert '{"width": 800}' in output.text() and "Read-only file system" in output.text()
    assert not (tmp_path / "template" / "fill").exists()


def test_a_full_home_is_reported_and_an_emptied_one_is_not(tmp_path):
    process, _ = sandbox(tmp_path, ["sh", "-c", "dd if=/dev/zero of=$HOME/fill bs=1M count=64 2>/dev/null; "
                                                "touch /run/osworld/logs/ready; exec sleep 30"])
    try:
        pid = inner_pid(process)
        assert home_full(pid, 8 << 20) == "the desktop filled its home folder (a cap of 8.0 MiB)"
        os.unlink(f"/proc/{pid}/root/home/user/fill")
        assert home_full(pid, 8 << 20) == ""
    finally:
        stop(process)
    assert home_full(pid, 8 << 20) == ""  # a sandbox that is gone has nothing to say


def test_logs_are_read_inside_without_following_what_the_desktop_planted(tmp_path):
    secret = tmp_path / "host-secret"
    secret.write_text("host only\n")
    process, _ = sandbox(tmp_path, ["sh", "-c", f"echo started > /run/osworld/logs/Xvfb.log; "
                                                f"ln -s {secret} /run/osworld/logs/planted.log; "
                                                f"mkfifo /run/osworld/logs/fifo.log; "
                                                f"touch /run/osworld/logs/ready; exec sleep 30"])
    try:
        tails = log_tails(inner_pid(process))
    finally:
        stop(process)
    assert tails["Xvfb.log"] == "started\n"
    assert tails["planted.log"] == "" and tails["fifo.log"] == ""


def test_the_logs_folder_replaced_by_a_symlink_is_not_followed(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "x.log").write_text("host file\n")
    process, _ = sandbox(tmp_path, ["sh", "-c", f"mv /run/osworld/logs /run/osworld/old; "
                                                f"ln -s {tmp_path}/elsewhere /run/osworld/logs; "
                                                f"touch /run/osworld/old/ready; exec sleep 30"])
    try:
        assert log_tails(inner_pid(process, ready="/run/osworld/old/ready")) == {}
    finally:
        stop(process)


def test_a_failed_command_leaves_its_log_tails_in_the_output(tmp_path):
    process, output = sandbox(tmp_path, ["sh", "-c", "echo 'Fatal server error: no screens' "
                                                     "> /run/osworld/logs/Xvfb.log; exit 3"])
    assert process.wait(30) == 3
    output.wait(5)
    assert "Fatal server error: no screens" in output.text()


def test_the_output_keeps_only_its_tail_whatever_is_written(tmp_path):
    process, output = sandbox(tmp_path, ["sh", "-c", "head -c 8000000 /dev/zero | tr '\\0' x; echo; echo last line"])
    assert process.wait(60) == 0
    output.wait(10)
    text = output.text()
    assert len(text) == LOG_TAIL_BYTES and text.endswith("last line\n")
