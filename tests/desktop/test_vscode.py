"""VS Code on a real desktop: a task opens a file in it, a scripted agent changes a setting through
its GUI with pyautogui, and `vscode_config` + `compare_config` score the change, as on OSWorld's VM;
and clicks recorded on the VM (UI-TARS's, ../shared/vm_trajectories) land here on the widgets they
landed on there, in the window's place and with the VM's release.

Like OSWorld's VS Code tasks, the task installs an evaluation extension (`code --install-extension`
of a .vsix; the one here is made by the test) whose command writes what it reads to a file.
VS Code is installed on first need, as a run does (a one-time build of a few minutes per machine).
"""
from __future__ import annotations

import json
import re
import time
import zipfile
from pathlib import Path

import pytest

from desktop_env.desktop_env import DesktopEnv
from desktop_env.evaluators.getters.vscode import vscode_config
from desktop_env.evaluators.recording import ReplayContext
from desktop_env.providers.local.build.vscode import VSCODE_RELEASE, ensure_vscode, installed_vscode

pytestmark = pytest.mark.desktop

EXTENSION_ID = "osworld-tests.eval-theme"
EXTENSION_JS = """
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');
const os = require('os');
exports.activate = (context) => {
  context.subscriptions.push(vscode.commands.registerCommand('osworldTests.getColorTheme', () => {
    const theme = vscode.workspace.getConfiguration('workbench').get('colorTheme');
    fs.writeFileSync(path.join(os.homedir(), 'GetColorTheme.txt'), String(theme));
  }));
};
"""
PACKAGE_JSON = {
    "name": "eval-theme", "publisher": "osworld-tests", "version": "0.0.1", "engines": {"vscode": "^1.60.0"},
    "main": "./extension.js", "activationEvents": ["onCommand:osworldTests.getColorTheme"],
    "contributes": {"commands": [{"command": "osworldTests.getColorTheme", "title": "GetColorTheme"}]},
}
VSIX_MANIFEST = """<?xml version="1.0" encoding="utf-8"?>
<PackageManifest Version="2.0.0" xmlns="http://schemas.microsoft.com/developer/vsx-schema/2011">
  <Metadata>
    <Identity Language="en-US" Id="eval-theme" Version="0.0.1" Publisher="osworld-tests"/>
    <DisplayName>eval-theme</DisplayName>
    <Description xml:space="preserve">Writes the colour theme to ~/GetColorTheme.txt</Description>
    <Properties><Property Id="Microsoft.VisualStudio.Code.Engine" Value="^1.60.0"/></Properties>
  </Metadata>
  <Installation><InstallationTarget Id="Microsoft.VisualStudio.Code"/></Installation>
  <Dependencies/>
  <Assets><Asset Type="Microsoft.VisualStudio.Code.Manifest" Path="extension/package.json" Addressable="true"/></Assets>
</PackageManifest>
"""
CONTENT_TYPES = """<?xml version="1.0" encoding="utf-8"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
  <Default Extension=".json" ContentType="application/json"/>
  <Default Extension=".js" ContentType="application/javascript"/>
  <Default Extension=".vsixmanifest" ContentType="text/xml"/>
</Types>
"""
THEME = "Solarized Light"


