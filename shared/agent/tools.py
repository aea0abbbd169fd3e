"""The model's tools: one per ask family of the offline router, each a thin function that turns its
call into the router's own Proposal (shared.agent.calls.proposal_of) and runs it through the one
turn engine (shared.turn.engine.run_tool), one per turn (docs/design.md §8; README "Free text read by Gemini").

| tool | the router's proposal | the reply |
|---|---|---|
| ``search_local_places`` | ``search_local_places``, or ``needs_area`` with no township | shops, or the township picker |
| ``search_local_events`` | ``search_local_events``, or ``needs_area`` for a vague place | events |
| ``find_place(name)`` | ``find_place``: a shop by name, in every township unless one is said; a name close to one shop: ``did_you_mean`` (calls.misspelt_shop) | the shop's card, or 你是說…嗎 |
| ``show_limits(kinds)`` | ``show_limits``: what LOCAL cannot do, by kind | the limits and the menu |
| ``small_talk(kind)`` | ``greeting`` / ``thanks`` / ``ack`` | a short answer and the menu |
| ``show_help`` | ``show_local_help`` | how to ask, and the menu |
| ``ask_for_person`` | ``handoff_info`` | how to leave a request (新需求：…) |
| ``show_request_status`` | ``handoff_status`` | the resident's open requests |
| ``explain_cancel_request`` | ``handoff_cancel_help`` | how cancelling works |
| ``propose_dietary_memory`` | the consent card | a card; nothing stored until tapped |
| ``show_privacy(topic)`` | ``privacy_info`` (``forget`` / ``sharing``) | what is kept, with 我的偏好 / 忘記我的飲食偏好 |
| ``ask_events_or_shops(area)`` | ``ask_search_kind`` | 活動還是店家？ |

Memory precedence (this turn > consented memory > none), the validation of every argument, the fixed
templates and the audit record are the router's. The search tools take the router's notes as typed
arguments (``limits_asked``, ``diet_is_someone_elses``, ``second_ask_*`` …; shared.agent.calls): a limit
asked beside a search is said, someone else's diet is never offered to remember, a second ask is
offered as a button. Crisis and emergency words never reach the model (shared.routing answers them
with the router first); a model that reads one anyway gets the same safety reply from ``show_limits``.

No tool writes business data: the searches read snapshots, the consent card is signed and sent, a
request needs the resident's 新需求：… and a tap on 確認送出, and only functions/memory writes a
preference after the resident taps the card. ``tool_context`` is ADK's ``ToolContext``; ADK hides it
from the schema the model sees.

Every tool body, before it runs anything, takes the turn's one tool slot (a second call in the
same turn is refused: ``SECOND_TOOL_CALL``), checks the ADK session against the trusted actor
(``TOOL_SESSION_MISMATCH``) and the preference revision in session state, and in the store, against
the snapshot the turn read (``TOOL_CONTEXT_REVISION_MISMATCH``). A tool body never raises into the
runner: failures come back as ``{"status": "refused", "error"}``. Every call also sets
``skip_summarization``: the model is not called again, and LOCAL renders the reply from the result.

``check_call`` (run as the agent's ``before_tool_callback``) refuses, before ADK filters or coerces
anything, a call to an unknown tool or with arguments outside the declared types (an unknown name,
a wrong type, a value outside an enum, a day that does not exist, an end before its start):
``bad_tool_call``. The declared types are the tools' signatures: ADK derives the schema the model
sees from them, and ``schema_problem`` checks the raw call against the same signatures (pydantic).
"""
from __future__ import annotations

import functools
import inspect
import threading
import typing
from dataclasses import dataclass, field
from typing import Annotated, Any, Callable, Literal, Optional

from google.adk.tools import FunctionTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from shared.agent.calls import (
    Area,
    AskKind,
    BadCall,
    Diet,
    LimitKind,
    MemoryRemark,
    PrivacyTopic,
    Savable,
    SmallTalk,
    Township,
    VagueWord,
    misspelt_shop,
    proposal_of,
)
from shared.context import EventContext
from shared.logs import log
from shared.turn.engine import (
    DEFAULT_TOOLS,
    ToolRun,
    TurnStart,
    TurnTools,
    run_tool,
    snapshot_preference,
)

