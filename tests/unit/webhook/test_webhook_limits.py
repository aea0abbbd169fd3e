"""What LOCAL cannot help with, by kind (shared.turn.rules.limits: fraud, stance, off_topic, directory),
as the resident reads it: each message is a signed webhook body through the in-process
``WebhookService``, and the reply is read from the LINE stand-in."""
from __future__ import annotations

import pytest

from tests.conftest import all_text, reply_messages, text_event

#: The directory text: only a public office's phone or address gets it.
DIRECTORY = "我沒有政府機關、公所、學校或其他單位的電話"
#: The neutral line said for politics, elections and religion.
NEUTRAL = "我不表示立場"
#: What LOCAL answers, said for writing, chatting and general knowledge.
WHAT_LOCAL_ANSWERS = "我能查彰化的活動、素食店家，也能幫你把需求轉給公所"
#: How the scam warning opens: it is the first thing a resident reads.
LIMIT_165 = "這聽起來很像詐騙"


def reads(service, standin, text: str) -> str:
    return all_text(reply_messages(service, standin, text_event(text)))


@pytest.mark.parametrize("text", [
    "有人打電話說我中獎要先匯錢", "自稱檢察官要我去領錢", "說我帳戶被盜用要監管帳戶", "假冒健保局",
    "接到一通電話說是法院的要我匯款", "有人傳簡訊說我中獎 要先付手續費", "剛剛有個自稱警察的人叫我去ATM",
    "这是不是诈骗",  # Simplified
    # told in a resident's own words: a fake kidnapping, a relative's "new number", a posed office
    "剛剛有人打電話說我兒子被綁架 要我匯20萬 怎麼辦", "我孫子打電話來說換號碼 要借錢",
    "有人打來說是健保局 說我的卡被盜用 要轉接檢察官", "接到簡訊說我女兒出車禍 要我轉帳",
    "LINE傳來說是我姪子 換號碼了 要我先付錢", "有人打來說我兒子被抓 要付保釋金",
    "電信公司打來說我的門號被冒用 要轉接警察", "銀行來電說我的信用卡被盜刷", "警察打來說我的帳戶被監管",
    "有人打電話說是法院 說我涉案 帳戶要監管",
])
def test_limits_fraud_says_165_and_not_the_directory(webhook_service, line_standin, text):
    words = reads(webhook_service, line_standin, text)
    assert "165 反詐騙專線" in words and "不要匯款" in words and "110" in words
    assert DIRECTORY not in words and NEUTRAL not in words


@pytest.mark.parametrize("text", ["你支持哪個候選人", "該投誰", "哪個宗教比較好", "你覺得哪一黨比較好",
                                  "佛教跟基督教哪個好"])
def test_limits_politics_and_religion_get_the_neutral_line(webhook_service, line_standin, text):
    words = reads(webhook_service, line_standin, text)
    assert NEUTRAL in words
    assert DIRECTORY not in words and "165" not in words and "這個我沒有資料可以回答" not in words


@pytest.mark.parametrize("text", ["幫我寫一首詩", "講個笑話", "美國總統是誰", "日本的首都是哪裡", "幫我寫一封信給孫子"])
def test_limits_writing_chatting_and_knowledge_say_what_local_answers(webhook_service, line_standin, text):
    words = reads(webhook_service, line_standin, text)
    assert WHAT_LOCAL_ANSWERS in words
    assert DIRECTORY not in words and NEUTRAL not in words and "這句我看不太懂" not in words


@pytest.mark.parametrize("text", ["彰化縣政府電話幾號", "花壇鄉公所在哪裡", "警察局電話幾號", "員林戶政事務所地址"])
def test_limits_directory_only_for_an_office(webhook_service, line_standin, text):
    words = reads(webhook_service, line_standin, text)
    assert DIRECTORY in words and "165" not in words


def test_limits_crisis_stays_first_beside_a_scam(webhook_service, line_standin):
    words = reads(webhook_service, line_standin, "我想死 有人打電話說我帳戶被盜用要我匯錢")
    assert words.index("1925") < words.index("165 反詐騙專線")
    assert DIRECTORY not in words


@pytest.mark.parametrize("text", ["鹿港的市集可以轉帳嗎", "市集可以轉帳嗎", "市集可以用LINE付款嗎"])
def test_limits_a_transfer_asked_of_an_event_is_no_scam(webhook_service, line_standin, text):
    words = reads(webhook_service, line_standin, text)
    assert "165" not in words and "詐騙" not in words


def test_limits_an_event_about_scams_is_an_events_answer(webhook_service, line_standin):
    words = reads(webhook_service, line_standin, "有防詐騙講座嗎")
    assert "165 反詐騙專線" not in words and "活動" in words


def test_limits_a_letter_to_the_town_hall_about_a_problem_is_a_request_not_writing(webhook_service, line_standin):
    words = reads(webhook_service, line_standin, "幫我寫一封信給公所反映路燈壞了")
    assert WHAT_LOCAL_ANSWERS not in words and "新需求：" in words


#: What a shop or an organiser would be asked: never said under a scam warning.
ASK_THE_SHOP = ("請先問店家", "主辦單位", "資料沒有記錄")


