"""Fault-injection seam for tests and the demo only (docs/design.md §4: the four
scenarios baseline, after_commit, before_write, lookup_unavailable).

Faults come from ``Settings.faults`` (``LOCAL_FAULTS``), which the configuration refuses unless
the store is the embedded SQLite, so a production deployment cannot switch them on; this module
checks the store again before injecting anything.

* ``BEFORE_WRITE``: the webhook's create call times out before anything is written
  (StoreTimeout; the caller cannot tell it from a lost answer).
* ``AFTER_COMMIT``: the create commits, then the call raises StoreTimeout (outcome unknown).
* ``KILL_AFTER_COMMIT``: the create commits, then the process is killed with SIGKILL, before any
  reply (the crash window of the transactional outbox).
* ``KILL_BEFORE_REPLY``: the webhook (or the queued-event worker) records a reply that must reach
  the resident (a receipt, or an answer with a follow-up: a memory outcome) as started, then the
  process is killed with SIGKILL before the reply is sent (the window where a takeover cannot
  tell whether it was sent).
* ``LOOKUP_UNAVAILABLE``: reconcile's read-only lookup raises StoreUnavailable.

Only the webhook's first write attempt, its owed replies and reconcile's lookup pass through the
seam; reconcile's own create never does, so BEFORE_WRITE leaves the second attempt free to succeed.
"""
from __future__ import annotations

import os
import signal
from typing import Callable, TypeVar

from shared.config import Settings
from shared.handoff.requests import ALREADY_CREATED, REQUEST_CREATED, CreateResult
from shared.logs import log
from shared.store import StoreTimeout, StoreUnavailable

T = TypeVar("T")

BEFORE_WRITE = "BEFORE_WRITE"
AFTER_COMMIT = "AFTER_COMMIT"
KILL_AFTER_COMMIT = "KILL_AFTER_COMMIT"
KILL_BEFORE_REPLY = "KILL_BEFORE_REPLY"
LOOKUP_UNAVAILABLE = "LOOKUP_UNAVAILABLE"


def active(settings: Settings) -> frozenset[str]:
    """The faults to inject: ``settings.faults`` on the embedded SQLite store, else none."""
    if settings.faults and (settings.store_url or "").startswith("sqlite:"):
        return settings.faults
    return frozenset()


def webhook_create(settings: Settings, create: Callable[[], CreateResult]) -> CreateResult:
    """Run the webhook's create call through the seam.

    Raises:
        StoreTimeout: injected BEFORE_WRITE (nothing written) or AFTER_COMMIT (committed).
    """
    faults = active(settings)
    if BEFORE_WRITE in faults:
        log("WARNING", "fault injected", fault=BEFORE_WRITE)
        raise StoreTimeout("injected BEFORE_WRITE: the deadline passed before the write was sent")
    result = create()
    if KILL_AFTER_COMMIT in faults and result.status == REQUEST_CREATED:
        log("WARNING", "fault injected", fault=KILL_AFTER_COMMIT)
        os.kill(os.getpid(), signal.SIGKILL)
    if AFTER_COMMIT in faults and result.status in (REQUEST_CREATED, ALREADY_CREATED):
        log("WARNING", "fault injected", fault=AFTER_COMMIT)
        raise StoreTimeout("injected AFTER_COMMIT: committed, but the answer was lost")
    return result


def before_reply(settings: Settings, *, owed: bool) -> None:
    """The webhook or the queued-event worker is about to send a reply whose start is recorded.

    ``owed``: it must reach the resident (``Reply.must_reach``). Kills the process (SIGKILL) when
    KILL_BEFORE_REPLY is injected and the reply is owed; otherwise does nothing."""
    if owed and KILL_BEFORE_REPLY in active(settings):
        log("WARNING", "fault injected", fault=KILL_BEFORE_REPLY)
        os.kill(os.getpid(), signal.SIGKILL)


def reconcile_lookup(settings: Settings, lookup: Callable[[], T]) -> T:
    """Run reconcile's read-only lookup through the seam.

    Raises:
        StoreUnavailable: injected LOOKUP_UNAVAILABLE.
    """
    if LOOKUP_UNAVAILABLE in active(settings):
        log("WARNING", "fault injected", fault=LOOKUP_UNAVAILABLE)
        raise StoreUnavailable("injected LOOKUP_UNAVAILABLE")
    return lookup()
