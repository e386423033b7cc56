"""The AT-SPI accessibility tree as OSWorld's XML (desktop_env/server/PROTOCOL.md, "Accessibility tree XML").

`dump_accessibility_tree()` serves GET /accessibility and `terminal_text()` GET /terminal.

Every AT-SPI query is a D-Bus round trip, so the tree is read with `dbus_wire`, which
keeps thousands of calls in flight at once, over a direct (peer-to-peer) connection to
each application when it offers one (atk-bridge does: GTK, LibreOffice, Firefox,
Thunderbird, Chromium). Two things keep the number of calls down:
  - `Properties.GetAll` on the Accessible interface gives name, child count and object
    attributes in one call (atk-bridge only: Qt 5.15 crashes on GetAll, so Qt
    applications such as VLC are asked property by property; so is every Value, which
    Chromium answers GetAll on with a malformed reply);
  - a spreadsheet table (LibreOffice Calc reports 2^31-1 children) is never enumerated:
    the cells under its top-left and bottom-right corners give the visible range.
`Cache.GetItems` (all of an application's widgets in one call) is deliberately not
used: LibreOffice 7.4 keeps disposed objects in that cache and crashes (SIGABRT in
atk_object_get_index_in_parent) when it is read after one of its windows has closed.
An application that stops answering costs one call timeout and is marked
`unresponsive="true"` (or left out when it never answered); the dump never hangs on it.
"""
from __future__ import annotations

import functools
import itertools
import os
import re
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import TypeVar

from ..a11y_namespaces import xmlns_declarations
from .dbus_wire import CallFailed, Connection, DBusConnectionError, MethodCall, Pipeline, Result, Task

MAX_DEPTH = 50
MAX_CHILDREN = 1024
# Visible cells of one spreadsheet table; a zoomed-out 4K sheet shows about this many.
MAX_VISIBLE_CELLS = 4096
# A peer with a call unanswered this long is given up; the whole dump is bounded too.
CALL_TIMEOUT_S = 3.0
DUMP_TIME_LIMIT_S = 15.0
CONNECT_TIMEOUT_S = 1.0
# An application that did not answer last time gets this long before it is skipped again.
HUNG_APP_PROBE_TIMEOUT_S = 0.3

_PROPERTIES = "org.freedesktop.DBus.Properties"
_REGISTRY = "org.a11y.atspi.Registry"
_ROOT_PATH = "/org/a11y/atspi/accessible/root"
_NULL_PATH = "/org/a11y/atspi/null"
_IFACE_PREFIX = "org.a11y.atspi."

# AT-SPI enum values (part of the D-Bus protocol, stable across versions).
_ROLE_TERMINAL, _ROLE_EXTENDED = 60, 70
_STATE_ACTIVE, _STATE_DEFUNCT, _STATE_FOCUSED, _STATE_SHOWING, _STATE_VISIBLE = 1, 6, 12, 25, 30
_COORDS_SCREEN = 0
_VALUE_ATTRIBUTES = {"CurrentValue": "val:value", "MinimumValue": "val:min",
                     "MaximumValue": "val:max", "MinimumIncrement": "val:step"}
_DOCUMENT_PAGE_ATTRIBUTES = {"PageCount": "doc:pagecount", "CurrentPageNumber": "doc:currentpage"}

_INVALID_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_.\-]")
_ATTRIBUTE_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                                    "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})
_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})

_T = TypeVar("_T")
# A step of a task: yields batches of calls, is resumed with their results, returns a T.
_Step = Generator[list[MethodCall], list[Result], _T]


class AccessibilityUnavailable(RuntimeError):
    """The AT-SPI bus cannot be reached (no session bus, or at-spi2-core not running)."""


@dataclass(eq=False)
class Node:
    """One accessible object, filled in by the walk; `role` stays None if it never answered."""
    path: str
    depth: int
    role: int | None = None
    role_name: str = ""
    name: str = ""
    states: int = 0
    interfaces: frozenset = frozenset()
    child_count: int = 0
    attributes: dict | None = None
    # (name, description, key binding) of each action.
    actions: list = field(default_factory=list)
    # Namespaced and plain XML attributes beyond name/states/attributes/actions.
    extra: dict = field(default_factory=dict)
    text: str = ""
    children: list = field(default_factory=list)
    # Cells found by position are kept only if the application says they are showing.
    only_if_showing: bool = False
    unresponsive: bool = False

    def has_state(self, state: int) -> bool:
        return bool(self.states >> state & 1)

    def implements(self, interface: str) -> bool:
        return _IFACE_PREFIX + interface in self.interfaces

    @property
    def kept(self) -> bool:
        if self.only_if_showing:
            return self.role is not None and self.has_state(_STATE_SHOWING) and not self.has_state(_STATE_DEFUNCT)
        return self.role is not None


