"""The import contracts of ``shared/`` (``[tool.importlinter]`` in pyproject.toml, run by ``make lint``):
what a contract cannot say about itself, read from pyproject.toml and the tree: that the adapters it
protects exist and that the domains have an order (no layer lets two domains import each other).
That ``lint-imports`` holds on the repo and breaks on a deliberate wrong import (it runs as a process)
is tests/integration/tools/test_layers_lint_imports.py.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]


def _contract(contract_id: str) -> dict:
    return next(c for c in _config()["contracts"] if c["id"] == contract_id)


def _layer_names(layer: str) -> list[str]:
    return [name.strip() for name in layer.replace(":", "|").split("|")]


def test_layers_place_every_domain_in_an_order():
    """No layer lets two domains import each other (no ":" sibling among them), and each domain is
    placed: the order agent → (staff | turn) → (handoff | memory) is the contract's, not an exception."""
    layers = _contract("layers")["layers"]
    domains = {"agent", "turn", "handoff", "memory", "staff"}
    placed = [name for layer in layers for name in _layer_names(layer) if name in domains]
    assert sorted(placed) == sorted(domains)
    shared_layers = [layer for layer in layers if ":" in layer]
    assert all(not domains & set(_layer_names(layer)) for layer in shared_layers), shared_layers
    assert [index for index, layer in enumerate(layers) if ":" in layer] in ([], [len(layers) - 1]), (
        "only the base layer's modules may import each other")


def test_layers_protected_adapters_exist_and_only_wiring_may_import_them():
    adapters = _contract("adapters")
    missing = [m for m in adapters["protected_modules"] if not (ROOT / (m.replace(".", "/") + ".py")).is_file()]
    assert adapters["protected_modules"] and missing == []
    assert adapters["allowed_importers"] == ["shared.wiring"]
