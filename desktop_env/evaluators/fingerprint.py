"""What a getter gave, small enough for status.json and comparable across harnesses.

A getter returns a path to a file it fetched from the desktop, a list of such paths, text, a number or a
small structure. Kept whole, a spreadsheet's text or a page's HTML would swell status.json; kept as a
repr, a file fetched into two cache folders would look different when its bytes are the same. So a file
is its name, size and SHA-256; long text is its length, its start and its SHA-256; the rest is kept as
JSON, clipped. OSWorld's getters give the same kinds of values, so its outcome and ours fingerprint alike
(scripts/osworld_reference.py compares them).
"""
from __future__ import annotations

import hashlib
import os
from typing import Any

LONG_TEXT = 200
MAX_ITEMS = 50


def _file(path: str) -> dict[str, Any]:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return {"file": os.path.basename(path), "bytes": os.path.getsize(path), "sha256": digest.hexdigest()}


def fingerprint(value: Any) -> Any:
    """The JSON-able fingerprint of a getter's value (see the module's doc)."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        if os.path.isabs(value) and os.path.isfile(value):
            return _file(value)
        if len(value) <= LONG_TEXT:
            return value
        return {"text": value[:80], "chars": len(value), "sha256": hashlib.sha256(value.encode()).hexdigest()}
    if isinstance(value, bytes):
        return {"bytes": len(value), "sha256": hashlib.sha256(value).hexdigest()}
    if isinstance(value, (list, tuple)):
        items = [fingerprint(item) for item in value[:MAX_ITEMS]]
        return items if len(value) <= MAX_ITEMS else [*items, {"more_items": len(value) - MAX_ITEMS}]
    if isinstance(value, dict):
        return {str(key): fingerprint(item) for key, item in list(value.items())[:MAX_ITEMS]}
    text = repr(value)
    return {"repr": text if len(text) <= LONG_TEXT else text[:LONG_TEXT - 1] + "…"}
