"""tools/rewrite_cache.py run as `make test` runs it (``pytest -p tools.rewrite_cache`` in a new process):
the cache it writes is the one pytest itself reads, and nothing is written where bytecode is off."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc

from tests.conftest import REPO
from tests.unit.tools.test_rewrite_cache import _project

pytestmark = pytest.mark.slow


def test_rewrite_cache_writes_pycs_that_pytest_reads_and_runs_no_test(tmp_path):
    tests = _project(tmp_path)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "tools.rewrite_cache", "-p", "no:cacheprovider"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # conftest.py is cached by pytest's own start-up (bytecode is on), the two test modules by the plugin
    assert "2 rewritten test modules cached, 1 already current" in done.stderr, done.stderr
    assert "passed" not in done.stdout  # no test ran
    for source in (tests / "conftest.py", tests / "deep" / "test_one.py", tests / "deep" / "check_two.py"):
        pyc = source.parent / "__pycache__" / (source.name[:-3] + PYC_TAIL)
        assert _read_pyc(source, pyc) is not None, pyc  # valid for this source, as pytest checks it
    assert not list((tests / "deep" / "__pycache__").glob("helper*"))
    # A changed source no longer matches its cache: pytest would rewrite it, not run stale code.
    (tests / "deep" / "test_one.py").write_text("def test_one():\n    assert 2 + 2 == 4\n")
    assert _read_pyc(tests / "deep" / "test_one.py",
                     tests / "deep" / "__pycache__" / ("test_one" + PYC_TAIL)) is None
    # The next run rewrites only that one; the others' caches are current.
    again = subprocess.run([sys.executable, "-m", "pytest", "-p", "tools.rewrite_cache", "-p", "no:cacheprovider"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "1 rewritten test modules cached, 2 already current" in again.stderr, again.stderr
    assert _read_pyc(tests / "deep" / "test_one.py",
                     tests / "deep" / "__pycache__" / ("test_one" + PYC_TAIL)) is not None


def test_rewrite_cache_with_bytecode_writing_off_writes_nothing_and_says_so(tmp_path):
    tests = _project(tmp_path)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "tools.rewrite_cache", "-p", "no:cacheprovider"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "nothing written" in done.stderr
    assert not list(tests.rglob(f"*{PYC_TAIL}"))
