"""The SQLite store across ``fork``: the per-file writer lock held in the parent is free in the child."""
from __future__ import annotations

import multiprocessing
import os

import pytest

from shared.sqlite_file import write_lock
from shared.store.sqlite import SqliteStore

pytestmark = pytest.mark.slow


def _write_in_child(path: str) -> None:
    SqliteStore(path, deadline_seconds=5.0).set("things", "child", {"pid": os.getpid()})


def test_sqlite_writer_lock_held_at_fork_is_free_in_the_child(tmp_path):
    path = str(tmp_path / "fork.sqlite3")
    SqliteStore(path).set("things", "parent", {"v": 1})
    lock = write_lock(path)
    with lock:  # held by this (parent) thread across the fork
        child = multiprocessing.get_context("fork").Process(target=_write_in_child, args=(path,))
        child.start()
        child.join(60)
    assert child.exitcode == 0
    assert SqliteStore(path).get("things", "child")["pid"] == child.pid
