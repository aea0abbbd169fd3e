"""The slow-client gate's timers: one watchdog thread per process, not a thread per request
(starting one per request cost measurable CPU under load).

Real sockets (``socket.socketpair``); no wall-clock bound: each wait is on a condition.
"""
from __future__ import annotations

import socket
import threading

import pytest

from shared.http_body import SlowClientGate

WAIT = 30.0  # a generous cap on condition waits, never a claim about speed


@pytest.fixture
def pair():
    """A connected socket pair (left: the server's read side, right: the client); closed after the test."""
    left, right = socket.socketpair()
    yield left, right
    left.close()
    right.close()


def _watchdog_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "http-body-watchdog"]


def test_http_body_watchdog_many_guarded_reads_share_one_thread(pair):
    gate = SlowClientGate(slots=2, timeout_seconds=5.0, prompt_seconds=1.0)
    before = len(_watchdog_threads())
    left, right = pair
    for _ in range(50):
        right.sendall(b"{}")
        with gate.watch(left) as watch:
            assert left.recv(2) == b"{}"
        assert not watch.cut
    assert len(_watchdog_threads()) == before + 1


def test_http_body_watchdog_silent_client_without_slot_is_cut(pair):
    gate = SlowClientGate(slots=0, timeout_seconds=5.0, prompt_seconds=0.01)
    left, right = pair
    with gate.watch(left) as watch:
        data = left.recv(10)  # nothing is ever sent: only the cut ends this read
    assert data == b""
    assert watch.cut


def test_http_body_watchdog_slow_client_with_slot_is_cut_at_the_deadline(pair):
    gate = SlowClientGate(slots=1, timeout_seconds=0.05, prompt_seconds=0.01)
    left, right = pair
    with gate.watch(left) as watch:
        right.sendall(b"{")
        assert left.recv(1) == b"{"
        data = left.recv(10)  # the rest never comes: the slot's deadline ends the read
    assert data == b""
    assert watch.cut
    assert gate._try_slot()  # the slot was given back


def test_http_body_watchdog_finished_read_is_never_cut(pair):
    # The deadline is far beyond the two bytes already waiting (0.01 s was cut under two CPU burners
    # before the block had ended: a race of the test, not the claim, which is about after the end;
    # 0.5 s is fifty times that).
    gate = SlowClientGate(slots=0, timeout_seconds=5.0, prompt_seconds=0.5)
    left, right = pair
    right.sendall(b"{}")
    with gate.watch(left) as watch:
        assert left.recv(2) == b"{}"
    # An alarm due after the cancelled one has fired, so the cancelled one's time has passed.
    later = threading.Event()
    gate._watchdog.schedule(0.6, later.set)
    assert later.wait(WAIT)
    assert not watch.cut
    right.sendall(b"x")
    assert left.recv(1) == b"x"  # the read side is still open
