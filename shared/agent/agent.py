"""One model turn: Gemini, through ADK, proposes one read-only tool call; LOCAL decides and renders.

Per turn (docs/design.md §7–§8):

1. snapshot the preference and its revision (shared.turn.engine.start_turn);
2. a new in-memory ADK session (user: the hashed LINE user id; state: the revision) and one
   ``LlmAgent`` over the process's one model and client (shared.agent.client), whose instruction holds
   only public context (shared.agent.prompts), whose tools are bound to this turn (shared.agent.tools),
   and whose requests ask for exactly one call to one of them (function calling mode ``ANY``);
3. ``Runner.run_async`` with ``RunConfig.max_llm_calls=1``, under ``LOCAL_MODEL_TIMEOUT_SECONDS``, on
   the process's one model loop; every tool call sets ``skip_summarization``, so the model is called once;
4. the one tool that ran → the turn engine's revision check, fixed templates and audit record
   (shared.turn.engine.finish_turn), exactly as for the offline router; the model's prose is
   never sent;
5. anything else (a timeout, 429, 5xx, a safety block, an answer cut off, empty or prose only, a
   malformed function call, an unknown tool or arguments outside the schema) → the offline router's
   reading of the same text, as the webhook would answer it (``router_fallback``), and the audit record
   names the reason (``model_timeout``, ``quota``, ``upstream_unavailable``, ``safety_blocked``,
   ``max_tokens``, ``empty_answer``, ``unknown_tool``, ``bad_tool_call``, ``no_tool_call``) beside the
   ``model`` block; a refused context check keeps its honest reply and names its code.

The google-genai client is configured from Settings only (shared.agent.client): ``GEMINI_API_KEY``, or
Vertex AI with application default credentials, or the stand-in at google-genai's own
``GOOGLE_GEMINI_BASE_URL``; one per process, reused by every turn, closed at exit.
Only functions/agent imports this module (the webhook never loads google.adk or google.genai).
"""
from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, ToolThreadPoolConfig
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import errors as genai_errors
from google.genai import types

from shared.agent.client import run_on_model_loop, shared_model
from shared.agent.prompts import PublicContext, build_instruction, last_search_call, public_context
from shared.agent.tools import (
    BAD_TOOL_CALL,
    REVISION_STATE_KEY,
    TOOL_CONTEXT_REVISION_MISMATCH,
    LocalTools,
    TurnBinding,
    check_call,
    declarations,
)
from shared.clock import TAIPEI
from shared.config import Settings
from shared.context import EventContext, Reply
from shared.logs import hash_user, log
from shared.turn.cannot_help import refused_reply
from shared.turn.conversation import load_conversation
from shared.turn.engine import (
    DEFAULT_TOOLS,
    TurnStart,
    TurnTools,
    finish_turn,
    router_proposal,
    run_tool,
    start_turn,
    unanswered_turn,
)
from shared.turn.wording import revision_changed_reply

#: ADK logs a model error as a plain-text traceback; LOCAL logs each failure once, classified and
#: structured (shared.logs), so ADK's own logger only speaks for the unexpected.
logging.getLogger("google_adk").setLevel(logging.CRITICAL)

APP_NAME = "local"
AGENT_NAME = "local_reader"
#: One model call per turn: the tool's result is rendered by LOCAL (skip_summarization).
MAX_LLM_CALLS = 1
#: How long the turn's caller waits past the model budget for the run to hand back its outcome.
RUN_GRACE_SECONDS = 2.0
#: Threads for the tools' bodies (store reads, searches): every turn runs on the one model loop
#: (shared.agent.client), and ADK runs a synchronous tool on the loop itself unless given a pool
#: (``RunConfig.tool_thread_pool_config``), which would hold every other turn's model I/O while it
#: reads the store. As many as functions/agent serves at once (cloudbuild.yaml ``--concurrency=4``).
TOOL_WORKERS = 4

#: The audit reasons of a model turn that gave no usable call (failure_reason); the resident then gets the
#: offline router's reading of the same text (docs/design.md §8).
MODEL_TIMEOUT, QUOTA, UPSTREAM_UNAVAILABLE = "model_timeout", "quota", "upstream_unavailable"
SAFETY_BLOCKED, MAX_TOKENS, EMPTY_ANSWER, UNKNOWN_TOOL = "safety_blocked", "max_tokens", "empty_answer", "unknown_tool"
NO_TOOL_CALL = "no_tool_call"


def warm_up() -> None:
    """Build the tools' declarations (the schema the model sees) once, before the first model turn
    rather than inside its time budget (functions/agent builds its worker at start-up)."""
    declarations()


