"""What a reader of a message proposes: one read-only tool call or a fixed reply (``Proposal``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shared.turn.ask import Note


@dataclass(frozen=True)
class Proposal:
    """A proposed action: one read-only tool call, or a fixed reply.

    Attributes:
        tool: ``search_local_places``, ``search_local_events``, ``needs_area``, ``find_place``,
            ``show_limits``, ``handoff_status``, ``handoff_cancel_help``, ``handoff_info``,
            ``privacy_info``, ``greeting``, ``thanks``, ``ack``, ``ask_search_kind``, ``did_you_mean`` or
            ``show_local_help``.
        args: the tool's arguments (strings, lists or None). ``needs_area`` carries ``kind`` and
            ``vague`` (True when the user said 附近 / 彰化 / 彰化縣: the reply explains why a township is
            needed, naming only the words said, ``vague_words`` from ``shared.areas.vague_words_in``);
            ``show_limits`` carries ``kinds``; ``find_place`` carries ``name`` and ``area``;
            ``did_you_mean`` carries ``name``, ``area`` and ``text`` (the message with the catalog's spelling).
        source: ``offline_router``, ``postback``, ``fixed`` or ``model``.
        notes: what the reply must say besides the result (shared.turn.ask.Note).
    """

    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    source: str = "offline_router"
    notes: tuple[Note, ...] = ()

    def with_notes(self, *notes: Note) -> Proposal:
        """This proposal with ``notes`` said too, after its own."""
        return Proposal(self.tool, self.args, self.source, self.notes + notes)


#: Tools that search (or ask for the township of a search): a search may be answered beside a limit or
#: a privacy remark.
SEARCH_TOOLS = ("search_local_places", "search_local_events", "needs_area", "find_place")
