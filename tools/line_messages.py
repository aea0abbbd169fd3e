"""Reading LINE messages as they were sent (camelCase JSON dicts, e.g. the LINE stand-in's record):
the words a resident sees and the postback buttons offered. Shared by make eval and the tests."""
from __future__ import annotations

from typing import Any


def _walk(value: Any, visit) -> None:
    if isinstance(value, dict):
        if visit(value):
            return
        for item in value.values():
            _walk(item, visit)
    elif isinstance(value, list):
        for item in value:
            _walk(item, visit)


def all_text(node: Any) -> str:
    """Every ``text``, ``altText`` and ``label`` inside the messages, in the order a phone shows them,
    joined by newlines: a message's own words first, its quick-reply chips (``quickReply``, shown under
    the message by LINE) after them, whatever the key order of the serialized message."""
    found: list[str] = []

    def visit(value: dict) -> bool:
        for key, item in sorted(value.items(), key=lambda pair: pair[0] == "quickReply"):
            if key in ("text", "altText", "label") and isinstance(item, str):
                found.append(item)
            else:
                _walk(item, visit)
        return True

    _walk(node, visit)
    return "\n".join(found)


def postbacks(node: Any) -> dict[str, str]:
    """Every postback action inside the messages: {label: data}."""
    found: dict[str, str] = {}

    def visit(value: dict) -> bool:
        if value.get("type") == "postback" and "data" in value:
            found[value.get("label")] = value["data"]
        return False

    _walk(node, visit)
    return found
