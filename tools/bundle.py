"""``make bundle``: one deployable directory per function, ``dist/<function>/``.

Each bundle holds what Cloud Functions (2nd gen, python311) needs and nothing else:

* ``main.py`` — the entry point, copied from ``functions/<function>/main.py``;
* ``shared/…`` — only the modules that function can reach (see below), with their packages'
  ``__init__.py``;
* ``data/…`` — only the snapshots those modules name;
* ``requirements.txt`` — exactly the function's own third-party distributions and their
  dependencies, pinned and hashed, copied line for line from ``requirements.lock``;
* ``__pycache__/*.cpython-311.pyc`` beside every ``.py`` — bytecode for the runtime's Python
  (``RUNTIME``), hash-based and checked (PEP 552): valid whatever the files' modification times,
  which the upload and the image export change (docs/deploy.md, "Bytecode"), so a cold start
  reads it and compiles nothing;
* ``.gcloudignore`` — naming only itself, so that ``gcloud functions deploy`` uploads all the rest
  (``__pycache__`` included) whatever gcloud's default ignore list becomes.

Which modules a function reaches: a name-level walk of the import graph (``ast``, nothing is
imported or run). It starts at every top-level definition of ``main.py``; a reached function or
class brings the names its body uses and the imports inside it (so a lazy import counts only
where the function that makes it is reached), and a reached module brings its own top-level
imports. ``shared/wiring.py`` imports each adapter inside the function that needs it, so
``memory``, which only calls ``wiring.open_store``, gets the store adapters and not the LINE or
Cloud Tasks clients.

Third-party distributions come from the top-level imports of reached code (``IMPORT_TO_DIST``); the
dependency closure and the hashed lines come from ``requirements.lock`` and the installed
distributions' metadata (``importlib.metadata``), so the bundle installs offline with
``pip install --require-hashes``.

Usage: ``python -m tools.bundle [--out dist] [function ...]``. Exit 2 when a reached import has no
known distribution, a needed distribution has no hashed line in the lock, or this Python is not the
runtime's (its bytecode would be for another interpreter).
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import py_compile
import re
import shutil
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Top-level import (longest prefix wins) → distribution in requirements.lock. Standard library
#: modules are not listed; an import found in neither is an error, so a new dependency cannot be
#: left out of a bundle silently.
IMPORT_TO_DIST = {
    "functions_framework": "functions-framework",
    "flask": "flask",
    "werkzeug": "werkzeug",
    "linebot": "line-bot-sdk",
    "certifi": "certifi",
    "google.cloud.firestore": "google-cloud-firestore",
    "google.cloud.firestore_v1": "google-cloud-firestore",
    "google.cloud.tasks_v2": "google-cloud-tasks",
    "google.api_core": "google-api-core",
    "google.protobuf": "protobuf",
    "grpc": "grpcio",
    "cryptography": "cryptography",
    "tenacity": "tenacity",
    "google.auth": "google-auth",
    "google.oauth2": "google-auth",
    "google.adk": "google-adk",
    "google.genai": "google-genai",
    "pydantic": "pydantic",
    "requests": "requests",
    "cachecontrol": "cachecontrol",
    "urllib3": "urllib3",
    "holidays": "holidays",
    "lunardate": "lunardate",
    "cn2an": "cn2an",
    "opencc": "opencc",
    "geographiclib": "geographiclib",
}

#: Always present in a bundle: the framework Cloud Functions runs the entry point with.
BASE_DISTS = ("functions-framework",)

#: The Cloud Functions runtime every bundle is deployed to (cloudbuild.yaml's ``--runtime``), and
#: the Python it runs: the bundles' bytecode is compiled by, and only valid for, that interpreter.
RUNTIME = "python311"
RUNTIME_PYTHON = (3, 11)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class _Module:
    name: str
    path: Path
    tree: ast.Module
    defs: dict[str, ast.AST] = field(default_factory=dict)     # top-level def/class name → node
    imports: dict[str, str] = field(default_factory=dict)      # local name → dotted target


class ImportGraph:
    """Name-level reachability over ``shared`` (and one entry file)."""

    def __init__(self, root: Path = REPO):
        self.root = root
        self._modules: dict[str, _Module] = {}
        self.third_party: set[str] = set()
        self.reached_modules: set[str] = set()
        self._reached_units: set[tuple[str, str]] = set()
        self._queue: list[tuple[str, str]] = []

    # -- modules ---------------------------------------------------------------------------------
    def _module_path(self, name: str) -> Path | None:
        if name != "shared" and not name.startswith("shared."):
            return None
        base = self.root.joinpath(*name.split("."))
        if (base / "__init__.py").is_file():
            return base / "__init__.py"
        if base.with_suffix(".py").is_file():
            return base.with_suffix(".py")
        return None

    def _load(self, name: str, path: Path | None = None) -> _Module | None:
        if name in self._modules:
            return self._modules[name]
        path = path or self._module_path(name)
        if path is None:
            return None
        tree = ast.parse(path.read_text(), filename=str(path))
        mod = _Module(name, path, tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                mod.defs[node.name] = node
        for node in ast.walk(tree):  # every import binds a name somewhere in the module
            for local, target in _bindings(node, package):
                mod.imports.setdefault(local, target)
        self._modules[name] = mod
        return mod

    # -- reachability ----------------------------------------------------------------------------
    def add_entry(self, path: Path) -> None:
        """Reach an entry file (functions/<f>/main.py): its top level and every definition in it."""
        mod = self._load("__main__", path)
        assert mod is not None
        self._reach("__main__", "")
        for name in mod.defs:
            self._reach("__main__", name)
        self._drain()

    def _reach(self, module: str, unit: str) -> None:
        if (module, unit) not in self._reached_units:
            self._reached_units.add((module, unit))
            self._queue.append((module, unit))

    def _reach_target(self, dotted: str) -> None:
        """Reach ``a.b.c``: a module, or a name inside a module (``a.b`` + ``c``)."""
        if not (dotted == "shared" or dotted.startswith("shared.")):
            self._third_party(dotted)
            return
        if self._load(dotted) is not None:
            self._reach(dotted, "")
            return
        module, _, name = dotted.rpartition(".")
        if self._load(module) is not None:
            self._reach(module, "")
            self._reach(module, name)

    def _third_party(self, dotted: str) -> None:
        top = dotted.split(".")[0]
        if top in sys.stdlib_module_names or top == "__future__":
            return
        for prefix in sorted(IMPORT_TO_DIST, key=len, reverse=True):
            if dotted == prefix or dotted.startswith(prefix + "."):
                self.third_party.add(IMPORT_TO_DIST[prefix])
                return
        raise BundleError(f"no distribution known for import {dotted!r}: add it to IMPORT_TO_DIST")

    def _drain(self) -> None:
        while self._queue:
            module, unit = self._queue.pop()
            mod = self._modules[module]
            if unit == "":
                self.reached_modules.add(module)
                parts = module.split(".")
                for i in range(1, len(parts)):  # importing a.b.c runs a and a.b first
                    self._reach_target(".".join(parts[:i]))
                nodes = [n for n in mod.tree.body
                         if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
                # Decorators and base classes run at import time.
                for n in mod.defs.values():
                    nodes.extend(getattr(n, "decorator_list", []))
                    nodes.extend(getattr(n, "bases", []))
            else:
                node = mod.defs.get(unit)
                if node is None:  # a re-exported name: follow where it was imported from
                    if unit in mod.imports:
                        self._reach_target(mod.imports[unit])
                    continue
                nodes = [node]
            for n in nodes:
                self._visit(mod, n)

    def _visit(self, mod: _Module, root: ast.AST) -> None:
        package = mod.name if mod.path.name == "__init__.py" else mod.name.rpartition(".")[0]
        for node in ast.walk(root):
            for _local, target in _bindings(node, package):
                if isinstance(node, ast.ImportFrom) or "." not in target:
                    self._reach_target(target)
                else:  # import a.b.c binds a, and runs a.b.c
                    self._reach_target(target)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if node.id in mod.defs:
                    self._reach(mod.name, node.id)
                elif node.id in mod.imports:
                    self._reach_target(mod.imports[node.id])
            elif isinstance(node, ast.Attribute):
                chain = _attr_chain(node)
                if chain and chain[0] in mod.imports:
                    target = mod.imports[chain[0]]
                    if target.startswith("shared"):
                        self._reach_target(".".join([target, *chain[1:2]]))
                    else:
                        self._reach_target(target)


def _bindings(node: ast.AST, package: str) -> list[tuple[str, str]]:
    """``(local name, dotted target)`` bound by one import statement."""
    if isinstance(node, ast.Import):
        return [(a.asname or a.name.split(".")[0], a.name if a.asname else a.name) for a in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - (node.level - 1)] if node.level > 1 else anchor
            base = ".".join([*anchor, *([base] if base else [])])
        return [(a.asname or a.name, f"{base}.{a.name}") for a in node.names if a.name != "*"]
    return []


def _attr_chain(node: ast.Attribute) -> list[str]:
    chain: list[str] = []
    cur: ast.AST = node
    while isinstance(cur, ast.Attribute):
        chain.append(cur.attr)
        cur = cur.value
    if not isinstance(cur, ast.Name):
        return []
    return [cur.id, *reversed(chain)]


class BundleError(RuntimeError):
    """A bundle cannot be made (unknown import, unhashed lock line, missing file)."""


# -- requirements -----------------------------------------------------------------------------

def lock_entries(lock: Path) -> dict[str, str]:
    """``{normalised name: the lock's full entry (pin line, its hash lines)}`` from a pip-compile lock."""
    entries: dict[str, str] = {}
    current: str | None = None
    for line in lock.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==\S+", line)
        if m:
            current = _norm(m.group(1))
            entries[current] = line.rstrip()
        elif current and line.startswith("    --hash="):
            entries[current] += "\n" + line.rstrip()
        elif not line.startswith("    "):
            current = None
    return entries


def dependency_closure(direct: set[str]) -> set[str]:
    """Every distribution ``direct`` needs, by the installed metadata: a requirement's extras
    (``google-api-core[grpc]``) bring that distribution's requirements for those extras; markers
    that do not hold here are left out."""
    seen: set[tuple[str, str]] = set()
    todo: list[tuple[str, str]] = [(_norm(d), "") for d in direct]
    while todo:
        name, extra = todo.pop()
        if (name, extra) in seen:
            continue
        seen.add((name, extra))
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError as exc:
            raise BundleError(f"{name} is not installed in this environment (make venv)") from exc
        for req in requires:
            spec, _, marker = req.partition(";")
            if marker and not _marker_applies(marker, extra):
                continue
            dep = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?", spec)
            if dep:
                todo.append((_norm(dep.group(1)), ""))
                todo.extend((_norm(dep.group(1)), e.strip()) for e in (dep.group(2) or "").split(",") if e.strip())
    return {name for name, _ in seen}


def _marker_applies(marker: str, extra: str) -> bool:
    from packaging.markers import Marker

    return Marker(marker).evaluate({"extra": extra})


def requirements_for(dists: set[str], lock: Path) -> str:
    """The hashed ``requirements.txt`` body for ``dists`` and their dependencies.

    Raises:
        BundleError: a needed distribution has no pinned, hashed entry in the lock.
    """
    entries = lock_entries(lock)
    lines = []
    for name in sorted(dependency_closure(dists)):
        entry = entries.get(name)
        if entry is None or "--hash=sha256:" not in entry:
            raise BundleError(f"{name} has no hashed entry in {lock.name} (make lock)")
        lines.append(entry)
    return "\n".join(lines) + "\n"


# -- bundle -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Bundle:
    """What one function's bundle holds (paths relative to the bundle)."""

    function: str
    modules: tuple[str, ...]
    data_files: tuple[str, ...]
    distributions: tuple[str, ...]


def plan(function: str, root: Path = REPO) -> Bundle:
    """Work out one function's bundle without writing anything. Raises BundleError."""
    entry = root / "functions" / function / "main.py"
    if not entry.is_file():
        raise BundleError(f"no functions/{function}/main.py")
    graph = ImportGraph(root)
    graph.add_entry(entry)
    modules = sorted(m for m in graph.reached_modules if m != "__main__")
    data_names = {p.name for p in (root / "data").glob("*") if p.is_file()}
    sources = [entry.read_text()] + [graph._modules[m].path.read_text() for m in modules]
    data = sorted(n for n in data_names if any(n in s for s in sources))
    dists = sorted(set(BASE_DISTS) | graph.third_party)
    return Bundle(function, tuple(modules), tuple(f"data/{n}" for n in data), tuple(dists))


def write(bundle: Bundle, out: Path, root: Path = REPO) -> Path:
    """Write ``out/<function>/`` afresh. Returns its path. Raises BundleError."""
    target = out / bundle.function
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    shutil.copy2(root / "functions" / bundle.function / "main.py", target / "main.py")
    for module in bundle.modules:
        src = ImportGraph(root)._module_path(module)
        assert src is not None
        dst = target / src.relative_to(root)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    for rel in bundle.data_files:
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target / rel)
    compile_bytecode(target)
    (target / ".gcloudignore").write_text(
        "# make bundle: upload everything else, __pycache__ included (tools/bundle.py)\n.gcloudignore\n")
    (target / "requirements.txt").write_text(
        f"# {bundle.function}: its own dependencies, from requirements.lock (make bundle)\n"
        + requirements_for(set(bundle.distributions), root / "requirements.lock"))
    (target / "bundle.json").write_text(json.dumps(
        {"function": bundle.function, "modules": list(bundle.modules), "data": list(bundle.data_files),
         "distributions": list(bundle.distributions)}, indent=1) + "\n")
    return target


