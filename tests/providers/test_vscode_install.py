"""VS Code on the local desktop, host side: which tasks need it, where desktops see it, what doctor says,
and how an install that cannot be done says why. (The build itself and the `code` command run in
tests/desktop/test_vscode.py.)"""
from __future__ import annotations

from pathlib import Path

import pytest

from desktop_env import debian_packages
from desktop_env.providers.local import doctor
from desktop_env.providers.local.boot.sandbox import (
    SANDBOX_DESKTOP,
    SANDBOX_VSCODE,
    SandboxSpec,
    bwrap_argv,
    sandbox_env,
)
from desktop_env.providers.local.build import vscode


def spec(tmp_path: Path, vscode_dir: Path | None) -> SandboxSpec:
    return SandboxSpec(env_dir=tmp_path, src_dir=tmp_path / "src", venv_dir=tmp_path / "venv",
                       desktop_dir=tmp_path / "desktop", vscode_dir=vscode_dir)


def ro_binds(argv: list[str]) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, a in enumerate(argv) if a == "--ro-bind"]


def test_an_installed_vs_code_is_mounted_read_only_with_its_app_entry_on_the_data_path(tmp_path):
    argv = bwrap_argv(spec(tmp_path, tmp_path / "vscode"), ["true"])
    assert (str(tmp_path / "vscode"), SANDBOX_VSCODE) in ro_binds(argv)
    assert sandbox_env(spec(tmp_path, tmp_path / "vscode"))["XDG_DATA_DIRS"].split(":")[0] == f"{SANDBOX_VSCODE}/share"


def test_without_vs_code_nothing_is_mounted_and_the_data_path_is_the_desktops_view(tmp_path):
    argv = bwrap_argv(spec(tmp_path, None), ["true"])
    assert not any(target == SANDBOX_VSCODE for _, target in ro_binds(argv))
    assert sandbox_env(spec(tmp_path, None))["XDG_DATA_DIRS"] == f"{SANDBOX_DESKTOP}/share"


@pytest.mark.parametrize("task", [
    {"related_apps": ["vscode"]},
    {"snapshot": "vscode"},
    {"config": [{"type": "launch", "parameters": {"command": ["code", "/home/user/a.py"]}}]},
    {"config": [{"type": "execute", "parameters": {"command": "code --install-extension x.vsix", "shell": True}}]},
    {"evaluator": {"func": "compare_config", "result": {"type": "vscode_config", "vscode_extension_command": "X",
                                                        "path": "/home/user/X.txt", "dest": "X.txt"}}},
])
def test_a_task_that_uses_vs_code_needs_it(task):
    assert vscode.needs_vscode(task)


@pytest.mark.parametrize("task", [
    {"related_apps": ["libreoffice_calc"], "config": [{"type": "launch", "parameters": {"command": ["gedit"]}}]},
    {"config": [{"type": "execute", "parameters": {"command": ["python", "-c", "print('code')"]}}]},
    {"evaluator": {"func": "check_include_exclude", "result": {"type": "vm_command_line", "command": "codex"}}},
])
def test_other_tasks_do_not(task):
    assert not vscode.needs_vscode(task)


def test_tasks_without_vs_code_install_nothing(monkeypatch):
    monkeypatch.setattr(vscode, "ensure_vscode", lambda progress=None: pytest.fail("installed VS Code"))
    vscode.ensure_vscode_for([{"related_apps": ["gimp"]}])


def test_doctor_says_how_to_install_vs_code_when_it_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("OSWORLD_SANDBOX_SHARE", str(tmp_path))
    monkeypatch.setattr(debian_packages, "missing_packages",
                        lambda packages: [p for p in packages if p == "libkrb5-dev"])
    check = doctor.check_vscode()
    assert not check.ok and not check.required
    assert str(tmp_path) in check.detail
    assert check.fix == "apt-get install --no-install-recommends libkrb5-dev; then osworld env setup --vscode"


def test_an_install_without_the_build_packages_names_them_and_builds_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("OSWORLD_SANDBOX_SHARE", str(tmp_path))
    monkeypatch.setattr(debian_packages, "missing_packages", lambda packages: ["libxkbfile-dev"])
    with pytest.raises(vscode.VSCodeInstallError, match="apt-get install --no-install-recommends libxkbfile-dev"):
        vscode.ensure_vscode(progress=lambda line: None)
    assert list(tmp_path.iterdir()) == []


def test_a_failing_build_step_is_named_with_its_command_and_output(tmp_path):
    with pytest.raises(vscode.VSCodeInstallError) as raised:
        vscode._run("fetch Node.js and npm", ["sh", "-c", "echo npm error 404 no such package >&2; exit 1"], tmp_path)
    message = str(raised.value)
    assert "step 'fetch Node.js and npm'" in message and "exited with 1" in message
    assert "npm error 404 no such package" in message


def test_the_build_packages_are_debians_for_node_gyp_and_the_native_modules():
    needed = {"g++", "make", "python3", "libkrb5-dev", "libxkbfile-dev", "libsecret-1-dev"}
    assert needed <= set(vscode.build_packages())
