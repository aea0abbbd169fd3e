"""The staff domain on a real SQLite file: configuration, who may act, signed cards, transitions."""
from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from shared.config import WEBHOOK_REQUIRED, ConfigError, Settings
from shared.handoff import drafts, notify, staff_outbox
from shared.handoff import records as handoff_records
from shared.handoff.requests import create_request
from shared.identity import Actor
from shared.staff import access, cards, transitions
from shared.store.sqlite import SqliteStore, path_from_url
from tests.codes_support import shown_of

GROUP = "C0a1b2c3d4e5f60718293a4b5c6d7e8f9"
STAFF_A = "U1111111111111111111111111111aaaa"
STAFF_B = "U2222222222222222222222222222bbbb"
USER = "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"


@dataclasses.dataclass
class Source:
    """The fields of a line-bot-sdk webhook source that ``access`` reads."""

    type: str
    group_id: str | None = None
    user_id: str | None = None


@pytest.fixture
def settings(base_env) -> Settings:
    return Settings.from_env({**base_env, "LOCAL_STAFF_GROUP_ID": GROUP, "LOCAL_STAFF_USER_IDS": f"{STAFF_A},{STAFF_B}"},
                             required=WEBHOOK_REQUIRED)


@pytest.fixture
def store(settings) -> SqliteStore:
    return SqliteStore(path_from_url(settings.store_url), deadline_seconds=2.0)


def new_request(settings, store, now) -> str:
    draft = drafts.create_draft(store, Actor(settings.tenant_id, USER), "想借用活動中心的場地", now=now,
                                settings=settings).draft
    create_request(store, draft.operation, draft.content_hash, now=now, tz=settings.tz, source="webhook",
                   notice_owner=notify.reply_owner("ev"), lease_seconds=30, staff_group_id=settings.staff_group_id)
    return draft.operation.doc_id


def member(settings, user_id: str) -> access.StaffMember:
    return access.staff_member(settings, Source("group", GROUP, user_id))


@pytest.mark.parametrize("name, value", [("LOCAL_STAFF_GROUP_ID", "group-1"), ("LOCAL_STAFF_GROUP_ID", "C" + "A" * 32),
                                         ("LOCAL_STAFF_USER_IDS", f"{STAFF_A},not-a-user")])
def test_staff_config_malformed_ids_refused(base_env, name, value):
    with pytest.raises(ConfigError) as raised:
        Settings.from_env({**base_env, name: value})
    assert any(name in problem for problem in raised.value.problems)


@pytest.mark.parametrize("source, reason", [
    (Source("user", None, STAFF_A), access.NOT_STAFF_GROUP),
    (Source("room", None, STAFF_A), access.NOT_STAFF_GROUP),
    (Source("group", "C" + "9" * 32, STAFF_A), access.NOT_STAFF_GROUP),
    (Source("group", GROUP, None), access.NO_USER),
    (Source("group", GROUP, "U" + "3" * 32), access.NOT_ALLOWED),
])
def test_staff_access_other_sources_refused(settings, source, reason):
    with pytest.raises(access.NotStaff) as raised:
        access.staff_member(settings, source)
    assert raised.value.reason == reason


def test_staff_access_without_group_configured_refuses_everyone(base_env):
    plain = Settings.from_env(base_env)
    with pytest.raises(access.NotStaff) as raised:
        access.staff_member(plain, Source("group", GROUP, STAFF_A))
    assert raised.value.reason == access.NO_STAFF_GROUP


def test_staff_card_other_group_or_tampered_refused(settings):
    doc_id = "ab" * 32
    data = cards.postback_data(settings, cards.TAKE, doc_id, 3)
    assert len(data) <= 300
    rest = data.split(":", 1)[1]
    assert cards.verify(settings, rest) == cards.StaffReference(cards.TAKE, doc_id, 3)
    other = dataclasses.replace(settings, staff_group_id="C" + "9" * 32)
    with pytest.raises(cards.CardRefused) as raised:
        cards.verify(other, rest)  # made for another group
    assert raised.value.reason == "bad_signature"
    with pytest.raises(cards.CardRefused):
        cards.verify(settings, rest.replace(".3.", ".4."))  # another revision, same signature
    with pytest.raises(cards.CardRefused):
        cards.verify(settings, rest.replace("take", "done"))


