"""The model's tools: thin functions over the read-only use cases the offline router calls.

Five tools, one per turn (DESIGN §8; issue 10):

- ``search_local_places(area, dietary_type, keyword)`` and ``search_local_events(area, date_from,
  date_to, keyword)``: the same searches as the router, through the one turn engine
  (shared.turn.engine.run_tool), so memory precedence (this turn > consented memory > none) and
  validation are the router's;
- ``show_local_help(reason)``: what LOCAL cannot do (booking, parking, transport, opening hours,
  medical, weather, other);
- ``propose_dietary_memory(dietary_type)``: the consent card, **no write** (DESIGN §6);
- ``request_memory_management()``: what LOCAL keeps and the 我的偏好 / 忘記我的飲食偏好 buttons,
  **no write**: viewing or forgetting happens only when the resident taps one (functions/memory).

No tool writes business data: the searches read snapshots, the card is signed and sent, and only
functions/memory writes a preference after the resident taps it. ``tool_context`` is ADK's
``ToolContext``; ADK hides it from the schema the model sees.

Every tool body, before it runs anything, takes the turn's one tool slot (a second call in the
same turn is refused: ``SECOND_TOOL_CALL``), checks the ADK session against the trusted actor
(``TOOL_SESSION_MISMATCH``) and the preference revision in session state, and in the store, against
the snapshot the turn read (``TOOL_CONTEXT_REVISION_MISMATCH``). A tool body never raises into the
runner: failures come back as ``{"status": "refused" | "error", ...}``. Every call also sets
``skip_summarization``: the model is not called again, and LOCAL renders the reply from the result.

``check_call`` (run as the agent's ``before_tool_callback``) refuses, before ADK filters or coerces
anything, a call to an unknown tool or with arguments outside the declared schema (an unknown name,
a wrong type, a value outside an enum, a malformed or inverted date range): ``bad_tool_call``.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Callable, Literal, Optional

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

from shared.context import EventContext
from shared.diets import DIET_TYPES, SAVABLE_DIETS
from shared.logs import log
from shared.turn.datespec import date_arg
from shared.turn.engine import (
    DEFAULT_TOOLS,
    ToolRun,
    TurnStart,
    TurnTools,
    run_tool,
    snapshot_preference,
)
from shared.turn.limits import HELP_REASONS
from shared.turn.router import Proposal

BUSINESS_TOOLS = ("search_local_places", "search_local_events", "show_local_help", "propose_dietary_memory",
                  "request_memory_management")
DIETARY_TYPES = DIET_TYPES
#: Session state key holding the preference revision the turn read (DESIGN §8).
REVISION_STATE_KEY = "local_revision"

TOOL_SESSION_MISMATCH = "TOOL_SESSION_MISMATCH"
TOOL_CONTEXT_REVISION_MISMATCH = "TOOL_CONTEXT_REVISION_MISMATCH"
SECOND_TOOL_CALL = "SECOND_TOOL_CALL"
BAD_TOOL_CALL = "bad_tool_call"
TOOL_FAILED = "tool_failed"
#: Longest area / keyword argument accepted (characters); longer is outside the schema.
MAX_ARG_CHARS = 40

Dietary = Literal["vegetarian", "vegan", "ovo_lacto", "lacto", "any"]
Savable = Literal["vegetarian", "vegan", "ovo_lacto", "lacto"]
HelpReason = Literal["booking", "parking", "transport", "opening_hours", "medical", "weather", "other"]
assert set(HelpReason.__args__) == set(HELP_REASONS)  # type: ignore[attr-defined]


@dataclass
class TurnBinding:
    """One model turn's trusted facts and what its tools did (shared by the tools and the caller).

    Attributes:
        ctx: the verified event (trusted actor, store, clock).
        start: the turn's start (the preference snapshot and its revision).
        session_user: the ADK session's user id (the hashed LINE user id; the model never sees it).
        session_id: the ADK session's id (new per turn).
        tools: the read-only search functions.
        run: the one business tool that ran, or None.
        refusals: ``{"tool", "code", "detail"}`` per refused call, in order.
        calls: ``{"tool", "args"}`` per call the model proposed, as it proposed them.
    """

    ctx: EventContext
    start: TurnStart
    session_user: str
    session_id: str
    tools: TurnTools = DEFAULT_TOOLS
    run: ToolRun | None = None
    refusals: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    _slots_taken: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def revision(self) -> int | None:
        """The preference revision the turn read (None when it could not be read)."""
        return self.start.snapshot.revision if self.start.snapshot is not None else None

    def refuse(self, tool: str, code: str, detail: str = "") -> dict[str, Any]:
        """Record a refused call and return the tool's error result (nothing ran, nothing written)."""
        with self._lock:
            self.refusals.append({"tool": tool, "code": code, "detail": detail})
        log("WARNING", "tool call refused", tool=tool, code=code)
        return {"status": "refused", "error": code}

    def take_slot(self) -> bool:
        """Claim the turn's one business tool call; False for every later call."""
        with self._lock:
            self._slots_taken += 1
            return self._slots_taken == 1

    def context_refusal(self, tool_context: ToolContext) -> str | None:
        """The refusal code when the ADK context does not match the trusted turn, else None."""
        if tool_context.user_id != self.session_user or tool_context.session.id != self.session_id:
            return TOOL_SESSION_MISMATCH
        if tool_context.state.get(REVISION_STATE_KEY) != self.revision:
            return TOOL_CONTEXT_REVISION_MISMATCH
        if self.start.snapshot is not None:
            current = snapshot_preference(self.ctx)
            if current is not None and current.revision != self.revision:
                return TOOL_CONTEXT_REVISION_MISMATCH  # a save or forget landed during the turn
        return None


