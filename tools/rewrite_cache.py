"""A pytest plugin that writes pytest's cache of rewritten test modules, and runs no test.

pytest rewrites the ``assert`` statements of every test module and conftest.py when it imports
them, and caches the result beside each one (``__pycache__/<name>.cpython-311-pytest-<version>.pyc``)
only where bytecode may be written. This machine sets PYTHONDONTWRITEBYTECODE=1, and every
pytest-xdist worker collects the whole suite, so without the cache each of ``make test``'s workers
rewrites every test module again. ``make test`` runs this plugin once, with bytecode allowed, before
the workers start:

    PYTHONDONTWRITEBYTECODE= python -m pytest --noconftest -p tools.rewrite_cache

It rewrites each file under ``testpaths`` that pytest would (a conftest.py, or a name that matches
``python_files``) with pytest's own rewriter, without importing it, in one forked copy of itself
per core: about 3.5 s of CPU, where a ``--collect-only`` pass also imports the whole suite's
dependencies for the same cache. A module whose cache pytest would read as it is (the source's hash
matches) is not rewritten again: a second run costs the start-up and one hash per file. With ``--noconftest`` it needs nothing beyond pytest and its
plugins, so ``make test`` starts it before the project itself is installed. The plugins pytest
loads at start-up are cached by that start-up itself, and the packages they mark for rewriting
(hypothesis, anyio) by importing them here.

The rewriter's functions are pytest's private ``_rewrite_test`` and ``_write_pyc`` (pytest is pinned in
requirements-dev.lock). If they change, this says so on stderr and exits 0 having written nothing:
the workers then rewrite for themselves, slower and with the same result.
Source: pytest's ``_pytest/assertion/rewrite.py`` (``AssertionRewritingHook.exec_module``).
"""
from __future__ import annotations

import importlib
import multiprocessing
import os
import sys
from fnmatch import fnmatch
from pathlib import Path
from typing import Callable

import pytest


def rewritten_files(root: Path, testpaths: list[str], patterns: list[str]) -> list[Path]:
    """The files under ``root / testpaths`` whose asserts pytest rewrites at import: every
    conftest.py and every name matching one of ``patterns`` (the ``python_files`` ini option),
    sorted."""
    found: set[Path] = set()
    for folder in testpaths or ["."]:
        for path in (root / folder).rglob("*.py"):
            if path.name == "conftest.py" or any(fnmatch(path.name, pattern) for pattern in patterns):
                found.add(path)
    return sorted(found)


#: ``_in_processes``' function, set before its pool forks (a closure over pytest's config cannot be
#: pickled; a forked copy inherits it).
_WRITE: Callable[[list[Path]], int] | None = None


def _write_share(share: list[Path]) -> int:
    assert _WRITE is not None
    return _WRITE(share)


def _in_processes(write: Callable[[list[Path]], int], files: list[Path], processes: int) -> int:
    """``write`` over ``files`` split among ``processes`` forked copies of this process
    (multiprocessing's fork pool; rewriting is CPU-bound, one file at a time); how many they wrote."""
    global _WRITE
    if processes <= 1 or len(files) < 2:
        return write(files)
    _WRITE = write
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        return sum(pool.map(_write_share, [files[i::processes] for i in range(processes)]))


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int:
    """Write the cache of every test file's rewritten code, then end the run (exit code 0)."""
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
        )
    except ImportError as exc:
        print(f"rewrite_cache: pytest's rewriter moved ({exc}); the workers will rewrite", file=sys.stderr)
        return 0
    if sys.dont_write_bytecode or assertstate_key not in config.stash:
        print("rewrite_cache: bytecode writing or assert rewriting is off; nothing written", file=sys.stderr)
        return 0
    state = config.stash[assertstate_key]

    def cached(path: Path) -> Path:
        return get_cache_dir(path) / (path.name[:-3] + PYC_TAIL)

    def write(paths: list[Path]) -> int:
        written = 0
        for path in paths:
            try:
                source_hash, code = _rewrite_test(path, config)
            except SyntaxError:
                continue  # the real run reports it
            get_cache_dir(path).mkdir(exist_ok=True)
            written += bool(_write_pyc(state, code, source_hash, cached(path)))
        return written

    files = rewritten_files(config.rootpath, config.getini("testpaths"), config.getini("python_files"))
    # A cache pytest would read as it is (its own check: magic number, flags, the source's hash, the
    # path) is left alone: after the first run only the changed modules are rewritten.
    stale = [path for path in files if _read_pyc(path, cached(path)) is None]
    written = _in_processes(write, stale, os.cpu_count() or 1)
    for name in sorted(getattr(state.hook, "_must_rewrite", ())):  # plugins' packages: rewritten at import
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a plugin that fails to import fails the real run instead
            continue
    print(f"rewrite_cache: {written} rewritten test modules cached, {len(files) - len(stale)} already current",
          file=sys.stderr)
    return 0