@dataclass
class _App:
    """Where one application's objects are reached."""
    bus_name: str
    connection: Connection
    destination: str | None

    @property
    def has_get_all(self) -> bool:
        # Only atk-bridge offers direct connections, and its Properties.GetAll works;
        # Qt 5.15 crashes (the whole application) on GetAll.
        return self.destination is None


@dataclass(frozen=True)
class _Limits:
    max_depth: int
    max_children: int
    details: bool  # False: structure only (and terminal text), for terminal_text()


# ---------------------------------------------------------------- names


_names_lock = threading.Lock()
_state_names: list[str] = []
_role_names: dict[int, str] = {}


def _load_names() -> None:
    """Role and state names exactly as pyatspi spells them (libatspi's own tables)."""
    with _names_lock:
        if _state_names:
            return
        import gi
        gi.require_version("Atspi", "2.0")
        from gi.repository import Atspi

        for value in range(int(Atspi.StateType.LAST_DEFINED)):
            _state_names.append(Atspi.StateType(value).value_name.removeprefix("ATSPI_STATE_").lower())
        for value in range(int(Atspi.Role.LAST_DEFINED)):
            if value != _ROLE_EXTENDED:
                _role_names[value] = Atspi.role_get_name(Atspi.Role(value)) or ""


# ---------------------------------------------------------------- calls


def _call(path: str, interface: str, member: str, signature: str = "", *args) -> MethodCall:
    return MethodCall(path, _IFACE_PREFIX + interface if "." not in interface else interface,
                      member, signature, args)


def _get_all(path: str, interface: str) -> MethodCall:
    return MethodCall(path, _PROPERTIES, "GetAll", "s", (_IFACE_PREFIX + interface,))


# Each action's fields as Node.actions lists them, and the Action method that reads one by its index.
_ACTION_FIELDS = (("GetName", 0), ("GetDescription", 1), ("GetKeyBinding", 2))


def _get_property(path: str, interface: str, name: str) -> MethodCall:
    return MethodCall(path, _PROPERTIES, "Get", "ss", (_IFACE_PREFIX + interface, name))


def _ok(result) -> bool:
    return not isinstance(result, CallFailed)


def _states_from(words) -> int:
    return sum(int(word) << (32 * index) for index, word in enumerate(words))


# ---------------------------------------------------------------- the walk


