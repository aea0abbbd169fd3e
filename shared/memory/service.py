"""The use case behind functions/memory: verify a card token for the actor, then apply it in
one transaction (docs/design.md §6). functions/memory/main.py calls ``submit_card``; nothing else in
production writes preferences.
"""
from __future__ import annotations

from datetime import datetime

from shared import conversation_store
from shared.audit import scrub_remembered_diet
from shared.clock import Clock, utc_now
from shared.config import Settings
from shared.identity import Actor
from shared.keys import UserHasher
from shared.logs import hash_user, log
from shared.memory.approve import apply_card
from shared.memory.errors import InvalidMemoryCard
from shared.memory.port import ALREADY_APPLIED, INVALID_MEMORY_CARD, MEMORY_FORGOTTEN, MemoryResult
from shared.memory.store import read_preference
from shared.memory.tokens import signing_keys, verify_card
from shared.store import DocumentStore, StoreError, StoreTimeout


def submit_card(settings: Settings, store: DocumentStore, actor: Actor, token: str, *,
                clock: Clock = utc_now, tapped_at: datetime | None = None) -> MemoryResult:
    """Verify ``token`` under the actor's key and apply it.

    Args:
        settings: signing keys (LOCAL_SIGNING_KEY, _VERSION, _PREVIOUS).
        store: the document store.
        actor: from the verified webhook event, passed on by the webhook.
        token: the card token without ``mem:``.
        clock: aware "now"; injected by tests.
        tapped_at: when the card was tapped, as the webhook read it from the verified event's
            ``timestamp`` (the caller is authenticated; a postback cannot set it). The card's expiry
            is judged at it, or at ``now`` when it is None or later than ``now``.
    Returns:
        MemoryResult; an altered token, another account's token or a retired key gives
        ``invalid_memory_card`` with the current revision and nothing written.
    Raises:
        MemoryNotConfigured: LOCAL_SIGNING_KEY is not set.
        ValueError: ``tapped_at`` is naive.
        StoreError: from the store; retryable ones leave nothing written (StoreTimeout: unknown;
            also when a forget was applied but the turn records could not all be scrubbed: the
            same token, sent again, is ``already_applied`` and scrubs again).
    """
    keys = signing_keys(settings)
    try:
        card = verify_card(keys, actor, token)
    except InvalidMemoryCard as exc:
        log("WARNING", "memory card refused", reason=str(exc), user=hash_user(actor.user_id))
        return MemoryResult(INVALID_MEMORY_CARD, read_preference(store, actor).revision, None, None)
    now = clock()
    result = apply_card(store, actor, card, now, tapped_at=tapped_at)
    log("INFO", "memory card applied", outcome=result.outcome, operation=card.operation,
        revision=result.revision, user=hash_user(actor.user_id))
    if card.operation == "forget" and result.outcome in (MEMORY_FORGOTTEN, ALREADY_APPLIED):
        # A forget forgets everywhere: the turn records keep no remembered diet either (docs/design.md §6).
        try:
            scrubbed = scrub_remembered_diet(store, tenant_id=actor.tenant_id,
                                             user_hashes=UserHasher.from_keys(keys).all_hashes(actor.user_id), now=now)
        except StoreError as exc:
            log("WARNING", "forgotten, but turn records not yet scrubbed", error=exc.__class__.__name__)
            raise StoreTimeout("forgotten; the turn records may still hold the diet: send the token again") from exc
        log("INFO", "turn records scrubbed of the remembered diet", records=scrubbed, user=hash_user(actor.user_id))
        _clear_conversations(store, actor, UserHasher.from_keys(keys))
    return result


def _clear_conversations(store: DocumentStore, actor: Actor, hasher: UserHasher) -> None:
    """A forget deletes the account's short conversation states in every chat (shared.conversation_store):
    the diets said in them and the shops those diets listed (docs/design.md §6, §7).

    Raises:
        StoreTimeout: some may remain; the same token, sent again, clears again.
    """
    try:
        cleared = conversation_store.clear_user(store, actor.tenant_id, hasher.all_hashes(actor.user_id))
    except StoreError as exc:
        log("WARNING", "forgotten, but conversation states not yet cleared", error=exc.__class__.__name__)
        raise StoreTimeout("forgotten; a conversation state may still hold a diet: send the token again") from exc
    log("INFO", "conversation states cleared", states=cleared, user=hash_user(actor.user_id))
