"""Inside the turn, a reading travels as typed values (shared.turn.ask), never as ``kind:value`` strings
that another module parses again.

The scan reads every module of shared/turn and shared/agent (ast, no import) for string constants and
f-strings shaped ``word:`` — the shape the notes had (``also_places:…``, ``detail:…``) — outside
docstrings. The only such strings allowed are the documented boundary encodings: postback data
(``events:…`` / ``places:…``, read by shared.routing and shared.turn.pickers), a refused model call's
problem in the audit record (shared.agent.tools.schema_problem) and the date encoding of
shared.turn.datespec (postback data, model arguments, the audit record).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCANNED = sorted([*(ROOT / "shared" / "turn").glob("**/*.py"), *(ROOT / "shared" / "agent").glob("**/*.py")])
#: ``kind:`` at the start of a string (not a URL scheme, not a time such as 10:00).
_ENCODED = re.compile(r"^[a-z][a-z_]*:(?!//)")
#: The boundary encodings, by module: postback data prefixes (shared.routing's routes), a refused
#: model call's problem as the audit record holds it, and the date encoding's own reader and writer.
_BOUNDARY = {
    "wording.py": ("events:", "places:"),
    "tools.py": ("unknown_argument:", "missing:"),
    "datespec.py": None,  # the date encoding of postback data, model arguments and the audit record
}


def docstring_nodes(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _leading_text(node: ast.AST) -> str | None:
    """A string constant's text, or an f-string's literal start."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return str(node.values[0].value)
    return None


def encoded_strings(source: str, allowed: tuple[str, ...] | None = ()) -> list[tuple[int, str]]:
    """(line, text) of every ``kind:``-shaped string of ``source`` outside docstrings and ``allowed``
    prefixes (None: the module is a boundary encoder; nothing is reported)."""
    if allowed is None:
        return []
    tree = ast.parse(source)
    skip = docstring_nodes(tree)
    inside_fstrings = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)
                       for part in node.values}
    found = []
    for node in ast.walk(tree):
        if id(node) in skip or id(node) in inside_fstrings:
            continue
        text = _leading_text(node)
        if text is not None and _ENCODED.match(text) and not text.startswith(allowed):
            found.append((node.lineno, text))
    return found


@pytest.mark.parametrize("path", SCANNED, ids=[str(path.relative_to(ROOT)) for path in SCANNED])
def test_turn_module_passes_no_kind_prefixed_strings(path):
    assert encoded_strings(path.read_text(encoding="utf-8"), _BOUNDARY.get(path.name, ())) == []


def test_turn_scan_finds_notes_written_as_strings():
    source = '''
def notes(area, diet):
    """also_places: in a docstring is prose."""
    return (f"also_places:{area}/{diet}", "detail:payment", "generic_diet", "https://example.com")
'''
    assert encoded_strings(source) == [(4, "also_places:"), (4, "detail:payment")]
    assert encoded_strings(source, ("also_places:",)) == [(4, "detail:payment")]
