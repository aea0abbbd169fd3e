"""Fuzz the webhook with signed bodies built from LINE's webhook schema:
random values, lone surrogates, ids in and out of LINE's formats, and enum values LINE may add
tomorrow (event, source, message, mention and sticker types). A real WebhookService on a real
SQLite file and the recording LINE stand-in; each body is delivered twice (LINE's redelivery).

Asserted for every example:
* never a 500: ``handle`` returns 200, 400 or 503 and raises nothing;
* each event is answered at most once: at most one reply call per reply token, over both deliveries;
* the 2-second budget, by the service's own accounting rather than a wall clock (a wall-clock
  bound flakes on a loaded 2-core machine): with an injected monotonic clock that says the budget
  was spent when the delivery arrived, nothing is claimed and nothing is sent, so no work can run
  past it. Each outbound call's deadline is capped by what is left of the budget (service.py);
  ``test_parse_budget_already_spent_defers_every_event_without_any_call`` shows the same without fuzz.
"""
from __future__ import annotations

import itertools
import json
import time
from collections import Counter

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shared import inbox
from shared.webhook.service import WebhookService
from tests.conftest import postback_event, sign, text_event

LINE_EVENT_TYPES = ["message", "postback", "follow", "unfollow", "join", "leave", "memberJoined", "memberLeft",
                    "unsend", "videoPlayComplete", "beacon", "accountLink", "membership", "module", "activated",
                    "deactivated", "botSuspended", "botResumed"]
MESSAGE_TYPES = ["text", "image", "video", "audio", "file", "location", "sticker"]
STICKER_RESOURCE_TYPES = ["STATIC", "ANIMATION", "SOUND", "ANIMATION_SOUND", "POPUP", "POPUP_SOUND", "CUSTOM",
                          "MESSAGE", "NAME_TEXT", "PER_STICKER_TEXT"]
NEWER = st.sampled_from(["futureType", "hologram", "ZOOM_SOUND", "teleport", "", "Message", "TEXT"])
SURROGATES = st.sampled_from(["\ud800", "\udfff", "\ud83d", "a\udc00b"])
TEXTS = st.one_of(
    st.sampled_from(["花壇有素食店嗎？", "新需求：想預約週六接送", "長輩吃素，以後優先找蔬食，幫我記住", "我要預約", "我的偏好",
                     "這週末鹿港有什麼活動？", "😀" * 200, "忘記我的飲食偏好", "留下服務詢問"]),
    st.text(max_size=40), st.builds(lambda a, b: a + b, st.text(max_size=10), SURROGATES))
JUNK = st.one_of(st.text(max_size=12), SURROGATES, st.integers(), st.none(), st.just({"a": [1]}), st.booleans())
# Mostly well-formed ids, so most events get past the parse phase to claims, stores and replies.
USER_IDS = st.one_of(st.from_regex(r"U[0-9a-f]{32}", fullmatch=True), st.just("U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"),
                     st.just("Ub0b1b2b3b4b5b6b7b8b9babbbcbdbebf"), JUNK)
EVENT_IDS = st.one_of(st.from_regex(r"[0-9A-HJKMNP-TV-Z]{26}", fullmatch=True),
                      st.from_regex(r"01[0-9A-HJKMNP-TV-Z]{24}", fullmatch=True), JUNK)


def sources():
    hexid = st.from_regex(r"[0-9a-f]{32}", fullmatch=True)
    user = st.fixed_dictionaries({"type": st.just("user"), "userId": USER_IDS})
    return st.one_of(
        user, user, user,
        st.fixed_dictionaries({"type": st.just("group"), "groupId": hexid.map(lambda h: "C" + h)},
                              optional={"userId": USER_IDS}),
        st.fixed_dictionaries({"type": st.just("room"), "roomId": st.one_of(hexid.map(lambda h: "R" + h), JUNK)},
                              optional={"userId": USER_IDS}),
        st.fixed_dictionaries({"type": NEWER}, optional={"userId": USER_IDS}),
        JUNK)