class _Walk:
    """Fills a tree of Nodes by running one pipelined task per node."""

    def __init__(self, pipeline: Pipeline, limits: _Limits, bus: Connection):
        self.pipeline = pipeline
        self.limits = limits
        self.bus = bus
        self.peers: list[Connection] = []
        self.apps: list[tuple[Node, _App]] = []
        self.app_names: list[str] = []

    def desktop(self, root: Node) -> Task:
        yield from self.node(None, root)

    def application(self, app_node: Node, bus_name: str) -> Task:
        """Runs on the bus: finds the application's direct address, then walks it."""
        self.app_names.append(bus_name)
        (reply,) = yield [_call(_ROOT_PATH, "Application", "GetApplicationBusAddress")]
        app = _App(bus_name, self.bus, bus_name)
        if _ok(reply) and reply[0]:
            try:
                app.connection, app.destination = Connection(reply[0], bus=False, timeout=CONNECT_TIMEOUT_S), None
                self.peers.append(app.connection)
            except DBusConnectionError:
                pass  # fall back to talking to it through the bus
        elif not _ok(reply) and reply.name.endswith("Timeout"):
            return
        self.apps.append((app_node, app))
        self.pipeline.spawn(app.connection, self.node(app, app_node), app.destination)

    def node(self, app: _App | None, node: Node) -> Task:
        """The task for one node: core facts, then details and children; spawns the children."""
        has_get_all = app is not None and app.has_get_all
        if (yield from self.core_facts(node, has_get_all)):
            yield from self.details_and_children(app, node, has_get_all)

    def cell(self, app: _App, table: Node, cell: tuple[int, int], node: Node) -> Task:
        """The task for a cell found by position: a reference kept from an earlier walk
        that no longer works (LibreOffice disposes of cells now and then) is asked anew."""
        if not (yield from self.core_facts(node, app.has_get_all)) or node.has_state(_STATE_DEFUNCT):
            known = _known_cells.setdefault((app.bus_name, table.path), {})
            (reply,) = yield [_call(table.path, "Table", "GetAccessibleAt", "ii", *cell)]
            if not _ok(reply) or reply[0][1] == _NULL_PATH:
                known.pop(cell, None)
                return
            known[cell], node.path, node.role = reply[0], reply[0][1], None
            if not (yield from self.core_facts(node, app.has_get_all)):
                return
        yield from self.details_and_children(app, node, app.has_get_all)

    def details_and_children(self, app: _App | None, node: Node, has_get_all: bool) -> Task:
        """Everything else the XML shows of `node`, then tasks for its children."""
        calls, readers = self.detail_calls(node, has_get_all) if self.limits.details else ([], [])
        if node.role == _ROLE_TERMINAL and node.implements("Text") and not self.limits.details:
            calls, readers = [_call(node.path, "Text", "GetText", "ii", 0, -1)], [self.read_text]
        child_calls = self.children_calls(node)
        if not self.limits.details and node.depth == 2 and not node.has_state(_STATE_ACTIVE):
            child_calls = []  # terminal_text() looks in the active window only
        results = yield calls + child_calls
        # The children's results follow the detail calls' and have no reader.
        for read, result in zip(readers, results, strict=False):
            if _ok(result):
                read(node, result)
        if len(node.actions) > 1:
            yield from self.more_actions(node)

        if child_calls:
            refs = self.child_refs(results[len(calls):])
            expected = min(node.child_count, self.limits.max_children)
            if len(refs) < expected and len(child_calls) == 1:
                # atk-bridge leaves a socket's plug (a widget of another process, like a
                # panel plugin) out of GetChildren, but GetChildAtIndex returns it.
                refs = self.child_refs((yield self.children_by_index(node, expected)))
            for bus_name, path in refs:
                self.spawn_child(app, node, bus_name, path)
        elif self.is_huge_table(node) and self.limits.details and app is not None:
            for cell, (_, path) in (yield from self.visible_cells(app, node)):
                child = Node(path, node.depth + 1, only_if_showing=True)
                node.children.append(child)
                self.pipeline.spawn(app.connection, self.cell(app, node, cell, child), app.destination)

    @staticmethod
    def core_facts(node: Node, has_get_all: bool) -> _Step[bool]:
        """Role, states, interfaces, name, child count (and attributes); False if it is gone."""
        path = node.path
        one_by_one = [_get_property(path, "Accessible", "Name"), _get_property(path, "Accessible", "ChildCount")]
        role, states, interfaces, *properties = yield [
            _call(path, "Accessible", "GetRole"),
            _call(path, "Accessible", "GetState"),
            _call(path, "Accessible", "GetInterfaces"),
        ] + ([_get_all(path, "Accessible")] if has_get_all else one_by_one)
        if not (_ok(role) and _ok(states)):
            return False
        if has_get_all and _ok(properties[0]) and isinstance(properties[0][0], dict):
            facts = properties[0][0]
        else:
            if has_get_all:  # GetAll failed after all: ask one by one
                properties = yield one_by_one
            name, child_count = properties
            facts = {"Name": name[0] if _ok(name) else "", "ChildCount": child_count[0] if _ok(child_count) else 0}
        node.role, node.states = role[0], _states_from(states[0])
        node.role_name = _role_names.get(node.role, "")
        node.interfaces = frozenset(interfaces[0]) if _ok(interfaces) else frozenset()
        node.name = facts.get("Name", "")
        node.child_count = facts.get("ChildCount", 0)
        node.attributes = facts.get("Attributes")
        return True

    def spawn_child(self, app: _App | None, parent: Node, bus_name: str, path: str) -> None:
        if path == _NULL_PATH or not path:
            return
        child = Node(path, parent.depth + 1)
        parent.children.append(child)
        if app is None:  # children of the desktop are applications
            timeout = HUNG_APP_PROBE_TIMEOUT_S if bus_name in _hung_apps else None
            self.pipeline.spawn(self.bus, self.application(child, bus_name), bus_name, timeout)
        elif bus_name == app.bus_name or not bus_name:
            self.pipeline.spawn(app.connection, self.node(app, child), app.destination)
        else:  # an object another process embeds (e.g. a panel plugin): ask that process
            self.pipeline.spawn(self.bus, self.node(_App(bus_name, self.bus, bus_name), child), bus_name)

    # ---- children

    def is_huge_table(self, node: Node) -> bool:
        return node.implements("Table") and node.child_count > self.limits.max_children

    def children_calls(self, node: Node) -> list[MethodCall]:
        if node.depth >= self.limits.max_depth or node.child_count <= 0 or self.is_huge_table(node):
            return []
        if node.child_count <= self.limits.max_children:
            return [_call(node.path, "Accessible", "GetChildren")]
        # Never GetChildren on a huge node: the application would build the whole list.
        return self.children_by_index(node, self.limits.max_children)

    @staticmethod
    def children_by_index(node: Node, count: int) -> list[MethodCall]:
        return [_call(node.path, "Accessible", "GetChildAtIndex", "i", index) for index in range(count)]

    def child_refs(self, results: list) -> list[tuple[str, str]]:
        """References from one GetChildren reply or from several GetChildAtIndex replies."""
        replies = [result[0] for result in results if _ok(result)]
        if len(results) == 1 and replies and isinstance(replies[0], list):
            return replies[0][:self.limits.max_children]
        return [reply for reply in replies if isinstance(reply, tuple)]

    def visible_cells(self, app: _App, table: Node) -> _Step[list[tuple[tuple[int, int], tuple[str, str]]]]:
        """((row, column), reference) of the cells on screen, found from the cells under the
        table's corners; references from earlier dumps are reused (see _known_cells)."""
        extents, columns = yield [_call(table.path, "Component", "GetExtents", "u", _COORDS_SCREEN),
                                  _get_property(table.path, "Table", "NColumns")]
        if not (_ok(extents) and _ok(columns)) or columns[0] <= 0:
            return []
        x, y, width, height = extents[0]
        if width <= 2 or height <= 2:
            return []
        corners = yield [_call(table.path, "Component", "GetAccessibleAtPoint", "iiu", x + 1, y + 1, _COORDS_SCREEN),
                         _call(table.path, "Component", "GetAccessibleAtPoint", "iiu",
                               x + width - 2, y + height - 2, _COORDS_SCREEN)]
        if not all(_ok(corner) and corner[0][1] != _NULL_PATH for corner in corners):
            return []
        indexes = yield [_call(corner[0][1], "Accessible", "GetIndexInParent") for corner in corners]
        if not all(_ok(index) and index[0] >= 0 for index in indexes):
            return []
        (first,), (last,) = indexes
        n_columns = columns[0]
        top, left = divmod(first, n_columns)
        bottom, right = divmod(last, n_columns)
        cells = list(itertools.islice(itertools.product(range(top, bottom + 1), range(left, right + 1)),
                                      MAX_VISIBLE_CELLS))
        known = _known_cells.setdefault((app.bus_name, table.path), {})
        if len(known) > _MAX_KNOWN_CELLS:
            known.clear()
        missing = [cell for cell in cells if cell not in known]
        replies = yield [_call(table.path, "Table", "GetAccessibleAt", "ii", *cell) for cell in missing]
        for cell, reply in zip(missing, replies, strict=True):
            if _ok(reply) and reply[0][1] != _NULL_PATH:
                known[cell] = reply[0]
        return [(cell, known[cell]) for cell in cells if cell in known]

    # ---- details

    def detail_calls(self, node: Node, has_get_all: bool) -> tuple[list[MethodCall], list]:
        """Calls for everything the XML shows besides core facts, and their readers."""
        calls, readers = [], []

        def add(call: MethodCall, reader) -> None:
            calls.append(call)
            readers.append(reader)

        def add_properties(interface: str, keys: dict[str, str], get_all: bool = has_get_all) -> None:
            """Properties of `interface` as extra XML attributes ({property: attribute})."""
            if get_all:
                add(_get_all(path, interface), functools.partial(self.read_properties, keys=keys))
                return
            for name, key in keys.items():
                add(_get_property(path, interface, name), functools.partial(self.read_property, key=key))

        path = node.path
        if node.role not in _role_names:
            add(_call(path, "Accessible", "GetRoleName"), self.read_role_name)
        if node.attributes is None:
            add(_call(path, "Accessible", "GetAttributes"), self.read_attributes)
        if node.implements("Component") and node.has_state(_STATE_VISIBLE) and node.has_state(_STATE_SHOWING):
            add(_call(path, "Component", "GetExtents", "u", _COORDS_SCREEN), self.read_extents)
        if node.implements("Text"):
            add(_call(path, "Text", "GetText", "ii", 0, -1), self.read_text)
        if node.implements("Image"):
            node.extra["image"] = "true"
        if node.implements("Selection"):
            node.extra["selection"] = "true"
        if node.implements("Value"):
            # One by one: Chromium answers GetAll on Value with a malformed reply (it lacks
            # the newer Text property), and there are few such nodes.
            add_properties("Value", _VALUE_ATTRIBUTES, get_all=False)
        if node.implements("Action"):
            # One action at a time, as pyatspi (and so OSWorld) reads them: GetName (GetActions has localized
            # names), GetDescription and GetKeyBinding. Never GetActions itself: Ubuntu 22.04's atk-bridge (2.38)
            # writes four strings into each of its (sss) entries, and libdbus aborts the app on that (GNOME
            # Terminal, Chromium vanished at the first tree). The first action's come with the count; the
            # others, when there are any, next (more_actions).
            add(_get_property(path, "Action", "NActions"), self.read_action_count)
            for member, field_index in _ACTION_FIELDS:
                add(_call(path, "Action", member, "i", 0),
                    functools.partial(self.read_first_action_field, field_index=field_index))
        if node.implements("Document"):
            add(_call(path, "Document", "GetLocale"), self.read_document_locale)
            add_properties("Document", _DOCUMENT_PAGE_ATTRIBUTES)
            add(_call(path, "Document", "GetAttributes"), self.read_document_attributes)
        return calls, readers

    @staticmethod
    def read_role_name(node: Node, reply) -> None:
        node.role_name = reply[0]

    @staticmethod
    def read_attributes(node: Node, reply) -> None:
        node.attributes = reply[0]

    @staticmethod
    def read_extents(node: Node, reply) -> None:
        x, y, width, height = reply[0]
        node.extra["cp:screencoord"] = f"({x}, {y})"
        node.extra["cp:size"] = f"({width}, {height})"

    @staticmethod
    def read_text(node: Node, reply) -> None:
        node.text = reply[0].replace("\ufffc", "").replace("\ufffd", "")

    @staticmethod
    def read_properties(node: Node, reply, keys: dict[str, str]) -> None:
        for name, key in keys.items():
            if name in reply[0]:
                node.extra[key] = str(reply[0][name])

    @staticmethod
    def read_property(node: Node, reply, key: str) -> None:
        node.extra[key] = str(reply[0])

    @staticmethod
    def read_action_count(node: Node, reply) -> None:
        # Name, description and key binding stay empty until their calls answer (the readers that run next).
        node.actions = [["", "", ""] for _ in range(max(0, int(reply[0])))]

    @staticmethod
    def read_first_action_field(node: Node, reply, field_index: int) -> None:
        if node.actions:
            node.actions[0][field_index] = reply[0]

    def more_actions(self, node: Node) -> Task:
        wanted = [(action, field_index, _call(node.path, "Action", member, "i", index))
                  for index, action in enumerate(node.actions) if index
                  for member, field_index in _ACTION_FIELDS]
        replies = yield [call for _, _, call in wanted]
        for (action, field_index, _), reply in zip(wanted, replies, strict=True):
            if _ok(reply):
                action[field_index] = reply[0]

    @staticmethod
    def read_document_locale(node: Node, reply) -> None:
        node.extra["doc:locale"] = reply[0]

    @staticmethod
    def read_document_attributes(node: Node, reply) -> None:
        for key, value in reply[0].items():
            node.extra["docattr:" + key] = value


