"""The XML namespaces of the accessibility tree (desktop_env/server/PROTOCOL.md): one definition for the env
server that writes the tree and the metrics and agents that read it. Standard library
only, since the env server imports it on the system Python."""

A11Y_NAMESPACES = {
    "st": "https://accessibility.ubuntu.example.org/ns/state",
    "attr": "https://accessibility.ubuntu.example.org/ns/attributes",
    "cp": "https://accessibility.ubuntu.example.org/ns/component",
    "doc": "https://accessibility.ubuntu.example.org/ns/document",
    "docattr": "https://accessibility.ubuntu.example.org/ns/document/attributes",
    "txt": "https://accessibility.ubuntu.example.org/ns/text",
    "val": "https://accessibility.ubuntu.example.org/ns/value",
    "act": "https://accessibility.ubuntu.example.org/ns/action",
}


def xmlns_declarations(*prefixes: str) -> str:
    """` xmlns:PREFIX="URI"` for each prefix named (every one when none is), as the tree's root declares them."""
    return "".join(f' xmlns:{prefix}="{A11Y_NAMESPACES[prefix]}"' for prefix in prefixes or A11Y_NAMESPACES)
