"""Helpers of the agent tests: a model turn through the real ADK Runner and google-genai client to the
Gemini stand-in (tools/gemini_standin.py) on loopback, scripted with the call a model makes."""
from __future__ import annotations

import time
from contextlib import contextmanager
from datetime import datetime, timezone
from itertools import count
from typing import Iterator

from shared.audit import COLLECTION as AUDIT
from shared.config import Settings
from shared.context import EventContext
from shared.identity import Actor
from shared.wiring import memory_client
from tools.line_messages import all_text

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)  # Monday 2026-11-30 12:00 Asia/Taipei
ALICE = Actor("test-tenant", "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d")
_IDS = count()


def model_settings(standin_url: str) -> Settings:
    return Settings.from_env({
        "LOCAL_TENANT_ID": "test-tenant", "LOCAL_SIGNING_KEY": "test-signing-key",
        "LOCAL_INTERNAL_TOKEN": "test-internal-token", "MEMORY_FUNCTION_URL": "http://127.0.0.1:9/",
        # a turn's whole budget: generous, so a loaded machine is no model timeout (those have their own tests)
        "LOCAL_MODEL": "standin", "GOOGLE_GEMINI_BASE_URL": standin_url, "LOCAL_MODEL_TIMEOUT_SECONDS": "30",
    })


def ctx_for(settings, store, actor: Actor = ALICE) -> EventContext:
    return EventContext(settings, store, None, NOW, actor, f"01AGENTS{next(_IDS):018d}", time.monotonic() + 30,
                        memory=memory_client(settings))


def call(tool: str, **args) -> dict:
    """A stand-in step: the model answers with this one function call."""
    return {"function_call": {"name": tool, "args": args}}


def model_turn(standin, settings, store, text: str, step: dict) -> tuple[list[dict], dict]:
    """One free-text turn read by the model, scripted with ``step`` → (the reply as LINE JSON, its audit)."""
    from shared.agent.agent import run_model_text_turn

    standin.script([step])
    ctx = ctx_for(settings, store)
    reply = run_model_text_turn(ctx, text)
    assert standin.pending_steps() == 0
    return [m.to_dict() for m in reply.messages], store.get(AUDIT, f"test-tenant:{ctx.webhook_event_id}")


def router_turn(settings, store, text: str) -> tuple[list[dict], dict]:
    """The same text read by the offline router's turn → (the reply as LINE JSON, its audit)."""
    from shared.turn.engine import run_text_turn

    ctx = ctx_for(settings, store)
    reply = run_text_turn(ctx, text)
    return [m.to_dict() for m in reply.messages], store.get(AUDIT, f"test-tenant:{ctx.webhook_event_id}")


def labels(messages: list[dict]) -> list[str]:
    """The quick-reply buttons of the last message, as the resident sees them."""
    items = (messages[-1].get("quickReply") or {}).get("items") or [] if messages else []
    return [item["action"]["label"] for item in items]


def read_by_resident(messages: list[dict]) -> list[tuple[str, str, list[str]]]:
    """What a resident reads in a reply, per message: its kind, its words (texts, alt text, cards) and
    its buttons; not the buttons' data (signed, and the model's dates are already calendar days)."""
    return [(m["type"], all_text([{k: v for k, v in m.items() if k != "quickReply"}]), labels([m]))
            for m in messages]


@contextmanager
def short_retry_waits() -> Iterator[None]:
    """google-genai's wait before its one retry of a 5xx (0.25–0.5 s, ``shared.agent.client.RETRY_*``)
    cut to 1 ms for the clients built meanwhile. For the tests whose claim is what a failed retry
    leads to: the retry still happens, through the real client; the plan and its real waits are
    tests/unit/agent/test_agent_client.py's."""
    import pytest

    from shared.agent import client

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(client, "RETRY_INITIAL_DELAY_SECONDS", 0.001)
        patch.setattr(client, "RETRY_JITTER_SECONDS", 0.0)
        yield
