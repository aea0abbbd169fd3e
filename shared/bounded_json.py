"""JSON from outside LOCAL, read within bounds: UTF-8, JSON, a nesting depth, and Unicode text.

Python's ``json`` decodes one nesting level per recursive call, so about 1,000 levels raise
``RecursionError``, which is not a ``ValueError`` and would escape a handler as a 500. ``loads``
turns that, and every other way a text can fail to be the JSON a caller reads, into one
``MalformedJSON`` with a reason:

* ``not_utf8``: bytes that are not UTF-8 (RFC 8259 §8.1);
* ``not_json``: not JSON, including ``NaN`` and ``Infinity``, which RFC 8259 §6 leaves out and
  Python's ``json`` would otherwise accept, and integers longer than Python converts (4,300 digits);
* ``too_deep``: more than ``max_depth`` objects and arrays nested (checked without recursion);
* ``not_text``: a key or string holding a lone surrogate (``"\\ud800"`` escaped in ASCII JSON is
  valid JSON but no Unicode text: it cannot be encoded as UTF-8, stored or logged).

The work is linear in the text's length. Source: RFC 8259; Python ``json`` (``parse_constant``),
``sys.get_int_max_str_digits``.
"""
from __future__ import annotations

import json
from typing import Any


class MalformedJSON(ValueError):
    """The text is not JSON within the bounds; ``reason`` names how (see the module docstring)."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(f"malformed JSON: {reason}")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(data: bytes | str, *, max_depth: int) -> Any:
    """Parse JSON text nested at most ``max_depth`` objects and arrays deep.

    Args:
        data: the text, or its UTF-8 bytes.
        max_depth: the deepest nesting accepted (a flat object is 1; a scalar is 0).
    Returns:
        The value (dict, list, str, int, float, bool or None); every string in it is Unicode text.
    Raises:
        MalformedJSON: ``not_utf8``, ``not_json``, ``too_deep`` or ``not_text``.
    """
    if isinstance(data, (bytes, bytearray)):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedJSON("not_utf8") from None
    try:
        value = json.loads(data, parse_constant=_refuse_constant)
    except RecursionError:
        raise MalformedJSON("too_deep") from None
    except ValueError:
        raise MalformedJSON("not_json") from None
    problem = _problem(value, max_depth)
    if problem:
        raise MalformedJSON(problem)
    return value


def deeper_than(value: Any, limit: int) -> bool:
    """True when a parsed JSON ``value`` nests more than ``limit`` objects and arrays deep
    (iterative: no recursion, however deep it is)."""
    return _problem(value, limit, check_text=False) == "too_deep"


def _problem(value: Any, max_depth: int, *, check_text: bool = True) -> str | None:
    """``too_deep``, ``not_text`` (a string that is not Unicode text) or None, in one walk."""
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            if check_text and not is_text(node):
                return "not_text"
        elif isinstance(node, (dict, list)):
            if depth + 1 > max_depth:
                return "too_deep"
            if isinstance(node, dict):
                stack.extend((key, depth) for key in node)
                stack.extend((child, depth + 1) for child in node.values())
            else:
                stack.extend((child, depth + 1) for child in node)
    return None


def is_text(value: str) -> bool:
    """False when ``value`` holds a lone surrogate (``\\ud800``-style escapes: it has no UTF-8 form,
    so it cannot be stored or logged)."""
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
