"""Two pairs of packages import one way only: staff uses handoff (never the reverse), and the
webhook hands events to the queued-event worker (never the reverse). Read with ``ast``."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"


def imported_by(package: str) -> set[tuple[str, str]]:
    """(file, imported module) for every import in ``shared/<package>/`` (also inside functions)."""
    found = set()
    for path in sorted((SHARED / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add((path.name, node.module))
                found.update((path.name, f"{node.module}.{alias.name}") for alias in node.names)
            elif isinstance(node, ast.Import):
                found.update((path.name, alias.name) for alias in node.names)
    return found


@pytest.mark.parametrize("importer, imported", [("handoff", "staff"), ("deferred_events", "webhook")])
def test_import_directions_run_one_way(importer, imported):
    assert imported_by(imported), "the scan reads nothing"
    wrong = sorted((name, module) for name, module in imported_by(importer)
                   if module == f"shared.{imported}" or module.startswith(f"shared.{imported}."))
    assert wrong == []


def test_import_directions_scan_sees_the_allowed_direction():
    assert any(module.startswith("shared.handoff") for _, module in imported_by("staff"))
    assert any(module.startswith("shared.deferred_events") for _, module in imported_by("webhook"))
