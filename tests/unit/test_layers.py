"""The import graph of ``shared/`` against the layers drawn in the README (section Layout → Layers).

Every import statement (module level or inside a function) is read with ``ast``; nothing is imported.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / "shared"


def _layers_section() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    start = text.index("### Layers")
    end = text.find("\n## ", start)
    return text[start:end if end != -1 else None]


def _readme_layers() -> list[tuple[str, list[str]]]:
    """[(layer name, [path prefixes under shared/])], top row first."""
    layers = []
    for line in _layers_section().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("layer", "") or set(cells[0]) <= {"-"}:
            continue
        paths = [p for p in re.findall(r"`([^`]+)`", cells[1]) if p.startswith("shared/")]
        layers.append((cells[0], paths))
    return layers


def _readme_adapters() -> list[str]:
    for paragraph in _layers_section().split("\n\n"):
        if paragraph.startswith("Adapters"):
            return [p for p in re.findall(r"`([^`]+)`", paragraph) if p != "shared/wiring.py"]
    raise AssertionError("README Layers section lists no adapters")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in SHARED.rglob("*.py")}


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The shared.* modules that ``path`` imports (``from a import b`` counts a.b when b is a module)."""
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    return _imports_in(path.read_text(encoding="utf-8"), package, modules)


def _imports_in(source: str, package: str, modules: dict[str, Path]) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules)
    return {name for name in found if name == "shared" or name.startswith("shared.")}


def _upward(module: str, targets: set[str], layers: list[tuple[str, list[str]]]) -> list[str]:
    """The imports of ``module`` that point to a row above its own."""
    own = _layer_of(module, layers)
    found = []
    for target in sorted(targets):
        theirs = _layer_of(target, layers) if target != "shared" else own
        if theirs is not None and own is not None and theirs < own:
            found.append(f"{module} ({layers[own][0]}) imports {target} ({layers[theirs][0]})")
    return found


def _layer_of(module: str, layers: list[tuple[str, list[str]]]) -> int | None:
    path = module.replace(".", "/")
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(layers):
        for prefix in prefixes:
            matches = path + ".py" == prefix if prefix.endswith(".py") else (path + "/").startswith(prefix)
            if matches and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return best[0] if best else None


def test_layers_every_shared_module_is_placed_in_a_readme_row():
    layers = _readme_layers()
    assert [name for name, _ in layers][:2] == ["entry points", "wiring"]
    unplaced = sorted(m for m in _modules() if m != "shared" and _layer_of(m, layers) is None)
    assert unplaced == [], f"place these in the README's Layers table: {unplaced}"


def test_layers_imports_run_only_down_the_readme_table():
    layers, modules = _readme_layers(), _modules()
    upward = [line for module, path in modules.items() if module != "shared"
              for line in _upward(module, _imports(path, modules), layers)]
    assert upward == [], "\n".join(upward)


def test_layers_domains_never_import_the_webhook():
    modules = _modules()
    offenders = sorted(
        f"{module} imports {target}"
        for module, path in modules.items()
        if module.split(".")[1:2] and module.split(".")[1] in ("handoff", "memory", "turn", "places")
        for target in _imports(path, modules)
        if target == "shared.webhook" or target.startswith("shared.webhook.")
    )
    assert offenders == []


def test_layers_only_wiring_imports_adapters():
    modules = _modules()
    adapters = {p.removesuffix(".py").replace("/", ".") for p in _readme_adapters()}
    assert adapters and adapters <= set(modules), f"README names adapters that do not exist: {adapters - set(modules)}"
    offenders = []
    for module, path in modules.items():
        for target in _imports(path, modules) & adapters:
            same_package = module.rpartition(".")[0] == target.rpartition(".")[0]
            if module != "shared.wiring" and not same_package:
                offenders.append(f"{module} imports {target}")
    assert offenders == []


def test_layers_checker_finds_a_domain_importing_the_webhook_or_routes():
    layers, modules = _readme_layers(), _modules()
    probe = "from shared.webhook import service\nimport shared.routing\nfrom ..clock import utc_now\n"
    targets = _imports_in(probe, "shared.handoff", modules)
    assert targets == {"shared.webhook", "shared.webhook.service", "shared.routing", "shared.clock"}
    upward = _upward("shared.handoff.flow", targets, layers)
    assert [line.split(" imports ")[1].split(" ")[0] for line in upward] == [
        "shared.routing", "shared.webhook", "shared.webhook.service"]
