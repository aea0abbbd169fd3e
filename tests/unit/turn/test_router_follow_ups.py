"""The router reads a follow-up or a correction into a ``FollowUp`` with only what it said (the
``follow_ups`` row of shared.turn.router.RULES), beside the message read alone; anything said beside
the conditions makes it no follow-up. ``merge_follow_up`` (shared.turn.follow_up) merges a FollowUp from
either reader with the conversation state."""
from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from shared.turn.ask import AskSearchKind, EventsSearch, FollowUp, NeedsArea, PlacesSearch
from shared.turn.conversation import Conversation
from shared.turn.datespec import RelativeDay, Span, Week, Weekday
from shared.turn.follow_up import merge_follow_up
from shared.turn.router import route
from shared.turn.rules.follow_ups import FOLLOW_UP_TOOL

NOW = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("text, follow_up", [
    ("那下禮拜呢", FollowUp(date=Week(1), kind="events")),
    ("下週呢？", FollowUp(date=Week(1), kind="events")),
    ("那溪湖呢", FollowUp(area="溪湖鎮")),
    ("溪湖那邊呢", FollowUp(area="溪湖鎮")),
    ("換成溪湖", FollowUp(area="溪湖鎮")),
    ("如果是鹿港呢", FollowUp(area="鹿港鎮")),
    ("那全素的呢", FollowUp(diet="vegan", kind="places")),
    ("改成蛋奶素", FollowUp(diet="ovo_lacto", kind="places")),
    ("那不限素別呢", FollowUp(diet="any", kind="places")),
    ("換成週日", FollowUp(date=Weekday(6), kind="events")),
    ("改週日", FollowUp(date=Weekday(6), kind="events")),
    ("那明天呢", FollowUp(date=RelativeDay(1), kind="events")),
    ("那下禮拜的市集呢", FollowUp(date=Week(1), keyword="市集", kind="events")),
    ("那鹿港的素食呢", FollowUp(area="鹿港鎮", kind="places")),  # a plain 素食 names shops, no diet
    ("不是啦 我是說鹿港", FollowUp(area="鹿港鎮", correction=True)),
    ("啊不對 是禮拜天", FollowUp(date=Weekday(6), kind="events", correction=True)),
    ("不對不對，鹿港", FollowUp(area="鹿港鎮", correction=True)),
    ("我是要問溪湖的", FollowUp(area="溪湖鎮", correction=True)),
    ("我是要問素食", FollowUp(kind="places", correction=True)),
    ("抱歉 我是說全素", FollowUp(diet="vegan", kind="places", correction=True)),
])
def test_router_follow_up_reads_only_what_was_said(text, follow_up):
    proposal = route(text)
    assert proposal.tool == FOLLOW_UP_TOOL and proposal.args["follow_up"] == follow_up
    assert proposal.args["alone"].tool != FOLLOW_UP_TOOL  # the message read by the other rules


@pytest.mark.parametrize("text", [
    "那個市集在哪",  # an item listed, not a condition
    "不是要你幫我記住吃素",  # a negation running on: no correction
    "那下禮拜要帶水嗎",  # a question beside the condition
    "那邊有停車場嗎", "那晚上呢", "那怎麼去呢",  # limits
    "那附近呢", "那彰化呢",  # a place word naming no township
    "那和美跟鹿港呢",  # two townships
    "那和米呢",  # a shop by name
    "員林有素食嗎", "下禮拜", "溪湖", "第三個", "剛剛那家", "改天再說", "不是啦",
])
def test_router_follow_up_anything_beside_the_conditions_is_read_alone(text):
    assert route(text).tool != FOLLOW_UP_TOOL


SATURDAY = Span(date(2026, 12, 5), date(2026, 12, 6))
NEXT_SATURDAY = Span(date(2026, 12, 12), date(2026, 12, 13))


def state(last) -> Conversation:
    return Conversation(last, (), NOW)


@pytest.mark.parametrize("last, follow_up, merged", [
    (EventsSearch("員林市", SATURDAY), FollowUp(date=Week(1), kind="events"), EventsSearch("員林市", Week(1))),
    (EventsSearch("員林市", Week(1)), FollowUp(area="溪湖鎮"), EventsSearch("溪湖鎮", Week(1))),
    (EventsSearch("鹿港鎮", NEXT_SATURDAY, "市集"), FollowUp(date=Weekday(6), kind="events"),
     EventsSearch("鹿港鎮", Span(date(2026, 12, 13), date(2026, 12, 14)), "市集")),  # the same week's Sunday
    (EventsSearch("鹿港鎮", Span(date(2026, 12, 7), date(2026, 12, 21))), FollowUp(date=Weekday(6), kind="events"),
     EventsSearch("鹿港鎮", Weekday(6))),  # two weeks kept: the coming Sunday
    (EventsSearch("員林市", SATURDAY), FollowUp(diet="vegan", kind="places"), PlacesSearch("員林市", "vegan")),
    (PlacesSearch("員林市", "vegan"), FollowUp(area="溪湖鎮"), PlacesSearch("溪湖鎮", "vegan")),
    (PlacesSearch("員林市", "vegan"), FollowUp(date=RelativeDay(1), kind="events"),
     EventsSearch("員林市", RelativeDay(1))),
    (PlacesSearch("員林市", "vegan"), FollowUp(area="鹿港鎮", kind="places"), PlacesSearch("鹿港鎮", "vegan")),
    (EventsSearch("溪湖鎮", Week(0, True)), FollowUp(kind="places", correction=True), PlacesSearch("溪湖鎮")),
])
def test_merge_follow_up_changes_what_it_names_and_keeps_the_rest(last, follow_up, merged):
    assert merge_follow_up(state(last), follow_up) == merged


@pytest.mark.parametrize("follow_up, alone", [
    (FollowUp(area="溪湖鎮"), AskSearchKind("溪湖鎮")),
    (FollowUp(date=Week(1), kind="events"), EventsSearch(None, Week(1))),
    (FollowUp(diet="vegan", kind="places"), NeedsArea(PlacesSearch(None, "vegan"))),
    (FollowUp(area="鹿港鎮", diet="vegan", kind="places"), PlacesSearch("鹿港鎮", "vegan")),
])
def test_merge_follow_up_without_a_state_is_the_follow_up_alone(follow_up, alone):
    assert merge_follow_up(None, follow_up) == alone
    assert merge_follow_up(state(None), follow_up) == alone