@pytest.mark.parametrize("text", ["有人打電話叫我去ATM轉帳", "有人打電話叫我去atm轉帳", "有人打電話叫我去ＡＴＭ轉帳",
                                  "有人傳簡訊說我中獎 要先付手續費 可以刷卡嗎"])
def test_limits_a_scam_warning_replaces_every_detail_line(webhook_service, line_standin, text):
    [message] = reply_messages(webhook_service, line_standin, text_event(text))
    first = message["text"].splitlines()[0]
    assert "165 反詐騙專線" in first
    assert not any(words in message["text"] for words in ASK_THE_SHOP)


@pytest.mark.parametrize("text", [
    # the reported stories
    "說我健保卡被盜用 要我刷卡", "有人說我的包裹有毒品", "網路上有人說投資保證賺錢",
    # the common kinds, as a resident tells them: a threat, profit promised, a demand, a script by name
    "剛剛有人打來說我被通緝 要我把錢領出來", "郵局說我的包裹被海關扣留 裡面有違禁品",
    "朋友拉我進一個股票群組 老師帶單說穩賺不賠", "網購客服打來說要幫我解除分期 叫我去ATM",
    "我信用卡被盜刷了怎麼辦", "有個女生打來說猜猜我是誰", "對方要我去超商買遊戲點數",
    "網友說他是美軍 要寄包裹給我 要先付關稅", "說我的帳戶涉及洗錢 會被凍結",
    "LINE上有人說可以幫我投資虛擬貨幣 每個月賺兩成", "有人要我把提款卡寄給他", "有人叫我給他簡訊的驗證碼",
    "說我兒子欠錢被抓 要我拿錢去", "我接到電話說我涉嫌洗錢", "檢察官說要監管我的錢",
])
def test_limits_a_scam_told_in_own_words_gets_165_first(webhook_service, line_standin, text):
    messages = reply_messages(webhook_service, line_standin, text_event(text))
    words = all_text(messages)
    assert len(messages) <= 2
    assert messages[0]["text"].startswith(LIMIT_165)
    assert "110" in words and "不要匯款" in words
    assert not any(line in words for line in ASK_THE_SHOP) and DIRECTORY not in words
    assert "這句我看不太懂" not in words


@pytest.mark.parametrize("text", ["員林有素食店可以刷卡嗎", "活動要轉帳報名嗎", "包裹什麼時候到", "我要去ATM領錢",
                                  "健保卡可以在藥局用嗎", "有反毒宣導活動嗎", "彰化有投資理財講座嗎",
                                  "那家店關起來了嗎", "市集要先付錢嗎", "公所內線電話幾號", "有老師帶小朋友的活動嗎",
                                  "可以讓我刷卡嗎"])
def test_limits_paying_a_shop_or_a_parcel_asked_is_no_scam(webhook_service, line_standin, text):
    words = reads(webhook_service, line_standin, text)
    assert "165" not in words and "詐騙" not in words


#: What only the suicide-prevention text says: never said for distress alone.
SUICIDE_TEXT = ("不想活的念頭", "傷害自己")
#: The search menu's buttons: never under a safety reply.
SHOPPING_CHIPS = ("查活動", "查蔬食")


def quick_reply_labels(message: dict) -> list[str]:
    return [item["action"]["label"] for item in (message.get("quickReply") or {}).get("items", [])]


@pytest.mark.parametrize("text", ["心情不好", "最近心情很低落", "壓力好大 我快崩潰了", "好孤單 沒人陪我"])
def test_limits_distress_gets_a_gentle_line_with_1925(webhook_service, line_standin, text):
    [message] = reply_messages(webhook_service, line_standin, text_event(text))
    assert "1925 安心專線" in message["text"] and "24 小時" in message["text"]
    assert not any(words in message["text"] for words in SUICIDE_TEXT)
    assert len(message["text"].splitlines()) <= 2
    labels = quick_reply_labels(message)
    assert any("1925" in label for label in labels) and not set(SHOPPING_CHIPS) & set(labels)


@pytest.mark.parametrize("text", ["心情不好 不想活了", "我想死", "我跌倒了起不來",
                                  "我不想活了 有人打電話說我帳戶被盜用要我匯錢"])
def test_limits_a_safety_reply_offers_numbers_to_call_not_the_search_menu(webhook_service, line_standin, text):
    [message] = reply_messages(webhook_service, line_standin, text_event(text))
    labels = quick_reply_labels(message)
    assert "119" in message["text"] and any("119" in label for label in labels)
    assert not set(SHOPPING_CHIPS) & set(labels)
    uris = [item["action"].get("uri") for item in message["quickReply"]["items"]]
    assert all(uri and uri.startswith("tel:") for uri in uris)


def test_limits_a_scam_told_in_a_request_is_warned_of_first_and_the_card_still_shown(webhook_service, line_standin):
    messages = reply_messages(webhook_service, line_standin, text_event("新需求：有人打電話叫我去ATM轉帳"))
    assert len(messages) == 2
    assert messages[0]["text"].startswith(LIMIT_165)
    assert "有人打電話叫我去ATM轉帳" in all_text(messages[1:])  # the confirmation card, as before
