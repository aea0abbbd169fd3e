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


def hcl_text(value: str) -> str:
    """The text of an HCL string as python-hcl2 returns it (quotes already stripped by ``unquote``):
    ``\\"`` and ``\\\\`` unescaped; a heredoc (``<<-EOT … EOT``) without its markers and indent."""
    if value.startswith('"<<'):
        value = value[1:-1]
    if value.startswith("<<"):
        body = value.split("\n", 1)[1].rsplit("\n", 1)[0]
        lines = body.split("\n")
        indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
        return "\n".join(line[indent:] for line in lines)
    return re.sub(r'\\(["\\])', r"\1", value)


def deploy_scripts() -> dict[str, str]:
    """``{function: its deploy step's script}`` (``deploy-<function>`` steps of cloudbuild.yaml)."""
    return {step["id"].removeprefix("deploy-"): "\n".join(step.get("args", []))
            for step in cloudbuild()["steps"] if step["id"].startswith("deploy-")}


#: One invoker grant in a deploy step: ``gcloud functions add-invoker-policy-binding FN … --member=…``.
INVOKER_GRANT = re.compile(r"^\s*gcloud functions add-invoker-policy-binding (\w+) --region=\$\{_REGION\} "
                           r"--member=serviceAccount:(local-[a-z-]+)@\$\{PROJECT_ID\}\.iam\.gserviceaccount\.com\s*$",
                           re.M)


def invoker_grants() -> dict[str, set[str]]:
    """``{function: the accounts its deploy step grants run.invoker}`` from cloudbuild.yaml."""
    grants: dict[str, set[str]] = {}
    for fn, script in deploy_scripts().items():
        for target, account in INVOKER_GRANT.findall(script):
            assert target == fn, f"deploy-{fn} grants run.invoker on {target}"
            grants.setdefault(fn, set()).add(account)
    return grants
