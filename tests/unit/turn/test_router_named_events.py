"""Named events (offline router): a question about a NAMED event is an events ask.

A word that is (part of) a title of the current events snapshot (鹿港龍舟賽 → 鹿港慶端陽龍舟賽), or an
event kind with a title-like word before it (龍舟賽, 燈籠展), is searched as that event, never a shop
hours question, an unknown subject or a township typo when a real township is named. The titles come
from the snapshot at run time (the turn engine gives them to the router: ``route(text, titles)``).
Demo-data examples and variants are eval cases (tests/eval/cases/); here the rules with
the TDX fixture's titles, the whole turn on an ingested TDX snapshot, and the negatives.
Clock: 2026-12-01 10:00 Asia/Taipei, a Tuesday.
"""
from __future__ import annotations

from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from shared.events.file_source import FileActivitySource
from shared.events.ingest import ingest_events
from shared.turn.ask import DetailKind, Limit, NotRecorded, TitleHint, Unasked
from shared.turn.router import route
from tests.conftest import FixedClock, all_text, reply_messages, text_event
from tests.memory_support import webhook_with_memory
from tests.unit.turn.date_support import span

PINNED = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)  # 2026-12-01 10:00 Asia/Taipei
TDX_FILE = Path(__file__).resolve().parents[2] / "fixtures" / "tdx" / "changhua-activities.json"
#: The titles of tests/fixtures/tdx/changhua-activities.json.
TDX_TITLES = ("彰化藝術館常設展：八卦山下的城市記憶", "鹿港慶端陽龍舟賽", "田尾公路花園花卉市集")


def routed(text: str, titles=TDX_TITLES):
    return route(text, titles)


@pytest.mark.parametrize("text, area, keyword, title, notes", [
    ("鹿港龍舟賽幾點開始", "鹿港鎮", "龍舟賽", None, ()),
    ("請問 鹿港 龍舟 幾點開始？那邊好停車嗎？門票多少錢", "鹿港鎮", "龍舟", None, ("parking", "no_price")),
    ("鹿港龍舟賽那邊好停車嗎", "鹿港鎮", "龍舟賽", None, ("parking",)),
    ("田尾花卉市集什麼時候結束？誰主辦的", "田尾鄉", "市集", "花卉市集", (NotRecorded(DetailKind.END_TIME), NotRecorded(DetailKind.ORGANISER))),
    ("田尾的花卉市集什麼時候結束", "田尾鄉", "市集", "花卉市集", (NotRecorded(DetailKind.END_TIME),)),
    ("龍舟賽是哪一天", None, "龍舟賽", None, ()),
    # variants
    ("端陽龍舟賽要報名嗎", None, "端陽龍舟賽", None, ("no_registration",)),
    ("城市記憶的展在哪裡", None, "城市記憶", None, ()),
    ("公路花園那邊好停車嗎 花卉市集", None, "市集", "花卉市集", ("parking",)),
])
def test_named_event_is_an_events_search(text, area, keyword, title, notes):
    proposal = routed(text)
    assert proposal.tool == "search_local_events", proposal
    assert proposal.args["area"] == area and proposal.args["keyword"] == keyword
    titles = [note for note in proposal.notes if isinstance(note, TitleHint)]
    assert titles == ([TitleHint(title)] if title else [])
    assert all(note in proposal.notes for note in notes), proposal.notes
    assert Limit.HOURS not in proposal.notes  # 幾點開始: the card's start time, no shop hours line
    assert not any(isinstance(note, Unasked) for note in proposal.notes), proposal.notes


@pytest.mark.parametrize("text", ["鹿港龍舟賽幾點開始", "龍舟賽是哪一天", "員林燈籠展幾點開始", "社頭芭樂祭是哪天"])
def test_named_event_kind_after_a_title_word_is_an_events_search_without_titles(text):
    proposal = routed(text, titles=())
    assert proposal.tool == "search_local_events", proposal


@pytest.mark.parametrize("text, tool", [
    ("八卦山停得下嗎", "show_limits"),  # parking at a place, though a title holds 八卦山
    ("八卦山有素食嗎", "needs_area"),  # a diet word: a shop ask
    ("鹿港有素食嗎", "search_local_places"),
    ("鹿港天后宮幾點開", "ask_search_kind"),  # no title holds 天后宮
    ("溪胡還是員林有素食餐廳", "did_you_mean"),
    ("花潭有素食嗎", "needs_area"),  # 花潭 is said not recognised (unknown_area)
    ("社區發展協會電話", "show_limits"),
    ("週末有活動嗎", "search_local_events"),
    ("彰化縣長是誰", "show_limits"),
    ("我要去賽跑", "show_local_help"),
])
def test_named_event_negatives_keep_their_reading(text, tool):
    assert routed(text).tool == tool
    assert route(text).tool == tool  # the demo snapshot's titles