def messages():
    mentionee = st.fixed_dictionaries({"index": st.integers(0, 5), "length": st.integers(0, 5),
                                       "type": st.one_of(st.sampled_from(["user", "all"]), NEWER)},
                                      optional={"userId": USER_IDS, "isSelf": st.booleans()})
    text = st.fixed_dictionaries(
        {"type": st.just("text"), "id": st.from_regex(r"[0-9]{18}", fullmatch=True), "quoteToken": st.text(max_size=8),
         "text": TEXTS},
        optional={"mention": st.fixed_dictionaries({"mentionees": st.lists(mentionee, max_size=2)}),
                  "emojis": st.lists(st.fixed_dictionaries({"index": st.integers(0, 3), "length": st.integers(0, 3),
                                                            "productId": JUNK, "emojiId": JUNK}), max_size=2),
                  "markAsReadToken": st.text(max_size=5), "somethingNew": JUNK})
    sticker = st.fixed_dictionaries(
        {"type": st.just("sticker"), "id": st.just("500000000000009999"), "quoteToken": st.just("qt"),
         "packageId": st.just("11537"), "stickerId": st.just("52002734"),
         "stickerResourceType": st.one_of(st.sampled_from(STICKER_RESOURCE_TYPES), NEWER)},
        optional={"keywords": st.lists(st.text(max_size=5), max_size=2)})
    other = st.fixed_dictionaries({"type": st.one_of(st.sampled_from(MESSAGE_TYPES), NEWER),
                                   "id": st.from_regex(r"[0-9]{18}", fullmatch=True)},
                                  optional={"contentProvider": st.just({"type": "line"}), "depth": JUNK})
    return st.one_of(text, text, text, sticker, other, JUNK)


def postbacks():
    data = st.one_of(TEXTS, st.sampled_from(["menu:places", "menu:handoff", "places:area=花壇鄉", "events:area=鹿港鎮",
                                             "handoff:v1.ok.x.y.1.z", "mem:abc.def", "mem:" + "A" * 400]))
    return st.fixed_dictionaries({"data": data}, optional={"params": st.one_of(st.just({"date": "2026-12-01"}), JUNK)})


@st.composite
def events(draw):
    # Mostly the kinds LOCAL answers (message, postback), so most examples reach the handlers.
    kind = draw(st.one_of(st.sampled_from(["message", "message", "postback"]), st.sampled_from(LINE_EVENT_TYPES),
                          NEWER))
    event = {"type": kind, "mode": draw(st.sampled_from(["active", "active", "active", "standby", "newMode"])),
             "timestamp": draw(st.one_of(st.integers(0, 2**42), JUNK)), "source": draw(sources()),
             "webhookEventId": draw(EVENT_IDS), "deliveryContext": {"isRedelivery": draw(st.booleans())}}
    if draw(st.integers(0, 3)):
        event["replyToken"] = draw(st.one_of(st.just("VALID"), st.just("VALID"), JUNK))
    if kind == "message" or draw(st.integers(0, 9)) == 0:
        event["message"] = draw(messages())
    if kind == "postback" or draw(st.integers(0, 9)) == 0:
        event["postback"] = draw(postbacks())
    if draw(st.integers(0, 5)) == 0:
        del event[draw(st.sampled_from(sorted(event)))]
    return event


_TOKENS = itertools.count()


def _unique_tokens(batch: list) -> list:
    """Give every well-formed reply token a fresh value, so answers can be counted per event."""
    for event in batch:
        if isinstance(event, dict) and event.get("replyToken") == "VALID":
            event["replyToken"] = f"fz{next(_TOKENS)}x{time.monotonic_ns()}"
    return batch


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(batch=st.lists(events(), max_size=4), spent=st.sampled_from([False, False, False, True]))
@example(batch=[text_event("新需求：我需要\ud800協助"), postback_event("mem:\udfff"), text_event("\ud83d")], spent=False)
def test_fuzz_signed_line_bodies_never_500_answer_once_within_budget(webhook_service, line_standin, batch, spent):
    batch = _unique_tokens(batch)
    service = webhook_service
    if spent:  # the delivery "arrived" a whole budget ago
        budget = service.settings.webhook_budget_seconds
        service = WebhookService(service.settings, service.store, service.line, clock=service.clock,
                                 queue=service.queue, memory=service.memory,
                                 monotonic=lambda: time.monotonic() - budget)
    body = json.dumps({"destination": "U0c6f1a2b3c4d5e6f708192a3b4c5d6e7", "events": batch},
                      separators=(",", ":")).encode("ascii")  # ASCII-escaped: lone surrogates travel
    seq = line_standin.calls()[-1]["seq"] if line_standin.calls() else 0
    claimed_before = len(service.store.query(inbox.COLLECTION))
    results = [service.handle(body.decode("ascii"), sign(body)) for _ in range(2)]

    assert {r.status for r in results} <= {200, 400, 503}
    calls = line_standin.calls(seq)
    tokens = Counter((c.get("body") or {}).get("replyToken") for c in calls if c["path"].endswith("/reply"))
    assert all(count == 1 for count in tokens.values()), tokens
    if spent:
        assert calls == []
        assert len(service.store.query(inbox.COLLECTION)) == claimed_before
