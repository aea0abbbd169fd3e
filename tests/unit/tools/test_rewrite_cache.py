"""tools/rewrite_cache.py: the cache of rewritten test modules that `make test` writes before its
workers start is the one pytest itself reads (and it skips modules pytest would not rewrite)."""
from __future__ import annotations

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
