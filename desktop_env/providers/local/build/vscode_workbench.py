"""What the VS Code build changes in code-server's web workbench, so that it starts and looks
as the VM's VS Code (Microsoft's desktop build of about the same release, used once, on Ubuntu).

code-server is VS Code's web build, whose product and defaults are the web's: it is named
"code-server", starts on the web walkthrough with a light theme and no side bar, saves on its
own, hides the menus behind a ☰ button and shows a command center in its title bar. The VM's
starts on the Welcome page with the dark theme and its Explorer open, saves when asked, and
under the window manager's title bar has a menu bar (File Edit Selection View Go Run Terminal
Help) and nothing else. So:
- BUNDLE_EDITS: the product's name and first page, the settings whose default differs between
  the web and the desktop or that a native title bar implies, the Welcome page's start entries
  and the VM's layout, in the workbench bundle. Each edit is one exact text of this release's
  bundle, replaced once. They are defaults, not settings: ~/.config/Code/User/settings.json
  starts absent, as on the VM;
- PAGE_EDITS: the page's title is VS Code's while the workbench loads;
- VM_CSS: a stylesheet appended to the workbench's gives the menus the VM's native menus'
  spacing, and ends the Manage menu with the two items the VM's has and code-server cannot
  offer, so that the items sit where the VM's do.
The recorded clicks these are checked against are in VM_DIFFERENCES.md (VS Code).
"""
from __future__ import annotations

from pathlib import Path

from ....errors import MissingDependency


class WorkbenchAdaptError(MissingDependency):
    """The workbench bundle is not the one these edits were written for."""


def workbench_bundle(vscode_lib: Path) -> Path:
    return vscode_lib / "out" / "vs" / "workbench" / "workbench.web.main.js"


def workbench_stylesheet(vscode_lib: Path) -> Path:
    return vscode_lib / "out" / "vs" / "workbench" / "workbench.web.main.css"


def workbench_page(vscode_lib: Path) -> Path:
    return vscode_lib / "out" / "vs" / "code" / "browser" / "workbench" / "workbench.html"


# The window is titled as VS Code's from the start (Electron creates it with the product's name),
# also while the workbench loads, before it sets its own title.
PAGE_EDITS: dict[str, tuple[str, str]] = {
    "title": ('<meta charset="utf-8" />', '<meta charset="utf-8" />\n\t\t<title>Visual Studio Code</title>'),
}


BUNDLE_EDITS: dict[str, tuple[str, str]] = {
    # The product the web client is built with (inlined in the bundle), named as Microsoft's build
    # (window titles, the Welcome page). openToWelcomeMainPage: a first run would open the first
    # walkthrough; the VM's had run before, so its Welcome page opens on the start list.
    "product": ('r={nameShort:"code-server",nameLong:"code-server",',
                'r={nameShort:"Visual Studio Code",nameLong:"Visual Studio Code",openToWelcomeMainPage:!0,'),
    # Settings whose default is `isWeb ? web's : desktop's`: the web's branch is dropped.
    "workbench.colorTheme": ("default:$.$i?w.ThemeSettingDefaults.COLOR_THEME_LIGHT:", "default:"),
    # ... and the colours it paints with before the theme has loaded (light on the web): otherwise
    # the first paint is light, and Chromium does not always repaint all of it once the theme is.
    "first paint's colours": ("createUnloadedThemeForThemeType(P.$i?A.ColorScheme.LIGHT:A.ColorScheme.DARK,me)",
                              "createUnloadedThemeForThemeType(A.ColorScheme.DARK,me)"),
    "window.menuBarVisibility": ('default:D.$i?"compact":', "default:"),
    "window.confirmBeforeClose": ('default:D.$i&&!(0,C.$kR)()?"keyboardOnly":', "default:"),
    "files.autoSave": ("default:o.$i?T.$sl.AFTER_DELAY:", "default:"),
    # A native title bar (the VM's) has no command center and no layout buttons.
    "window.commandCenter": ('[w.LayoutSettings.COMMAND_CENTER]:{type:"boolean",default:!0',
                             '[w.LayoutSettings.COMMAND_CENTER]:{type:"boolean",default:!1'),
    "workbench.layoutControl.enabled": ('[w.LayoutSettings.LAYOUT_ACTIONS]:{type:"boolean",default:!0',
                                        '[w.LayoutSettings.LAYOUT_ACTIONS]:{type:"boolean",default:!1'),
    # The Welcome page's start entries only the desktop shows; both commands exist in the web build
    # (a folder picker, the remote menu).
    "start entry Open Folder...": ('icon:r.$Zj.folderOpened,when:"!isWeb && !isMac"',
                                   'icon:r.$Zj.folderOpened,when:"!isMac"'),
    "start entry Connect to...": ('when:"!isWeb",icon:r.$Zj.remote', 'when:"true",icon:r.$Zj.remote'),
    # The VM's layout state, kept in its image from that use (an extension installed from the
    # Extensions view): an empty window opens with the side bar, 245 px wide, where a first start
    # hides it in empty windows and makes it a quarter of the window, at most 300 px. The recorded
    # clicks show 245 px: into the side bar's title and list, and at the Welcome page's and the
    # Settings editor's widgets, which sit half a side bar to the right of where they are without.
    "side bar in empty windows": ("ee.SIDEBAR_HIDDEN.defaultValue=this.g.getWorkbenchState()===p.WorkbenchState.EMPTY",
                                  "ee.SIDEBAR_HIDDEN.defaultValue=!1"),
    "side bar width": ("ee.SIDEBAR_SIZE.defaultValue=Math.min(300,ie.width/4)", "ee.SIDEBAR_SIZE.defaultValue=245"),
}