# ---------------------------------------------------------------- running a walk

_bus_address_lock = threading.Lock()
_bus_address: str | None = None


def _a11y_bus_address(refresh: bool) -> str:
    """The AT-SPI bus address: $AT_SPI_BUS_ADDRESS, else asked of org.a11y.Bus on the session bus."""
    global _bus_address
    with _bus_address_lock:
        if os.environ.get("AT_SPI_BUS_ADDRESS"):
            return os.environ["AT_SPI_BUS_ADDRESS"]
        if _bus_address and not refresh:
            return _bus_address
        session_address = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
        if not session_address:
            raise AccessibilityUnavailable("DBUS_SESSION_BUS_ADDRESS is not set: no session bus to find AT-SPI on")
        try:
            session = Connection(session_address, bus=True, timeout=CONNECT_TIMEOUT_S)
        except (DBusConnectionError, CallFailed) as error:
            raise AccessibilityUnavailable(f"cannot reach the session bus: {error}") from error
        try:
            # Activates at-spi-bus-launcher if it is not running yet, hence the longer wait.
            (_bus_address,) = session.call(MethodCall("/org/a11y/bus", "org.a11y.Bus", "GetAddress",
                                                      destination="org.a11y.Bus"), 10.0)
        except CallFailed as error:
            raise AccessibilityUnavailable(f"org.a11y.Bus.GetAddress failed: {error}") from error
        finally:
            session.close()
        return _bus_address


