"""Ingest the county's activities: fetch, validate every record, map, and store a new snapshot.

Used by ``functions/ingest`` (Cloud Scheduler, daily) and ``make ingest-events [FILE=…]``.

Outcomes (``IngestResult.outcome``):
- ``snapshot_written``: a new versioned snapshot is current;
- ``unchanged``: the content equals the current snapshot's; it is marked as confirmed now;
- ``not_modified``: the source answered 304 to If-Modified-Since; confirmed now;
- ``fetch_failed``: the source failed (after its retries); the last good snapshot stays, the reason
  is recorded in ``events_state/current.last_attempt``;
- ``rejected``: the answer had no valid record; the last good snapshot stays, the reason is recorded.

Source: docs/design.md §5 (versioned snapshots), §9 (operations).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from shared.events.activities import map_records
from shared.events.snapshots import (
    NewSnapshot,
    event_to_doc,
    prune_snapshots,
    read_state,
    record_attempt,
    status,
    write_snapshot,
)
from shared.events.source import ActivitySource, SourceError
from shared.logs import log
from shared.store import DocumentStore, StoreError

#: Outcomes after which the events data is as good as it can be (HTTP 200 from functions/ingest).
OK_OUTCOMES = frozenset({"snapshot_written", "unchanged", "not_modified"})


@dataclass(frozen=True)
class IngestResult:
    """One ingestion run.

    Attributes:
        outcome: see the module docstring.
        snapshot_version: the current snapshot after the run, or None (none yet).
        counts: {received, kept, skipped: {reason: n}} when records were read, else None.
        reason: why nothing new was stored (``http_500``, ``no_valid_records`` …), or None.
    """

    outcome: str
    snapshot_version: str | None = None
    counts: dict[str, Any] | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        """True unless the fetch failed or was rejected."""
        return self.outcome in OK_OUTCOMES

    def as_dict(self) -> dict[str, Any]:
        """JSON body for the function and the operator tools."""
        return {"outcome": self.outcome, "snapshot_version": self.snapshot_version, "counts": self.counts,
                "reason": self.reason}


def ingest_events(store: DocumentStore, source: ActivitySource, *, now: datetime) -> IngestResult:
    """Run one ingestion.

    Args:
        store: the document store (the snapshot port: SQLite or Firestore).
        source: where the activities come from (TDX, or a file in TDX's format).
        now: aware instant of the run (``fetched_at``, the version's time).
    Returns:
        IngestResult; a source failure is an outcome, not an exception.
    Raises:
        StoreError: the store failed; what was written is all or nothing (see write_snapshot).
    """
    state = read_state(store) or {}
    current = state.get("snapshot_version")
    try:
        fetched = source.fetch(if_modified_since=state.get("last_modified") if current else None)
    except SourceError as exc:
        log("WARNING", "events fetch failed", reason=exc.reason, retryable=exc.retryable)
        record_attempt(store, now=now, outcome="fetch_failed", reason=exc.reason)
        return IngestResult("fetch_failed", snapshot_version=current, reason=exc.reason)
    if fetched.records is None:
        record_attempt(store, now=now, outcome="not_modified", reason=None, confirmed=True)
        return IngestResult("not_modified", snapshot_version=current)
    batch = map_records(fetched.records)
    counts = {"received": len(fetched.records), "kept": len(batch.events),
              "skipped": dict(sorted(batch.skipped.items()))}
    if not batch.events:
        log("WARNING", "events fetch had no valid record", received=counts["received"])
        record_attempt(store, now=now, outcome="rejected", reason="no_valid_records")
        return IngestResult("rejected", snapshot_version=current, counts=counts, reason="no_valid_records")
    version, written = write_snapshot(store, NewSnapshot(
        events=[event_to_doc(event) for event in batch.events], source_kind=source.kind, source_name=source.name,
        origin=fetched.origin, source_updated_at=batch.newest_update, counts=counts,
        last_modified=fetched.last_modified), now=now)
    if written:
        try:
            prune_snapshots(store)
        except StoreError as exc:  # old snapshots are only clutter; the next run prunes again
            log("WARNING", "events snapshot prune failed", error=exc.__class__.__name__)
    log("INFO", "events ingested", outcome="snapshot_written" if written else "unchanged", version=version,
        kept=counts["kept"], skipped=sum(batch.skipped.values()))
    return IngestResult("snapshot_written" if written else "unchanged", snapshot_version=version, counts=counts)


def log_snapshot_age(store: DocumentStore, *, now: datetime, stale_after_seconds: float) -> dict[str, Any] | None:
    """After a run, log how old the events data residents are answered from is.

    ``events snapshot age`` (INFO): ``age_seconds`` since the source last confirmed the current
    snapshot (None while only the demo data is there), ``stale``, ``answers_from`` (``real`` /
    ``demo``). When the age is past ``stale_after_seconds`` (``LOCAL_EVENTS_STALE_AFTER_SECONDS``;
    the replies then say the data may be out of date) also ``events snapshot stale`` (WARNING), which
    a log-based metric and its alert count (infra/monitoring.tf, docs/runbook.md "Events data out of
    date"). Source: ``shared.events.snapshots.status`` (the view ``make events-status`` prints).

    Returns:
        That status, or None when the store could not be read (logged, never raised: the run's own
        outcome stands).
    """
    try:
        state = status(store, now=now, stale_after_seconds=stale_after_seconds)
    except StoreError as exc:
        log("WARNING", "events snapshot age unknown", error=exc.__class__.__name__)
        return None
    log("INFO", "events snapshot age", age_seconds=state["age_seconds"], stale=state["stale"],
        answers_from=state["answers_from"])
    if state["stale"]:
        log("WARNING", "events snapshot stale", age_seconds=state["age_seconds"],
            stale_after_seconds=stale_after_seconds)
    return state
