"""The previous search of a follow-up (那彰化市呢): its conditions, read from the turn audit.

The offline router keeps no conversation state; a bare township follow-up is answered with
「想查彰化市的活動，還是蔬食店家？」 (``ask_search_kind``). Its buttons keep the conditions of the
resident's last search, when that search was a minute-scale moment ago: a shop search's diet said in
that turn (全素), an events search's dates and topic. Nothing new is stored: the conditions come from
that turn's own audit record (shared.audit), and a diet filled by the consented memory is never
carried (the memory fills it again on its own, and a forget scrubs it from the record).
Source: docs/design.md §6 (consent), §7 (the audit record).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from shared.audit import COLLECTION as AUDIT
from shared.clock import from_iso
from shared.context import EventContext
from shared.logs import log
from shared.store import StoreError
from shared.turn.diet_origin import THIS_TURN

#: How recent a search must be for a bare follow-up to carry its conditions.
FOLLOW_UP_WINDOW = timedelta(minutes=30)
#: The turns whose conditions a follow-up can carry, with the kind each searches.
_SEARCH_TOOLS = {"search_local_places": "places", "search_local_events": "events"}


@dataclass(frozen=True)
class PreviousSearch:
    """The conditions of the resident's last search, as its audit record holds them.

    Attributes:
        kind: ``places`` or ``events``.
        dietary_type: places: the canonical diet said in that turn (``vegan`` …), or None (left open,
            ``any``, or filled by the consented memory).
        date: events: the searched range ("YYYY-MM-DD" or "start/end", end exclusive), or None.
        keyword: events: the topic terms searched, or None.
    """

    kind: str
    dietary_type: str | None = None
    date: str | None = None
    keyword: str | None = None

    @property
    def conditions(self) -> bool:
        """True when the search had a condition a follow-up can keep."""
        return bool(self.dietary_type or self.date or self.keyword)


def previous_search(ctx: EventContext) -> PreviousSearch | None:
    """The resident's last search within FOLLOW_UP_WINDOW of ``ctx.now``, or None.

    None too in a group or room (``ctx.shared_chat``: a one-to-one search's diet is never shown where
    others read it), without an actor, and when the audit cannot be read (the follow-up is then
    answered without conditions, as before). One equality query on (tenant_id, user_hash), the
    ``audit_by_user`` index (infra/firestore.tf); the records are the account's last 30 days.
    """
    user_hash = ctx.user_hash
    if user_hash is None or ctx.shared_chat:  # no actor, or no key to find the account's records by
        return None
    try:
        records = ctx.store.query(AUDIT, where={"tenant_id": ctx.settings.tenant_id, "user_hash": user_hash})
    except StoreError as exc:
        log("WARNING", "follow-up context unavailable", error=exc.__class__.__name__)
        return None
    searches = [record for record in records if record.get("tool") in _SEARCH_TOOLS
                and record.get("status") in ("ok", "no_match") and isinstance(record.get("effective_args"), dict)
                and record.get("at")]
    if not searches:
        return None
    last = max(searches, key=lambda record: from_iso(record["at"]))
    if ctx.now - from_iso(last["at"]) > FOLLOW_UP_WINDOW:
        return None
    args = last["effective_args"]
    if _SEARCH_TOOLS[last["tool"]] == "places":
        diet = args.get("dietary_type") if last.get("origin") == THIS_TURN else None
        return PreviousSearch("places", dietary_type=None if diet in (None, "any") else diet)
    return PreviousSearch("events", date=args.get("date"), keyword=args.get("keyword"))