def _summary(run: ToolRun) -> dict[str, Any]:
    """The function response ADK records: status and result ids (not sent back to the model)."""
    items = (run.result or {}).get("places") or (run.result or {}).get("events") or []
    return {"status": run.status, "total": (run.result or {}).get("total"),
            "ids": [item.get("id") for item in items if isinstance(item, dict)]}


class LocalTools:
    """The four tools of one turn, bound to its TurnBinding (a new instance per turn).

    Args:
        binding: the turn's trusted facts; the tools record what they did on it.
    """

    def __init__(self, binding: TurnBinding):
        self.binding = binding

    def function_tools(self) -> list:
        """ADK FunctionTools for the five tools (imported here: only functions/agent loads ADK)."""
        from google.adk.tools import FunctionTool

        return [FunctionTool(self.search_local_places), FunctionTool(self.search_local_events),
                FunctionTool(self.show_local_help), FunctionTool(self.propose_dietary_memory),
                FunctionTool(self.request_memory_management)]

    def _invoke(self, tool_context: Optional[ToolContext], proposal: Proposal) -> dict[str, Any]:
        binding = self.binding
        if tool_context is None:  # ADK always passes one; a call without it is not from this turn
            return binding.refuse(proposal.tool, TOOL_SESSION_MISMATCH)
        try:
            tool_context.actions.skip_summarization = True
            if not binding.take_slot():
                return binding.refuse(proposal.tool, SECOND_TOOL_CALL)
            code = binding.context_refusal(tool_context)
            if code is not None:
                return binding.refuse(proposal.tool, code)
            run = run_tool(binding.ctx, proposal, binding.start.snapshot, binding.tools)
            binding.run = run
            return _summary(run)
        except Exception as exc:  # a tool body never raises into the runner
            log("ERROR", "tool failed", tool=proposal.tool, error=exc.__class__.__name__, exc_info=True)
            return binding.refuse(proposal.tool, TOOL_FAILED, exc.__class__.__name__)

    def search_local_places(self, area: Optional[str] = None, dietary_type: Optional[Dietary] = None,
                            keyword: Optional[str] = None,
                            tool_context: Optional[ToolContext] = None) -> dict[str, Any]:
        """Search vegetarian-friendly places in one Changhua township.

        Args:
            area: the township's full name (e.g. 花壇鄉), or "附近" when the resident named no township.
            dietary_type: only when the message states a diet; leave out otherwise.
            keyword: a shop name or dish the resident names; leave out otherwise.
        Returns:
            {"status": "ok" | "needs_area" | "no_match" | "unavailable" | "invalid_argument", "total", "ids"},
            or {"status": "refused", "error"} when the call was not run.
        """
        return self._invoke(tool_context, Proposal("search_local_places", {
            "area": area, "dietary_type": dietary_type, "keyword": keyword}, source="model"))

    def search_local_events(self, area: Optional[str] = None, date_from: Optional[str] = None,
                            date_to: Optional[str] = None, keyword: Optional[str] = None,
                            tool_context: Optional[ToolContext] = None) -> dict[str, Any]:
        """Search local events (demo data) by township, dates and keyword.

        Args:
            area: a township's full name, "附近" when vague, or leave out for every township.
            date_from: first day, YYYY-MM-DD (Asia/Taipei), inclusive; leave out for every date.
            date_to: the day after the last day, YYYY-MM-DD, exclusive; leave out for one day.
            keyword: an event word the resident names (市集, 講座); leave out otherwise.
        Returns:
            {"status": "ok" | "needs_area" | "no_match" | "unavailable" | "invalid_argument", "total", "ids"},
            or {"status": "refused", "error"} when the call was not run.
        """
        span = None
        if date_from:
            span = f"{date_from}/{date_to}" if date_to else date_from
        return self._invoke(tool_context, Proposal("search_local_events", {
            "area": area, "date": date_arg(span), "keyword": keyword}, source="model"))

    def show_local_help(self, reason: HelpReason = "other",
                        tool_context: Optional[ToolContext] = None) -> dict[str, Any]:
        """Tell the resident plainly what LOCAL cannot do, with the menu.

        Args:
            reason: booking, parking, transport, opening_hours, medical, weather or other.
        Returns:
            {"status": "help"}, or {"status": "refused", "error"} when the call was not run.
        """
        return self._invoke(tool_context, Proposal("show_local_help", {"reason": reason}, source="model"))

    def propose_dietary_memory(self, dietary_type: Savable,
                               tool_context: Optional[ToolContext] = None) -> dict[str, Any]:
        """Offer a consent card to remember the resident's own diet; nothing is stored until they tap it.

        Args:
            dietary_type: the diet the resident asked LOCAL to remember for later.
        Returns:
            {"status": "memory_card"}, or {"status": "refused", "error"} when the call was not run.
        """
        return self._invoke(tool_context, Proposal("propose_dietary_memory", {"dietary_type": dietary_type},
                                                   source="model"))

    def request_memory_management(self, tool_context: Optional[ToolContext] = None) -> dict[str, Any]:
        """Show what LOCAL keeps about the resident, with buttons to view or forget their diet.

        For 我的資料, 忘記我, 刪除我的資料, 你記得我什麼. Nothing is shown, changed or deleted until the
        resident taps a button.

        Returns:
            {"status": "memory_management"}, or {"status": "refused", "error"} when the call was not run.
        """
        return self._invoke(tool_context, Proposal("request_memory_management", {}, source="model"))