def generate_config(settings: Settings, tool_names: list[str]) -> types.GenerateContentConfig:
    """The request's generation config: always one call to one of ``tool_names``, and the thinking
    setting the model's family takes.

    - ``tool_config``: function calling mode ``ANY`` with ``allowed_function_names``, so the model
      answers with a function call, never prose (https://ai.google.dev/gemini-api/docs/function-calling,
      "Function calling modes").
    - ``thinking_config``: ``thinking_level`` (Gemini 3) or ``thinking_budget`` (Gemini 2.5), as Settings
      validated them; none when neither is set (https://ai.google.dev/gemini-api/docs/thinking).
    """
    thinking = None
    if settings.model_thinking_level:
        thinking = types.ThinkingConfig(thinking_level=types.ThinkingLevel(settings.model_thinking_level.upper()))
    elif settings.model_thinking_budget is not None:
        thinking = types.ThinkingConfig(thinking_budget=settings.model_thinking_budget)
    return types.GenerateContentConfig(
        tool_config=types.ToolConfig(function_calling_config=types.FunctionCallingConfig(
            mode=types.FunctionCallingConfigMode.ANY, allowed_function_names=list(tool_names))),
        thinking_config=thinking)


def build_agent(settings: Settings, context: PublicContext, tools: LocalTools,
                last_call: str | None = None) -> LlmAgent:
    """The turn's LlmAgent: the process's model (shared.agent.client), the instruction, the turn's
    bound tools, and ``generate_config``.

    Args:
        settings: model id, thinking setting, backend.
        context: today's date and the snapshots' public facts.
        tools: this turn's tools (bound to its TurnBinding).
        last_call: the chat's last search as a tool call (shared.agent.prompts.last_search_call), or None.
    Raises:
        ValueError: the model is off, or google-genai refuses the client configuration.
    """
    function_tools = tools.function_tools()
    return LlmAgent(
        name=AGENT_NAME,
        model=shared_model(settings),
        instruction=build_instruction(context, last_call),
        tools=function_tools,
        before_tool_callback=check_call(tools.binding),
        generate_content_config=generate_config(settings, [tool.name for tool in function_tools]),
        disallow_transfer_to_parent=True,
        disallow_transfer_to_peers=True,
    )


@dataclass
class AdkOutcome:
    """What one ADK run produced: its events' summary, the error (if any) and the model text seen."""

    error_code: str | None = None
    exception: BaseException | None = None
    text_seen: bool = False
    #: the first FinishReason an event carried (``MAX_TOKENS`` with cut-off prose has no error code)
    finish_reason: str | None = None


async def run_agent(agent: LlmAgent, binding: TurnBinding, text: str, *, timeout_seconds: float,
                    session_user: str | None = None, max_llm_calls: int = MAX_LLM_CALLS) -> AdkOutcome:
    """Run the agent once on ``text`` in a new in-memory session; never raises.

    Args:
        agent: from build_agent.
        binding: the turn (its session id and revision go into the session).
        text: the resident's message (never logged or stored).
        timeout_seconds: the whole run's budget.
        session_user: the session's user id; default the binding's (tests pass another user).
        max_llm_calls: ADK's bound on model requests in the run (a turn makes one; a second request
            would carry the first answer's parts, thought signatures included, from the session's events).
    """
    outcome = AdkOutcome()
    sessions = InMemorySessionService()
    user = session_user or binding.session_user
    try:
        await sessions.create_session(app_name=APP_NAME, user_id=user, session_id=binding.session_id,
                                      state={REVISION_STATE_KEY: binding.revision})
        runner = Runner(app_name=APP_NAME, agent=agent, session_service=sessions)
        message = types.Content(role="user", parts=[types.Part(text=text)])

        async def consume() -> None:
            async for event in runner.run_async(user_id=user, session_id=binding.session_id, new_message=message,
                                                run_config=_run_config(max_llm_calls)):
                if event.error_code and outcome.error_code is None:
                    outcome.error_code = str(event.error_code)
                if event.finish_reason and outcome.finish_reason is None:
                    outcome.finish_reason = getattr(event.finish_reason, "name", str(event.finish_reason))
                if event.content and any(part.text for part in event.content.parts or [] if not part.thought):
                    outcome.text_seen = True

        await asyncio.wait_for(consume(), timeout=timeout_seconds)
    except BaseException as exc:  # noqa: BLE001 (every failure is classified; Cancelled included)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        outcome.exception = exc
    return outcome


