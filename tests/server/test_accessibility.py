"""GET /accessibility and GET /terminal on a real desktop: the XML follows OSWorld's
conventions (desktop_env/server/PROTOCOL.md, "Accessibility tree XML"), windows show up by name, and a
spreadsheet contributes only the cells on screen."""
from __future__ import annotations

import io
import time
import uuid
import xml.etree.ElementTree as ET

import pytest

from desktop_env.a11y_namespaces import A11Y_NAMESPACES as NAMESPACES
from mm_agents.observations import linearize

pytestmark = pytest.mark.desktop

ST = "{" + NAMESPACES["st"] + "}"
CP = "{" + NAMESPACES["cp"] + "}"
APP_TIMEOUT_S = 60

# A flat (single XML file) spreadsheet: LibreOffice opens it without an import dialog.
FODS = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
 <office:body><office:spreadsheet><table:table table:name="Data"><table:table-row>
  <table:table-cell office:value-type="string"><text:p>{marker}</text:p></table:table-cell>
  <table:table-cell office:value-type="float" office:value="42"><text:p>42</text:p></table:table-cell>
 </table:table-row></table:table></office:spreadsheet></office:body>
</office:document>
"""


def accessibility_xml(desktop) -> str:
    response = desktop.get("/accessibility")
    assert response.status_code == 200, response.text
    return response.json()["AT"]


def accessibility_tree(desktop) -> ET.Element:
    return ET.fromstring(accessibility_xml(desktop))


def applications_named(root: ET.Element, fragment: str) -> list[ET.Element]:
    return [app for app in root if app.tag == "application" and fragment in app.get("name", "").lower()]


def launch(desktop, argv: list[str]) -> None:
    response = desktop.post("/setup/launch", json={"command": argv, "shell": False})
    assert response.status_code == 200, response.text


def close_window(desktop, title_fragment: str) -> None:
    desktop.post("/setup/close_window", json={"window_name": title_fragment})


def upload(desktop, path: str, content: bytes) -> None:
    response = desktop.post("/setup/upload", data={"file_path": path},
                            files={"file_data": (path.rsplit("/", 1)[-1], content)})
    assert response.status_code == 200, response.text


def test_tree_is_rooted_at_the_desktop_frame_with_osworld_namespaces(desktop):
    text = accessibility_xml(desktop)
    declared = dict(prefix_and_uri for _, prefix_and_uri in ET.iterparse(io.StringIO(text), events=("start-ns",)))
    assert declared == NAMESPACES
    root = ET.fromstring(text)
    assert root.tag == "desktop-frame"
    assert all(child.tag == "application" for child in root)
    assert applications_named(root, "gnome-shell"), [app.get("name") for app in root]


def test_every_node_has_a_name_and_states_are_true_flags(desktop):
    root = accessibility_tree(desktop)
    for node in root.iter():
        assert "name" in node.attrib, node.tag
        assert " " not in node.tag
        assert all(value == "true" for key, value in node.attrib.items() if key.startswith(ST)), node.attrib


def test_only_visible_and_showing_nodes_have_screen_coordinates(desktop):
    root = accessibility_tree(desktop)
    placed = [node for node in root.iter() if CP + "screencoord" in node.attrib]
    assert placed, "no node has cp:screencoord"
    for node in placed:
        assert node.get(ST + "visible") == "true" and node.get(ST + "showing") == "true", node.attrib
        # "(x, y)" and "(w, h)", as OSWorld's parsers expect (toolkits report -1 when unknown).
        assert all(len(node.get(CP + key).strip("()").split(", ")) == 2 for key in ("screencoord", "size")), node.attrib


def test_a_launched_window_appears_by_name(desktop):
    name = f"osworld-a11y-{uuid.uuid4().hex[:8]}.txt"
    path = f"/tmp/{name}"
    upload(desktop, path, b"hello accessibility\n")
    launch(desktop, ["gedit", "--standalone", path])
    try:
        def editor_frame():
            for app in applications_named(accessibility_tree(desktop), "gedit"):
                for frame in app.iter("frame"):
                    if name in frame.get("name", ""):
                        return frame
            return None

        frame = desktop.wait_for(editor_frame, timeout=APP_TIMEOUT_S, what=f"a gedit frame named {name}")
        assert frame.get(ST + "showing") == "true"
        assert any("hello accessibility" in (node.text or "") for node in frame.iter()), \
            "the editor's text is not in the tree"
    finally:
        close_window(desktop, name)


def test_a_spreadsheet_contributes_only_the_cells_on_screen(desktop):
    marker = f"marker-{uuid.uuid4().hex[:8]}"
    name = f"osworld-a11y-{uuid.uuid4().hex[:8]}.fods"
    upload(desktop, f"/tmp/{name}", FODS.format(marker=marker).encode())
    launch(desktop, ["libreoffice", "--calc", "--norestore", "--nologo", f"/tmp/{name}"])
    try:
        def sheet_cells():
            # Raised and maximized, so that its cells are on screen: LibreOffice can map
            # a new window 1 pixel wide.
            maximize = ["wmctrl", "-r", name, "-b", "add,maximized_vert,maximized_horz"]
            desktop.post("/execute", json={"command": maximize, "shell": False})
            desktop.post("/setup/activate_window", json={"window_name": name})
            for app in applications_named(accessibility_tree(desktop), "soffice"):
                for frame in app.iter("frame"):
                    cells = list(frame.iter("table-cell")) if name in frame.get("name", "") else []
                    if any(cell.get("name") == "A1" and cell.text == marker for cell in cells):
                        return cells
            return None

        cells = desktop.wait_for(sheet_cells, timeout=APP_TIMEOUT_S * 2, what="cell A1 of the spreadsheet")
        # A sheet has 2^31-1 cells; a screen shows a few hundred of them.
        assert 10 < len(cells) < 2000, len(cells)
        assert all(cell.get(ST + "showing") == "true" for cell in cells)
        assert any(cell.get("name") == "B1" and cell.text == "42" for cell in cells)
    finally:
        close_window(desktop, name)


def test_terminal_returns_the_focused_terminal_text(desktop):
    marker = f"terminal-{uuid.uuid4().hex[:8]}"
    launch(desktop, ["gnome-terminal", "--title", marker, "--", "sh", "-c", f"echo {marker}; exec sh"])
    try:
        def terminal_output():
            response = desktop.get("/terminal")
            assert response.status_code == 200, response.text
            body = response.json()
            assert body["status"] == "success"
            return body["output"] if body["output"] and marker in body["output"] else None

        output = desktop.wait_for(terminal_output, timeout=APP_TIMEOUT_S, what="the terminal's text over /terminal")
        assert marker in output
    finally:
        close_window(desktop, marker)


def test_a_hung_application_does_not_hang_the_tree(desktop):
    name = f"osworld-a11y-{uuid.uuid4().hex[:8]}.txt"
    upload(desktop, f"/tmp/{name}", b"frozen\n")
    background = f"gedit --standalone /tmp/{name} >/dev/null 2>&1 & echo $!"
    started = desktop.post("/execute", json={"command": background, "shell": True}).json()
    pid = started["output"].strip()
    assert pid.isdigit(), started
    try:
        def editor_shown():
            return any(name in frame.get("name", "") for frame in accessibility_tree(desktop).iter("frame"))

        desktop.wait_for(editor_shown, timeout=APP_TIMEOUT_S, what=f"a gedit frame named {name}")
        desktop.post("/execute", json={"command": ["kill", "-STOP", pid], "shell": False})
        for _ in range(2):  # the first dump waits for the timeout, the next one hardly at all
            began = time.monotonic()
            root = accessibility_tree(desktop)
            assert time.monotonic() - began < 10
            assert applications_named(root, "gnome-shell")
            hung = [app for app in applications_named(root, "gedit")
                    if any(name in frame.get("name", "") for frame in app.iter("frame"))]
            assert all(app.get("unresponsive") == "true" for app in hung)
    finally:
        desktop.post("/execute", json={"command": ["kill", "-CONT", pid], "shell": False})
        close_window(desktop, name)


# Long enough that Chromium, asked for a page's tree only at the first query, cannot send
# it within that query.
CHROMIUM_PAGE = """<!doctype html><html><head><title>{title}</title></head><body>
<h1>A heading</h1>{filler}<p>{marker}</p><a href="#more">a link</a><input value="typed text"></body></html>"""
CHROMIUM_DESCRIBES_A_PAGE_S = 4  # about 1 s for this page on an idle machine
FILLER = "".join(f"<p>Paragraph {i} with <b>some</b> <i>words</i>.</p>" for i in range(400))


def test_chromium_shows_its_address_bar_and_the_page_at_the_first_look(desktop):
    token = uuid.uuid4().hex[:8]
    title, marker, name = f"Page {token}", f"page text {token}", f"osworld-a11y-{token}.html"
    upload(desktop, f"/tmp/{name}", CHROMIUM_PAGE.format(title=title, marker=marker, filler=FILLER).encode())
    launch(desktop, ["google-chrome", f"file:///tmp/{name}"])  # the shim, as OSWorld's tasks start Chrome
    try:
        def window_titled():
            listing = desktop.post("/execute", json={"command": ["wmctrl", "-l"], "shell": False}).json()
            return title in listing.get("output", "")

        # Asked nothing over AT-SPI until the page has loaded and had time to be described:
        # Chromium builds a page's tree only after a first query unless told to (the shim
        # does), so this first look is what an agent's first observation would hold.
        desktop.wait_for(window_titled, timeout=APP_TIMEOUT_S, what=f"a window titled {title!r}")
        time.sleep(CHROMIUM_DESCRIBES_A_PAGE_S)
        xml = accessibility_xml(desktop)
        (app,) = [app for app in applications_named(ET.fromstring(xml), "chromium")
                  if any(title in frame.get("name", "") for frame in app.iter("frame"))]
        assert app.get("unresponsive") is None
        texts = {(node.tag, node.get("name"), (node.text or "").strip()) for node in app.iter()}
        address = f"/tmp/{name}"  # Chromium's address bar leaves out file://, as it does https://
        assert ("entry", "Address and search bar", address) in texts
        assert ("heading", "A heading", "A heading") in texts
        assert any(text == marker for _, _, text in texts)
        assert ("push-button", "Reload", "Reload") in texts

        rows = [row.split("\t") for row in linearize(xml, max_tokens=None).splitlines()[1:]]
        assert ["entry", "Address and search bar", address] in [row[:3] for row in rows]
        assert ["heading", "A heading", "A heading"] in [row[:3] for row in rows]
        assert not any(row[2] == marker for row in rows)  # in the tree, but below the fold: not on screen
    finally:
        close_window(desktop, title)
