"""The turn engine: route a message, run at most one read-only tool, render with fixed
templates (DESIGN §7). Python validates every proposed argument; the router or model only
proposes.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from linebot.v3.messaging import TextMessage

from shared.areas import UnknownArea
from shared.clock import TAIPEI
from shared.events.search import InvalidDateRange, search_local_events, weekend_range
from shared.logs import hash_user, log
from shared.places.search import UnknownDietaryType, search_local_places
from shared.replies.events import render_events
from shared.replies.places import render_places
from shared.turn.menu import help_reply
from shared.turn.router import Proposal, route
from shared.webhook.context import EventContext, Reply

#: The vague word that stands for "no township given" when a picker is wanted.
_NO_TOWNSHIP = "附近"


def run_text_turn(ctx: EventContext, text: str) -> Reply:
    """One free-text turn with the offline router.

    Args:
        ctx: the verified event; ``ctx.actor`` is set.
        text: the user's message (never logged).
    Returns:
        The rendered reply.
    """
    return run_proposal(ctx, route(text))


def resolve_date(value: str | None, ctx: EventContext) -> str | None:
    """Date keywords (``today``, ``tomorrow``, ``weekend``) → ISO range in Asia/Taipei, end exclusive.

    Other values pass through for the events search to validate.
    """
    if value is None:
        return None
    today = ctx.now.astimezone(TAIPEI).date()
    if value == "today":
        return f"{today.isoformat()}/{(today + timedelta(days=1)).isoformat()}"
    if value == "tomorrow":
        return f"{(today + timedelta(days=1)).isoformat()}/{(today + timedelta(days=2)).isoformat()}"
    if value == "weekend":
        return weekend_range(ctx.now)
    return value


def execute(ctx: EventContext, proposal: Proposal) -> dict[str, Any] | None:
    """Validate and run one proposed read-only tool; None for the help menu.

    Raises:
        UnknownArea, UnknownDietaryType, InvalidDateRange: a proposed argument is not valid.
    """
    args = proposal.args
    if proposal.tool == "search_local_places":
        return search_local_places(args.get("area"), args.get("dietary_type"), args.get("keyword"), now=ctx.now)
    if proposal.tool == "search_local_events":
        return search_local_events(resolve_date(args.get("date"), ctx), args.get("area"), args.get("keyword"),
                                   now=ctx.now)
    if proposal.tool == "needs_area":
        if args.get("kind") == "events":
            return search_local_events(None, _NO_TOWNSHIP, None, now=ctx.now)
        return search_local_places(_NO_TOWNSHIP, args.get("dietary_type"), None, now=ctx.now)
    return None


def run_proposal(ctx: EventContext, proposal: Proposal) -> Reply:
    """Execute a proposal and render its result; bad arguments get a kind answer, not an error."""
    try:
        result = execute(ctx, proposal)
    except UnknownArea:
        return help_reply("我找不到這個地區，請說彰化縣的鄉鎮名稱，例如「花壇」或「員林市」。")
    except UnknownDietaryType:
        return help_reply("我看不懂這個飲食條件，可以說「素食」、「全素」、「蛋奶素」、「奶素」或「不限」。")
    except InvalidDateRange:
        return help_reply("我看不懂這個日期，可以說「今天」、「明天」或「這週末」。")
    log("INFO", "turn", tool=proposal.tool, source=proposal.source,
        status=None if result is None else result.get("status"),
        user=hash_user(ctx.actor.user_id) if ctx.actor else None)
    if result is None:
        return help_reply()
    is_events = proposal.tool == "search_local_events" or proposal.args.get("kind") == "events"
    messages = render_events(result) if is_events else render_places(result)
    return Reply(list(messages))
