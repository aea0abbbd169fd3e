"""The model's tool calls read as the offline router's proposals: the vocabulary of the tools'
arguments, and ``proposal_of``, the one function from a checked call to the ``Proposal`` the router
makes for the same ask (shared.turn.router), so both readers end in the same engine run, the same
validation of every argument (shared.turn.engine.run_tool) and the same reply.

The arguments are typed where the model knows the thing: a township is one of the 26 (or 全彰化),
a diet one of five, a date ``YYYY-MM-DD`` with an inclusive end, a limit one of ``LIMIT_KINDS``.
What the router reads as notes (a limit asked beside a search, someone else's diet, another ask in
the same message …) the model gives as arguments, and ``proposal_of`` builds the same typed notes
(shared.turn.ask) for them, in the router's order: the engine then says the same lines and offers
the same buttons.

No ADK or genai here: shared.agent.tools declares the tools with these types; the Gemini stand-in
and the tests read the same vocabulary.
Source: README "Free text read by Gemini"; shared.turn.ask (the notes).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date, timedelta
from typing import Any, Literal

from shared.areas import TOWNSHIPS, WHOLE_COUNTY
from shared.turn import ask
from shared.turn.datespec import Both, DateSpec, Unreadable, date_arg
from shared.turn.proposal import Proposal

#: The 26 townships, in the county's order (data/townships.json).
Township = Literal["彰化市", "鹿港鎮", "和美鎮", "線西鄉", "伸港鄉", "福興鄉", "秀水鄉", "花壇鄉", "芬園鄉", "員林市",
                   "溪湖鎮", "田中鎮", "大村鄉", "埔鹽鄉", "埔心鄉", "永靖鄉", "社頭鄉", "二水鄉", "北斗鎮", "二林鎮",
                   "田尾鄉", "埤頭鄉", "芳苑鄉", "大城鄉", "竹塘鄉", "溪州鄉"]
#: A search's area: a township, or 全彰化 (every township).
Area = Literal[Township, "全彰化"]
Diet = Literal["vegetarian", "vegan", "ovo_lacto", "lacto", "any"]
Savable = Literal["vegetarian", "vegan", "ovo_lacto", "lacto"]
#: The vague place words a reply explains (shared.areas.vague_words_in): no township can be searched.
VagueWord = Literal["附近", "這裡", "這邊", "彰化", "彰化縣"]
AskKind = Literal["events", "places"]
SmallTalk = Literal["greeting", "thanks", "ok"]
PrivacyTopic = Literal["what_is_kept", "forget_my_diet", "who_sees_my_data"]
MemoryRemark = Literal["do_not_remember", "what_is_kept"]
#: What LOCAL cannot do or has no data for, as the model names it.
LimitKind = Literal["crisis", "emergency", "medical", "doctor_appointment", "transport", "parking", "taxi", "shuttle",
                    "weather", "other_county", "directory", "no_data", "booking", "opening_hours", "price",
                    "registration", "pets", "what_to_bring", "distance", "evening", "payment", "age", "crowd",
                    "seating", "accessibility", "toilets", "organiser", "end_time", "fraud", "politics_religion",
                    "off_topic"]

#: A limit kind → the limit the router reads (said with shared.replies.menu.LIMIT_WORDS).
LIMIT_NOTES: dict[str, ask.Limit] = {kind: ask.Limit(limit) for kind, limit in {
    "crisis": "crisis", "emergency": "emergency", "medical": "medical", "doctor_appointment": "no_appointment",
    "transport": "transport", "parking": "parking", "taxi": "taxi", "shuttle": "shuttle", "weather": "weather",
    "other_county": "elsewhere", "directory": "directory", "no_data": "no_data", "booking": "no_booking",
    "opening_hours": "no_hours", "price": "no_price", "registration": "no_registration", "pets": "no_pets",
    "what_to_bring": "no_bring", "distance": "no_distance", "evening": "evening", "fraud": "fraud",
    "politics_religion": "politics", "off_topic": "off_topic",
}.items()}
#: A limit kind → the detail the data does not record, as the router reads it (shared.turn.details).
DETAIL_NOTES: dict[str, ask.NotRecorded] = {kind: ask.NotRecorded(ask.DetailKind(detail)) for kind, detail in {
    "payment": "payment", "age": "age", "crowd": "crowd", "seating": "seating", "accessibility": "access",
    "toilets": "toilet", "organiser": "organiser", "end_time": "end_time",
}.items()}
#: Limits that come before anything else (shared.turn.router rule 0): said alone, never beside a search.
SAFETY_KINDS = ("crisis", "emergency")
#: A scam warning is said after the safety reply when both are asked (the router's rule 0 does the same).
_AFTER_SAFETY = ("fraud",)
#: Limits that are about a shop, never said beside events (幾點開始: the event card has its time).
_SHOP_ONLY = (ask.Limit.HOURS,)
SOURCE = "model"

assert set(Township.__args__) == set(TOWNSHIPS), "Township must list data/townships.json"  # type: ignore[attr-defined]
assert set(LIMIT_NOTES) | set(DETAIL_NOTES) == set(LimitKind.__args__)  # type: ignore[attr-defined]
assert WHOLE_COUNTY == "全彰化"


class BadCall(ValueError):
    """A call whose arguments fit the declared types but not together (an end before its start)."""


def day_range(first: str | None, last: str | None) -> str | None:
    """An inclusive ``YYYY-MM-DD`` pair → the engine's range (``YYYY-MM-DD`` for one day, else
    ``start/end`` with the end exclusive, as shared.events.search.parse_date_range reads it).

    Args:
        first: the first day, or None (every date).
        last: the last day, inclusive; None or equal to ``first`` for one day.
    Raises:
        BadCall: ``last`` without ``first``, an impossible day (2026-02-30), or ``last`` before ``first``.
    """
    if first is None:
        if last is not None:
            raise BadCall("date_to without date_from")
        return None
    try:
        start = date.fromisoformat(first)
        end = date.fromisoformat(last) if last is not None else start
    except ValueError as exc:
        raise BadCall("not a real day (YYYY-MM-DD)") from exc
    if end < start:
        raise BadCall("date_to before date_from")
    return start.isoformat() if end == start else f"{start.isoformat()}/{(end + timedelta(days=1)).isoformat()}"


def _said(args: Mapping[str, Any], name: str) -> list[str]:
    return list(args.get(name) or [])


def _urgent(args: Mapping[str, Any]) -> Proposal | None:
    """Crisis or emergency words asked anywhere → the safety reply alone (router rule 0)."""
    kinds = _safety_first(_said(args, "limits_asked"))
    return Proposal("show_limits", {"kinds": kinds}, SOURCE) if kinds else None


def _safety_first(kinds: list[str]) -> list[ask.Limit]:
    """The safety limits said (crisis, emergency), then a scam warning said with them; [] with none."""
    safety = [LIMIT_NOTES[kind] for kind in kinds if kind in SAFETY_KINDS]
    return safety + [LIMIT_NOTES[kind] for kind in dict.fromkeys(kinds) if kind in _AFTER_SAFETY] if safety else []


def _limit_notes(args: Mapping[str, Any], *, events: bool = False) -> tuple[ask.Limit, ...]:
    """The limits asked beside a search, as the router notes them (first in its notes)."""
    kinds = [LIMIT_NOTES[kind] for kind in _said(args, "limits_asked") if kind in LIMIT_NOTES]
    return tuple(dict.fromkeys(kind for kind in kinds if not (events and kind in _SHOP_ONLY)))


def _detail_notes(args: Mapping[str, Any]) -> tuple[ask.NotRecorded, ...]:
    """The details asked that the data does not record (last in the router's notes)."""
    return tuple(dict.fromkeys(DETAIL_NOTES[kind] for kind in _said(args, "limits_asked") if kind in DETAIL_NOTES))


def _memory_notes(args: Mapping[str, Any]) -> tuple[ask.Flag, ...]:
    return (ask.Flag.NOT_SAVED,) if args.get("memory_remark") == "do_not_remember" else ()


def _diet_notes(args: Mapping[str, Any]) -> tuple[ask.Note, ...]:
    """A place search's notes about its diet, in the router's order (shared.turn.router._search)."""
    diet = args.get("dietary_type")
    unrecorded = tuple(_said(args, "conditions_not_recorded"))
    notes: tuple[ask.Note, ...] = ((ask.UnrecordedDiet(unrecorded),) if unrecorded else ()) + _memory_notes(args)
    if diet in (None, "any"):
        return notes
    other = bool(args.get("diet_is_someone_elses"))
    generic = diet == "vegetarian" and not unrecorded and not other and not args.get("vegetarian_on_purpose")
    return notes + ((ask.Flag.GENERIC_DIET,) if generic else ()) + ((ask.Flag.DIET_OF_OTHER,) if other else ())


def _changhua(args: Mapping[str, Any]) -> tuple[ask.Flag, ...]:
    """A bare 彰化 read as 彰化市 (``changhua_read_as_city``): the router's first note."""
    return (ask.Flag.CHANGHUA_AS_CITY,) if args.get("changhua_read_as_city") else ()


def _suits(args: Mapping[str, Any]) -> tuple[ask.NotRecorded, ...]:
    """Whom an event should suit (``suits_whom``): not recorded, said before the other details."""
    whom = args.get("suits_whom")
    return (ask.NotRecorded(ask.DetailKind.SUITABILITY, whom),) if whom else ()


def _unasked(args: Mapping[str, Any]) -> tuple[ask.Unasked, ...]:
    """Questions the data does not answer, in the resident's words (``unasked_questions``), in order."""
    return tuple(ask.Unasked(words) for words in dict.fromkeys(_said(args, "unasked_questions")))


def event_date(args: Mapping[str, Any]) -> DateSpec | None:
    """The days an events call asks: ``Unreadable`` when ``date_not_understood`` (LOCAL asks for the
    date again, never every date); ``date_from..date_to``, and with ``also_date_from..also_date_to``
    the two apart (``Both``: the days between are not searched); None for every date.

    Raises:
        BadCall: a range that is no range (see day_range), or ``also_date_from`` without ``date_from``.
    """
    if args.get("date_not_understood"):
        return Unreadable()
    first = date_arg(day_range(args.get("date_from"), args.get("date_to")))
    also = date_arg(day_range(args.get("also_date_from"), args.get("also_date_to")))
    if also is None:
        return first
    if first is None:
        raise BadCall("also_date_from without date_from")
    return Both(first, also)


def _other_areas(args: Mapping[str, Any]) -> tuple[ask.OtherAreas, ...]:
    others = [area for area in _said(args, "other_townships") if area != args.get("area")]
    return (ask.OtherAreas(tuple(dict.fromkeys(others))),) if others else ()


def _tail_notes(args: Mapping[str, Any]) -> tuple[ask.Flag, ...]:
    """What the router notes last: a privacy question beside the search, the greeting said first."""
    return ((ask.Flag.PRIVACY_ASKED,) if args.get("memory_remark") == "what_is_kept" else ()) + \
        ((ask.Flag.GREETED,) if args.get("greeted") else ())


# -- another ask in the same message, offered as a button (shared.turn.router._two_asks) --------------

def _second_conditions(kind: str, args: Mapping[str, Any]) -> dict[str, str]:
    """The conditions the second ask says itself (``area`` "*" for 全彰化, as the router's)."""
    area = args.get("second_ask_area")
    said = {"area": "*" if area == WHOLE_COUNTY else area}
    if kind == "events":
        said.update(date=day_range(args.get("second_ask_date_from"), args.get("second_ask_date_to")),
                    keyword=args.get("second_ask_keyword"))
    else:
        diet = args.get("second_ask_dietary_type")
        said["diet"] = None if diet == "any" else diet
    return {name: value for name, value in said.items() if value}


def _another_kind(kind: str, first: Mapping[str, str | None], args: Mapping[str, Any]) -> ask.SecondAsk:
    """An ask of the other kind (events beside shops, shops beside events); a township said once
    serves both; 全彰化 is every township."""
    area = args.get("second_ask_area")
    where = None if area == WHOLE_COUNTY else (area or first.get("area") or None)
    if kind == "places":
        diet = args.get("second_ask_dietary_type")
        return ask.SecondAsk(ask.PlacesSearch(where, diet if diet not in (None, "any", "vegetarian") else None))
    return ask.SecondAsk(ask.EventsSearch(where, date_arg(day_range(args.get("second_ask_date_from"),
                                                           args.get("second_ask_date_to")))))


def _same_kind(kind: str, asked: Mapping[str, str]) -> ask.SecondAsk:
    """An ask of the kind answered, with every condition it sets (``area`` "*": every township)."""
    area = None if asked.get("area") in (None, "*") else asked["area"]
    if kind == "events":
        return ask.SecondAsk(ask.EventsSearch(area, date_arg(asked.get("date")), asked.get("keyword")))
    return ask.SecondAsk(ask.PlacesSearch(area, asked.get("diet")))


def _second_ask_notes(first_kind: str, first: Mapping[str, str | None],
                      args: Mapping[str, Any]) -> tuple[ask.SecondAsk | ask.OtherAreas, ...]:
    """The second ask's note, by the router's rules (shared.turn.router._same_kind_asks). Of the same
    kind: an ``ask.SecondAsk`` with every condition (one it leaves open is the first's) when a condition
    both set differs; ``ask.OtherAreas`` when only the township differs; nothing when it repeats or only
    adds to the first. Of the other kind: an ``ask.SecondAsk`` of that kind."""
    kind = args.get("second_ask_kind")
    if kind is None:
        return ()
    if kind != first_kind:
        return (_another_kind(kind, first, args),)
    later = _second_conditions(kind, args)
    mine = {name: value for name, value in first.items() if value}
    differ = {name for name in later if name in mine and later[name] != mine[name]}
    if not differ:  # it only repeats or refines the first (週六有活動嗎？有親子的嗎): the first's search says it
        return ()
    if differ == {"area"} and set(later) <= set(mine) and "*" not in (later["area"], mine["area"]):
        return (ask.OtherAreas((later["area"],)),)
    return (_same_kind(kind, {**mine, **later}),)


# -- one builder per tool ---------------------------------------------------------------------------

def _places(args: Mapping[str, Any]) -> Proposal:
    urgent = _urgent(args)
    if urgent is not None:
        return urgent
    area, diet = args.get("area"), args.get("dietary_type")
    first = {"area": None if area == WHOLE_COUNTY else area, "diet": None if diet == "any" else diet}
    kind = args.get("shop_kind_not_recorded")
    notes = _changhua(args) + _limit_notes(args) + _diet_notes(args) + _other_areas(args) + \
        ((ask.UnrecordedKind(kind),) if kind and area is not None else ()) + _detail_notes(args) + \
        _unasked(args) + _second_ask_notes("places", first, args) + _tail_notes(args)
    if area is None:
        vague = _said(args, "vague_place_words")
        own = (ask.Flag.OWN_DIET,) if args.get("states_own_diet") and diet not in (None, "any") else ()
        return Proposal("needs_area", {"kind": "places", "dietary_type": diet, "vague": bool(vague),
                                       **({"vague_words": vague} if vague else {})}, SOURCE, notes + own)
    return Proposal("search_local_places", {"area": area, "dietary_type": diet, "keyword": None}, SOURCE, notes)


def _events(args: Mapping[str, Any]) -> Proposal:
    urgent = _urgent(args)
    if urgent is not None:
        return urgent
    area = None if args.get("area") == WHOLE_COUNTY else args.get("area")
    date_range = day_range(args.get("date_from"), args.get("date_to"))
    days = event_date(args)
    keyword = args.get("keyword")
    title = args.get("title_words")
    notes = _changhua(args) + _limit_notes(args, events=True) + _memory_notes(args) + _other_areas(args) + \
        ((ask.TitleHint(title),) if title else ()) + _suits(args) + _detail_notes(args) + _unasked(args) + \
        _second_ask_notes("events", {"area": area, "date": date_range, "keyword": keyword}, args) + _tail_notes(args)
    vague = _said(args, "vague_place_words")
    if args.get("area") is None and vague:
        return Proposal("needs_area", {"kind": "events", "vague": True, "vague_words": vague, "date": days,
                                       "keyword": keyword}, SOURCE, notes)
    return Proposal("search_local_events", {"area": area, "date": days, "keyword": keyword}, SOURCE, notes)


def _find_place(args: Mapping[str, Any]) -> Proposal:
    urgent = _urgent(args)
    if urgent is not None:
        return urgent
    diet = args.get("dietary_type")
    check: tuple[ask.Note, ...] = (ask.DietCheck(diet),) if diet not in (None, "any") else ()
    check += ((ask.Flag.DIET_OF_OTHER,) if check and args.get("diet_is_someone_elses") else ()) + _memory_notes(args)
    others = tuple(ask.OtherPlace(name) for name in dict.fromkeys(_said(args, "other_shop_names"))
                   if name != args["name"])
    notes = _limit_notes(args) + check + others + _detail_notes(args) + _unasked(args) + \
        _second_ask_notes("places", {"area": args.get("area"), "diet": None}, args) + _tail_notes(args)
    return Proposal("find_place", {"name": args["name"], "area": args.get("area")}, SOURCE, notes)


def _show_limits(args: Mapping[str, Any]) -> Proposal:
    kinds = _said(args, "kinds")
    safety = _safety_first(kinds)
    if safety:
        return Proposal("show_limits", {"kinds": safety}, SOURCE)
    return Proposal("show_limits", {"kinds": [LIMIT_NOTES[kind] for kind in dict.fromkeys(kinds) if kind in LIMIT_NOTES]},
                    SOURCE, _detail_notes({"limits_asked": kinds}))


def _small_talk(args: Mapping[str, Any]) -> Proposal:
    kind = args["kind"]
    if kind == "ok":
        return Proposal("ack", {}, SOURCE, _memory_notes(args))
    return Proposal("greeting" if kind == "greeting" else "thanks", {}, SOURCE)


def _show_privacy(args: Mapping[str, Any]) -> Proposal:
    topic = ask.PrivacyTopic(args.get("topic") or ask.PrivacyTopic.WHAT_IS_KEPT)
    return Proposal("privacy_info", {"topic": topic}, SOURCE)


def _fixed(tool: str) -> Callable[[Mapping[str, Any]], Proposal]:
    return lambda args: Proposal(tool, {}, SOURCE)


#: Tool name → its builder. The names are the tools shared.agent.tools declares.
BUILDERS: dict[str, Callable[[Mapping[str, Any]], Proposal]] = {
    "search_local_places": _places,
    "search_local_events": _events,
    "find_place": _find_place,
    "show_limits": _show_limits,
    "small_talk": _small_talk,
    "show_help": _fixed("show_local_help"),
    "ask_for_person": _fixed("handoff_info"),
    "show_request_status": _fixed("handoff_status"),
    "explain_cancel_request": _fixed("handoff_cancel_help"),
    "propose_dietary_memory": lambda args: Proposal("propose_dietary_memory",
                                                    {"dietary_type": args["dietary_type"]}, SOURCE),
    "show_privacy": _show_privacy,
    "ask_events_or_shops": lambda args: Proposal("ask_search_kind", {"area": args["area"]}, SOURCE),
}


def misspelt_shop(proposal: Proposal, message: str) -> Proposal:
    """A ``find_place`` proposal whose name is no catalog shop but close to one (合米素食 → 和米素食,
    jonh → John手作蔬食) → the router's ``did_you_mean`` (「你是說「和米素食」嗎？」 with a button that
    sends the message again, spelt right); any other proposal as it is. The close match is
    shared.places.search.place_close_to, as the router's (shared.turn.rules.shops.shop_misspelt); a
    shop of another township than the one named is not what was meant.

    Args:
        proposal: the call's proposal (proposal_of).
        message: the resident's message (never logged); "" when unknown: the button then sends the
            catalog's name alone.
    Returns:
        The ``did_you_mean`` proposal, with the limits asked beside it, or ``proposal``.
    """
    from shared.places.search import place_close_to, places_named_in
    from shared.text import reading_form

    if proposal.tool != "find_place":
        return proposal
    name, area = reading_form(proposal.args["name"]), proposal.args.get("area")
    close = None if places_named_in(name) else place_close_to(name)
    if close is None or (area and close["area"] != area):
        return proposal
    text = reading_form(message)
    text = text if close["typed"] in text else close["typed"]
    return Proposal("did_you_mean", {"name": close["name"], "area": close["area"],
                                     "text": text.replace(close["typed"], close["spelling"], 1)}, SOURCE,
                    tuple(note for note in proposal.notes if isinstance(note, ask.Limit)))


def proposal_of(name: str, args: Mapping[str, Any]) -> Proposal:
    """The Proposal the offline router makes for the ask this call names.

    Args:
        name: a tool name (``BUILDERS``).
        args: the call's arguments as JSON values, already checked against the tool's declared types
            (shared.agent.tools.schema_problem); absent, None, False and [] all mean "not said".
    Returns:
        A Proposal with ``source="model"``: the router's tool, arguments and notes for that ask (a shop
        search with no township is the township picker; 全彰化 is every township; crisis or emergency
        asked anywhere is the safety reply alone).
    Raises:
        KeyError: an unknown tool (the schema check refuses it first).
        BadCall: dates that do not make a range (see day_range).
    """
    return BUILDERS[name](args)