def test_staff_card_never_shows_resident_id(settings, store, clock):
    doc_id = new_request(settings, store, clock())
    request = store.get(handoff_records.REQUESTS, doc_id)
    card = cards.request_card(settings, doc_id, request).to_dict()
    assert USER not in str(card) and shown_of(request) in str(card)
    assert "2026/11/30 12:00" in str(card)  # 04:00 UTC on the Asia/Taipei clock


def test_staff_transitions_take_back_take_tells_each_change_once(settings, store, clock):
    doc_id = new_request(settings, store, clock())
    a, b = member(settings, STAFF_A), member(settings, STAFF_B)
    now = clock()
    first = transitions.apply(store, settings.tenant_id, cards.StaffReference(cards.TAKE, doc_id, 0), a, now=now)
    assert first.status == transitions.APPLIED and first.notice is not None
    back = transitions.apply(store, settings.tenant_id, cards.StaffReference(cards.BACK, doc_id, 1), a,
                             now=now + timedelta(minutes=5))
    assert back.status == transitions.APPLIED and back.notice is not None  # waiting again: told
    again = transitions.apply(store, settings.tenant_id, cards.StaffReference(cards.TAKE, doc_id, 2), b,
                              now=now + timedelta(minutes=6))
    assert again.status == transitions.APPLIED and again.notice is not None  # taken again: told again
    assert again.request["accepted_by"] == b.hashed
    assert len({first.notice.doc_id, back.notice.doc_id, again.notice.doc_id}) == 3
    notices = store.query(staff_outbox.NOTICES, where={"purpose": staff_outbox.ACCEPTED})
    assert len(notices) == 2
    # each notice names the one told before it, so the relay keeps them in order
    assert store.get(staff_outbox.NOTICES, again.notice.doc_id)["after_notice"] == back.notice.doc_id
    assert store.get(staff_outbox.NOTICES, back.notice.doc_id)["after_notice"] == first.notice.doc_id
    assert [h["action"] for h in store.get(handoff_records.REQUESTS, doc_id)["staff_history"]] == ["take", "back", "take"]


def test_staff_transitions_stale_card_changes_nothing(settings, store, clock):
    doc_id = new_request(settings, store, clock())
    a, b = member(settings, STAFF_A), member(settings, STAFF_B)
    transitions.apply(store, settings.tenant_id, cards.StaffReference(cards.TAKE, doc_id, 0), a, now=clock())
    before = store.get(handoff_records.REQUESTS, doc_id)
    stale = transitions.apply(store, settings.tenant_id, cards.StaffReference(cards.DECLINE, doc_id, 0), b,
                              now=clock())
    assert stale.status == transitions.STALE and stale.request["accepted_by"] == a.hashed
    mine = transitions.apply(store, settings.tenant_id, cards.StaffReference(cards.TAKE, doc_id, 0), a, now=clock())
    assert mine.status == transitions.ALREADY_APPLIED
    assert store.get(handoff_records.REQUESTS, doc_id) == before
    assert store.query(staff_outbox.NOTICES, where={"purpose": staff_outbox.DECLINED}) == []


@pytest.mark.parametrize("index, value", [(0, "v2"), (1, "done"), (2, "cd" * 32), (3, "4")])
def test_staff_card_each_field_tampered_is_refused(settings, index, value):
    rest = cards.postback_data(settings, cards.TAKE, "ab" * 32, 3).split(":", 1)[1]
    parts = rest.split(".")
    parts[index] = value
    with pytest.raises(cards.CardRefused):
        cards.verify(settings, ".".join(parts))


def test_staff_card_signed_before_key_rotation_still_verifies(settings):
    rest = cards.postback_data(settings, cards.TAKE, "ab" * 32, 0).split(":", 1)[1]
    rotated = dataclasses.replace(settings, signing_key="a-new-signing-key", signing_key_version=2,
                                  signing_key_previous=settings.signing_key)
    assert cards.verify(rotated, rest).op == cards.TAKE
    dropped = dataclasses.replace(rotated, signing_key_previous=None)
    with pytest.raises(cards.CardRefused):
        cards.verify(dropped, rest)