def compile_bytecode(bundle_dir: Path) -> list[Path]:
    """Write ``__pycache__/<name>.cpython-311.pyc`` for every ``.py`` under ``bundle_dir``.

    Checked hash-based pycs (PEP 552, ``PycInvalidationMode.CHECKED_HASH``): the import system
    compares the source's hash with the one recorded, never its modification time, so the pyc stays
    valid after the upload and the image export, which rewrite every file's time. Each code object's
    file name is the bundle-relative path, so the same sources give the same bytes anywhere.

    Returns:
        The pyc paths written.
    Raises:
        BundleError: this interpreter is not ``RUNTIME_PYTHON`` (the pycs would carry another magic
            number and cache tag, and the runtime would ignore them), or a file does not compile.
    """
    if sys.version_info[:2] != RUNTIME_PYTHON:
        raise BundleError(f"bundles carry bytecode for {RUNTIME}: run make bundle with Python "
                          f"{'.'.join(map(str, RUNTIME_PYTHON))}, not {sys.version.split()[0]}")
    written = []
    for source in sorted(bundle_dir.rglob("*.py")):
        cfile = Path(importlib.util.cache_from_source(str(source)))
        try:
            py_compile.compile(str(source), cfile=str(cfile), dfile=source.relative_to(bundle_dir).as_posix(),
                               doraise=True, optimize=0,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
        except py_compile.PyCompileError as exc:
            raise BundleError(f"{source.relative_to(bundle_dir)} does not compile: {exc.msg}") from exc
        written.append(cfile)
    return written


def all_functions(root: Path = REPO) -> list[str]:
    """Every ``functions/<name>/main.py``."""
    return sorted(p.parent.name for p in (root / "functions").glob("*/main.py"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(REPO / "dist"))
    parser.add_argument("functions", nargs="*")
    args = parser.parse_args(argv)
    try:
        for function in args.functions or all_functions():
            bundle = plan(function)
            path = write(bundle, Path(args.out))
            print(f"{path}: {len(bundle.modules)} modules, {len(bundle.data_files)} data files, "
                  f"{', '.join(bundle.distributions)}", file=sys.stderr)
    except BundleError as exc:
        print(f"make bundle: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