#: Session state key holding the preference revision the turn read (docs/design.md §8).
REVISION_STATE_KEY = "local_revision"

TOOL_SESSION_MISMATCH = "TOOL_SESSION_MISMATCH"
TOOL_CONTEXT_REVISION_MISMATCH = "TOOL_CONTEXT_REVISION_MISMATCH"
SECOND_TOOL_CALL = "SECOND_TOOL_CALL"
BAD_TOOL_CALL = "bad_tool_call"
TOOL_FAILED = "tool_failed"
#: Longest name, keyword or word argument accepted (characters); longer is outside the schema.
MAX_ARG_CHARS = 40

# The argument types every tool shares (the schema the model sees says these limits too).
Text = Annotated[str, Field(min_length=1, max_length=MAX_ARG_CHARS)]
#: A calendar day, YYYY-MM-DD (Asia/Taipei); a day that does not exist is refused by calls.day_range.
Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Limits = Annotated[list[LimitKind], Field(max_length=6)]
Words = Annotated[list[Text], Field(max_length=3)]
Townships = Annotated[list[Township], Field(max_length=3)]
VagueWords = Annotated[list[VagueWord], Field(max_length=3)]


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
        text: the resident's message (never logged): a misspelt shop's button sends it spelt right.
    """

    ctx: EventContext
    start: TurnStart
    session_user: str
    session_id: str
    tools: TurnTools = DEFAULT_TOOLS
    run: ToolRun | None = None
    refusals: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""
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


#: What a tool body's ``locals()`` holds besides the call's arguments.
_NOT_ARGUMENTS = ("self", "tool_context", "second_ask")

#: Another ask said in the same message, offered as a button (shared.agent.calls): (argument, type, what it
#: is). The search tools take these after their own arguments (``_with_second_ask``).
SECOND_ASK_ARGUMENTS: tuple[tuple[str, Any, str], ...] = (
    ("second_ask_kind", None, "another ask in the same message, offered as a button: its kind."),
    ("second_ask_area", Optional[Area], "that ask's township, or 全彰化; leave out when it names none."),
    ("second_ask_date_from", Optional[Day], "that events ask's first day, YYYY-MM-DD."),
    ("second_ask_date_to", Optional[Day], "that events ask's last day, YYYY-MM-DD, inclusive."),
    ("second_ask_keyword", Optional[Text], "that events ask's event word (市集, 講座)."),
    ("second_ask_dietary_type", Optional[Diet], "that places ask's diet."),
)


def _with_second_ask(kinds: Any, *, events_only: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a search tool the second ask's arguments (``SECOND_ASK_ARGUMENTS``; ``second_ask_kind`` of the
    type ``kinds``; no diet when the second ask can only be events) in its signature, annotations and
    docstring (its ``Args:`` section, indented as the tools' own), which ADK reads for the schema the
    model sees and ``argument_models`` for the check; the body receives them in ``**second_ask``."""
    def add(method: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(method)
        params = [param for param in signature.parameters.values() if param.kind is not inspect.Parameter.VAR_KEYWORD]
        types_of = {name: kind or Optional[kinds] for name, kind, _ in SECOND_ASK_ARGUMENTS}
        if events_only:
            types_of.pop("second_ask_dietary_type")
        added = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None, annotation=kind)
                 for name, kind in types_of.items()]
        method.__signature__ = signature.replace(parameters=params[:-1] + added + params[-1:])  # type: ignore[attr-defined]
        method.__annotations__ = {**{key: value for key, value in method.__annotations__.items()
                                     if key != "second_ask"}, **types_of}
        lines = "".join(f"            {name}: {what}\n" for name, _, what in SECOND_ASK_ARGUMENTS if name in types_of)
        method.__doc__ = (method.__doc__ or "").rstrip(" ") + lines + "        "
        return method
    return add


