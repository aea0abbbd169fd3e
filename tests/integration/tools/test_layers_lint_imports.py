"""``lint-imports`` (import-linter, the contracts ``[tool.importlinter]`` in pyproject.toml that ``make lint``
runs) holds on the repo, and breaks on each deliberate wrong import in a scratch copy of ``shared/``: a
domain importing the webhook, a cycle between domains, an adapter outside the wiring. It runs as a
process, as ``make lint`` runs it. What the contracts cannot say about themselves: tests/unit/test_layers.py.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow(seconds=1)

ROOT = Path(__file__).resolve().parents[3]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` over the ``shared`` package under ``root`` (import-linter puts the working
    directory first on ``sys.path``, so that copy is the one read, not the installed one)."""
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo", "--config", "pyproject.toml"],
                          cwd=root, capture_output=True, text=True, timeout=120)


def test_layers_contracts_hold_on_the_repo():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


#: (case, module, code appended to it, what lint-imports reports): each a wrong import in a scratch copy.
WRONG_IMPORTS = [
    # a domain importing the webhook (a use case), or the routes above it
    ("domain_to_webhook", "shared/handoff/scratch.py", "from shared.webhook import service\n",
     "shared.handoff is not allowed to import shared.webhook"),
    ("domain_to_routes", "shared/memory/scratch.py", "import shared.routing\n", "shared.memory is not allowed to import shared.routing"),
    # a domain importing one above it in the domain order, or a sibling it is independent of
    ("memory_to_turn_inside_a_function", "shared/memory/scratch.py", "def f():\n    from shared.turn import engine\n",
     "shared.memory is not allowed to import shared.turn"),
    ("turn_to_agent", "shared/turn/scratch.py", "from shared.agent import agent\n", "shared.turn is not allowed to import shared.agent"),
    ("handoff_to_memory", "shared/handoff/scratch.py", "from shared.memory import flow\n",
     "shared.handoff is not allowed to import shared.memory"),
    ("turn_to_staff", "shared/turn/scratch.py", "from shared.staff import flow\n", "shared.turn is not allowed to import shared.staff"),
    # a reply builder importing a domain; the base importing a port; a module placed in no layer
    ("replies_to_turn", "shared/replies/scratch.py", "from shared.turn import engine\n", "shared.replies is not allowed to import shared.turn"),
    ("base_to_port", "shared/diets.py", "import shared.store\n", "shared.diets is not allowed to import shared.store"),
    ("module_in_no_layer", "shared/scratch.py", "", "not listed as layers:\n\n- shared.scratch"),
    # an adapter imported outside the wiring; an entry point imported from shared/
    ("adapter_outside_wiring", "shared/turn/scratch.py", "from shared.store.sqlite import SqliteStore\n",
     "Only the wiring imports an adapter"),
    ("shared_to_tools", "shared/handoff/scratch.py", "import tools.demo\n", "shared is not allowed to import tools"),
]


@pytest.fixture(scope="module")
def broken_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    """lint-imports' report over a copy of pyproject.toml and ``shared/`` with every wrong import
    of ``WRONG_IMPORTS`` added (one run: each is reported by its own line)."""
    scratch = tmp_path_factory.mktemp("scratch")
    shutil.copy(ROOT / "pyproject.toml", scratch / "pyproject.toml")
    shutil.copytree(ROOT / "shared", scratch / "shared", ignore=shutil.ignore_patterns("__pycache__"))
    for _, module, source, _ in WRONG_IMPORTS:
        with (scratch / module).open("a", encoding="utf-8") as file:  # appended to an existing module
            file.write("\n" + source)
    result = _lint_imports(scratch)
    assert result.returncode != 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.parametrize("broken", [case[3] for case in WRONG_IMPORTS], ids=[case[0] for case in WRONG_IMPORTS])
def test_layers_contracts_break_on_a_wrong_import(broken_report: str, broken: str):
    assert broken in broken_report, broken_report