# The VM's menus are native (Electron's, as VS Code's with a native title bar): 26 px items like
# code-server's, but 9 px separators where code-server's take 11, and the menu bar's menus start
# 6 px higher (File's first item at y = 98 on the VM, where the recorded clicks into File and
# File > Preferences put it, against 104 here under a taller title bar). Without both, the VM's
# clicks into File > Preferences land on Auto Save.
MENUS = """
body .monaco-menu .monaco-action-bar.vertical .action-label.separator { margin: 4px 0 !important; }
.monaco-workbench .menubar .menubar-menu-items-holder { margin-top: -6px; }
"""

# The VM's Manage menu (native, desktop) ends with a separator, "Backup and Sync Settings...",
# a separator and "Check for Updates...": code-server has no settings sync service and no
# updates, so they are drawn as disabled items. The menu opens upwards from the gear, so without
# them every item above would sit 70 px lower than on the VM, where the recorded clicks land.
# The menu is known by two items no other context menu has together; its submenus are left alone.
MANAGE_MENU = ('.context-view:has(.action-label[aria-label="Command Palette..."])'
               ':has(.action-label[aria-label="User Tasks"]) .monaco-menu '
               '.monaco-action-bar:not(.monaco-submenu .monaco-action-bar)')
VM_CSS = f"""
/* osworld: the VM's desktop VS Code (see desktop_env/providers/local/build/vscode_workbench.py) */
{MENUS}
{MANAGE_MENU} > .actions-container::after,
{MANAGE_MENU}::after {{
  display: block;
  height: 26px;
  line-height: 26px;
  margin-top: 4px;
  padding: 4px 26px 0 30px;
  border-top: 1px solid var(--vscode-menu-separatorBackground);
  font-size: 13px;
  opacity: 0.4;
  cursor: default;
}}
{MANAGE_MENU} > .actions-container::after {{ content: "Backup and Sync Settings..."; }}
{MANAGE_MENU}::after {{ content: "Check for Updates..."; }}
"""


def adapt_workbench(vscode_lib: Path) -> None:
    """Applies the edits to code-server's `lib/vscode` (once, on a fresh install)."""
    _edit(workbench_bundle(vscode_lib), BUNDLE_EDITS)
    _edit(workbench_page(vscode_lib), PAGE_EDITS)
    with open(workbench_stylesheet(vscode_lib), "a") as stylesheet:
        stylesheet.write(VM_CSS)


def _edit(path: Path, edits: dict[str, tuple[str, str]]) -> None:
    text = path.read_text()
    for name, (web, desktop) in edits.items():
        found = text.count(web)
        if found != 1:
            raise WorkbenchAdaptError(f"{path}: edit {name!r}: expected {web!r} once, found it {found} times")
        text = text.replace(web, desktop)
    path.write_text(text)
