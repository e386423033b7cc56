"""The accessibility tree's XML, from hand-made nodes: OSWorld's tags, namespaces and
attributes, and a document that parses whatever text the applications report."""
from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import pytest

from desktop_env.a11y_namespaces import A11Y_NAMESPACES as NAMESPACES
from desktop_env.server import accessibility
from desktop_env.server.accessibility import Node

ST = "{" + NAMESPACES["st"] + "}"
ATTR = "{" + NAMESPACES["attr"] + "}"
CP = "{" + NAMESPACES["cp"] + "}"
ACT = "{" + NAMESPACES["act"] + "}"
VAL = "{" + NAMESPACES["val"] + "}"
SHOWING, VISIBLE, FOCUSED, MULTI_LINE = 25, 30, 12, 17


@pytest.fixture(autouse=True)
def state_names(monkeypatch):
    # libatspi's names (loaded through gi on the server), enough of them for these nodes.
    names = [""] * 44
    for bit, name in ((SHOWING, "showing"), (VISIBLE, "visible"), (FOCUSED, "focused"), (MULTI_LINE, "multi_line")):
        names[bit] = name
    monkeypatch.setattr(accessibility, "_state_names", names)
    accessibility._state_attributes.cache_clear()
    yield
    accessibility._state_attributes.cache_clear()


def node(role_name: str, name: str = "", states: tuple[int, ...] = (), **fields) -> Node:
    return Node("/p", 0, role=1, role_name=role_name, name=name,
                states=sum(1 << state for state in states), **fields)


def test_root_declares_every_namespace_and_tags_are_hyphenated_role_names():
    desktop = node("desktop frame", "main", children=[node("application", "gedit", children=[node("push button")])])
    text = accessibility.to_xml(desktop)
    declared = dict(pair for _, pair in ET.iterparse(io.StringIO(text), events=("start-ns",)))
    assert declared == NAMESPACES
    root = ET.fromstring(text)
    assert root.tag == "desktop-frame" and root.get("name") == "main"
    assert root[0][0].tag == "push-button"
    assert accessibility.to_xml(node("")).startswith("<unknown ")


def test_states_attributes_actions_and_extra_are_namespaced():
    cell = node("table cell", "A1", states=(SHOWING, VISIBLE, MULTI_LINE), attributes={"Formula": "=1+1", "": "x"},
                actions=[["click", "Clicks", "<Alt>c"]], text="2",
                extra={"cp:screencoord": "(41, 189)", "cp:size": "(65, 17)", "val:value": "2.0", "image": "true"})
    element = ET.fromstring(accessibility.to_xml(node("desktop frame", children=[cell])))[0]
    assert element.get(ST + "showing") == element.get(ST + "multi_line") == "true"
    assert element.get(ST + "focused") is None
    assert element.get(ATTR + "Formula") == "=1+1"
    assert element.get(ACT + "click_desc") == "Clicks" and element.get(ACT + "click_kb") == "<Alt>c"
    assert element.get(CP + "screencoord") == "(41, 189)" and element.get(VAL + "value") == "2.0"
    assert element.get("image") == "true"
    assert element.text == "2"


def test_any_text_from_applications_still_parses():
    nasty = 'a & b < c > "d"\x00\x07\x1b tab\there\nline\r\ufffe end'
    item = node("label", nasty, text=nasty, attributes={"we ird:key/1": nasty, "2nd": "x"},
                actions=[["Press Me", "", ""]])
    element = ET.fromstring(accessibility.to_xml(node("desktop frame", children=[item])))[0]
    assert element.get("name") == 'a & b < c > "d" tab\there\nline\r end'
    assert element.text == 'a & b < c > "d" tab\there\nline\r end'
    assert element.get(ATTR + "we_ird_key_1") == element.get("name")
    assert element.get(ATTR + "_2nd") == "x"
    assert element.get(ACT + "Press-Me_desc") == ""


def test_cells_found_by_position_are_kept_only_when_showing():
    table = node("table", children=[
        node("table cell", "A1", states=(SHOWING, VISIBLE), only_if_showing=True),
        node("table cell", "A2", states=(VISIBLE,), only_if_showing=True),
        Node("/never-answered", 1),
    ])
    element = ET.fromstring(accessibility.to_xml(node("desktop frame", children=[table])))[0]
    assert [cell.get("name") for cell in element] == ["A1"]