# -- schema check of the raw call (before ADK filters unknown names or coerces values) ---------------

def _optional_text(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_ARG_CHARS:
        return f"must be a string of at most {MAX_ARG_CHARS} characters"
    return None


def _enum(*allowed: str, optional: bool = True) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if value is None and optional:
            return None
        return None if value in allowed else f"must be one of {', '.join(allowed)}"
    return check


def _iso_day(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) != 10:
        return "must be YYYY-MM-DD"
    try:
        date.fromisoformat(value)
    except ValueError:
        return "must be a real date YYYY-MM-DD"
    return None


#: tool → {argument: check}; an argument not listed is outside the schema.
SCHEMA: dict[str, dict[str, Callable[[Any], str | None]]] = {
    "search_local_places": {"area": _optional_text, "dietary_type": _enum(*DIETARY_TYPES),
                            "keyword": _optional_text},
    "search_local_events": {"area": _optional_text, "date_from": _iso_day, "date_to": _iso_day,
                            "keyword": _optional_text},
    "show_local_help": {"reason": _enum(*HELP_REASONS)},
    "propose_dietary_memory": {"dietary_type": _enum(*SAVABLE_DIETS, optional=False)},
    "request_memory_management": {},
}


def schema_problem(name: str | None, args: Any) -> str | None:
    """Why a proposed call is outside the declared schema, or None when it fits.

    Args:
        name: the function name the model called.
        args: its raw arguments (a JSON object).
    Returns:
        ``unknown_tool``, ``unknown_argument:<name>``, ``<argument>: <problem>``, ``missing:<name>``,
        ``date_to_without_date_from`` or ``empty_date_range``; None when the call fits.
    """
    spec = SCHEMA.get(name or "")
    if spec is None:
        return "unknown_tool"
    if not isinstance(args, dict):
        return "arguments_not_an_object"
    for key in args:
        if key not in spec:
            return f"unknown_argument:{key}"
    for key, check in spec.items():
        problem = check(args.get(key))
        if problem is not None:
            return f"{key}: {problem}" if key in args else f"missing:{key}"
    if name == "search_local_events":
        start, end = args.get("date_from"), args.get("date_to")
        if end is not None and start is None:
            return "date_to_without_date_from"
        if start is not None and end is not None and end <= start:
            return "empty_date_range"
    return None


def check_call(binding: TurnBinding) -> Callable[..., Optional[dict]]:
    """The agent's ``before_tool_callback`` for one turn: refuse calls outside the schema.

    ADK calls it with the raw arguments before it runs (or fails to find) the tool; a dict it
    returns becomes the call's result and the tool does not run. It also records every proposed
    call for the audit and sets ``skip_summarization`` on refusals, so the model is not called again.
    """
    def before_tool(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> Optional[dict]:
        with binding._lock:
            binding.calls.append({"tool": tool.name, "args": args})
        problem = schema_problem(tool.name, args)
        if problem is None:
            return None
        tool_context.actions.skip_summarization = True
        binding.take_slot()  # a refused call still spends the turn's one call
        return binding.refuse(tool.name, BAD_TOOL_CALL, problem)

    return before_tool