def _connect_a11y_bus() -> Connection:
    for refresh in (False, True):
        address = _a11y_bus_address(refresh)
        try:
            return Connection(address, bus=True, timeout=CONNECT_TIMEOUT_S)
        except (DBusConnectionError, CallFailed) as error:
            failure = error
    raise AccessibilityUnavailable(f"cannot connect to the AT-SPI bus at {address}: {failure}")


# Module state below is kept between walks, which the caller serialises (one HTTP
# handler lock), so it needs no lock of its own.

# Bus names of applications that did not answer during the last walk.
_hung_apps: set[str] = set()

# Spreadsheet cell references from earlier walks, by (bus name, table path) and then
# (row, column). LibreOffice makes a new accessible object for every GetAccessibleAt and
# never frees it, so asking anew on every dump of a full-screen sheet costs it 8 MB and
# makes each later call slower; its cell objects stay valid while the table lives.
_known_cells: dict[tuple[str, str], dict[tuple[int, int], tuple[str, str]]] = {}
_MAX_KNOWN_CELLS = 16 * MAX_VISIBLE_CELLS


def _walk_desktop(limits: _Limits) -> Node:
    """Reads the whole tree (within `limits` and the time limit) and returns its root."""
    _load_names()
    bus = _connect_a11y_bus()
    pipeline = Pipeline(call_timeout=CALL_TIMEOUT_S, deadline=time.monotonic() + DUMP_TIME_LIMIT_S)
    walk = _Walk(pipeline, limits, bus)
    # What the registry says of itself; kept as the root even if it does not answer.
    desktop = Node(_ROOT_PATH, 0, role_name="desktop frame", name="main")
    try:
        pipeline.spawn(bus, walk.desktop(desktop), _REGISTRY)
        pipeline.run()
    finally:
        for connection in [bus, *walk.peers]:
            connection.close()
    for app_node, app in walk.apps:
        app_node.unresponsive = (app.connection, app.destination) in pipeline.unresponsive
    _hung_apps.clear()
    _hung_apps.update(bus_name for bus_name in walk.app_names
                      if (bus, bus_name) in pipeline.unresponsive
                      or any(app.bus_name == bus_name and node.unresponsive for node, app in walk.apps))
    if limits.details:  # a full walk saw every application: forget cells of those gone
        for key in [key for key in _known_cells if key[0] not in walk.app_names]:
            del _known_cells[key]
    return desktop


