"""Pushes counted per tenant and month, the way LINE's plans count them (docs/delivery.md#push-quota).

LINE's plans in Taiwan include a few hundred to a few thousand push messages a month; replies are
free (https://developers.line.biz/en/docs/messaging-api/pricing/). The courier (``shared.outbox``)
adds one here after LINE accepted a push (never for a 409: LINE sent nothing again), outside any
store transaction, so a count is one ``DocumentStore.increment`` of a small document:

``line_push_counts/<tenant_id>:<YYYY-MM>`` (the Asia/Taipei calendar month of the send):
``{tenant_id, month, pushes, pushes_<flow>…, refused_monthly_limit}``: every push LINE accepted,
the same split by ``Flow``, and the pushes LINE refused because the month's messages were used up.

It is LOCAL's own count of push *requests*. LINE counts recipients: a push to the staff group costs
one message per member, so LINE's figure (``shared.line.Quota``, read by the sweep) is the one the
80% warning uses; this count says which flow spent them.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any

from shared.clock import TAIPEI, Clock, require_aware
from shared.logs import log
from shared.store import DocumentStore, StoreError

COLLECTION = "line_push_counts"
TOTAL = "pushes"
REFUSED_MONTHLY_LIMIT = "refused_monthly_limit"


class Flow(enum.StrEnum):
    """Which path a push took (the counter's ``pushes_<flow>`` field)."""

    EVENT_ANSWER = "event_answer"          # a queued event's answer, when its reply token could not be used
    HANDOFF_NOTICE = "handoff_notice"      # a receipt, "not created" or the result after "checking" (reconcile)
    HANDOFF_FOLLOWUP = "handoff_followup"  # the resident told a person will follow up (reconcile's last attempt)
    STAFF_GROUP = "staff_group"            # the staff group's card, reminder or follow-up card
    STAFF_RESIDENT = "staff_resident"      # a staff transition told to the resident (taken, completed …)
    QUOTA_WARNING = "quota_warning"        # the staff group warned that the month's pushes run short


def month_of(now: datetime, tz: tzinfo = TAIPEI) -> str:
    """``YYYY-MM`` of ``now`` on the wall clock of ``tz`` (Asia/Taipei). Raises ValueError when naive."""
    return require_aware(now).astimezone(tz).strftime("%Y-%m")


def count_id(tenant_id: str, month: str) -> str:
    """The counter document's id: ``<tenant_id>:<YYYY-MM>``."""
    return f"{tenant_id}:{month}"


@dataclass(frozen=True)
class PushCount:
    """One month's counter as read: ``pushes`` accepted, ``by_flow`` (Flow value → pushes), and
    ``refused_monthly_limit``."""

    month: str
    pushes: int = 0
    by_flow: dict[str, int] = field(default_factory=dict)
    refused_monthly_limit: int = 0

    @classmethod
    def of(cls, month: str, doc: dict[str, Any] | None) -> "PushCount":
        """The count of a stored document (None: nothing counted yet)."""
        doc = doc or {}
        flows = {flow.value: int(doc.get(f"{TOTAL}_{flow.value}") or 0) for flow in Flow}
        return cls(month, int(doc.get(TOTAL) or 0), {name: n for name, n in flows.items() if n},
                   int(doc.get(REFUSED_MONTHLY_LIMIT) or 0))


@dataclass(frozen=True)
class PushCounter:
    """Counts one tenant's pushes (module docstring). Safe to share across threads.

    Args:
        store: the read-write store.
        tenant_id: whose pushes.
        clock: aware "now"; the month is its Asia/Taipei month.
    """

    store: DocumentStore
    tenant_id: str
    clock: Clock

    def _add(self, amounts: dict[str, int]) -> None:
        month = month_of(self.clock())
        try:
            self.store.increment(COLLECTION, count_id(self.tenant_id, month), amounts,
                                 {"tenant_id": self.tenant_id, "month": month})
        except StoreError as exc:  # the push itself stands; only the figure is short by one
            log("WARNING", "push not counted", error=exc.__class__.__name__, fields=sorted(amounts))

    def accepted(self, flow: Flow) -> None:
        """One push LINE accepted (not a 409 repeat). A store error is logged, never raised."""
        self._add({TOTAL: 1, f"{TOTAL}_{Flow(flow).value}": 1})

    def refused_monthly_limit(self) -> None:
        """One push LINE refused because the month's messages are used up. Logged, never raised."""
        self._add({REFUSED_MONTHLY_LIMIT: 1})

    def this_month(self) -> PushCount:
        """This Asia/Taipei month's count. Raises StoreUnavailable."""
        month = month_of(self.clock())
        return PushCount.of(month, self.store.get(COLLECTION, count_id(self.tenant_id, month)))