def test_named_event_no_typo_prompt_for_a_market_beside_a_real_township():
    for text in ("田尾花卉市集什麼時候結束", "溪湖花卉市集什麼時候開始", "北斗花卉市場幾點開"):
        assert routed(text).tool != "did_you_mean", text


@pytest.fixture
def service(base_env):
    service = webhook_with_memory(base_env, FixedClock(PINNED))
    ingest_events(service.store, FileActivitySource(TDX_FILE), now=PINNED)
    return service


@pytest.mark.parametrize("text, said", [
    ("鹿港龍舟賽幾點開始", ["鹿港慶端陽龍舟賽", "08:00"]),
    ("請問 鹿港 龍舟 幾點開始？那邊好停車嗎？門票多少錢", ["鹿港慶端陽龍舟賽", "08:00", "停車"]),
    ("鹿港龍舟賽那邊好停車嗎", ["鹿港慶端陽龍舟賽", "停車"]),
    ("田尾花卉市集什麼時候結束？誰主辦的", ["田尾公路花園花卉市集", "結束時間", "主辦"]),
    ("田尾的花卉市集什麼時候結束", ["田尾公路花園花卉市集", "結束時間"]),
    ("龍舟賽是哪一天", ["鹿港慶端陽龍舟賽"]),
])
def test_named_event_turn_answers_from_the_ingested_snapshot(service, line_standin, text, said):
    words = all_text(reply_messages(service, line_standin, text_event(text)))
    for word in said:
        assert word in words, (word, words)
    for word in ("沒有資料可以回答", "不是彰化縣的鄉鎮名稱", "營業時間", "示範"):
        assert word not in words, (word, words)


# -- leftover words are not reported as if asked; a misspelt township before a date word ---------

@pytest.mark.parametrize("text, days", [
    ("過年期間全彰化有什麼活動", (date(2027, 2, 4), date(2027, 2, 11))),  # the reported example
    ("元宵期間鹿港有活動嗎", span(date(2027, 2, 20))),
    ("全彰化這週末有什麼活動", (date(2026, 12, 5), date(2026, 12, 7))),
    ("聖誕節前後全彰化有活動嗎", span(date(2026, 12, 25))),
])
def test_leftovers_date_span_and_whole_county_are_none(text, days):
    proposal = route(text)
    assert proposal.tool == "search_local_events" and proposal.args["date"].resolve(PINNED.date()) == days, proposal
    assert not any(isinstance(note, (Unasked, NotRecorded)) for note in proposal.notes), proposal.notes


@pytest.mark.parametrize("text, names", [
    ("鹿巷這禮拜有活動嗎", ["鹿港鎮"]),  # the reported example
    ("溪胡這週末有活動嗎", ["溪湖鎮", "溪州鄉"]),
    ("花潭下禮拜有活動嗎", ["花壇鄉"]),
    ("請問員休這個月有活動嗎", ["員林市"]),
])
def test_leftovers_misspelt_township_before_a_date_is_asked(text, names):
    proposal = route(text)
    assert proposal.tool == "did_you_mean", proposal
    assert [choice[0] for choice in proposal.args["choices"]] == names


@pytest.mark.parametrize("text, tool", [
    ("鹿巷活動", "needs_area"),  # said as not recognised, unchanged
    ("阿嬤這禮拜想去走走", "search_local_events"),
    ("今天這禮拜有活動嗎", "search_local_events"),
    ("鹿港這禮拜有活動嗎", "search_local_events"),
    ("社區這週末有活動嗎", "search_local_events"),
    ("花壇這週末好玩嗎", "search_local_events"),
])
def test_leftovers_negatives_keep_their_reading(text, tool):
    assert route(text).tool == tool


def test_leftovers_no_prompt_without_an_ask_in_a_longer_message():
    assert route("二人這禮拜想出去走走").tool != "did_you_mean"


def test_leftovers_bare_misspelt_township_and_date_is_asked_about():
    assert route("鹿巷這禮拜").tool == "did_you_mean"


def test_leftovers_reply_has_no_leftover_line(service, line_standin):
    words = all_text(reply_messages(service, line_standin, text_event("過年期間全彰化有什麼活動")))
    assert "期間全" not in words and "沒有記錄你問的" not in words


def test_a_text_turn_reads_the_events_snapshot_once(base_env, line_standin, monkeypatch):
    # The router's event titles and the events search share one read (one store round trip per turn).
    from shared.turn import engine
    from tests.conftest import FixedClock, reply_messages, text_event
    from tests.memory_support import webhook_with_memory

    reads = []
    real = engine.load_current_snapshot
    monkeypatch.setattr(engine, "load_current_snapshot", lambda store: reads.append(1) or real(store))
    service = webhook_with_memory(base_env, FixedClock(datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)))
    assert reply_messages(service, line_standin, text_event("這週末彰化市有什麼活動？"))
    assert len(reads) == 1