# ---------------------------------------------------------------- XML


def _xml_name(name: str) -> str:
    """`name` made a valid XML local name (AT-SPI attribute keys are free-form)."""
    name = _NOT_IN_NAME.sub("_", name)
    return name if not name or name[0].isalpha() or name[0] == "_" else "_" + name


_xml_name_cached = functools.lru_cache(maxsize=4096)(_xml_name)


def _escape(value: str) -> str:
    return value.translate(_ATTRIBUTE_ESCAPES)


@functools.lru_cache(maxsize=1024)
def _state_attributes(states: int) -> str:
    return "".join(f' st:{name}="true"' for bit, name in enumerate(_state_names) if states >> bit & 1)


def _attributes_xml(node: Node) -> str:
    # Sanitising can map two keys to one name; an XML attribute may appear only once.
    named = {"attr:" + _xml_name_cached(key): value for key, value in (node.attributes or {}).items() if key}
    for name, description, key_binding in node.actions:
        name = _xml_name_cached(name.replace(" ", "-"))
        named[f"act:{name}_desc"] = description
        named[f"act:{name}_kb"] = key_binding
    for key, value in node.extra.items():
        prefix, colon, local = key.partition(":")
        named[f"{prefix}:{_xml_name_cached(local)}" if colon else key] = value
    if node.unresponsive:
        named["unresponsive"] = "true"
    return (f' name="{_escape(node.name)}"' + _state_attributes(node.states)
            + "".join(f' {key}="{_escape(str(value))}"' for key, value in named.items()))