class LocalTools:
    """The tools of one turn, bound to its TurnBinding (a new instance per turn).

    Each method's signature is its declared schema; its docstring is what the model reads about it.
    Every tool returns the function response ADK records, ``{"status", "total", "ids"}`` (the engine's
    status: ``ok``, ``no_match``, ``needs_area``, ``fixed``, ``help``, ``memory_card`` …), or
    ``{"status": "refused", "error"}`` when the call was not run; the model is not called again.

    Args:
        binding: the turn's trusted facts; the tools record what they did on it.
    """

    def __init__(self, binding: TurnBinding):
        self.binding = binding

    def function_tools(self) -> list:
        """ADK FunctionTools for every tool of ``TOOL_NAMES``, bound to this turn."""
        return [_DeclaredOnce(getattr(self, name)) for name in TOOL_NAMES]

    def _call(self, name: str, tool_context: Optional[ToolContext], given: dict[str, Any]) -> dict[str, Any]:
        """Run the call ``name(**given)``: its Proposal (shared.agent.calls), once per turn, checked."""
        binding = self.binding
        if tool_context is None:  # ADK always passes one; a call without it is not from this turn
            return binding.refuse(name, TOOL_SESSION_MISMATCH)
        try:
            tool_context.actions.skip_summarization = True
            if not binding.take_slot():
                return binding.refuse(name, SECOND_TOOL_CALL)
            code = binding.context_refusal(tool_context)
            if code is not None:
                return binding.refuse(name, code)
            given = {**given, **given.get("second_ask", {})}
            args = {key: value for key, value in given.items()
                    if key not in _NOT_ARGUMENTS and value not in (None, False, [])}
            proposal = misspelt_shop(proposal_of(name, args), binding.text)
            run = run_tool(binding.ctx, proposal, binding.start.snapshot, binding.tools)
            binding.run = run
            return _summary(run)
        except BadCall as exc:  # check_call refuses these first; a direct call is refused the same way
            return binding.refuse(name, BAD_TOOL_CALL, str(exc))
        except Exception as exc:  # a tool body never raises into the runner
            log("ERROR", "tool failed", tool=name, error=exc.__class__.__name__, exc_info=True)
            return binding.refuse(name, TOOL_FAILED, exc.__class__.__name__)

    @_with_second_ask(AskKind)
    def search_local_places(
            self, area: Optional[Area] = None, dietary_type: Optional[Diet] = None,
            vague_place_words: Optional[VagueWords] = None, limits_asked: Optional[Limits] = None,
            diet_is_someone_elses: bool = False, vegetarian_on_purpose: bool = False,
            conditions_not_recorded: Optional[Words] = None, states_own_diet: bool = False,
            other_townships: Optional[Townships] = None, memory_remark: Optional[MemoryRemark] = None,
            shop_kind_not_recorded: Optional[Text] = None, unasked_questions: Optional[Words] = None,
            changhua_read_as_city: bool = False, greeted: bool = False,
            tool_context: Optional[ToolContext] = None, **second_ask: Any) -> dict[str, Any]:
        """Vegetarian-friendly shops in one Changhua township, or in every township (全彰化).

        Args:
            area: the township the resident named (花壇 → 花壇鄉); 全彰化 for the whole county (全彰化, 整個彰化);
                leave out when none is named: LOCAL then asks which township.
            dietary_type: only when the message states a diet (素食/蔬食/吃素 → vegetarian; 全素/純素/vegan →
                vegan; 蛋奶素 → ovo_lacto; 奶素 → lacto; 不限/都可以/不吃素 → any).
            vague_place_words: vague place words said instead of a township (附近, 這裡, 這邊, 彰化, 彰化縣).
            limits_asked: what the message also asks that LOCAL has no data for (booking, opening_hours,
                price, parking, transport, pets, distance, payment, accessibility …): LOCAL says so beside the shops.
            diet_is_someone_elses: the diet is another person's (我媽媽吃全素, 朋友說他吃素), not the resident's.
            vegetarian_on_purpose: the resident chose plain 素食 on purpose (素食就好, 一般素食就可以).
            conditions_not_recorded: food conditions the catalog does not record, as said (鍋邊素, 不吃蔥蒜, 不吃辣).
            states_own_diet: the message only states the resident's own diet (我吃全素, 我是素食者).
            other_townships: more townships named; LOCAL searches the first and offers these as buttons.
            memory_remark: do_not_remember (不用記, 不要存我的資料) or what_is_kept (你們會存我的資料嗎) said beside it.
            shop_kind_not_recorded: a kind of eating place asked for, as said (自助餐, 火鍋, 早餐店): the catalog
                does not record shop kinds, so LOCAL says so and lists the shops with vegetarian dishes.
            unasked_questions: other questions the data does not answer, in the resident's words, short
                (外帶, 冷氣, 報佳音): LOCAL says it has no record of each; a kind in limits_asked goes there.
            changhua_read_as_city: a bare 彰化 beside another township, read as 彰化市 (area or other_townships):
                LOCAL says it read it so.
            greeted: the message opens with a greeting (早安，…).
        """
        return self._call("search_local_places", tool_context, locals())

    @_with_second_ask(AskKind)
    def search_local_events(
            self, area: Optional[Area] = None, date_from: Optional[Day] = None, date_to: Optional[Day] = None,
            keyword: Optional[Text] = None, title_words: Optional[Text] = None,
            vague_place_words: Optional[VagueWords] = None, limits_asked: Optional[Limits] = None,
            other_townships: Optional[Townships] = None, memory_remark: Optional[MemoryRemark] = None,
            date_not_understood: bool = False, also_date_from: Optional[Day] = None,
            also_date_to: Optional[Day] = None, suits_whom: Optional[Text] = None,
            unasked_questions: Optional[Words] = None, changhua_read_as_city: bool = False,
            greeted: bool = False, tool_context: Optional[ToolContext] = None, **second_ask: Any) -> dict[str, Any]:
        """Local events (demo data) by township, dates and event word.

        Args:
            area: the township named; 全彰化 or leave out for every township.
            date_from: first day, YYYY-MM-DD (Asia/Taipei); leave out for every date.
            date_to: last day, YYYY-MM-DD, inclusive; the same as date_from (or left out) for one day.
            date_not_understood: a date is named but cannot be made a real day (12/32, 寒假, 七夕, 初五, 護士節,
                an end before its start): leave date_from out; LOCAL asks for the date again.
            also_date_from: a second date asked apart from the first (明天或週六, 聖誕節跟跨年, two weekends):
                its first day, YYYY-MM-DD; the days between the two are not searched.
            also_date_to: that second date's last day, YYYY-MM-DD, inclusive.
            keyword: event words said (市集, 講座, 親子); words separated by a space must all match, by | either.
            title_words: words that may be part of one event's title (冬季蔬果 in 冬季蔬果市集要帶什麼).
            vague_place_words: vague place words said instead of a township (附近, 這裡, 這邊, 彰化, 彰化縣).
            limits_asked: what the message also asks that LOCAL has no data for (parking, transport, price,
                registration, what_to_bring, pets, weather, evening, end_time, crowd …).
            other_townships: more townships named; LOCAL searches the first and offers these as buttons.
            memory_remark: do_not_remember or what_is_kept said beside it.
            suits_whom: whom the resident asks an event suits, as said (老人家, 小孩, 阿嬤): LOCAL says the
                data does not record it (its tags are only categories).
            unasked_questions: other questions the data does not answer, in the resident's words, short
                (外帶, 冷氣, 報佳音): LOCAL says it has no record of each; a kind in limits_asked goes there.
            changhua_read_as_city: a bare 彰化 beside another township, read as 彰化市 (area or other_townships):
                LOCAL says it read it so.
            greeted: the message opens with a greeting.
        """
        return self._call("search_local_events", tool_context, locals())

    @_with_second_ask(Literal["events"], events_only=True)
    def find_place(
            self, name: Text, area: Optional[Township] = None, dietary_type: Optional[Diet] = None,
            diet_is_someone_elses: bool = False, other_shop_names: Optional[Words] = None,
            limits_asked: Optional[Limits] = None, memory_remark: Optional[MemoryRemark] = None,
            unasked_questions: Optional[Words] = None,
            greeted: bool = False, tool_context: Optional[ToolContext] = None, **second_ask: Any) -> dict[str, Any]:
        """One shop the resident names (和米素食在哪, john手作電話): its card, found by name in every township.

        Args:
            name: the shop's name as the resident wrote it, typos and all (合米素食): LOCAL asks 你是說…嗎.
            area: the township, only when the message names one.
            dietary_type: a diet asked about the shop (和米有全素嗎 → vegan).
            diet_is_someone_elses: that diet is another person's.
            other_shop_names: more shops named in the message; offered as buttons.
            limits_asked: what LOCAL has no data for, asked beside it (opening_hours, booking, parking, taxi …).
            memory_remark: do_not_remember or what_is_kept said beside it.
            unasked_questions: other questions the data does not answer, in the resident's words, short
                (外帶, 冷氣, 報佳音): LOCAL says it has no record of each; a kind in limits_asked goes there.
            greeted: the message opens with a greeting.
        """
        return self._call("find_place", tool_context, locals())

    def show_limits(self, kinds: Annotated[list[LimitKind], Field(min_length=1, max_length=6)],
                    tool_context: Optional[ToolContext] = None) -> dict[str, Any]:
        """Say plainly what LOCAL cannot do or has no data for, with the menu (nothing is searched).

        Args:
            kinds: other_county (台中, 台北 …: LOCAL has only Changhua), booking, opening_hours, price,
                registration, parking, transport, taxi, shuttle, weather, medical, doctor_appointment,
                directory (only a government office's or other body's phone or address), no_data (anything
                else), pets, what_to_bring, distance, payment, accessibility, toilets, crowd, age, seating,
                organiser, end_time; fraud (a caller asking for money, a prize that needs a transfer, someone
                posing as a prosecutor, police or an office, an account said to be misused);
                politics_religion (elections, candidates, parties, which religion); off_topic (writing a
                poem, jokes, chatting, general knowledge); crisis (suicidal or despairing words) and
                emergency (someone fell, cannot breathe).
        """
        return self._call("show_limits", tool_context, locals())

    def small_talk(self, kind: SmallTalk, memory_remark: Optional[Literal["do_not_remember"]] = None,
                   tool_context: Optional[ToolContext] = None) -> dict[str, Any]:
        """A greeting, a thanks or an ok with nothing else asked (你好, 你們是誰, 謝謝, 好, 收到).

        Args:
            kind: greeting (also 你們是誰 / 你會做什麼), thanks, ok.
            memory_remark: do_not_remember when the message says not to remember (不用記, 我又沒說要你記住).
        """
        return self._call("small_talk", tool_context, locals())

    def show_help(self, tool_context: Optional[ToolContext] = None) -> dict[str, Any]:
        """The menu and how to ask, for a message LOCAL cannot read as any other tool."""
        return self._call("show_help", tool_context, locals())

    def ask_for_person(self, tool_context: Optional[ToolContext] = None) -> dict[str, Any]:
        """The resident wants a person (找真人, 我要留言, 請人打給我, 路燈壞了要報修): how to leave a request.

        Nothing is sent: the resident writes 新需求：… and confirms the card.
        """
        return self._call("ask_for_person", tool_context, locals())

    def show_request_status(self, tool_context: Optional[ToolContext] = None) -> dict[str, Any]:
        """The resident asks about their own request (服務單進度, 我報的路燈處理了沒, 有人看了嗎)."""
        return self._call("show_request_status", tool_context, locals())

    def explain_cancel_request(self, tool_context: Optional[ToolContext] = None) -> dict[str, Any]:
        """The resident wants to cancel a request (取消服務單, 那個單幫我撤掉): how cancelling works."""
        return self._call("explain_cancel_request", tool_context, locals())

    def propose_dietary_memory(self, dietary_type: Savable,
                               tool_context: Optional[ToolContext] = None) -> dict[str, Any]:
        """Offer a consent card to remember the resident's OWN diet; nothing is stored until they tap it.

        Only when the resident asks LOCAL to remember their own diet for later (幫我記住, 以後都…); never
        for someone else's diet, a one-off, or 不要記住.

        Args:
            dietary_type: the diet the resident asked LOCAL to remember.
        """
        return self._call("propose_dietary_memory", tool_context, locals())

    def show_privacy(self, topic: PrivacyTopic = "what_is_kept",
                     tool_context: Optional[ToolContext] = None) -> dict[str, Any]:
        """What LOCAL keeps about the resident, with the 我的偏好 / 忘記我的飲食偏好 buttons.

        Nothing is shown, changed or deleted until the resident taps a button.

        Args:
            topic: what_is_kept (我的資料, 你記得我什麼), forget_my_diet (忘記我, 以後不用記了 刪掉),
                who_sees_my_data (會不會把我的電話給別人).
        """
        return self._call("show_privacy", tool_context, locals())

    def ask_events_or_shops(self, area: Township, tool_context: Optional[ToolContext] = None) -> dict[str, Any]:
        """Only a township is said (那鹿港呢, 還有員林嗎): ask whether its events or its shops are meant.

        Args:
            area: the township.
        """
        return self._call("ask_events_or_shops", tool_context, locals())


