"""Files the server writes in folders the desktop's user (so an agent) can write are never
written through a symlink planted there."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from desktop_env.server.executor import PersistentInterpreter
from desktop_env.server.state import ServerState


def test_the_interpreter_does_not_write_its_captures_through_planted_symlinks(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    with PersistentInterpreter(sys.executable, preload="import os\n") as interpreter:
        assert interpreter.run("print('warm')").output == "warm\n"
        capture_dir = Path(interpreter._capture_dir)
        for name in ("stdout", "stderr"):
            os.symlink(victim, capture_dir / name)
        result = interpreter.run("import sys; print('out'); print('err', file=sys.stderr)")
        assert (result.output, result.error, result.returncode) == ("out\n", "err\n", 0)
        assert victim.read_text() == "precious\n"
        assert not any(p.is_symlink() for p in capture_dir.iterdir())


def test_the_interpreter_remakes_a_capture_folder_swapped_for_a_symlink(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with PersistentInterpreter(sys.executable, preload="import os\n") as interpreter:
        capture_dir = Path(interpreter._capture_dir)
        # The child runs its preload as it starts, which makes the folder; on a busy machine that can come after
        # the swap below, so the swap waits for a first call: the folder is swapped between two calls.
        assert interpreter.run("pass").returncode == 0
        os.rmdir(capture_dir)
        os.symlink(elsewhere, capture_dir)
        assert interpreter.run("print('still captured')").output == "still captured\n"
        assert capture_dir.is_dir() and not capture_dir.is_symlink()
        assert list(elsewhere.iterdir()) == []


def test_each_recording_goes_to_a_new_private_folder(tmp_path):
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    victim = tmp_path / "victim.mp4"
    victim.write_bytes(b"keep")
    os.symlink(victim, runtime / "recording.mp4")  # the old fixed name, planted
    state = ServerState(env={"HOME": str(tmp_path)}, runtime_dir=str(runtime))
    first = Path(state.new_recording_path())
    assert first.parent.parent == runtime and first.name == "recording.mp4"
    assert not first.exists() and (first.parent.stat().st_mode & 0o777) == 0o700
    first.write_bytes(b"video")
    second = Path(state.new_recording_path())
    assert second.parent != first.parent and not first.parent.exists()
    assert victim.read_bytes() == b"keep"