def _write_element(node: Node, out: list[str], namespaces: str = "") -> None:
    tag = _xml_name_cached((node.role_name.strip() or "unknown").replace(" ", "-"))
    out.append(f"<{tag}{namespaces}{_attributes_xml(node)}")
    children = [child for child in node.children if child.kept]
    if not children and not node.text:
        out.append("/>")
        return
    out.append(">" + node.text.translate(_TEXT_ESCAPES))
    for child in children:
        _write_element(child, out)
    out.append(f"</{tag}>")


def to_xml(desktop: Node) -> str:
    """The tree as XML: root `desktop-frame` declaring every OSWorld namespace."""
    out: list[str] = []
    _write_element(desktop, out, xmlns_declarations())
    # Tags and attribute names are sanitised already; this strips control characters
    # (which XML 1.0 cannot carry at all) from every name, value and text at once.
    return _INVALID_XML.sub("", "".join(out))


# ---------------------------------------------------------------- public API


def dump_accessibility_tree(max_depth: int = MAX_DEPTH, max_children: int = MAX_CHILDREN) -> str:
    """The desktop's accessibility tree as OSWorld-compatible XML.

    Raises AccessibilityUnavailable only when the AT-SPI bus itself is unreachable;
    applications that do not answer are marked or left out instead.
    """
    return to_xml(_walk_desktop(_Limits(max_depth, max_children, details=True)))


def terminal_text() -> str | None:
    """Text of the focused terminal widget in the active window, or None if there is none."""
    desktop = _walk_desktop(_Limits(MAX_DEPTH, MAX_CHILDREN, details=False))
    for app in desktop.children:
        for frame in app.children:
            if frame.kept and frame.has_state(_STATE_ACTIVE):
                terminal = _find_focused_terminal(frame)
                if terminal is not None:
                    return _INVALID_XML.sub("", terminal.text).rstrip()
    return None


# A terminal's text is read once it holds still this long (at most TERMINAL_SETTLE_BOUND_S): OSWorld's
# postconfig types a command and presses Enter just before its getter reads the terminal; on the VM the
# shell has printed the answer by then, on a busy machine it may not have yet.
TERMINAL_HOLD_S = 0.3
TERMINAL_SETTLE_BOUND_S = 3.0


def settled_terminal_text(read: Callable[[], str | None] = terminal_text,
                          clock: Callable[[], float] = time.monotonic,
                          sleep: Callable[[float], None] = time.sleep) -> str | None:
    """terminal_text() once two reads TERMINAL_HOLD_S apart agree (the last read when the bound passes)."""
    deadline = clock() + TERMINAL_SETTLE_BOUND_S
    text = read()
    while clock() < deadline:  # looks after each pause, and a held text may be None or "": not poll_until's
        sleep(TERMINAL_HOLD_S)
        again = read()
        if again == text:
            return text
        text = again
    return text


def _find_focused_terminal(node: Node) -> Node | None:
    if node.role == _ROLE_TERMINAL and node.has_state(_STATE_FOCUSED):
        return node
    for child in node.children:
        found = _find_focused_terminal(child) if child.kept else None
        if found is not None:
            return found
    return None