class _DeclaredOnce(FunctionTool):
    """A FunctionTool whose declaration (the schema the model sees) is built once per process: the
    signatures never change, and ADK's own cache is keyed by the bound method, which is new every turn
    (each turn would build twelve schemas again and keep the old turn's tools in that cache)."""

    def _get_declaration(self) -> Optional[types.FunctionDeclaration]:
        declared = declarations().get(self.name)
        return declared.model_copy(deep=True) if declared is not None else None  # callers may change theirs


@functools.cache
def declarations() -> dict[str, types.FunctionDeclaration | None]:
    """Every tool's declaration, built by ADK from its signature and docstring, once per process."""
    unbound = LocalTools(None)  # type: ignore[arg-type]  # only its methods' signatures are read
    return {name: FunctionTool(getattr(unbound, name))._get_declaration() for name in TOOL_NAMES}


#: Every tool, in the order the model sees them.
TOOL_NAMES = ("search_local_places", "search_local_events", "find_place", "show_limits", "small_talk", "show_help",
              "ask_for_person", "show_request_status", "explain_cancel_request", "propose_dietary_memory",
              "show_privacy", "ask_events_or_shops")


# -- the check of the raw call (before ADK filters unknown names or coerces values) ------------------

@functools.cache
def argument_models() -> dict[str, type[BaseModel]]:
    """Per tool, a strict pydantic model of its signature (the declared schema), built once."""
    models: dict[str, type[BaseModel]] = {}
    for name in TOOL_NAMES:
        method = getattr(LocalTools, name)
        hints = typing.get_type_hints(method, include_extras=True)
        fields: dict[str, Any] = {
            param: (hints[param], ... if spec.default is inspect.Parameter.empty else spec.default)
            for param, spec in inspect.signature(method).parameters.items() if param not in _NOT_ARGUMENTS}
        models[name] = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid", strict=True),
                                    **fields)
    return models


def schema_problem(name: str | None, args: Any) -> str | None:
    """Why a proposed call is outside the declared schema, or None when it fits.

    Args:
        name: the function name the model called.
        args: its raw arguments (a JSON object).
    Returns:
        ``unknown_tool``, ``arguments_not_an_object``, ``unknown_argument:<name>``, ``missing:<name>``,
        ``<argument>: <problem>`` (a wrong type, outside its enum, too long), or a date problem
        (``date_to without date_from``, ``not a real day (YYYY-MM-DD)``, ``date_to before date_from``);
        None when the call fits.
    """
    model = argument_models().get(name or "")
    if model is None:
        return "unknown_tool"
    if not isinstance(args, dict):
        return "arguments_not_an_object"
    try:
        model.model_validate(args)
        proposal_of(name or "", {key: value for key, value in args.items() if value not in (None, False, [])})
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        if error["type"] == "extra_forbidden":
            return f"unknown_argument:{where}"
        if error["type"] == "missing":
            return f"missing:{where}"
        return f"{where}: {error['msg']}"
    except BadCall as exc:
        return str(exc)
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