def _last_call(ctx: EventContext) -> str | None:
    """The (chat, sender)'s last resolved search as a tool call for the instruction, or None (none kept,
    expired, or unreadable: the message is read alone). Source: docs/design.md §7 (conversation state)."""
    conversation = load_conversation(ctx)
    if conversation is None:
        return None
    return last_search_call(conversation.last_ask, ctx.now.astimezone(TAIPEI).date())


def _run_config(max_llm_calls: int) -> RunConfig:
    """One run's bound on model requests, and the tools' bodies on ADK's thread pool (``TOOL_WORKERS``)."""
    return RunConfig(max_llm_calls=max_llm_calls,
                     tool_thread_pool_config=ToolThreadPoolConfig(max_workers=TOOL_WORKERS))


def run_turn_on_model_loop(agent: LlmAgent, binding: TurnBinding, text: str, *,
                           timeout_seconds: float) -> AdkOutcome:
    """``run_agent`` on the process's model loop (shared.agent.client), so every turn reuses the one
    client session; never raises (a run that does not hand back in time is a timeout)."""
    try:
        return run_on_model_loop(run_agent(agent, binding, text, timeout_seconds=timeout_seconds),
                                 timeout_seconds=timeout_seconds + RUN_GRACE_SECONDS)
    except TimeoutError as exc:
        return AdkOutcome(exception=exc)


def failure_reason(outcome: AdkOutcome) -> str | None:
    """The audit reason for a run that produced no usable tool call, or None when it did not fail.

    ``model_timeout`` (our budget, an HTTP timeout, 408/504), ``quota`` (429), ``upstream_unavailable``
    (5xx, any other API or transport error, an unreadable answer), ``safety_blocked`` (a prompt or a
    candidate blocked for safety), ``max_tokens`` (the answer was cut off before a call), ``empty_answer``
    (no candidates, or a candidate with no parts), ``unknown_tool`` (a call to a function LOCAL does not
    declare), ``bad_tool_call`` (a malformed function call, arguments that are no object, the model-call
    bound hit).
    Source: docs/design.md §8; Gemini API troubleshooting (429 RESOURCE_EXHAUSTED, 500, 503, 504) and
    generate-content reference (promptFeedback.blockReason, FinishReason SAFETY / MAX_TOKENS).
    """
    if outcome.exception is not None:
        return _exception_reason(outcome.exception)
    if outcome.error_code:
        return _ERROR_CODE_REASONS.get(outcome.error_code, UPSTREAM_UNAVAILABLE)
    return None


#: An ADK event's ``error_code`` (a FinishReason or a prompt's BlockedReason) → the audit reason.
_ERROR_CODE_REASONS = {
    "MALFORMED_FUNCTION_CALL": BAD_TOOL_CALL, "UNEXPECTED_TOOL_CALL": UNKNOWN_TOOL,
    "SAFETY": SAFETY_BLOCKED, "BLOCKLIST": SAFETY_BLOCKED, "PROHIBITED_CONTENT": SAFETY_BLOCKED,
    "SPII": SAFETY_BLOCKED, "IMAGE_SAFETY": SAFETY_BLOCKED, "RECITATION": SAFETY_BLOCKED, "OTHER": SAFETY_BLOCKED,
    "MAX_TOKENS": MAX_TOKENS, "FINISH_REASON_UNSPECIFIED": EMPTY_ANSWER,
}


def _exception_reason(exc: BaseException) -> str:
    """The audit reason of an exception raised by the run (see failure_reason)."""
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) or _is_http_timeout(exc):
        return MODEL_TIMEOUT
    if isinstance(exc, genai_errors.APIError):
        if exc.code == 429:
            return QUOTA
        return MODEL_TIMEOUT if exc.code in (408, 504) else UPSTREAM_UNAVAILABLE
    if exc.__class__.__name__ == "LlmCallsLimitExceededError":
        return BAD_TOOL_CALL
    if isinstance(exc, ValueError) and "not found" in str(exc) and "tool" in str(exc).lower():
        return UNKNOWN_TOOL  # ADK: "Tool '<name>' not found." for a function no tool declares
    if exc.__class__.__name__ == "ValidationError":
        return BAD_TOOL_CALL  # the answer's functionCall does not parse (args that are no object)
    return UPSTREAM_UNAVAILABLE


def _is_http_timeout(exc: BaseException) -> bool:
    """An httpx timeout (google-genai's transport), recognised by class without importing httpx."""
    return any(cls.__module__.startswith("httpx") and cls.__name__ == "TimeoutException"
               for cls in type(exc).__mro__)


