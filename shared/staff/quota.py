"""LINE's push quota, read by the sweep: logged, and the staff group warned once a month at 80%.

Once per sweep window (``shared.handoff.requeue.sweep_round``, one transaction on
``line_quota_checks/<tenant>`` decides which process reads it), the sweep reads LINE's
``GET /v2/bot/message/quota`` and ``GET /v2/bot/message/quota/consumption`` (``LineGateway.quota``)
and logs ``line quota read`` with the figures. When the month's use is ``WARN_SHARE`` (80%) of the
limit or more it logs ``line push quota nearly used`` (a log-based metric and its alert count it,
infra/monitoring.tf) and warns the staff group once per Asia/Taipei month: an outbox notice
``line_quota_warnings/<tenant>:<YYYY-MM>`` created once, pushed through the courier with a retry key
derived from it, and pushed again by a later window only while it is still pending (a push that
failed). Nothing here runs inside a store transaction function. Source: docs/delivery.md#push-quota;
https://developers.line.biz/en/reference/messaging-api/#get-quota.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from shared import outbox
from shared.clock import Clock, to_iso
from shared.config import Settings
from shared.handoff.requeue import sweep_round
from shared.line import LineGateway, LineSendError, Quota
from shared.logs import log
from shared.push_count import Flow, PushCounter, month_of
from shared.staff import wording
from shared.store import DocumentStore, RecordAlreadyExists, StoreError, Transaction

CHECKS = "line_quota_checks"
WARNINGS = "line_quota_warnings"
#: The share of the month's limit from which the staff group is warned (0.8 = 80%).
WARN_SHARE = 0.8
_RETRY_NAMESPACE = uuid.UUID("7d3c2b1a-4e5f-5a6b-8c7d-9e0f1a2b3c4d")


@dataclass(frozen=True)
class QuotaCheck:
    """One sweep's look at the quota.

    Args:
        outcome: ``skipped`` (read already in this window), ``unreadable`` (LINE did not answer),
            ``read`` (below the warning share, or no limit), ``nearly_used`` (at or above it).
        quota: what LINE said, when read.
        warned: the staff group's warning was pushed by this check.
    """

    outcome: str
    quota: Quota | None = None
    warned: bool = False


@dataclass(frozen=True)
class WarningRef:
    """The month's warning notice (a ``shared.outbox.OutboxRef``): ``<tenant>:<YYYY-MM>``."""

    doc_id: str


def warning_retry_key(tenant_id: str, month: str) -> str:
    """The warning push's ``X-Line-Retry-Key``: uuid5 of the tenant and the month."""
    return str(uuid.uuid5(_RETRY_NAMESPACE, f"{tenant_id}/{month}/quota_warning"))


def take_window(store: DocumentStore, tenant_id: str, round_tag: str, now: datetime) -> bool:
    """True for the one caller that reads the quota in this window (one transaction). Raises StoreError."""

    def txn(tx: Transaction) -> bool:
        doc = tx.get(CHECKS, tenant_id)
        if doc is not None and doc.get("round") == round_tag:
            return False
        tx.set(CHECKS, tenant_id, {"tenant_id": tenant_id, "round": round_tag, "checked_at": to_iso(now)})
        return True

    return store.run_transaction(txn)


def check(settings: Settings, store: DocumentStore, line: LineGateway, *, clock: Clock) -> QuotaCheck:
    """Read the quota at most once per sweep window; warn at ``WARN_SHARE`` (module docstring).

    Raises:
        StoreUnavailable / StoreTimeout / TransactionConflict: the window could not be taken.
    """
    now = clock()
    if not take_window(store, settings.tenant_id, sweep_round(settings, now), now):
        return QuotaCheck("skipped")
    try:
        quota = line.quota(timeout_seconds=settings.line_timeout_seconds)
    except (LineSendError, ValueError, TypeError) as exc:  # no answer, an error, or a body the SDK cannot read
        log("WARNING", "line quota not read", error=exc.__class__.__name__)
        return QuotaCheck("unreadable")
    share = quota.share
    figures = {"quota_limit": quota.limit, "quota_used": quota.used,
               "quota_used_pct": None if share is None else round(share * 100, 1), "month": month_of(now),
               "pushes_counted": _counted(settings, store, clock)}
    log("INFO", "line quota read", **figures)
    if share is None or share < WARN_SHARE:
        return QuotaCheck("read", quota)
    warned = warn_staff(settings, store, line, quota, clock=clock)
    log("WARNING", "line push quota nearly used", warned_now=warned, **figures)
    return QuotaCheck("nearly_used", quota, warned)


def warn_staff(settings: Settings, store: DocumentStore, line: LineGateway, quota: Quota, *, clock: Clock) -> bool:
    """Push this month's warning to the staff group unless it was told already (once per month).

    Returns:
        True when this call pushed it (LINE accepted it); False when it was told before, no staff
        group is configured, the store failed, or the push failed (it stays pending for a later window).
    """
    group = settings.staff_group_id
    if not group or quota.limit is None:
        return False
    now = clock()
    month = month_of(now)
    ref = WarningRef(f"{settings.tenant_id}:{month}")
    retry_key = warning_retry_key(settings.tenant_id, month)
    try:
        try:
            store.create(WARNINGS, ref.doc_id, {
                "tenant_id": settings.tenant_id, "month": month, "quota_limit": quota.limit, "quota_used": quota.used,
                "created_at": to_iso(now), **outbox.notice_fields("quota_warning", outbox.PUSH_OWNER, now=now,
                                                                  lease_seconds=settings.event_lease_seconds,
                                                                  retry_key=retry_key)})
        except RecordAlreadyExists:
            pass
        claim = outbox.claim_notice(store, WARNINGS, ref, outbox.PUSH_OWNER, now=now,
                                    lease_seconds=settings.event_lease_seconds)
    except StoreError as exc:
        log("WARNING", "quota warning not recorded", error=exc.__class__.__name__)
        return False
    if claim is not outbox.NoticeClaim.CLAIMED:
        return False  # told this month already (or a push of it is running)
    sent = outbox.push_notice(line, store, WARNINGS, ref, to=group,
                              messages=[wording.quota_warning_message(quota.used, quota.limit, month)],
                              retry_key=retry_key, clock=clock, timeout_seconds=settings.line_timeout_seconds,
                              tenant_id=settings.tenant_id, flow=Flow.QUOTA_WARNING)
    if sent.monthly_limit:
        _settle_refused(store, ref, clock)
    return sent.error is None and not sent.duplicate


def _settle_refused(store: DocumentStore, ref: WarningRef, clock: Clock) -> None:
    """The warning itself met the monthly limit: ended, never pushed again (the alert still fires)."""
    try:
        outbox.settle_failed(store, WARNINGS, ref, owner=outbox.PUSH_OWNER, reason="monthly_limit", now=clock())
    except StoreError as exc:
        log("WARNING", "quota warning not recorded", error=exc.__class__.__name__)


def _counted(settings: Settings, store: DocumentStore, clock: Clock) -> int | None:
    """LOCAL's own count of this month's pushes (``shared.push_count``), or None when unreadable."""
    try:
        return PushCounter(store, settings.tenant_id, clock).this_month().pushes
    except StoreError:
        return None
