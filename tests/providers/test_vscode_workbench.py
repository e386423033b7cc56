"""The VS Code build's edits to code-server's web workbench (vscode_workbench) and its ripgrep without
GitHub, on small real files laid out as code-server's lib/vscode is. The edits on the real release are
checked by the build itself (each text must be found once) and on a desktop in tests/desktop/test_vscode.py."""
from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from desktop_env.providers.local.build import vscode
from desktop_env.providers.local.build.vscode_workbench import (
    BUNDLE_EDITS,
    PAGE_EDITS,
    VM_CSS,
    WorkbenchAdaptError,
    adapt_workbench,
    workbench_bundle,
    workbench_page,
    workbench_stylesheet,
)


@pytest.fixture
def make_lib(tmp_path):
    def make(bundle: str, page: str = '<head>\n\t\t<meta charset="utf-8" />\n</head>') -> Path:
        lib = tmp_path / "lib" / "vscode"
        for path, text in ((workbench_bundle(lib), bundle), (workbench_page(lib), page),
                           (workbench_stylesheet(lib), ".monaco-workbench{color:red}")):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return lib
    return make


def web_bundle() -> str:
    """Each text the edits replace, once, between code as the bundle has it."""
    return ";".join(f"define(x,function(){{{web}}})" for web, _ in BUNDLE_EDITS.values())


def test_every_web_text_becomes_the_desktops_and_the_stylesheet_and_title_are_added(make_lib):
    lib = make_lib(web_bundle())
    adapt_workbench(lib)
    bundle = workbench_bundle(lib).read_text()
    for name, (web, desktop) in BUNDLE_EDITS.items():
        assert desktop in bundle, name
        assert web not in bundle, name
    assert 'nameLong:"Visual Studio Code"' in bundle and "openToWelcomeMainPage:!0" in bundle
    assert workbench_stylesheet(lib).read_text() == ".monaco-workbench{color:red}" + VM_CSS
    assert "<title>Visual Studio Code</title>" in workbench_page(lib).read_text()


def test_a_bundle_of_another_release_is_an_error_naming_the_file_and_the_edit_and_is_left_as_it_was(make_lib):
    missing = "window.menuBarVisibility"
    bundle = web_bundle().replace(BUNDLE_EDITS[missing][0], "default:X.$i?\"compact\":")
    lib = make_lib(bundle)
    with pytest.raises(WorkbenchAdaptError) as raised:
        adapt_workbench(lib)
    message = str(raised.value)
    assert str(workbench_bundle(lib)) in message and repr(missing) in message and "found it 0 times" in message
    assert workbench_bundle(lib).read_text() == bundle


def test_a_text_found_twice_is_an_error_too(make_lib):
    web = PAGE_EDITS["title"][0]
    lib = make_lib(web_bundle(), page=f"<head>{web}{web}</head>")
    with pytest.raises(WorkbenchAdaptError, match="found it 2 times"):
        adapt_workbench(lib)


def test_the_manage_menus_last_items_are_drawn_on_the_menu_itself_not_its_submenus():
    assert 'content: "Backup and Sync Settings..."' in VM_CSS and 'content: "Check for Updates..."' in VM_CSS
    assert ":not(.monaco-submenu .monaco-action-bar)" in VM_CSS


def test_ripgreps_download_is_found_in_its_cache_made_from_the_registrys_package(tmp_path, monkeypatch):
    monkeypatch.setattr(vscode.platform, "machine", lambda: "x86_64")
    rg = tmp_path / "tools" / "node_modules" / "@vscode" / "ripgrep-universal" / "bin" / "linux-x64" / "rg"
    rg.parent.mkdir(parents=True)
    rg.write_bytes(b"\x7fELF ripgrep")
    vscode._seed_ripgrep_download(tmp_path / "tools", tmp_path / "tmp")
    # Where @vscode/ripgrep 1.15.9's postinstall looks before it would ask GitHub.
    archive = tmp_path / "tmp" / "vscode-ripgrep-cache-1.15.9" / "ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
    with tarfile.open(archive) as tar:
        assert tar.getnames() == ["rg"]
        extracted = tar.extractfile("rg")
        assert extracted is not None and extracted.read() == b"\x7fELF ripgrep"