def run_model_text_turn(ctx: EventContext, text: str, *, tools: TurnTools = DEFAULT_TOOLS) -> Reply:
    """One free-text turn read by the model (in functions/agent, never in the webhook).

    Args:
        ctx: the verified event; ``ctx.actor`` is set; ``ctx.settings.model_backend`` is not offline.
        text: the resident's message (never logged or stored).
        tools: the read-only search functions (tests inject wrappers).
    Returns:
        The reply rendered by LOCAL from the tool's result. When the model gave no usable call (it
        failed, was blocked, was cut off, answered nothing or prose only, called an unknown tool or
        with bad arguments), the offline router's reading of the same text (``router_fallback``); a
        refused context check (another session, a revision that moved) keeps its honest reply.
    """
    settings = ctx.settings
    if ctx.actor is None:
        raise ValueError("a model turn needs the verified actor")
    start = start_turn(ctx, read_snapshot=True)
    binding = TurnBinding(ctx, start, session_user=hash_user(ctx.actor.user_id) or "anonymous",
                          session_id=f"turn-{uuid.uuid4().hex}", tools=tools, text=text)
    model_started = time.monotonic()
    model: dict[str, Any] = {"model_id": settings.model_id, "backend": settings.model_backend}
    try:
        agent = build_agent(settings, public_context(ctx.now), LocalTools(binding), last_call=_last_call(ctx))
    except Exception as exc:  # a configuration the client refuses: the router reads it, not a 500
        log("ERROR", "model turn not started", error=exc.__class__.__name__)
        return router_fallback(ctx, start, text, UPSTREAM_UNAVAILABLE, {**model, "error": exc.__class__.__name__},
                               tools)
    outcome = run_turn_on_model_loop(agent, binding, text, timeout_seconds=settings.model_timeout_seconds)
    model.update(calls=[{"tool": call["tool"], "args": call["args"]} for call in binding.calls],
                 refusals=binding.refusals, model_ms=round((time.monotonic() - model_started) * 1000, 1))
    reason = failure_reason(outcome)
    if reason is not None:
        model["error"] = outcome.exception.__class__.__name__ if outcome.exception else outcome.error_code
    if binding.run is not None:
        # The one tool ran: its result is true whatever happened after it (the run's end is not needed).
        return finish_turn(ctx, start, binding.run, audit_extra={"model": model, "reason": reason})
    if reason is None and binding.refusals and binding.refusals[0]["code"] != BAD_TOOL_CALL:
        code = binding.refusals[0]["code"]  # a context check: nothing is run for another session or revision
        reply = revision_changed_reply() if code == TOOL_CONTEXT_REVISION_MISMATCH else refused_reply()
        return unanswered_turn(ctx, start, source="model", reason=code, reply=reply, audit_extra={"model": model})
    if reason is None:
        reason = _unusable_reason(binding, outcome)
        model["text_ignored"] = outcome.text_seen  # prose is never sent
    log("WARNING", "model turn failed", reason=reason, error=model.get("error"), answered_by="offline_router")
    return router_fallback(ctx, start, text, reason, model, tools)


def _unusable_reason(binding: TurnBinding, outcome: AdkOutcome) -> str:
    """Why a run that did not fail gave no usable call: a call outside the schema (``unknown_tool`` for a
    function LOCAL does not declare, else ``bad_tool_call``), an answer cut off (``max_tokens``), prose
    only (``no_tool_call``) or nothing at all (``empty_answer``: no candidates, no parts)."""
    if binding.refusals:
        return UNKNOWN_TOOL if binding.refusals[0].get("detail") == "unknown_tool" else BAD_TOOL_CALL
    if outcome.finish_reason == "MAX_TOKENS":
        return MAX_TOKENS
    return NO_TOOL_CALL if outcome.text_seen else EMPTY_ANSWER


def router_fallback(ctx: EventContext, start: TurnStart, text: str, reason: str, model: dict[str, Any],
                    tools: TurnTools = DEFAULT_TOOLS) -> Reply:
    """The offline router's reading of ``text`` when the model gave no usable call: its answer, its
    picker or its honest can't-read reply with the menu, never a bare 「這次暫時查不了」.

    Args:
        ctx, start: the turn (the preference snapshot read at its start).
        text: the resident's message (never logged or stored).
        reason: the audit reason (failure_reason, ``no_tool_call``).
        model: the audit's ``model`` block (model id, backend, calls, refusals, error).
        tools: the read-only tools.
    Returns:
        The router's reply; the audit record has ``source`` ``offline_router``, ``reason`` and ``model``.
    Source: docs/design.md §8 (a model failure falls back to the router's reading).
    """
    run = run_tool(ctx, router_proposal(ctx, text), start.snapshot, tools)
    return finish_turn(ctx, start, run, audit_extra={"model": model, "reason": reason})
