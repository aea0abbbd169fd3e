"""Drafts (key, hash, expiry, supersede, caps) and the signed confirmation card."""
from __future__ import annotations

import dataclasses
import re
from datetime import datetime, timedelta, timezone

import pytest

from shared.handoff import cards, drafts, records
from shared.handoff.outcome import pending_verification
from shared.handoff.records import Operation
from shared.identity import Actor
from tests.unit.handoff.conftest import OTHER_USER, all_documents

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)
TEXT = "想參加週六的社區走讀，長輩需要輪椅協助，請真人幫忙確認"


def new_draft(store, actor, settings, text=TEXT, now=NOW):
    return drafts.create_draft(store, actor, text, now=now, settings=settings).draft


def card_json(settings, draft) -> dict:
    return cards.confirmation_card(settings, draft).to_dict()


def buttons(card: dict) -> dict[str, str]:
    return {b["action"]["label"]: b["action"]["data"] for b in card["contents"]["footer"]["contents"]}


def test_drafts_request_text_of_reads_prefix_only():
    assert drafts.request_text_of("  新需求：想參加走讀 ") == "想參加走讀"
    assert drafts.request_text_of("新需求:想參加走讀") == "想參加走讀"
    assert drafts.request_text_of("想參加走讀，新需求：") is None


def test_drafts_key_is_fresh_high_entropy_hex_and_expiry_is_ttl(store, actor, settings):
    first, second = new_draft(store, actor, settings), new_draft(store, actor, settings)
    for draft in (first, second):
        assert re.fullmatch(r"[0-9a-f]{32}", draft.operation.idempotency_key)
        assert draft.expires_at - draft.created_at == timedelta(seconds=settings.draft_ttl_seconds)
    assert first.operation.idempotency_key != second.operation.idempotency_key


def test_drafts_content_hash_is_sha256_of_canonical_json():
    digest = records.content_hash(TEXT)
    assert re.fullmatch(r"[0-9a-f]{64}", digest)
    assert records.content_hash(TEXT) == digest
    assert records.content_hash(TEXT + "。") != digest


def test_drafts_newer_draft_supersedes_the_open_one(store, actor, settings):
    older = new_draft(store, actor, settings, "第一次")
    newer = new_draft(store, actor, settings, "第二次", NOW + timedelta(seconds=10))
    assert store.get(records.DRAFTS, older.operation.doc_id)["status"] == drafts.SUPERSEDED
    assert store.get(records.DRAFTS, newer.operation.doc_id)["status"] == drafts.OPEN


def test_drafts_text_over_cap_refused_and_nothing_written(make_settings, store, actor):
    settings = make_settings(LOCAL_REQUEST_TEXT_MAX_CHARS="20")
    before = all_documents(settings)
    refused = drafts.create_draft(store, actor, "字" * 21, now=NOW, settings=settings)
    assert (refused.status, refused.length, refused.limit) == ("text_too_long", 21, 20)
    assert all_documents(settings) == before
    assert drafts.create_draft(store, actor, "字" * 20, now=NOW, settings=settings).status == "draft_created"


def test_drafts_empty_text_refused(store, actor, settings):
    assert drafts.create_draft(store, actor, "   ", now=NOW, settings=settings).status == "text_empty"


def test_cards_card_shows_exact_text_and_two_buttons(store, actor, settings):
    draft = new_draft(store, actor, settings)
    card = card_json(settings, draft)
    body_texts = [c.get("text") for c in card["contents"]["body"]["contents"]]
    assert TEXT in body_texts
    assert set(buttons(card)) == {"確認送出", "取消"}
    assert "12:10" in " ".join(t for t in body_texts if t)  # valid until, Asia/Taipei wall clock


def test_cards_postback_data_fits_line_limit_and_verifies(store, actor, settings):
    draft = new_draft(store, actor, settings, "長" * settings.request_text_max_chars)
    for label, data in buttons(card_json(settings, draft)).items():
        assert len(data) <= 300
        prefix, _, rest = data.partition(":")
        assert prefix == "handoff"
        reference = cards.verify_reference(settings, actor, rest)
        assert reference.operation == draft.operation
        assert reference.content_hash == draft.content_hash
        assert reference.expires_at == draft.expires_at.replace(microsecond=0)
        assert reference.op == (cards.CONFIRM if label == "確認送出" else cards.CANCEL)


@pytest.mark.parametrize("position", [3, 6, 40, 100, 120, 150])
def test_cards_tampered_reference_is_refused(store, actor, settings, position):
    draft = new_draft(store, actor, settings)
    rest = buttons(card_json(settings, draft))["確認送出"].split(":", 1)[1]
    flipped = rest[:position] + ("0" if rest[position] != "0" else "1") + rest[position + 1:]
    with pytest.raises(cards.CardRefused):
        cards.verify_reference(settings, actor, flipped)


def test_cards_other_users_card_is_refused(store, actor, settings):
    draft = new_draft(store, actor, settings)
    rest = buttons(card_json(settings, draft))["確認送出"].split(":", 1)[1]
    with pytest.raises(cards.CardRefused) as refused:
        cards.verify_reference(settings, Actor(actor.tenant_id, OTHER_USER), rest)
    assert refused.value.reason == "bad_signature"


def test_cards_card_signed_with_another_key_is_refused(make_settings, store, actor):
    signer = make_settings(LOCAL_SIGNING_KEY="another-key")
    draft = new_draft(store, actor, signer)
    rest = buttons(card_json(signer, draft))["確認送出"].split(":", 1)[1]
    with pytest.raises(cards.CardRefused):
        cards.verify_reference(make_settings(), actor, rest)


def test_cards_without_signing_key_refuse_to_sign(make_settings, actor):
    settings = dataclasses.replace(make_settings(), signing_key=None)
    draft = drafts.Draft(Operation(actor, records.new_idempotency_key()), TEXT, records.content_hash(TEXT), NOW,
                         NOW + timedelta(minutes=10))
    with pytest.raises(cards.CardRefused):
        cards.confirmation_card(settings, draft)


#: The unknown-outcome reply state, restated as data from docs/design.md §4.
PENDING_VERIFICATION_CONTRACT = {"reply_state": "pending_verification", "claim_completed": False,
                                 "next_step": "reconcile_by_idempotency_key",
                                 "retry_policy": "reuse_same_idempotency_key"}


def test_outcome_pending_verification_matches_design_contract():
    assert pending_verification() == PENDING_VERIFICATION_CONTRACT
    first = pending_verification()
    first["claim_completed"] = True
    assert pending_verification()["claim_completed"] is False  # a fresh copy each time


def test_cards_full_width_digits_are_refused_kindly(store, actor, settings):
    draft = new_draft(store, actor, settings)
    good = cards.sign_reference(settings, cards.CONFIRM, draft.operation, draft.content_hash, draft.expires_at)
    parts = good.split(".")
    full_width = ".".join(parts[:4] + ["１２３", "x"])
    for data in (full_width, ".".join(parts[:4] + ["１２３", parts[5]])):
        with pytest.raises(cards.CardRefused) as refused:
            cards.verify_reference(settings, actor, data)
        assert refused.value.reason == "malformed"
