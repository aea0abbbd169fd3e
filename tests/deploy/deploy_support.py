"""Readers for the deploy files (infra/*.tf, cloudbuild.yaml, shared/config.py, infra/README.md),
shared by the deploy tests. Parsers only: nothing here runs Terraform or gcloud."""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import hcl2
import yaml

REPO = Path(__file__).resolve().parents[2]
INFRA = REPO / "infra"


@cache
def tf() -> dict[str, list]:
    """Every infra/*.tf parsed by python-hcl2 and merged by top-level block kind."""
    merged: dict[str, list] = {}
    for path in sorted(INFRA.glob("*.tf")):
        with path.open() as f:
            for kind, blocks in hcl2.load(f).items():
                merged.setdefault(kind, []).extend(blocks)
    return merged


def unquote(value: Any) -> Any:
    """python-hcl2 keeps string literals with their quotes and expressions as ``${...}``."""
    if isinstance(value, str):
        if len(value) >= 2 and value[0] == value[-1] == '"':
            return value[1:-1]
        if value.startswith("${") and value.endswith("}"):
            return value[2:-1]
    if isinstance(value, dict):
        return {unquote(k): unquote(v) for k, v in value.items() if not str(k).startswith("__")}
    if isinstance(value, list):
        return [unquote(v) for v in value]
    return value


def resources(kind: str) -> dict[str, dict]:
    """``{name: body}`` of every resource of one type."""
    return {name: body for k, name, body in all_resources() if k == kind}


def all_resources() -> list[tuple[str, str, dict]]:
    """``(type, name, body)`` of every resource."""
    out = []
    for block in tf().get("resource", []):
        for kind, named in block.items():
            for name, body in named.items():
                out.append((unquote(kind), unquote(name), unquote(body)))
    return out


def locals_() -> dict[str, Any]:
    """Every ``locals`` block merged (values unquoted)."""
    merged: dict[str, Any] = {}
    for block in tf().get("locals", []):
        merged.update(unquote(block))
    return merged


def variables() -> dict[str, dict]:
    """``{name: body}`` of every variable."""
    out: dict[str, dict] = {}
    for block in tf().get("variable", []):
        for name, body in block.items():
            out[unquote(name)] = unquote(body)
    return out


def outputs() -> dict[str, dict]:
    out: dict[str, dict] = {}
    for block in tf().get("output", []):
        for name, body in block.items():
            out[unquote(name)] = unquote(body)
    return out


@cache
def cloudbuild() -> dict:
    return yaml.safe_load((REPO / "cloudbuild.yaml").read_text())


def config_env_names() -> set[str]:
    """Environment variable names that shared/config.py reads (its ``get``/``seconds``/``integer``
    calls and its ``*_REQUIRED`` tuples)."""
    source = (REPO / "shared" / "config.py").read_text()
    names = set(re.findall(r'\b(?:get|seconds|integer|number|flag|env\.get)\(\s*"([A-Z][A-Z0-9_]+)"', source))
    for tuple_body in re.findall(r"_REQUIRED\s*=\s*\(([^)]*)\)", source):
        names.update(re.findall(r'"([A-Z][A-Z0-9_]+)"', tuple_body))
    return names


def function_names() -> list[str]:
    """The deployable functions: every functions/<name>/main.py."""
    return sorted(p.parent.name for p in (REPO / "functions").glob("*/main.py"))