def write_vsix(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as vsix:
        vsix.writestr("[Content_Types].xml", CONTENT_TYPES)
        vsix.writestr("extension.vsixmanifest", VSIX_MANIFEST)
        vsix.writestr("extension/package.json", json.dumps(PACKAGE_JSON))
        vsix.writestr("extension/extension.js", EXTENSION_JS)
    return path


def theme_task() -> dict:
    """Shaped like OSWorld's vs_code tasks: install the evaluation extension, open a file with `code`,
    focus VS Code; the evaluator runs the extension's command through vscode_config."""
    return {
        "id": "vscode-theme", "snapshot": "vscode", "related_apps": ["vscode"],
        "instruction": f"Change VS Code's colour theme to {THEME}.",
        "config": [
            {"type": "upload_file", "parameters": {"files": [
                {"local_path": "eval-theme.vsix", "path": "/home/user/Downloads/eval-theme.vsix"}]}},
            {"type": "execute", "parameters": {"command": ["code", "--install-extension",
                                                           "/home/user/Downloads/eval-theme.vsix"]}},
            {"type": "execute", "parameters": {"command": "printf 'print(1)\\n' > ~/Desktop/main.py", "shell": True}},
            {"type": "launch", "parameters": {"command": ["code", "/home/user/Desktop/main.py"]}},
            {"type": "activate_window", "parameters": {"window_name": "main.py - Visual Studio Code"}},
        ],
        "evaluator": {
            "postconfig": [{"type": "activate_window", "parameters": {"window_name": "Visual Studio Code"}}],
            "func": "compare_config",
            "result": {"type": "vscode_config", "vscode_extension_command": "GetColorTheme",
                       "path": "/home/user/GetColorTheme.txt", "dest": "GetColorTheme.txt"},
            "expected": {"type": "rule", "rules": {"expected": THEME}},
        },
    }


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    ensure_vscode()
    env = DesktopEnv(screen_size=(1920, 1080), require_a11y_tree=False,  # the VM's screen
                     cache_dir=str(tmp_path_factory.mktemp("cache")))
    yield env
    env.close()


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("vscode-task")
    write_vsix(folder / "eval-theme.vsix")
    return folder


def assert_extension_installed(env: DesktopEnv) -> None:
    # The command as OSWorld's tasks give it (a list, not a shell line: `code` sees "|" and "grep").
    listing = env.controller.run_command(["code", "--list-extensions", "|", "grep", EXTENSION_ID])
    assert listing["output"] == EXTENSION_ID + "\n", listing


def test_a_theme_changed_through_vs_codes_theme_picker_scores_1(env, task_dir, tmp_path):
    env.reset(theme_task(), options={"task_dir": str(task_dir)})
    assert_extension_installed(env)
    # VS Code's "Preferences: Color Theme" (Ctrl+K Ctrl+T), then the theme picked by name.
    for action in ("pyautogui.hotkey('ctrl', 'k')",
                   "pyautogui.hotkey('ctrl', 't')",
                   f"pyautogui.typewrite({THEME!r}, interval=0.02)",
                   "pyautogui.press('enter')"):
        env.step(action, pause=1.0)
    env.step("DONE", pause=0)
    evaluation = env.evaluate_explained()
    assert evaluation.score == 1.0, evaluation
    settings = json.loads(env.controller.get_file("/home/user/.config/Code/User/settings.json"))
    assert settings["workbench.colorTheme"] == THEME
    # The keys it pressed and the file it read were recorded: a rescore replays them offline.
    recording = env.evaluation_context
    recording.write_blobs(tmp_path / "files")
    offline = ReplayContext(recording.manifest(), tmp_path / "files", tmp_path / "cache", None, {})
    assert Path(vscode_config(offline, theme_task()["evaluator"]["result"])).read_text() == THEME


def test_the_same_task_without_the_change_scores_0(env, task_dir):
    env.reset(theme_task(), options={"task_dir": str(task_dir)})
    assert_extension_installed(env)
    env.step("DONE", pause=0)
    evaluation = env.evaluate_explained()
    assert evaluation.score == 0.0, evaluation
    # The command ran and wrote the theme VS Code starts with: a real 0, not a missing file.
    assert env.controller.get_file("/home/user/GetColorTheme.txt") not in (None, THEME.encode())


def test_an_edit_saved_with_ctrl_s_by_the_postconfig_is_scored_from_disk(env, task_dir):
    """OSWorld's text-editing tasks end with this postconfig: focus VS Code, press Ctrl+S, wait 0.5 s."""
    (task_dir / "expected.py").write_text("a = 1\nb = 2")
    window = "edit.py - Visual Studio Code"
    task = {"id": "vscode-save", "instruction": "Add b = 2 on a new last line.", "config": [
        {"type": "execute", "parameters": {"command": "printf 'a = 1\\n' > ~/Desktop/edit.py", "shell": True}},
        {"type": "launch", "parameters": {"command": ["code", "/home/user/Desktop/edit.py"]}},
        {"type": "activate_window", "parameters": {"window_name": window}}],
        "evaluator": {
            "postconfig": [{"type": "activate_window", "parameters": {"window_name": window}},
                           {"type": "sleep", "parameters": {"seconds": 0.5}},
                           {"type": "execute", "parameters": {"command": [
                               "python", "-c", "import pyautogui; pyautogui.hotkey('ctrl', 's')"]}},
                           {"type": "sleep", "parameters": {"seconds": 0.5}}],
            "func": "compare_text_file",
            "result": {"type": "vm_file", "path": "/home/user/Desktop/edit.py", "dest": "edit.py"},
            "expected": {"type": "cloud_file", "path": "expected.py", "dest": "expected.py"}}}
    env.reset(task, options={"task_dir": str(task_dir)})
    for action in ("pyautogui.hotkey('ctrl', 'end')", "pyautogui.typewrite('b = 2', interval=0.02)"):
        env.step(action, pause=0.5)
    assert env.controller.get_file("/home/user/Desktop/edit.py") == b"a = 1\n"  # typed, not yet saved
    evaluation = env.evaluate_explained()
    assert evaluation.score == 1.0, (evaluation, env.controller.get_file("/home/user/Desktop/edit.py"))


def test_code_opens_a_new_window_after_the_last_one_was_closed(env, task_dir):
    """The closed window's extension host outlives it (code-server waits for a reconnection): the
    next file must still get a window on screen, as on the VM."""
    env.reset({"id": "vscode-reopen", "instruction": "", "config": [
        {"type": "execute", "parameters": {"command": "touch ~/first.txt ~/second.txt", "shell": True}},
        {"type": "launch", "parameters": {"command": ["code", "/home/user/first.txt"]}},
        {"type": "activate_window", "parameters": {"window_name": "first.txt - Visual Studio Code"}},
        {"type": "close_window", "parameters": {"window_name": "Visual Studio Code"}},
        {"type": "launch", "parameters": {"command": ["code", "/home/user/second.txt"]}},
        {"type": "activate_window", "parameters": {"window_name": "second.txt - Visual Studio Code"}},
    ]}, options={"task_dir": str(task_dir)})
    titles = env.controller.run_command(["wmctrl", "-l"])["output"]
    assert "second.txt - Visual Studio Code" in titles and "first.txt" not in titles, titles


def test_code_version_says_what_vs_codes_does_for_the_pinned_release(env):
    lines = env.controller.run_command(["code", "--version"])["output"].splitlines()
    vscode_lib = installed_vscode() / "code-server" / "node_modules" / "code-server" / "lib" / "vscode"
    commit = json.loads((vscode_lib / "product.json").read_text())["commit"]  # VS Code's, not code-server's
    assert lines == [VSCODE_RELEASE, commit, "x64"] or lines == [VSCODE_RELEASE, commit, "arm64"], lines
    assert VSCODE_RELEASE == "1.90.2"


# -- the VM's clicks ------------------------------------------------------------------------------
# OSWorld's vs_code tasks start VS Code with `code` and focus it; its first page is the Welcome page.
START_AS_ON_THE_VM = [{"type": "launch", "parameters": {"command": ["code"]}},
                      {"type": "activate_window", "parameters": {"window_name": "Visual Studio Code"}}]


def wait_for(env: DesktopEnv, found, what: str, seconds: float = 90.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.5)
    pytest.fail(f"no {what} in {seconds:.0f} s")


def window_titles(env: DesktopEnv) -> str:
    return env.controller.run_command(["wmctrl", "-l"])["output"]


def start_as_on_the_vm(env: DesktopEnv, task_dir: Path) -> None:
    env.reset({"id": "vscode-vm-clicks", "instruction": "", "config": START_AS_ON_THE_VM},
              options={"task_dir": str(task_dir)})
    wait_for(env, lambda: "Welcome - Visual Studio Code" in window_titles(env), "Welcome page")
    # The Explorer fills in once the extension host has started (Clone Repository is the git extension's).
    wait_for(env, lambda: "Clone Repository" in env.controller.get_accessibility_tree(), "Explorer")


def click(env: DesktopEnv, x: float, y: float) -> None:
    env.step(f"pyautogui.click({x}, {y}, button='left')", pause=2.0)


def test_the_window_is_maximized_beside_the_dock_under_the_top_bar(env, task_dir):
    start_as_on_the_vm(env, task_dir)
    frame = wait_for(env, lambda: re.search(r'<frame name="Welcome - Visual Studio Code"[^>]*'
                                            r'cp:screencoord="\((\d+), (\d+)\)" cp:size="\((\d+), (\d+)\)"',
                                            env.controller.get_accessibility_tree()), "window in the tree")
    # Its content, under the window manager's 37 px title bar: maximized beside the 70 px dock, as on the VM.
    assert tuple(map(int, frame.groups())) == (70, 64, 1850, 1016)


def test_the_manage_menus_settings_item_is_where_the_vm_had_it(env, task_dir):
    """9d425400 (and 70745df8, c6bf789c, e2b5e914): the gear at (90.24, 1031.4), then Settings."""
    start_as_on_the_vm(env, task_dir)
    click(env, 90.24, 1031.4)
    click(env, 192.0, 847.8)
    wait_for(env, lambda: "Settings - Visual Studio Code" in window_titles(env), "Settings editor")


def test_the_manage_menus_themes_submenu_is_where_the_vm_had_it(env, task_dir):
    """982d12a5: the gear, Themes, Color Theme."""
    start_as_on_the_vm(env, task_dir)
    click(env, 90.24, 1031.4)
    click(env, 174.72, 967.68)
    click(env, 597.12, 967.68)
    wait_for(env, lambda: "Select Color Theme" in env.controller.get_accessibility_tree(), "color theme picker")


def test_the_menu_bars_file_preferences_keyboard_shortcuts_is_where_the_vm_had_it(env, task_dir):
    """930fdb3b and ea98c5d7: File in the menu bar, Preferences, Keyboard Shortcuts."""
    start_as_on_the_vm(env, task_dir)
    click(env, 86.4, 72.36)
    click(env, 144.0, 533.52)
    click(env, 528.0, 609.12)
    wait_for(env, lambda: "Keyboard Shortcuts - Visual Studio Code" in window_titles(env), "Keyboard Shortcuts editor")


def test_the_extensions_view_and_the_welcome_pages_new_file_are_where_the_vm_had_them(env, task_dir):
    """57242fad: New File... on the Welcome page; 0512bb38, dcbe20e8: the Extensions icon."""
    start_as_on_the_vm(env, task_dir)
    click(env, 672.0, 406.08)
    wait_for(env, lambda: "Select File Type or Enter File Name" in env.controller.get_accessibility_tree(),
             "New File's picker")
    env.step("pyautogui.press('escape')", pause=1.0)
    click(env, 90.24, 303.48)
    wait_for(env, lambda: "Search Extensions in Marketplace" in env.controller.get_accessibility_tree(),
             "Extensions view")


def test_vs_code_itself_is_read_only_for_the_desktop_and_its_root(env):
    config = env.controller.get_file("/run/osworld-lib/vscode/config.yaml")
    for path in ("/run/osworld-lib/vscode/config.yaml", "/run/osworld-lib/vscode/share/applications/code.desktop"):
        write = f"echo 'auth: password' >> {path}"
        for attempt in (write, f"echo password | sudo -S sh -c \"{write}\""):
            done = env.controller.run_command(["sh", "-c", attempt])
            assert done["returncode"] != 0, (attempt, done)
    assert env.controller.get_file("/run/osworld-lib/vscode/config.yaml") == config
