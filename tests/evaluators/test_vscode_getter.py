"""The vscode_config getter, on recorded desktop answers: what it presses, when it reads, what it refuses.
(tests/desktop/test_vscode.py runs it in a real VS Code.)"""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from desktop_env.evaluators.getters import vscode
from desktop_env.evaluators.recording import ReplayContext, call_key
from desktop_env.safe_paths import UnsafeTaskPath

CONFIG = {"type": "vscode_config", "vscode_extension_command": "OpenProject", "path": "/home/user/OpenProject.txt",
          "dest": "OpenProject.txt"}
KEYS = ["pyautogui.hotkey(*['ctrl', 'shift', 'p'])", "pyautogui.typewrite('OpenProject')", "pyautogui.press('enter')"]


def answers(tmp_path: Path, reads: list[bytes | None]) -> ReplayContext:
    """A desktop whose file reads give `reads` in turn (the last one from then on)."""
    (tmp_path / "files").mkdir(exist_ok=True)
    calls = []
    for data in reads:
        answer: dict[str, object] = {"absent": True}
        if data is not None:
            digest = hashlib.sha256(data).hexdigest()
            (tmp_path / "files" / digest).write_bytes(data)
            answer = {"blob": digest, "size": len(data)}
        calls.append({"op": "read_file", "args": {"path": CONFIG["path"]}, "answer": answer})
    for code in KEYS:
        calls.append({"op": "run_python", "args": {"code": code},
                      "answer": {"value": {"output": "", "error": "", "returncode": 0}}})
    manifest = {"version": 2, "evaluated_at": "2026-11-25T09:00:00+00:00", "calls": calls}
    return ReplayContext(manifest, tmp_path / "files", tmp_path / "cache", None, {"id": "t"})


def test_it_runs_the_command_from_the_palette_and_fetches_the_file_it_writes(tmp_path):
    ctx = answers(tmp_path, [None, None, b"project"])
    assert Path(vscode.vscode_config(ctx, CONFIG)).read_bytes() == b"project"
    # First the file as it was, then the keys in order (a replay refuses any call not recorded).
    assert list(ctx.asked) == [call_key("read_file", {"path": CONFIG["path"]}),
                               *(call_key("run_python", {"code": code}) for code in KEYS)]


def test_a_file_the_command_never_writes_is_none(tmp_path, monkeypatch):
    monkeypatch.setattr(vscode, "WRITE_WAIT_S", 0.3)
    assert vscode.vscode_config(answers(tmp_path, [None]), CONFIG) is None


def test_a_file_already_there_counts_once_the_command_has_rewritten_it(tmp_path, monkeypatch):
    monkeypatch.setattr(vscode, "WRITE_WAIT_S", 5.0)
    ctx = answers(tmp_path, [b"left by the agent", b"left by the agent", b"project"])
    assert Path(vscode.vscode_config(ctx, CONFIG)).read_bytes() == b"project"


def test_an_unchanged_file_is_read_as_it_is_when_the_wait_ends(tmp_path, monkeypatch):
    monkeypatch.setattr(vscode, "WRITE_WAIT_S", 0.3)
    ctx = answers(tmp_path, [b"project"])
    assert Path(vscode.vscode_config(ctx, CONFIG)).read_bytes() == b"project"


@pytest.mark.parametrize("config, error", [
    ({**CONFIG, "vscode_extension_command": " "}, ValueError),
    ({**CONFIG, "dest": "../../OpenProject.txt"}, UnsafeTaskPath),
])
def test_a_bad_config_is_refused_before_a_key_is_pressed(tmp_path, config, error):
    ctx = answers(tmp_path, [])
    with pytest.raises(error):
        vscode.vscode_config(ctx, config)
    assert ctx.asked == {}
