"""tools/rewrite_cache.py: the cache of rewritten test modules that `make test` writes before its
workers start is the one pytest itself reads (and it skips modules pytest would not rewrite)."""
from __future__ import annotations

import os
import subprocess
import sys

from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc

from tests.conftest import REPO
from tools.rewrite_cache import rewritten_files


def _project(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = tests\npython_files = test_*.py check_*.py\n")
    (tmp_path / "tests" / "deep").mkdir(parents=True)
    (tmp_path / "tests" / "conftest.py").write_text("import pytest\n")
    (tmp_path / "tests" / "deep" / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    (tmp_path / "tests" / "deep" / "check_two.py").write_text("def test_two():\n    assert True\n")
    (tmp_path / "tests" / "deep" / "helper.py").write_text("VALUE = 1\n")
    (tmp_path / "tests" / "test_broken.py").write_text("def oops(:\n")  # the real run reports it
    (tmp_path / "test_outside.py").write_text("def test_x():\n    assert True\n")
    return tmp_path / "tests"


def test_rewritten_files_are_conftests_and_python_files_matches_under_testpaths(tmp_path):
    tests = _project(tmp_path)
    found = rewritten_files(tmp_path, ["tests"], ["test_*.py", "check_*.py"])
    assert found == sorted([tests / "conftest.py", tests / "test_broken.py", tests / "deep" / "check_two.py",
                           tests / "deep" / "test_one.py"])


def test_rewrite_cache_writes_pycs_that_pytest_reads_and_runs_no_test(tmp_path):
    tests = _project(tmp_path)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "tools.rewrite_cache", "-p", "no:cacheprovider"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "3 rewritten test modules cached" in done.stderr
    assert "passed" not in done.stdout  # no test ran
    for source in (tests / "conftest.py", tests / "deep" / "test_one.py", tests / "deep" / "check_two.py"):
        pyc = source.parent / "__pycache__" / (source.name[:-3] + PYC_TAIL)
        assert _read_pyc(source, pyc) is not None, pyc  # valid for this source, as pytest checks it
    assert not list((tests / "deep" / "__pycache__").glob("helper*"))
    # A changed source no longer matches its cache: pytest would rewrite it, not run stale code.
    (tests / "deep" / "test_one.py").write_text("def test_one():\n    assert 2 + 2 == 4\n")
    assert _read_pyc(tests / "deep" / "test_one.py",
                     tests / "deep" / "__pycache__" / ("test_one" + PYC_TAIL)) is None


def test_rewrite_cache_with_bytecode_writing_off_writes_nothing_and_says_so(tmp_path):
    tests = _project(tmp_path)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "tools.rewrite_cache", "-p", "no:cacheprovider"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "nothing written" in done.stderr
    assert not list(tests.rglob(f"*{PYC_TAIL}"))
