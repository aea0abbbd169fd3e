"""The offline router: reads a resident's free text with fixed rules, deterministically and without a
model. It is the embedded default and the model's fallback. It only proposes; it never writes.

Public surface: ``route(text) -> Proposal(tool, args, notes)``; the turn engine executes it.
Text is read in its reading form (shared.turn.text: NFKC width, OpenCC Simplified → Traditional,
case-folded Latin). Dates come from shared.turn.dates, townships from shared.areas, diet words
from shared.diets; the rest of the vocabulary below is LOCAL's own.

Rules, in order (issue 9; DESIGN §5, §7; newcomer trial 1):
0. suicidal intent, self-harm or despair in any phrasing (shared.turn.crisis: 想去死, 不想再撐了,
   自我了斷 …) or an emergency (跌倒了起不來) → ``show_limits`` (``crisis`` / ``emergency``) before anything;
1. a greeting or thanks and nothing else → ``greeting`` / ``thanks``; ok / 收到 → ``ack``; what LOCAL
   is or can do (你們是誰) → ``greeting``;
2. a question about the user's request (服務單進度, 我的服務單) → ``handoff_status``; how to cancel
   one → ``handoff_cancel_help``; what LOCAL keeps about the user (我的資料, 忘記我) → ``privacy_info``;
   asking to forget the remembered diet in words (以後不用記了，刪掉; 把我吃奶素的紀錄忘掉) → ``privacy_info``
   with the note ``forget`` (the reply leads with the 忘記我的飲食偏好 button; words alone delete nothing);
   status may name the request by its subject (剛剛那個水溝蓋的 處理了沒); a privacy or no-memory remark beside a
   search (但不要存我的資料喔 彰化市有嗎) keeps the search, with the note ``not_saved`` / ``privacy_asked`` (trial 5);
3. health, transport, parking (停車, 車子要停哪裡, 好停嗎), shuttles and weather → ``show_limits`` (never a search); a place
   outside Changhua County (台中) → ``show_limits`` (``elsewhere``); but an event, shop or diet ask in
   another clause (鹿港有素食店嗎？那邊停車方便嗎) is routed on its own, with the limits as notes (trial 3 finding 6);
   a complaint about 記住 (我又沒說要你記住) → ``ack`` with the note ``not_saved`` (trial 3 finding 9);
4. a shop named by its catalog name or alias (John手作蔬食, 和米) → ``find_place`` (an events ask in another
   clause is the note ``also_events``; a limit beside it, 叫計程車到和米素食, is a note too: trial 4); with a diet asked
   (哪間有全素) the note ``diet_check:<type>`` makes the reply say, per named shop, what the catalog lists;
   a shop name with a typo (合米素食, jonh手作; shared.places.search.place_close_to, difflib) → ``did_you_mean``
   (「你是說「和米素食」嗎？」 with a button that sends the message again, spelt as the catalog does); so is a
   misspelt township where a place is clearly meant (溪胡還是員林, 溪胡鎮: township_typo; ``choices`` per township;
   trial 5 finding 13);
5. a government office, school or other body, or a phone number / address / website with no shop,
   diet or event word (彰化縣政府電話幾號) → ``show_limits`` (``directory``);
6. an events ask and a shop ask in one message (週末彰化市有活動嗎？順便推薦附近的素食店) → the first
   ask is searched on its own words, the second is a note (``also_places:<township>/<type>`` or
   ``also_events:<township>/<date>``) the reply offers as a button: it never filters the first; two questions
   with only a space between (员林有没有纯素的店 周末有活动吗) are two asks too (trial 5 finding 6); two asks of
   one kind, each with conditions of its own (聖誕節員林有活動嗎？還有12/5到12/7全彰化的市集), are never merged:
   the first is searched, each later one is the note ``second_events:<query>`` / ``second_places:<query>``
   the reply names and offers as a button (trial 8 F3);
7. an event word, an event topic, kind or title word (市集, 長輩, 講座, 音樂表演, 展覽, 老街散步) or a date without a diet or
   place word → ``search_local_events`` (keyword = the topics, AND; two joined by 跟 / 或 are either: ``市集|親子``;
   an unread date → ``unreadable``);
   who asks (阿嬤想問, 我媽要我問) is not a topic;
   a named event (event_named: a piece of a title of the current events snapshot, 鹿港龍舟賽 → 龍舟賽, or an event
   kind after a title-like word, 燈籠展) is an events ask too, said with a limit in one clause (鹿港龍舟賽那邊好停車嗎)
   as well; never a shop hours question, an unknown subject or a township typo beside a real township (trial 7 F1);
8. a diet word, a place word or a township → ``search_local_places``; 全彰化 (整個彰化 …) → every township
   (area ``全彰化``); no township → ``needs_area``;
9. booking, opening hours, prices or registration with nothing to search → ``show_limits``;
   A township in a bare follow-up (那鹿港呢) → ``ask_search_kind`` (events or shops? the router keeps no state;
   the engine's buttons keep the conditions of the resident's last search: shared.turn.follow_up, trial 8 M1);
10. asking for a person without the 新需求 form (我想留言給你們, 我要找人幫忙) → ``handoff_info``; thanks or
   a greeting inside other words → ``thanks`` / ``greeting``; anything else → ``show_local_help``.
Notes carry what the reply must also say: a limit asked beside a search (``no_booking``,
``no_hours``, ``no_price``, ``no_registration``, ``no_pets``, ``no_bring``, ``no_distance``; and the hard
limits ``parking``, ``transport``, ``medical``, ``shuttle``, ``weather``, ``taxi`` when another clause is a
search), a kind of restaurant not recorded (``unrecorded_kind:自助餐``), a title hint for the events
search (``title:冬季蔬果``), a bare 彰化 read as 彰化市 (``changhua_as_city``), 不用記 (``not_saved``), a finer diet the catalog does not record
(``unrecorded_diet:五辛素``), townships asked about but not searched (``other_areas:彰化市``), other
shops named (``other_places:<name>``), a plain 素食 that names no finer type (``generic_diet``: a
remembered 全素 fills it) and a diet that is someone else's (``diet_of_other``: 我媽媽吃全素; never
offered as the user's memory).
Last, ``route`` reads the questions the proposal does not answer (shared.turn.details; trial 5): a detail
the data does not hold (要帶水嗎, 可以刷卡嗎, 狗可以去嗎) → ``detail:<kind>``; any other question clause beside a
search → ``unasked:<words>``; a suitability question (老人家可以去嗎) is no 長輩 filter; 掛號 → ``no_appointment``.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import heapq
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from shared.areas import COUNTY, TOWNSHIPS, WHOLE_COUNTY, match_area, townships_in, vague_words_in
from shared.diets import DIET_WORDS, UNRECORDED_DIETS
from shared.handoff.drafts import request_text_of
from shared.places.search import place_aliases, place_close_to, places_named_in
from shared.turn.ask import (
    EVENT_ONLY_DETAILS,
    DetailKind,
    DietCheck,
    EventsSearch,
    Flag,
    Limit,
    Note,
    NotRecorded,
    OtherAreas,
    OtherPlace,
    PlacesSearch,
    PrivacyTopic,
    SecondAsk,
    TitleHint,
    Unasked,
    UnknownTownship,
    UnrecordedDiet,
    UnrecordedKind,
    words_of,
)
from shared.turn.crisis import is_crisis
from shared.turn.dates import read_date
from shared.turn.datespec import DateSpec, Unreadable, date_arg, encoded
from shared.turn.details import read_details, suitability_people
from shared.turn.text import reading_form

__all__ = ["DIET_WORDS", "EVENT_WORDS", "PLACE_WORDS", "Proposal", "date_in", "diet_in",
           "is_emergency", "read_diet", "route"]

#: Words that ask for events. Source: DESIGN §5; issue 9 item 1.
EVENT_WORDS: tuple[str, ...] = (
    "活動", "市集", "展覽", "講座", "走讀", "表演", "節目", "課程", "好玩", "去哪玩", "玩什麼", "音樂會",
    "演唱", "祭典", "廟會", "踩街", "晚會", "體驗營", "演講", "工作坊", "研習", "電影", "比賽", "路跑", "燈會",
    "特展", "畫展",
    # in English (What events are there in Huatan?): trial 8 finding 7 (read after case-folding)
    "event", "activit", "festival", "exhibition", "concert", "workshop",
)
#: Event topics: a word residents use → the word the snapshot's titles and tags use. Every topic
#: found becomes one keyword term (terms are ANDed over title + tags).
EVENT_TOPICS: tuple[tuple[str, str], ...] = (
    ("市集", "市集"), ("擺攤", "市集"),
    ("親子", "親子"), ("小朋友", "親子"), ("小孩", "親子"), ("兒童", "親子"), ("孩子", "親子"), ("帶孩子", "親子"),
    ("長輩", "長輩"), ("老人", "長輩"), ("銀髮", "長輩"), ("長者", "長輩"), ("阿公", "長輩"), ("阿嬤", "長輩"),
    ("導覽", "導覽"), ("走讀", "導覽"), ("健走", "健走"), ("步道", "健走"), ("爬山", "健走"),
    ("散步", "散步"), ("老街", "老街"), ("健康操", "健康操"), ("手作", "手作"), ("diy", "手作"),
    ("春聯", "春聯"), ("書法", "書法"), ("繪本", "繪本"), ("共讀", "共讀"), ("說故事", "繪本"),
    ("茉莉", "茉莉"), ("賞花", "花卉"), ("花田", "花田"), ("小農", "小農"), ("文化", "文化"),
    ("室內", "室內"), ("戶外", "戶外"),
    # the kind of event asked for (講座, 音樂表演, 展覽 …) filters too, or is said unmatched (trial 2 findings 1–2)
    ("講座", "講座"), ("演講", "講座"), ("研習", "研習"), ("課程", "課程"), ("上課", "課程"), ("工作坊", "工作坊"),
    ("音樂", "音樂"), ("演唱", "音樂"), ("唱歌", "音樂"), ("合唱", "音樂"), ("表演", "表演"), ("演出", "表演"),
    ("戲劇", "戲劇"), ("布袋戲", "戲劇"), ("歌仔戲", "戲劇"), ("舞蹈", "舞蹈"), ("跳舞", "舞蹈"),
    ("展覽", "展覽"), ("畫展", "展覽"), ("特展", "展覽"), ("展出", "展覽"), ("電影", "電影"), ("放映", "電影"),
    ("祭典", "祭典"), ("廟會", "廟會"), ("遶境", "遶境"), ("踩街", "踩街"), ("晚會", "晚會"), ("體驗營", "體驗營"),
    ("比賽", "比賽"), ("路跑", "路跑"), ("馬拉松", "路跑"), ("煙火", "煙火"), ("燈會", "燈會"),
)
#: Diet words are also event topics inside an events question (有蔬食的市集嗎).
_EVENT_DIET_TOPICS: tuple[tuple[str, str], ...] = (("蔬食", "蔬食"), ("素食", "蔬食"), ("吃素", "蔬食"))
PLACE_WORDS: tuple[str, ...] = ("店", "吃", "餐廳", "餐", "小吃", "料理", "便當", "麵", "飯", "早午餐", "咖啡")

#: What LOCAL has no data or tool for. Each kind: the words that ask for it.
#: Crisis (suicidal intent, self-harm, despair) is read by shared.turn.crisis.is_crisis, first.
LIMITS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("emergency", ("119", "救護車", "昏倒", "暈倒", "呼吸困難", "胸痛", "胸口痛", "胸口好痛", "中風", "救命",
                   "跌倒", "摔倒", "跌倒了起不來", "爬不起來", "站不起來", "叫不醒", "沒呼吸", "沒有呼吸", "沒意識")),
    ("medical", ("頭痛", "頭很痛", "肚子痛", "牙痛", "痛", "藥", "醫生", "醫師", "醫院", "診所", "看病", "看醫生",
                 "發燒", "感冒", "咳嗽", "不舒服", "掛號", "急診", "受傷", "過敏", "血壓", "中暑", "頭暈", "拉肚子",
                 "血糖", "糖尿", "膽固醇", "洗腎", "痛風", "懷孕", "生病", "吃藥", "想吐", "嘔吐")),
    ("transport", ("公車", "客運", "火車", "臺鐵", "台鐵", "高鐵", "捷運", "班次", "幾點有車", "有車嗎", "末班", "首班",
                   "站牌", "搭車", "坐車", "交通", "怎麼去", "怎麼到", "怎麼走", "路線")),
    ("parking", ("停車", "車位")),
    ("taxi", ("計程車", "叫車", "叫一台", "uber", "小黃")),
    ("shuttle", ("接駁",)),
    ("weather", ("天氣", "下雨", "會不會雨", "氣溫", "溫度", "颱風", "冷不冷", "熱不熱", "空氣品質", "紫外線", "會冷",
                 "會熱", "冷嗎", "熱嗎", "帶傘", "穿什麼",
                 # trial 4 finding 4: 會不會很冷 要帶外套嗎
                 "會不會很冷", "會不會冷", "會不會很熱", "會不會熱", "很冷嗎", "很熱嗎", "外套", "雨傘", "幾度")),
)
#: Parking said without 停車 (車子要停哪裡, 好停嗎, 機車可以停在哪). Source: trial 2 finding 10.
_PARKING = re.compile(r"(?:車子?|機車|摩托車|汽車|腳踏車|單車)[^，。？?]{0,4}停|停(?:在|去)?(?:哪|那)(?:裡|邊|兒)?"
                      r"|好不好停|好停|難停|停得(?:下|到)|停放|哪(?:裡|邊)(?:可以|能)停")
#: Getting somewhere, said without a transport word (去鹿港要坐什麼車, 開車要多久, 怎麼過去).
_TRAVEL = re.compile(r"(?:坐|搭|開|騎|轉)[^，。？?]{0,3}車|怎麼(?:過去|前往|抵達)|車程|要開多久|多遠")

#: Limits that may sit beside a search: the search runs and the reply says the limit too.
SIDE_LIMITS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("no_booking", ("訂位", "預約", "預訂", "訂餐", "訂桌", "幫我訂", "訂兩", "訂一", "外送")),
    ("no_hours", ("幾點開", "幾點關", "開到幾點", "營業", "有開", "開著", "開門", "公休", "休息嗎", "現在開",
                  "還開", "幾點打烊", "打烊")),
    ("no_price", ("多少錢", "價格", "價錢", "費用", "收費", "免費", "要錢", "幾塊", "貴不貴", "便宜", "菜單", "門票",
                  "票價", "入場費", "報名費")),
    ("no_registration", ("報名",)),
    # trial 4 finding 3 and minors: pets, what to bring, distance
    ("no_pets", ("帶狗", "帶貓", "寵物", "毛小孩", "狗狗", "狗可以", "貓可以", "牽狗")),
)
#: Asking what to bring or prepare for an event (要帶什麼, 要自己帶毛筆嗎): not in the data. Not bringing a
#: person or a pet (帶小朋友, 帶狗), nor a coat (the weather). Source: trial 4 finding 8 and minor.
_BRING = re.compile(r"(?:要|需要|得|該|要不要)(?:自己)?(?:帶|準備|自備)"
                    r"(?!小朋友|小孩|孩子|孫|狗|貓|寵物|長輩|阿公|阿嬤|爸|媽|家人|朋友|外套|傘|雨傘)"
                    r"|帶什麼|帶啥|準備什麼|準備啥|自備")
#: Asking about the evening (今晚有什麼活動, 明晚, 晚上): the events data has start times only, so a day's
#: list may hold events that are over by then; said beside an events answer (trial 8 finding 11).
#: Not 晚安 / 晚上好 (greetings) nor 昨晚 (the past).
_EVENING = re.compile(r"今晚|明晚|今夜|晚上(?!好)|晚間|夜間|傍晚")
#: Asking for the nearest shop or a distance (最近的是哪間, 離我最近, 距離多遠): no map data.
_DISTANCE = re.compile(r"最近的(?:是)?(?:哪|那|一)?(?:間|家|個)|最近的[^，。？?]{0,3}(?:店|餐廳)|離[^，。？?]{0,4}最近|距離|多近|最靠近")

_GREETINGS = ("你好", "您好", "哈囉", "哈摟", "嗨", "hi", "hello", "hey", "早安", "午安", "晚安", "安安", "在嗎",
              "有人嗎", "嘿", "早", "早上好", "午安好", "下午好", "晚上好", "大家好",
              # season's greetings: a greeting, not an events question about the holiday (聖誕快樂)
              "聖誕快樂", "耶誕快樂", "聖誕節快樂", "新年快樂", "新春快樂", "元旦快樂", "春節快樂", "過年好", "恭喜發財",
              "中秋快樂", "中秋節快樂", "端午快樂", "端午節快樂", "佳節愉快", "節日快樂", "平安夜快樂", "情人節快樂",
              "母親節快樂", "父親節快樂", "merry christmas", "merry xmas", "happy new year", "happy holidays")
#: Asking to forget what was remembered, in any phrasing (以後不用記吃素的事了，刪掉; 把我吃奶素的紀錄忘掉;
#: 不要再記我吃素): the forget offer (privacy_info with 忘記我的飲食偏好), never a thanks or a shop search.
#: Source: trial 2 findings 4–5.
_MEMORY_NOUN = r"(?:記住|記錄|紀錄|偏好|設定|素別|(?:我|你)(?:記|存)(?:住)?的)"
_DIET_NOUN = r"(?:飲食|吃素|素食|素的|全素|奶素|蛋奶素|蔬食)"
_FORGET = re.compile(
    rf"(?:刪掉|刪除|刪了|忘掉|忘記|忘了|清掉|清除|移除|拿掉)[^，。？?]{{0,6}}(?:{_MEMORY_NOUN}|{_DIET_NOUN})"
    rf"|(?:取消|撤銷|停用|停止使用|(?:不要|別|不用|不必)再(?:用|套用?|幫我用))[^，。？?]{{0,4}}{_MEMORY_NOUN}"
    # trial 3 finding 10: 我記的那個素別不要用了, 記住的偏好別再套了
    rf"|{_MEMORY_NOUN}[^，。？?]{{0,6}}(?:不要|別|不用|不必)再?(?:用|套用?)了?"
    rf"|{_MEMORY_NOUN}[^，。？?]{{0,8}}(?:刪掉|刪除|刪了|忘掉|忘記|忘了|清掉|清除|移除|拿掉|取消|不要了|不用了|別記了)"
    rf"|{_DIET_NOUN}[^，。？?]{{0,6}}(?:刪掉|刪除|清掉|清除|忘掉)"
    r"|(?:以後|之後|從今以後|往後|現在起)?(?:都)?(?:不要|不用|別|不必|不需要)再?(?:幫我|替我|你)?(?:記|存|套用|用我的)"
    r"[^，。？?]{0,8}(?:了|啦|囉)|(?:以後|之後|往後|從今以後|現在起)(?:都)?(?:不要|不用|別|不必|不需要)再?(?:幫我|替我|你)?(?:記|存)"
    r"|(?:不要|不用|別|不必)再(?:幫我|替我|你)?(?:記|存)|不想(?:再)?(?:被)?(?:你)?(?:記住|記錄|記)|(?:刪掉|刪除|清掉|忘掉)(?:吧|啦|好了)?$")
#: Not about the remembered diet: the user's request (取消服務單) or a search (不用記 員林有素食嗎 stays a search).
_FORGET_EXCEPT = re.compile(r"服務單|需求|申請|單子|留言|(?:別|不要|不能|不可以|記得|不准)忘")
#: Asking not to be remembered, on its own (不用記我吃素): nothing is stored, so it is acknowledged.
_NO_MEMORY = re.compile(r"(?:不要|不用|別|不必|先不要)(?:幫我|替我|你)?(?:記|存)")
#: A short statement of one's own diet and nothing else (我吃素, 我吃全素, 我是素食者, 我是吃素的喔): it
#: says something about the user, so the picker may offer to remember it (``own_diet`` note); a bare
#: word (素食, 全素, 蛋奶素) states nothing about the user and never does. Read on the compact
#: reading form. Source: DESIGN §6; issue 9 item 11; trial 8 finding (a bare diet word was a dead end).
OWN_DIET_STATEMENT = re.compile(
    r"^(?:我們家|我們|我家|我自己|我本身|我)(?:是|都是|都|也|也是|平常都?|一直都?|現在都?|有在|固定|本身)?(?:吃)?"
    r"(?:素食|蔬食|全素|純素|蛋奶素|奶蛋素|奶素|素|vegan)(?:的)?(?:人|者)?"
    r"(?:喔|哦|啦|耶|唷|欸|呢|啊|嘿|捏)?[。.!！~～]*$", re.IGNORECASE)
#: Saying one never asked to be remembered, or complaining about the offer (我又沒說要你記住 幹嘛一直問,
#: 誰叫你記住的): never an offer to remember; the reply says nothing is kept without 同意記住.
#: shared.memory.phrases reads it as no request. Source: trial 3 finding 9.
NOT_ASKED_TO_REMEMBER = re.compile(
    r"(?:沒|沒有|又沒|並沒有|不是|又不是)(?:說|叫|要|請|讓|拜託)(?:要|過)?(?:你|妳|你們)?(?:幫我)?(?:記|存)"
    r"|誰(?:叫|要|讓|請)(?:你|妳|你們)(?:幫我)?(?:記|存)|幹嘛(?:要|一直|又|老是)?(?:幫我)?(?:記|存)"
    r"|(?:幹嘛|為什麼|為何)(?:一直|又|老是)?(?:問|叫)我?(?:要不要)?(?:記|存)")
_THANKS = ("謝謝你", "謝謝您", "謝謝", "謝啦", "謝了", "感謝", "多謝", "感恩", "3q", "thx", "thanks", "thank you",
           "辛苦了", "讚")
_FILLER = re.compile(r"[\s好的喔哦啊呀啦了嗯恩耶欸唷囉嘍你您們大家ok!?！？。，,.~～…:：)(（）👍🙏😊❤️]+")

_STATUS = re.compile(r"服務單|進度|我的需求|我的申請|申請(?:狀態|結果)|處理到哪|有人處理|受理了|登記了嗎"
                     # trial 2 finding 11: 單子現在怎樣了, 我反映的事情處理好了嗎, 我的案子怎麼樣了
                     r"|單子|我的單|(?:需求|申請|案子|案件|反映的?(?:事情?|問題)?|反應的?(?:事情?|問題)|留言|詢問)"
                     r"[^，。？?]{0,4}(?:怎樣|怎麼樣|如何|處理(?:好|了|完)|有(?:沒有)?(?:人)?(?:回|處理|看)|還沒|到哪|進行)"
                     r"|有(?:沒有)?人(?:回覆|回我|看到|接手)|(?:什麼時候|多久)(?:會)?(?:有人)?(?:處理|回覆|聯絡)"
                     # trial 4 finding 7: 我剛剛報的冷氣那件 有人看了沒
                     r"|(?:報|反映|反應|申請|登記|送出?|留)的[^，。？?]{0,8}(?:那件|那個|那筆|事情?)"
                     r"|有(?:沒有)?人(?:看了?|理|處理)(?:沒|嗎|了沒|了嗎)"
                     # trial 7 F6 (negatives of a create sentence): 我上次開的單呢, 幫我開的單處理了沒
                     r"|(?:開|建立?|填|送|留)的(?:服務)?單(?![位車獨純身人點品據字])")
#: The user's own earlier request named by its subject or by when it was sent (剛剛那個水溝蓋的, 我報的路燈,
#: 上次那件), then a progress word (處理了沒, 好了沒, 有人看了沒, 進度): the status reply. Source: trial 5 finding 11.
_OWN_REQUEST_REF = (r"(?:(?:剛剛|剛才|稍早|上次|上回|之前|前幾天|前天|昨天|那天|早上)(?:我)?(?:(?:送|報|反映|反應|說|講|問|申請|登記|留)的?)?"
                    r"(?:那|這)?(?:個|件|筆|張|份|次)?"
                    r"|我(?:剛剛|剛才|之前|上次|昨天)?(?:報|反映|反應|申請|登記|送出?|留|說|講)(?:的|過的)"
                    r"|(?:那|這)(?:個|件|筆|張)[^，。？?]{0,8}(?:的事|的問題|的單))")
_PROGRESS = (r"(?:處理|修理?|弄|辦|做|解決)(?:好|完|掉)?了?(?:沒有?|嗎|了沒|了嗎)|(?:好|修好|弄好)了?(?:沒有?|嗎)"
             r"|有(?:沒有)?人(?:看|理|處理|來|回|管)(?:過)?了?(?:沒有?|嗎)|進度|怎麼樣了|怎樣了|如何了|有下文|有消息|有回音"
             r"|結果(?:呢|如何)|還沒(?:好|處理|修|來)")
_STATUS_BY_SUBJECT = re.compile(rf"{_OWN_REQUEST_REF}[^，。？?]{{0,12}}?(?:{_PROGRESS})")
_CANCEL_VERB = r"(?:取消|撤回|撤銷|撤掉|撤了|撤除|撤下|不要了|不用了|作廢|收回|抽回|刪掉|刪除|刪了|拿掉)"
_CANCEL = re.compile(r"取消|撤回|不要了")
_CANCEL_ANY = re.compile(_CANCEL_VERB)
#: The user's request, said without 服務單 (那個單, 我剛剛送出的需求, 我的申請).
_REQUEST_NOUN = (r"(?:服務單|單子|(?:那|這|我的|剛剛的|剛才的|之前的|上次的)(?:個|張|筆|份)?單(?![位車獨純身人點品])"
                 r"|需求|服務詢問|申請|登記|案子|案件|留言|送出)")
#: Cancelling a request in any phrasing (我想取消我剛剛送出的需求, 算了 那個單幫我撤掉, 服務單不要了).
#: Source: trial 3 finding 7.
_CANCEL_REQUEST = re.compile(rf"{_CANCEL_VERB}[^，。？?]{{0,8}}{_REQUEST_NOUN}|{_REQUEST_NOUN}[^，。？?]{{0,8}}{_CANCEL_VERB}")
#: Not cancelling (我不是要取消服務單，只是想看進度): a status question.
_NOT_CANCEL = re.compile(r"(?:不是要|不要|別|不用|沒有要|沒要|不想)(?:幫我)?(?:取消|撤)")
#: Asking for a person, said without the 新需求 form (我想留言給你們, 找真人). Source: issue 9 item 10.
_HANDOFF_INFO = re.compile(r"留言|找真人|真人|客服|人工|聯絡你們|聯繫你們|工作人員|志工|找人|有人(?:可以|能)?幫|"
                           r"(?:需要|想要|想請|請)(?:人|你們|有人)?(?:幫忙|協助|幫我)|幫幫我|求助|求救|請人幫")
#: Asking for a person to act, or reporting something for a person to fix (trial 1 finding 11):
#: answered with the 新需求 form before any directory or search rule.
_PERSON_ASK = re.compile(r"請人|專人|你們的人|(?:聯絡|聯繫|打給|打電話給|回電給?)我|回電|投訴|申訴|陳情|客訴|檢舉|報修"
                         r"|反映|坑洞|凹洞|(?:燈|路|水溝|水管|馬路|號誌|紅綠燈|樹)[^，。？?]{0,4}(?:壞|破|堵|斷|倒|不亮|積水)")
#: Asking what LOCAL is or can do: answered like a greeting (what it can do, and the menu).
_ABOUT = re.compile(r"^(?:請問)?(?:你|妳|你們)(?:是誰|是什麼|會什麼|能做什麼|可以做什麼|會做什麼)|怎麼用|怎麼使用|有什麼功能")
_ACK = ("ok", "okay", "好", "好的", "了解", "收到", "知道了", "嗯", "恩", "好喔", "好哦", "喔", "哦", "👌", "👍")
_MORE_THANKS = ("很有幫助", "幫大忙", "太好了", "好棒", "太棒了", "辛苦")
#: Places outside Changhua County: LOCAL has no data there (台中有素食嗎).
_ELSEWHERE = ("臺北", "台北", "新北", "桃園", "新竹", "苗栗", "臺中", "台中", "南投", "雲林", "嘉義", "臺南", "台南",
              "高雄", "屏東", "宜蘭", "花蓮", "臺東", "台東", "基隆", "澎湖", "金門", "馬祖")
_PRIVACY = re.compile(r"我的偏好|偏好是什麼|記住了什麼|忘記我|刪除我|刪掉我|清除我|我的資料|我的個資|個資|隱私|刪除資料|刪除紀錄|聊天紀錄|對話紀錄|"
                      r"我說的話|你(?:們)?(?:會)?(?:記得|知道|存了|保存|記錄|紀錄)(?:我|了)"
                      # trial 4 finding 15: 我的飲食習慣你們還有存著嗎
                      r"|(?:你|你們)[^，。？?]{0,4}(?:存著|存了|還存|有存|保存|留著|記著|還記得)"
                      r"|(?:飲食習慣|飲食偏好|我吃什麼素)[^，。？?]{0,6}(?:存|留|記錄|紀錄)(?:著|了|起來)?")


#: Asking whether the user's data goes to others (你們會不會把我的電話跟資料給別人): the privacy answer,
#: which says who sees a request. Source: trial 4 finding 6.
_SHARING = re.compile(r"(?:資料|電話|號碼|名字|個資|飲食習慣|飲食偏好)[^，。？?]{0,6}"
                      r"(?:給別人|給其他人|給別的|外流|洩漏|外洩|賣給|賣掉|分享給|公開|給誰|被誰看|誰看得到)"
                      r"|(?:賣|外流|洩漏|外洩|分享|交給別人)[^，。？?]{0,4}(?:我的)?(?:資料|個資|電話)"
                      # whether LOCAL has the user's phone (你們有我的電話嗎): it keeps none
                      r"|(?:你們|你)(?:有|存了?|知道|記得)(?:我的)(?:電話|手機)|我的(?:電話|手機)(?:號碼)?(?:你們|你)(?:有|存|知道)")


@dataclass(frozen=True)
class Proposal:
    """A proposed action: one read-only tool call, or a fixed reply.

    Attributes:
        tool: ``search_local_places``, ``search_local_events``, ``needs_area``, ``find_place``,
            ``show_limits``, ``handoff_status``, ``handoff_cancel_help``, ``handoff_info``,
            ``privacy_info``, ``greeting``, ``thanks``, ``ack``, ``ask_search_kind``, ``did_you_mean`` or
            ``show_local_help``.
        args: the tool's arguments (strings, lists or None). ``needs_area`` carries ``kind`` and
            ``vague`` (True when the user said 附近 / 彰化 / 彰化縣: the reply explains why a township is
            needed, naming only the words said, ``vague_words`` from ``shared.areas.vague_words_in``);
            ``show_limits`` carries ``kinds``; ``find_place`` carries ``name`` and ``area``;
            ``did_you_mean`` carries ``name``, ``area`` and ``text`` (the message with the catalog's spelling).
        source: ``offline_router``, ``postback``, ``fixed`` or ``model``.
        notes: what the reply must say besides the result (see the module docstring).
    """

    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    source: str = "offline_router"
    notes: tuple[Note, ...] = ()


#: A negated diet word (不吃素, 沒有吃素, 不是吃素, 不吃全素, 非素食, 不用素, 不想吃蔬食 …): a negation,
#: at most one helper word, at most one verb, then the diet word. Source: issue 4 follow-up.
_NEGATED_DIET = re.compile(
    r"(?:不|沒有|沒|非|別|無須|無需|毋須)"
    r"(?:一定要|一定|需要|是|要|用|想|會|再|在|必|太|曾)?"
    r"(?:幫我|替我|給我|幫忙)?(?:再)?"
    r"(?:吃|找|用|食|查)?"
    r"(?:" + "|".join(re.escape(word) for word, diet in DIET_WORDS
                      if diet != "any" and not word.startswith("不") and not word.isascii()) + r")")

#: Every diet word, the finer unrecorded ones included, longest first (不吃蛋的素 before 素).
_ALL_DIET_WORDS: tuple[tuple[str, str | None, bool], ...] = tuple(sorted(
    [(word, diet, False) for word, diet in DIET_WORDS] + [(word, diet, True) for word, diet in UNRECORDED_DIETS],
    key=lambda entry: -len(entry[0])))


def _unnegated(text: str) -> tuple[str, bool]:
    """``text`` with negated diet words blanked out, and whether there was one.

    An A-not-A question (有沒有素食, 是不是素食, 要不要吃素) asks about the diet: it is not a negation.
    """
    kept, negated, at = [], False, 0
    for match in _NEGATED_DIET.finditer(text):
        start = match.start()
        if 0 < start < len(text) - 1 and text[start - 1] == text[start + 1]:
            continue  # X不X / X沒X
        kept.append(text[at:start])
        kept.append("｜")
        negated, at = True, match.end()
    kept.append(text[at:])
    return "".join(kept), negated


#: The official (Hanyu Pinyin) English names of Changhua's 26 townships, case-folded; ``changhua`` alone
#: is the county or the city, so it reads as the vague 彰化. Source: Changhua County Government's
#: English site (https://www.chcg.gov.tw/eng/); trial 2 minor finding (changhua city unread).
_ENGLISH_TOWNSHIPS: tuple[tuple[str, str], ...] = (
    ("changhua city", "彰化市"), ("changhua county", "彰化縣"), ("lukang", "鹿港鎮"), ("hemei", "和美鎮"),
    ("xianxi", "線西鄉"), ("shengang", "伸港鄉"), ("fuxing", "福興鄉"), ("xiushui", "秀水鄉"), ("huatan", "花壇鄉"),
    ("fenyuan", "芬園鄉"), ("yuanlin", "員林市"), ("xihu", "溪湖鎮"), ("tianzhong", "田中鎮"), ("dacun", "大村鄉"),
    ("puyan", "埔鹽鄉"), ("puxin", "埔心鄉"), ("yongjing", "永靖鄉"), ("shetou", "社頭鄉"), ("ershui", "二水鄉"),
    ("beidou", "北斗鎮"), ("erlin", "二林鎮"), ("tianwei", "田尾鄉"), ("pitou", "埤頭鄉"), ("fangyuan", "芳苑鄉"),
    ("dacheng", "大城鄉"), ("zhutang", "竹塘鄉"), ("xizhou", "溪州鄉"), ("changhua", "彰化"),
)
_ENGLISH_PLACE = re.compile(
    r"(?<![a-z])(" + "|".join(re.escape(name) for name, _ in _ENGLISH_TOWNSHIPS) + r")"
    r"(?:\s+(?:city|township|town))?(?![a-z])")


def _english_places(t: str) -> str:
    """``t`` with English township names written in Chinese (changhua city → 彰化市, Lukang → 鹿港鎮)."""
    names = dict(_ENGLISH_TOWNSHIPS)
    return _ENGLISH_PLACE.sub(lambda found: f" {names[found.group(1)]} ", t).strip() if _ENGLISH_PLACE.search(t) else t


def _has_word(text: str, word: str) -> bool:
    """``word`` in ``text``; a Latin word must stand alone (vegan in 彰化市vegan, not in vegans-only)."""
    if not word.isascii() or word not in text:  # the scan below only for a Latin word the text holds
        return word in text
    return re.search(rf"(?<![a-z]){re.escape(word)}(?![a-z])", text) is not None


#: Saying eggs are out (不吃蛋, 不能吃蛋, 蛋不行, 對蛋過敏 …): beside a vegetarian ask it means 奶素
#: (lacto: no meat, no eggs). Source: issue 9 follow-up item 4.
_NO_EGG = re.compile(r"(?:不|不能|不可以|不敢|沒辦法|無法)(?:吃|碰|要|加)(?:雞)?蛋|不要有蛋"
                     r"|蛋(?:不行|不能吃|不可以吃?|都不吃|不吃|會過敏|過敏)|對蛋過敏|不含蛋|無蛋|去蛋")


#: Leaving out the five pungent plants (不吃蔥蒜, 不吃五辛, 不加蔥蒜, 無五辛, 不要洋蔥): the catalog does
#: not record it. Beside a diet word it is that diet; alone it is a vegetarian ask (only 素 leaves
#: them out); either way the reply says the catalog does not record it. Source: trial 2 finding 3.
_NO_PUNGENT = re.compile(
    r"(?:不|不能|不可以|不敢|沒辦法|無法|不要|不想|忌|避開|避免|去|無|沒有|不含|不加|不放)(?:吃|加|放|碰|要|含|用)?(?:任何)?(?:的)?"
    r"(?P<plant>五辛|蔥蒜|蔥|蒜頭|大蒜|蒜|韭菜|韭|洋蔥|蕎頭|興渠)"
    r"|(?P<free>五辛|蔥蒜)(?:都)?(?:不吃|不行|不能吃|不要|不加|免|去掉)")


def _pungent(form: str) -> str | None:
    """The words that leave out the pungent plants, as said (不吃蔥蒜), or None."""
    found = _NO_PUNGENT.search(form)
    return found.group(0) if found else None


#: Leaving out dairy (不喝牛奶, 不吃奶製品, 乳糖不耐, 對奶過敏; not 不吃奶素, a negated diet): with no
#: eggs either it is 全素, applied; alone it is 蛋素, which the catalog does not record (named).
_NO_DAIRY = re.compile(r"(?:不|不能|不可以|不敢|沒辦法|無法|不想)(?:吃|喝|碰|加|要)(?:牛)?(?:奶|乳)(?:蛋)?(?:製品|類)?(?!素)"
                       r"|(?:奶|乳)(?:類|製品)?(?:不行|不能吃|不吃|都不吃|會過敏|過敏)|乳糖不耐|對(?:牛)?奶過敏|不含奶|無奶|不要有奶")
#: Other food conditions beside a vegetarian ask (不吃辣, 對花生過敏, 無麩質): the catalog records none;
#: each is named as not recorded, never dropped. Source: trial 3 finding 5.
_OTHER_FOOD = re.compile(
    r"(?:不|不能|不可以|不敢|沒辦法|無法|不想)(?:吃|碰|加|要)(?:任何)?(?:的)?"
    r"(?:辣|花生|堅果|麩質|小麥|麵筋|黃豆|大豆|豆類|豆製品|菇類|香菇|菇|芋頭|香菜|芹菜|味精|油炸|炸的|甜|糖)"
    r"|(?:對)?(?:花生|堅果|麩質|小麥|黃豆|大豆|菇類|香菇|芒果|奇異果)(?:會)?過敏"
    r"|無麩質|不含麩質|低糖|無糖|少糖|低鹽|少鹽|少油|低油|低鈉|清淡")


def _conditions(form: str) -> list[str]:
    """Every food condition said beside a diet that the catalog does not record, as said, in order."""
    found = [match for pattern in (_NO_PUNGENT, _NO_DAIRY, _OTHER_FOOD) for match in pattern.finditer(form)]
    words: list[str] = []
    for match in sorted(found, key=lambda m: m.start()):
        if match.group(0) not in words and not any(match.group(0) in word for word in words):
            words.append(match.group(0))
    return words


def read_diet(text: str) -> tuple[str | None, str | None]:
    """The dietary condition a message states, and the finer word the catalog does not record.

    Args:
        text: the user's message (any form; read in its reading form; never logged).
    Returns:
        (dietary_type or None, unrecorded word or None). 五辛素 → ("vegetarian", "五辛素");
        鍋邊素 → ("vegetarian", "鍋邊素") (shared.diets.UNRECORDED_DIETS); vegan / VEGAN → ("vegan", None); 奶蛋素 → ("ovo_lacto", None);
        不吃蛋的素 / 不吃蛋…素食 → ("lacto", None); a negated diet (我不吃素) → ("any", None) unless another one is
        stated too; no diet word → (None, None). Leaving out the pungent plants (不吃蔥蒜, 不吃五辛) is
        unrecorded: 不吃蔥蒜 → ("vegetarian", "不吃蔥蒜"); 全素不吃五辛 → ("vegan", "不吃五辛").
        Every condition said is kept (trial 3 finding 5): several unrecorded words are joined by 、
        (我吃鍋邊素 不吃蔥蒜 → ("vegetarian", "鍋邊素、不吃蔥蒜")); beside a vegetarian ask, no eggs and no
        dairy is 全素 (applied), no dairy alone is named (素食 不喝牛奶 → ("vegetarian", "不喝牛奶")), and other
        food conditions are named (素食 不吃辣 → ("vegetarian", "不吃辣")).
    Source: DESIGN §5 (dietary types), issue 9 item 5, issue 4 follow-up (negation).
    """
    form = reading_form(text)
    plain, negated = _unnegated(form)
    pungent = _pungent(form)
    # finer types said beside a recorded word (我阿母吃早齋 花壇有素食店嗎: 素食 is read, 早齋 is named too)
    spare = plain
    for word, _ in DIET_WORDS:  # 蛋素 inside 奶蛋素 / 不吃蛋素 is no second word
        spare = spare.replace(word, "｜") if len(word) >= 3 else spare
    conditions = [word for word, _ in UNRECORDED_DIETS if _has_word(spare, word)] + _conditions(form)
    no_egg = _NO_EGG.search(form) is not None or re.search(r"(?:奶|乳)蛋|蛋奶(?!素)", "".join(
        match.group(0) for match in _NO_DAIRY.finditer(form))) is not None
    no_dairy = _NO_DAIRY.search(form) is not None
    for word, diet, unrecorded in _ALL_DIET_WORDS:
        if _has_word(plain, word):
            if diet == "vegetarian" and no_egg and no_dairy:  # 吃素 不吃蛋也不喝奶: 全素
                named = [w for w in conditions if not _NO_DAIRY.fullmatch(w)]
                return "vegan", "、".join(dict.fromkeys(([word] if unrecorded else []) + named)) or None
            if diet == "vegetarian" and no_egg:  # 我媽不吃蛋，花壇有素食嗎: vegetarian without eggs
                return "lacto", "、".join(dict.fromkeys(([word] if unrecorded else []) + conditions)) or None
            if unrecorded:
                return diet or "any", "、".join([word] + [w for w in conditions if w != word])
            if diet == "vegan":  # 全素 has no dairy already: only the other conditions are named
                conditions = [w for w in conditions if not _NO_DAIRY.fullmatch(w)]
            return diet, "、".join(conditions) or None
    if pungent:  # 不吃蔥蒜的 彰化市有店嗎: a vegetarian ask the catalog cannot refine
        return "vegetarian", "、".join(conditions)
    return ("any" if negated else None), None


def diet_in(text: str) -> str | None:
    """The dietary type this text states, or None when it names none (see read_diet).

    Returns:
        ``vegetarian``, ``vegan``, ``ovo_lacto``, ``lacto``, ``any`` or None.
    """
    return read_diet(text)[0]


def date_in(text: str) -> DateSpec | None:
    """The date a message asks about (shared.turn.dates.read_date on its reading form)."""
    return read_date(reading_form(text))


def is_emergency(text: str) -> bool:
    """True when ``text`` (reading form) tells of an emergency (跌倒了起不來, 呼吸困難, 叫救護車): rule 0,
    answered with 119 before anything else, and never left to the model (shared.routing)."""
    return bool(_limits(text, LIMITS[:1]))


def _limits(text: str, table: tuple[tuple[str, tuple[str, ...]], ...]) -> list[Limit]:
    found = [Limit(kind) for kind, words in table if any(_has_word(text, word) for word in words)]
    if table is SIDE_LIMITS:
        found += ([Limit.BRING] if _BRING.search(text) else []) + ([Limit.DISTANCE] if _DISTANCE.search(text) else [])
        found += [Limit.EVENING] if _EVENING.search(text) else []
    return found


#: Between two topics, a word that makes them alternatives (市集跟親子活動, 講座或展覽): either one.
#: Not when both must hold (長輩跟小孩都可以參加). Source: trial 3 finding 4.
_TOPIC_OR = re.compile(r"^[\s的]*(?:跟|和|與|及|或是|或者|或|還是|、|/|,|，)[\s]*$")
_TOPIC_BOTH = re.compile(r"都|一起|同時|一同|皆")


def _topics(text: str, with_diet: bool) -> list[str]:
    """The event topics of ``text``, in order: each a keyword term; two joined by 跟 / 或 / 和 / 、
    are one term of alternatives (``市集|親子``), unless 都 / 一起 says both must hold."""
    found: list[tuple[int, int, str]] = []
    for word, topic in EVENT_TOPICS + (_EVENT_DIET_TOPICS if with_diet else ()):
        at = text.find(word)
        if at < 0 or any(topic == other for _, _, other in found) or \
                any(topic != other and topic in other for _, _, other in found):
            continue
        found.append((at, at + len(word), topic))
    order = {topic: index for index, (_, _, topic) in enumerate(found)}  # the table's order, as before
    groups: list[list[tuple[int, int, str]]] = []
    either = not _TOPIC_BOTH.search(text)
    for entry in sorted(found):
        last = groups[-1][-1] if groups else None
        if last is not None and either and last[1] <= entry[0] and _TOPIC_OR.match(text[last[1]:entry[0]]):
            groups[-1].append(entry)
        else:
            groups.append([entry])
    groups.sort(key=lambda group: min(order[topic] for _, _, topic in group))
    return ["|".join(topic for _, _, topic in group) for group in groups]


def _only_small_talk(text: str, words: tuple[str, ...]) -> bool:
    found = False
    for word in sorted(words, key=len, reverse=True):
        if _has_word(text, word):
            found, text = True, text.replace(word, " ")
    return found and not _FILLER.sub("", text)


#: A greeting that opens a message before a question (早上好 今天有什麼活動, 你好，花壇有素食嗎): the
#: question is answered, and the reply opens with a greeting line (note ``greeted``). Not 早上有活動嗎.
_GREETING_FIRST = re.compile(r"^(?:你好|您好|哈囉|哈摟|嗨|hi|hello|hey|早安|午安|晚安|安安|早上好|下午好|晚上好|大家好|早)"
                             r"(?:呀|啊|喔|唷|哦|啦|~|～)*(?:[\s,，!！。.、~～]+|(?=請問|想問|我想|我要))")


def route(text: str) -> Proposal:
    """Propose one action for a free-text message.

    Args:
        text: the user's message as typed (any width or script); not stored or logged.
    Returns:
        A Proposal (see the module docstring for the rules); the caller validates and runs it.
        A greeting before a question (早上好 今天有什麼活動) adds the note ``greeted`` to the answer. A
        question about a detail the data does not hold (要帶水嗎, 可以刷卡嗎) adds ``detail:<kind>`` /
        ``unasked:<words>`` notes (shared.turn.details; trial 5).
    Named events are read against the titles given by ``event_titles`` (the turn engine gives the
    current snapshot's), else the demo snapshot's.
    """
    t = _english_places(reading_form(text))
    proposal = _every_township(t, _with_details(t, _route(text)))
    if proposal.tool in _SEARCH_TOOLS and _GREETING_FIRST.match(t):
        return Proposal(proposal.tool, proposal.args, proposal.source, proposal.notes + (Flag.GREETED,))
    return proposal


def _every_township(t: str, proposal: Proposal) -> Proposal:
    """A shop ask for the whole county (全彰化有全素的店嗎, 整個彰化哪裡有素食) → the places search in every
    township (area 全彰化), never the township picker; a bare 彰化 or 彰化縣 still asks which township."""
    if proposal.tool != "needs_area" or proposal.args.get("kind") == "events" or not _WHOLE_COUNTY.search(t):
        return proposal
    return Proposal("search_local_places", {"area": WHOLE_COUNTY, "dietary_type": proposal.args.get("dietary_type"),
                                            "keyword": None}, proposal.source,
                    tuple(note for note in proposal.notes if note != Flag.OWN_DIET))


@contextlib.contextmanager
def event_titles(titles: tuple[str, ...] | None) -> Iterator[None]:
    """Route with these event titles (the current events snapshot's): ``with event_titles(t): route(text)``.
    None keeps the demo snapshot's. The router sees titles and text only, never a stored value."""
    token = _TITLES.set(_reading_titles(tuple(titles))) if titles is not None else None
    try:
        yield
    finally:
        if token is not None:
            _TITLES.reset(token)


@functools.lru_cache(maxsize=4)
def _reading_titles(titles: tuple[str, ...]) -> tuple[str, ...]:
    """Titles in reading form, once per snapshot's titles (a snapshot changes at most daily)."""
    for title in titles:
        _RAW_TITLES.setdefault(reading_form(title), title)
    return tuple(dict.fromkeys(reading_form(title) for title in titles))


#: A title's reading form → the title as recorded (the first one seen).
_RAW_TITLES: dict[str, str] = {}


#: The event titles the router reads named events with (event_titles), in reading form.
_TITLES: contextvars.ContextVar[tuple[str, ...] | None] = contextvars.ContextVar("event_titles", default=None)


@functools.cache
def _demo_titles() -> tuple[str, ...]:
    """The demo events snapshot's titles (reading form): the titles when no snapshot's were given."""
    from shared.events.search import load_event_snapshot  # the demo file, parsed once per process
    try:
        return _reading_titles(tuple(event.title for event in load_event_snapshot().events))
    except Exception:  # noqa: BLE001 - no demo file: no titles, the other rules still read the text
        return ()


def _titles() -> tuple[str, ...]:
    titles = _TITLES.get()
    return _demo_titles() if titles is None else titles


#: Kinds of event said after a title-like word (龍舟賽, 燈籠展, 媽祖祭, 花卉嘉年華), besides EVENT_WORDS.
_EVENT_KINDS = r"(?:嘉年華|博覽會|音樂節|藝術節|文化節|燈節|花季|賽|展|祭)"
#: A title-like word and its kind: 2–6 Han characters that are no question word, then the kind, then
#: a question or the end (not 發展協會, 賽車場, 展開).
_KIND_PHRASE = re.compile(rf"(?P<phrase>[\u4e00-\u9fff]{{2,6}}?{_EVENT_KINDS})"
                          r"(?=$|[^\u4e00-\u9fff]|幾|是|在|什|有|的|要|那|還|會|哪|怎|多|可|嗎|呢|時|門|好|開始|結束|誰|辦|從|到)")


def _as_titled(piece: str, title: str) -> str:
    """``piece`` (reading form) spelt as the snapshot's own title spells it, where that can be told (the
    keyword is matched against the title as recorded)."""
    raw = _RAW_TITLES.get(title, title)
    at = title.find(piece)
    return raw[at:at + len(piece)] if len(raw) == len(title) and at >= 0 else piece


def _names_event_kind(t: str) -> bool:
    """True when the event named in ``t`` is said with its kind (龍舟賽, 花卉市集, 巷弄文化散步), not a
    place alone (八卦山停得下嗎 asks about parking at the hill)."""
    named = event_named(t)
    kinds = list(EVENT_WORDS) + [word for word, _ in EVENT_TOPICS]
    return named is not None and any(re.search(rf"{_EVENT_KINDS}$", piece) or any(k in piece for k in kinds)
                                     for piece in named.split(" "))


@functools.lru_cache(maxsize=4096)
def _significant(piece: str) -> bool:
    """True when a piece of an event title is more than townships, date, vocabulary and question words.

    Cached: a piece is a substring of a title or a phrase of at most 7 characters, so the cache holds
    what the snapshot's titles can give, and a message that repeats one piece pays for it once."""
    rest = piece
    for word in sorted(_vocabulary(), key=len, reverse=True):
        if len(word) >= 2 or word in ("店", "餐", "麵", "飯", "吃", "素"):
            rest = rest.replace(word, "｜")
    for word in _NOT_PLACES + _NOT_TOWNSHIP_TYPOS:  # 社區, 附近: generic words, no event's name
        rest = rest.replace(word, "｜")
    parts = [part for part in re.split(r"[｜]+", _NOT_TITLE.sub("｜", rest)) if len(part) >= 2]
    return bool(parts) and read_date(piece) is None


def _is_han(char: str) -> bool:
    return "\u4e00" <= char <= "\u9fff"


#: The most places in a message at which one title's pieces are looked for: far more than a resident's
#: message names of one event, and what bounds ``event_named``'s work per title whatever the text.
TITLE_PLACES_MAX = 256


def _pairs(text: str) -> dict[str, list[int]]:
    """Every two-character stretch of ``text`` → where it starts, in order (one pass over the text)."""
    index: dict[str, list[int]] = {}
    for at, pair in enumerate(map(str.__add__, text, text[1:])):
        index.setdefault(pair, []).append(at)
    return index


@functools.lru_cache(maxsize=1024)
def _title_pairs(title: str) -> tuple[str, ...]:
    """The distinct pairs of Han characters in ``title`` (every piece of two or more starts with one)."""
    return tuple(dict.fromkeys(pair for pair in map(str.__add__, title, title[1:]) if _HAN_PAIR.fullmatch(pair)))


_HAN_PAIR = re.compile(r"[\u4e00-\u9fff]{2}")


def _title_pieces_in(t: str, title: str, pairs: dict[str, list[int]]) -> tuple[dict[str, None], int]:
    """The significant pieces of ``title`` that ``t`` says, in the order said, and their lengths summed
    over every time each is said (what ranks one title against another in ``event_named``).

    A piece is the longest stretch of Han characters of ``t`` that the title holds, read from the start:
    where one starts, the text after it is read next; where none does, the next character. Only the
    places where a pair of the title's characters starts are visited (``pairs``, the text's pairs), in
    order, at most ``TITLE_PLACES_MAX`` of them; a piece grows one character at a time while the title
    holds it. Cost: O(len(title)) to gather the places, then at most TITLE_PLACES_MAX visits, each at
    most len(title) checks of at most len(title) characters: nothing here grows with the text.
    """
    places = [pairs[pair] for pair in _title_pairs(title) if pair in pairs]
    pieces: dict[str, None] = {}
    size = at = 0
    for visited, start in enumerate(heapq.merge(*places)):
        if visited == TITLE_PLACES_MAX:
            break
        if start < at:
            continue  # inside the piece just read
        end = start + 2
        while end < len(t) and _is_han(t[end]) and t[start:end + 1] in title:
            end += 1
        said, at = t[start:end], end
        if _significant(said):  # 社區長輩健康操: vocabulary only, and no piece of it either
            piece = _as_titled(_strip_townships(said) or said, title)
            pieces.setdefault(piece)
            size += len(piece)
    return pieces, size


def event_named(t: str) -> str | None:
    """The words of ``t`` that name one event: a title of the current events snapshot (event_titles)
    holds them (鹿港龍舟賽幾點開始 → 龍舟賽 of 鹿港慶端陽龍舟賽; 田尾花卉市集 → 花卉市集), or
    they are an event kind with a title-like word before it (龍舟賽是哪一天 → 龍舟賽), or None.

    A title's piece counts when it is 2+ Han characters and more than township, date, vocabulary and
    question words (鹿港, 週末, 市集 alone name no event); at each position the longest piece of the title
    is taken, then the text after it is read. Several pieces of one title are joined by a space
    (every term must be in the title); the title whose pieces cover the most of the text wins (the
    first such title on a tie). Source: trial 7, F1.

    Cost: one pass over the text to index its pairs of characters, then per title at most
    ``TITLE_PLACES_MAX`` places (``_title_pieces_in``), and one scan of ``_KIND_PHRASE``: linear in
    ``len(t)``; no stretch of the text is tried against every title. Cached per text and titles (the
    router asks up to four times per message).
    """
    return _event_named(t, _titles())


@functools.lru_cache(maxsize=16)
def _event_named(t: str, titles: tuple[str, ...]) -> str | None:
    best: dict[str, None] = {}
    best_size = 0
    pairs = _pairs(t)
    for title in titles:
        pieces, size = _title_pieces_in(t, title, pairs)
        if size > best_size:
            best, best_size = pieces, size
    if best:
        return " ".join(best)
    for found in _KIND_PHRASE.finditer(t):
        phrase = _strip_townships(_NOT_TITLE.split(found.group("phrase"))[-1])
        if len(phrase) >= 3 and _significant(phrase):
            return phrase
    return None


def _route(text: str) -> Proposal:
    """route without the greeting note and the unanswered details (see route)."""
    t = _english_places(reading_form(text))
    if not t:
        return Proposal("show_local_help")
    urgent = ([Limit.CRISIS] if is_crisis(t) else []) + _limits(t, LIMITS[:1])
    if urgent:  # 我想自殺 / 我跌倒了起不來: a safety reply before anything else (issue 9 follow-up item 1)
        return Proposal("show_limits", {"kinds": urgent})
    if _only_small_talk(t, _THANKS):
        return Proposal("thanks")
    if _only_small_talk(t, _GREETINGS + _THANKS):
        return Proposal("greeting")
    if _FORGET.search(t) and not _FORGET_EXCEPT.search(t):
        return Proposal("privacy_info", {"topic": PrivacyTopic.FORGET_MY_DIET})  # 以後不用記了，刪掉 / 把我吃奶素的紀錄忘掉
    if NOT_ASKED_TO_REMEMBER.search(t) and not townships_in(t) and read_date(t) is None:
        return Proposal("ack", notes=(Flag.NOT_SAVED,))  # 我又沒說要你記住: nothing is kept without 同意記住
    if _NO_MEMORY.search(t) and not townships_in(t) and not _ack_only(t):
        beside = _search_beside_privacy(t)
        if beside is not None:  # 我吃奶素 不用記 john有嗎: the shop, and nothing is kept
            return beside
    if _ack_only(t) or (_NO_MEMORY.search(t) and not townships_in(t)):
        return Proposal("ack", notes=(Flag.NOT_SAVED,) if _NO_MEMORY.search(t) else ())
    if _ABOUT.search(t):
        return Proposal("greeting")
    if request_text_of(t) is not None:
        # 幫我建立服務單：路燈壞了, 我要建單: a request to create one, never a status question (trial 7, F6);
        # the request hook makes its card first, so this answers only where no hook ran (the 新需求 form).
        return Proposal("handoff_info")
    by_subject = _STATUS_BY_SUBJECT.search(t) is not None and not any(word in t for word in EVENT_WORDS) \
        and not any(word in t for word in PLACE_WORDS) and not places_named_in(t)  # not 上次那個市集辦了沒
    if _STATUS.search(t) or by_subject or _CANCEL_REQUEST.search(t) or re.fullmatch(r"(?:我要|我想|幫我)?(?:取消|撤銷|撤回|撤掉)", t):
        cancel = _CANCEL_ANY.search(t) and not _NOT_CANCEL.search(t)
        return Proposal("handoff_cancel_help" if cancel else "handoff_status")
    if _SHARING.search(t):
        return Proposal("privacy_info", {"topic": PrivacyTopic.WHO_SEES_MY_DATA})  # 會不會把我的電話跟資料給別人
    if _PRIVACY.search(t):
        beside = _search_beside_privacy(t)
        if beside is not None:  # 我吃奶素 但不要存我的資料喔 彰化市有嗎: the search, and nothing is kept
            return beside
        return Proposal("privacy_info")
    hard = _hard_limits(t)
    if hard == ["weather"] and _topics(t, with_diet=False):
        hard = []  # 下雨天有室內活動嗎: an events question; the weather is said beside it
        weather_note: tuple[Limit, ...] = (Limit.WEATHER,)
    else:
        weather_note = ()
    if hard:
        shops = places_named_in(t)
        if shops and not set(hard) & {Limit.MEDICAL, Limit.EMERGENCY}:  # 叫一台計程車到和米素食: the limit, and the shop's card
            return Proposal("find_place", {"name": shops[0]["name"], "area": shops[0]["area"]},
                            notes=tuple(hard + _limits(t, SIDE_LIMITS)))
        beside = _ask_beside_limits(t)
        if beside is None and _names_event_kind(t) and not set(hard) & {Limit.MEDICAL, Limit.EMERGENCY} \
                and read_diet(t)[0] in (None, "any"):
            beside = _search(t, tuple(_limits(t, SIDE_LIMITS)))  # 鹿港龍舟賽那邊好停車嗎: the event, and parking
            beside = beside if beside.tool in _SEARCH_TOOLS else None
        if beside is not None:  # 鹿港有素食店嗎？那邊停車方便嗎: the shops, and the parking limit
            dropped = (Limit.HOURS,) if beside.tool == "search_local_events" else ()  # 幾點開始: the card says it
            return Proposal(beside.tool, beside.args, beside.source,
                            beside.notes + tuple(kind for kind in hard + _limits(t, SIDE_LIMITS)
                                                 if kind not in beside.notes and kind not in dropped))
        return Proposal("show_limits", {"kinds": hard + _limits(t, SIDE_LIMITS)})
    side = tuple(_limits(t, SIDE_LIMITS)) + weather_note
    if any(word in t for word in _ELSEWHERE) and not townships_in(t):
        return Proposal("show_limits", {"kinds": [Limit.ELSEWHERE]})
    named = places_named_in(t)
    if named:
        first = named[0]
        others = tuple(OtherPlace(place["name"]) for place in named[1:])
        if Limit.HOURS not in side and re.search(r"幾點|時間|休息|開嗎|有開", t):
            side += (Limit.HOURS,)
        asked_diet = read_diet(_without_names(t, named))[0]
        check: tuple[Note, ...] = (DietCheck(asked_diet),) if asked_diet is not None and asked_diet != "any" else ()
        # the diet said beside a shop name is offered to remember like a search's (trial 5 minor), unless
        # it is someone else's or the user said not to remember
        check += ((Flag.DIET_OF_OTHER,) if check and _diet_of_other(t) else ()) + \
            ((Flag.NOT_SAVED,) if _NO_MEMORY.search(t) or NOT_ASKED_TO_REMEMBER.search(t) else ())
        return Proposal("find_place", {"name": first["name"], "area": first["area"]},
                        notes=side + check + others + _events_beside_shop(t, named))
    close = place_close_to(t)
    if close is not None and townships_in(t) and close["area"] not in townships_in(t):
        close = None  # 有糙米素食嗎 彰化市: a shop of another township is not what was meant
    if close is not None:  # 合米素食有全素嗎: ask 你是說「和米素食」嗎？ with a button that asks again, spelt right
        return Proposal("did_you_mean", {"name": close["name"], "area": close["area"],
                                         "text": t.replace(close["typed"], close["spelling"], 1)}, notes=side)
    if _PERSON_ASK.search(t) and not any(word in t for word in EVENT_WORDS):
        return Proposal("handoff_info")  # 可以請人打電話給我嗎, 我要反映路燈壞了: the 新需求 form
    if (_DIRECTORY.search(t) and read_diet(t)[0] is None and not any(word in t for word in EVENT_WORDS)
            and not any(word in t for word in PLACE_WORDS)):
        return Proposal("show_limits", {"kinds": [Limit.DIRECTORY]})  # 彰化縣政府電話幾號: no directory data
    typo = township_typo(t)
    if typo is not None:  # 溪胡還是員林有素食餐廳: 「你是說溪湖鎮嗎？」, never silently only 員林
        typed, suffix, names = typo
        choices = [[name, t.replace(typed + suffix, name if suffix else _short_name(name), 1)]
                   for name in names]
        return Proposal("did_you_mean", {"name": names[0], "area": names[0], "text": choices[0][1],
                                         "choices": choices, "typed": typed})
    townships = townships_in(t)
    if townships and _FOLLOW_UP.fullmatch(_strip_townships(t)):
        return Proposal("ask_search_kind", {"area": townships[0]})  # 那鹿港呢: events or shops?
    split = _two_asks(t, townships)
    if split is not None:
        first_text, kind, seconds = split
        proposal = _search(first_text, side)
        if proposal.tool in ("search_local_events", "search_local_places", "needs_area") and \
                (proposal.tool != "needs_area" or proposal.args.get("kind", "places") == kind):
            return Proposal(proposal.tool, proposal.args, proposal.source, proposal.notes + seconds)
    return _search(t, side)


#: Where one ask ends and another starts, for a limit asked beside a search (spaces count here).
_LIMIT_CLAUSE_BREAK = re.compile(r"[？?！!。；;\n，,]+|\s+")
#: What makes a clause an ask LOCAL can answer: an event, shop or diet word (a township or a day alone
#: is context: 禮拜六去花壇 會不會很冷 asks about the weather only).
_SEARCH_TOOLS = ("search_local_places", "search_local_events", "needs_area", "find_place")


def _hard_limits(text: str) -> list[Limit]:
    """The limits a text asks about that no search can answer (transport, parking, health, weather …).

    A food allergy beside a diet ask (我對花生過敏 花壇有素食嗎) is a food condition read_diet names, not
    a health question."""
    if read_diet(text)[0] not in (None, "any"):
        text = _OTHER_FOOD.sub("｜", _NO_DAIRY.sub("｜", _NO_EGG.sub("｜", text)))
    hard = _limits(text, LIMITS)
    if Limit.TRANSPORT not in hard and _TRAVEL.search(text):
        hard.append(Limit.TRANSPORT)
    if Limit.PARKING not in hard and _PARKING.search(text):
        hard.append(Limit.PARKING)
    return hard


def _ask_beside_limits(t: str) -> Proposal | None:
    """A search asked beside a limit (鹿港有素食店嗎？那邊停車方便嗎; 12/31彰化市有跨年晚會嗎 要怎麼去):
    the clauses without a limit word, routed on their own, when they hold an event, shop or diet
    ask; None when every ask is a limit (彰化到鹿港的公車, 我頭很痛要吃什麼藥). A township said only in the
    limit's clause (去鹿港要坐什麼車？那邊有素食嗎) serves the search. Source: trial 3 finding 6.
    """
    clauses = _clauses_read([clause for clause in _LIMIT_CLAUSE_BREAK.split(t) if clause and clause.strip()])
    if len(clauses) < 2:
        return None
    rest = [clause for clause in clauses if not _hard_limits(clause)]
    limited = [clause for clause in clauses if _hard_limits(clause)]
    if not rest or not limited:
        return None
    text = " ".join(rest)
    asks = (any(word in text for word in EVENT_WORDS) or read_diet(text)[0] not in (None, "any")
            or any(word in _NOT_FOOD_SHOPS.sub("｜", text) for word in PLACE_WORDS)
            or _topics(text, with_diet=False) or places_named_in(text) or event_named(text))
    if not asks:
        return None
    if not townships_in(text):
        areas = [area for clause in limited for area in townships_in(clause)]
        text = f"{areas[0]} {text}" if areas else text
    proposal = route(text)
    said = next((value for clause in limited if (value := read_date(clause)) is not None), None)
    if said is not None and "date" in proposal.args and proposal.args["date"] is None:
        # 這禮拜六會不會下雨 員林的活動還有辦嗎: the day said with the limit is the events' day (trial 5 finding 9)
        proposal = Proposal(proposal.tool, {**proposal.args, "date": said}, proposal.source, proposal.notes)
    return proposal if proposal.tool in _SEARCH_TOOLS else None


#: The whole county said without 彰化縣 (全彰化都可以, 整個彰化): every township, no picker (trial 4 minor).
_WHOLE_COUNTY = re.compile(r"全彰化|整個彰化|彰化(?:全部|各地|各鄉鎮|全縣|都可以|都行|哪裡都)")
#: A bare 彰化 beside another township (花壇 彰化 哪裡有全素): also asked, read as 彰化市; not 彰化縣 or 全彰化.
_CHANGHUA_ALSO = re.compile(r"(?<![全個住在從自到離])彰化(?![市縣人])")  # not 我住彰化, 從彰化, 彰化人
#: 彰化 said before a township is the county it is in (彰化花壇, 彰化的花壇), not a second place.
_CHANGHUA_BEFORE_TOWNSHIP = re.compile(
    r"彰化(?:縣)?\s*(?:的)?\s*(?:" + "|".join(sorted({name for name in TOWNSHIPS if name != "彰化市"} |
                                                   {name[:-1] for name in TOWNSHIPS if name != "彰化市"},
                                                   key=len, reverse=True)) + ")")
#: Kinds of eating place the catalog does not record (自助餐, 火鍋, 早餐店): named as not recorded; the
#: search runs on the diet alone. Source: trial 4 extra finding 12.
_SHOP_KINDS = ("自助餐", "吃到飽", "buffet", "火鍋", "麵店", "早餐店", "早午餐", "咖啡廳", "咖啡店", "甜點", "飲料店", "手搖",
               "滷味", "鹹酥雞", "餐車", "拉麵", "披薩", "漢堡", "牛排", "便當", "小吃店", "夜市")


#: A privacy remark asked as a question (你們會存我的資料嗎): the search reply also says what is kept.
_QUESTION = re.compile(r"[嗎?？]|會不會|有沒有|是不是|什麼|哪些")


def _search_beside_privacy(t: str) -> Proposal | None:
    """A privacy or no-memory remark beside a search (我吃奶素 但不要存我的資料喔 彰化市有嗎; 你們會存我的個資嗎
    花壇有素食嗎; 我吃奶素 不用記 john有嗎): the message without the remark's words, routed on its own, with the
    note ``not_saved`` (no 記住 button; the reply says nothing is kept without consent) or ``privacy_asked``
    (the reply says what is kept); None when what is left asks for no search. Source: trial 5 finding 10.
    """
    not_saved = bool(_NO_MEMORY.search(t) or NOT_ASKED_TO_REMEMBER.search(t))
    rest = t
    for pattern in (NOT_ASKED_TO_REMEMBER, _NO_MEMORY, _PRIVACY):
        rest = pattern.sub("｜", rest)
    if not re.sub(r"[｜\W_]+", "", rest):
        return None
    proposal = _route(rest)
    if proposal.tool not in _SEARCH_TOOLS or proposal.tool == "needs_area":  # 不用記我吃素: no search asked
        return None
    if not_saved:
        note = Flag.NOT_SAVED
    elif any(_PRIVACY.search(clause) and _QUESTION.search(clause) for clause in _LIMIT_CLAUSE_BREAK.split(t)):
        note = Flag.PRIVACY_ASKED
    else:
        return proposal
    return Proposal(proposal.tool, proposal.args, proposal.source,
                    proposal.notes + ((note,) if note not in proposal.notes else ()))


#: Words that may sit where a township does but are no misspelt township (員林還是社區, 鹿港和北部).
_NOT_TOWNSHIP_TYPOS = ("社區", "市區", "鄉下", "北部", "南部", "中部", "東部", "西部", "大家", "市場", "家裡", "附近",
                       "外面", "那邊", "這邊", "其他", "別的", "二手", "大人", "小孩", "田裡", "北邊", "南邊")
#: Between two places: 還是 / 或 / 跟 / 和 / 、.
_PLACE_JOIN = r"\s*(?:還是|或是|或者|或|跟|和|與|及|、|/|,|，)\s*"


def _short_name(township: str) -> str:
    """溪湖鎮 → 溪湖 (the name residents say); a two-character name stays whole."""
    return township[:-1] if len(township) > 2 else township


def _one_apart(typed: str, township: str) -> bool:
    """True when ``typed`` and the township's short name have the same length and differ in exactly one
    character (溪胡 / 溪湖, 花潭 / 花壇)."""
    short = _short_name(township)
    return len(typed) == len(short) and sum(a != b for a, b in zip(typed, short)) == 1


def township_typo(t: str) -> tuple[str, str, list[str]] | None:
    """A misspelt township where a place is clearly meant, and the townships it may be, or None.

    A place is clearly meant where two Han characters are joined to a real township by 還是 / 或 / 跟 / 和
    / 、 (溪胡還是員林, 員林或花潭), or are followed by 鄉 / 鎮 / 市 (溪胡鎮). They must differ from a township's
    short name in exactly one character (溪胡 / 溪湖; never by sound, which the router cannot read) and
    be no word of LOCAL's vocabulary (社區, 北部, 市集 …). Several townships may be that close (溪胡:
    溪湖鎮 and 溪州鄉): all are returned, a same suffix (溪胡鎮 → 溪湖鎮) first. The caller asks
    「你是說…嗎？」; it never searches a guess. Source: newcomer trial 5 finding 13.

    Returns:
        (the characters as typed, the 鄉 / 鎮 / 市 typed after them or "", [full township names, best
        first]) or None.
    """
    spellings = "|".join(sorted({*TOWNSHIPS, *(_short_name(name) for name in TOWNSHIPS)}, key=len, reverse=True))
    typed_places = re.finditer(
        rf"(?P<a>[\u4e00-\u9fff]{{2}})(?={_PLACE_JOIN}(?:{spellings}))|(?:{spellings}){_PLACE_JOIN}(?P<b>[\u4e00-\u9fff]{{2}})"
        r"|(?P<c>[\u4e00-\u9fff]{2})(?P<suffix>[鄉鎮市])"
        # trial 7 F7: 鹿巷這禮拜有活動嗎 (a word first, then when: a place is meant)
        r"|^(?:請問|想問|我想查|想查|查)?(?P<d>[\u4e00-\u9fff]{2})(?=(?:這|今|明|下|本)(?:個)?(?:禮拜|星期|週|周|月|天)|(?:週|周)末)",
        t)
    known = [w for w, _ in EVENT_TOPICS] + list(EVENT_WORDS) + [w for w, _ in DIET_WORDS] + list(_NOT_PLACES) + \
        list(_NOT_TOWNSHIP_TYPOS)
    said_townships = townships_in(t)  # once, not per place-like word
    near_of: dict[str, list[str]] = {}  # per word typed: a message may repeat it thousands of times

    def townships_near(typed: str) -> list[str]:
        if typed not in near_of:
            vocabulary = townships_in(typed) or any(k in typed or typed in k for k in known) \
                or read_date(typed) is not None
            near_of[typed] = [] if vocabulary else [name for name in TOWNSHIPS if _one_apart(typed, name)]
        return list(near_of[typed])

    for found in typed_places:
        typed = found.group("a") or found.group("b") or found.group("c") or found.group("d")
        if found.group("d") and not any(word in t for word in EVENT_WORDS + PLACE_WORDS) and read_diet(t)[0] is None:
            continue  # a word before a date with no ask is no place
        near = townships_near(typed)
        if not near:
            continue
        suffix = found.group("suffix")
        if suffix and townships_in(t[found.start():found.end() + 1]):
            continue  # part of a real name said with its suffix
        if suffix == "市" and t[found.end():found.end() + 1] in ("集", "場", "區"):
            continue  # 花卉市集, 魚市場: a market, not 花卉市 (trial 7, F1)
        if said_townships and any(typed in title for title in _titles()):
            continue  # 田尾 … 花卉: a word of an event's title beside a real township
        near.sort(key=lambda name: 0 if suffix and name.endswith(suffix) else 1)
        return typed, suffix or "", near
    return None


def _search(t: str, side: tuple[Limit, ...]) -> Proposal:
    """The search (or fallback) a message asks for, once no fixed, limit or shop-name rule answered."""
    townships = townships_in(t)
    vague = match_area(t).kind == "vague"
    said_vague = list(vague_words_in(t)) if vague else []  # needs_area's vague_words: only these are explained
    county_wide = not townships and (COUNTY in t or _WHOLE_COUNTY.search(t) is not None)
    diet, unrecorded = read_diet(t)
    date = read_date(t)
    notes: tuple[Note, ...] = side + ((UnrecordedDiet(tuple(unrecorded.split("、"))),) if unrecorded else ()) + \
        ((Flag.NOT_SAVED,) if _NO_MEMORY.search(t) or NOT_ASKED_TO_REMEMBER.search(t) else ())  # 不用記起來: no 記住 button
    if diet is not None and diet != "any":  # someone else's plain 素 is theirs: the user's memory does not fill it
        other = _diet_of_other(t)
        notes += ((Flag.GENERIC_DIET,) if _is_generic_diet(t, diet, unrecorded) and not other else ()) + \
                 ((Flag.DIET_OF_OTHER,) if other else ())
    if townships and "彰化市" not in townships and _CHANGHUA_ALSO.search(_strip_townships(t)) and \
            not _CHANGHUA_BEFORE_TOWNSHIP.search(t):
        townships = townships + ["彰化市"]  # 花壇 彰化 哪裡有全素: 彰化 is asked too (as 彰化市), never dropped
        notes += (Flag.CHANGHUA_AS_CITY,)
    others = (OtherAreas(tuple(townships[1:])),) if len(townships) > 1 else ()
    township = townships[0] if townships else None
    event_word = any(word in t for word in EVENT_WORDS)
    food = _NOT_FOOD_SHOPS.sub("｜", t)  # 便利商店, 飯店 (a hotel): not a place to eat
    place_cue = diet is not None or any(word in food for word in PLACE_WORDS)
    asked = _ASKER.sub("｜", _unnegated(t)[0])
    topics = _topics(_without_goers(asked), with_diet=event_word)
    named_event = None if place_cue and not event_word else event_named(t)
    party_free = _topics(_GOER.sub("｜", asked), with_diet=event_word)
    if party_free != topics and (party_free or named_event):
        topics = party_free  # 阿公想去看龍舟, 想帶阿公去看市集: the boats, the market; who goes filters nothing
    if named_event and not event_word:  # 鹿港龍舟賽幾點開始: an events ask, never a shop or unknown subject
        event_word = True
        if not topics:
            topics = [named_event]
            named_event = None
    unknown = None if township or vague or county_wide else unknown_place(t)
    if unknown:  # 鹿巷活動: say it was not recognised and offer the townships, not a county-wide list
        notes += (UnknownTownship(unknown),)
        if event_word:
            return Proposal("needs_area", {"kind": "events", "vague": False, "date": date,
                                           "keyword": " ".join(topics) or None}, notes=notes)
        return Proposal("needs_area", {"kind": "places", "dietary_type": diet, "vague": False}, notes=notes)
    if event_word or (not place_cue and (topics or date is not None or Limit.REGISTRATION in side)):
        notes = tuple(note for note in notes if note not in (Limit.HOURS, Flag.GENERIC_DIET, Flag.DIET_OF_OTHER))
        if township is None and vague and not county_wide:
            return Proposal("needs_area", {"kind": "events", "vague": True, "vague_words": said_vague,
                                           "date": date, "keyword": " ".join(topics) or None}, notes=notes)
        hint = named_event or _title_hint(t)
        return Proposal("search_local_events", {"area": township, "date": date, "keyword": " ".join(topics) or None},
                        notes=notes + others + ((TitleHint(hint),) if hint else ()))
    if place_cue and township is None and diet is None and set(side) & {Limit.BOOKING, Limit.HOURS}:
        return Proposal("show_limits", {"kinds": list(side)})  # 現在哪裡有開著的爌肉飯？可以幫我預約…
    if township is not None and not place_cue and unknown_subject(t):
        # 鹿港天后宮幾點開, 花壇鄉長是誰: a township with a subject LOCAL has no data on, not a shop search
        return Proposal("ask_search_kind", {"area": township, "no_data": True})
    if place_cue or township is not None:
        if township is None:
            own = diet not in (None, "any") and OWN_DIET_STATEMENT.match(re.sub(r"\s+", "", t)) is not None
            return Proposal("needs_area", {"kind": "places", "dietary_type": diet, "vague": vague,
                                           **({"vague_words": said_vague} if vague else {})},
                            notes=notes + ((Flag.OWN_DIET,) if own else ()))
        kind = next((word for word in _SHOP_KINDS if word in food), None)
        return Proposal("search_local_places", {"area": township, "dietary_type": diet, "keyword": None},
                        notes=notes + others + ((UnrecordedKind(kind),) if kind else ()))
    if side:
        return Proposal("show_limits", {"kinds": list(side)})
    if vague and unknown_subject(t):
        return Proposal("show_limits", {"kinds": [Limit.NO_DATA]})  # 彰化縣長是誰: no data, not a shop picker
    if vague:
        return Proposal("needs_area", {"kind": "places", "dietary_type": None, "vague": True,
                                       "vague_words": said_vague})
    if _HANDOFF_INFO.search(t):
        return Proposal("handoff_info")
    if _CANCEL.search(t):
        return Proposal("handoff_cancel_help")  # 要怎麼取消 (nothing else to cancel offline)
    if any(_has_word(t, word) for word in _THANKS + _MORE_THANKS):
        return Proposal("thanks")
    if any(_has_word(t, word) for word in _GREETINGS):
        return Proposal("greeting")
    return Proposal("show_local_help")


#: Words that cannot be part of an event's title said before its kind (冬季蔬果市集 → 冬季蔬果; not 週末,
#: 有什麼, 彰化市).
_NOT_TITLE = re.compile(r"[有的嗎呢哪什麼啥想要去找查問我你在是和跟或及與這那個些一都也還再請幫看帶辦週周禮拜星期月日號天年今明後昨晚早午]")


def _title_hint(t: str) -> str | None:
    """Words said right before an event kind that may be part of one event's title (冬季蔬果市集要帶什麼
    → 冬季蔬果; 八卦山健走 → 八卦山), or None. The engine narrows with it only when a title holds it.
    Source: trial 4 finding 8."""
    for word, _ in EVENT_TOPICS:
        at = t.find(word)
        if at <= 0:
            continue
        before = re.search(r"[\u4e00-\u9fff]{2,6}$", _strip_townships(t[:at]))
        if before is None:
            continue
        hint = _NOT_TITLE.split(before.group(0))[-1]
        known = [w for w, _ in EVENT_TOPICS] + list(EVENT_WORDS) + [w for w, _ in DIET_WORDS]
        if len(hint) >= 2 and not any(hint in k or k in hint for k in known) and read_date(hint) is None:
            return hint
    return None


def _events_beside_shop(t: str, named: list[dict[str, str]]) -> tuple[SecondAsk, ...]:
    """An events ask in another clause than a named shop's (和米禮拜天有開嗎？順便問花壇這禮拜天有活動嗎) →
    a ``SecondAsk`` of events in that township on its date (offered as a button), or nothing.
    Source: trial 4 finding 14."""
    for clause in _clauses_read(_ASK_BREAK.split(t)):
        if not clause or not any(word in clause for word in EVENT_WORDS) or places_named_in(clause):
            continue
        areas = townships_in(clause)
        return (SecondAsk(EventsSearch(areas[0] if areas else named[0]["area"], read_date(clause))),)
    return ()


#: Where a second ask starts: a sentence end, or 順便 / 另外 / 也想 / 然後 / 再幫我 / 還有 (not 還有12/6).
_ASK_BREAK = re.compile(r"[？?！!。；;\n]+|，(?=順便|另外|也|然後|再|還有)|順便|另外|也想|然後|再幫我|以及|還有(?![\d\s]*\d)")
#: The most clauses of one message read one by one as asks (beside a limit, a named shop, or two
#: asks in one message): a resident's message has a few. Those after it are read together, as one
#: last clause, so every word is still read once and the work per message is bounded: each clause
#: read on its own costs a diet, date and topic reading.
CLAUSES_MAX = 16


def _clauses_read(clauses: list[str]) -> list[str]:
    """``clauses`` with those after the CLAUSES_MAX-th joined (by a space) into the last one read."""
    if len(clauses) <= CLAUSES_MAX:
        return clauses
    return clauses[:CLAUSES_MAX - 1] + [" ".join(clauses[CLAUSES_MAX - 1:])]


#: A part of a message that asks something (used to split two asks said with a space between).
_ASKS = re.compile(r"有|嗎|呢|哪|什麼|啥|推薦|幾點|[?？]")
#: Words of a shop ask (besides diet words): a shop, a meal, a recommendation to eat.
_SHOP_ASK = re.compile(r"店|餐廳|小吃|料理|便當|吃(?:什麼|飯|的)|推薦.{0,4}吃")


def _two_asks(t: str, townships: list[str]) -> tuple[str, str, tuple[SecondAsk, ...]] | None:
    """An events ask and a shop ask in one message (週末彰化市有活動嗎？順便推薦附近的素食店), or two asks
    of one kind with their own conditions (_same_kind_asks).

    Returns:
        (text of the first ask, its kind ``events`` / ``places``, a ``SecondAsk`` note per other ask),
        or None when the message holds one ask.
        The second ask never becomes a filter of the first (no 蔬食 keyword on the events); the reply
        offers it as a button. Source: trial 1 finding 5.
    """
    clauses = [clause for clause in _ASK_BREAK.split(t) if clause and clause.strip()]
    if len(clauses) < 2:
        # two questions said with a space between (员林有没有纯素的店 周末有活动吗; trial 5 finding 6): only
        # when each part asks something (有 / 嗎 / 哪 …), so 花壇 素食 活動 stays one ask
        clauses = [clause for clause in t.split() if clause]
        if len(clauses) < 2 or sum(1 for clause in clauses if _ASKS.search(clause)) < 2:
            return None
    clauses = _clauses_read(clauses)
    kinds: list[str | None] = []
    for clause in clauses:
        diet = read_diet(clause)[0]
        shop = diet not in (None, "any") or _SHOP_ASK.search(clause) is not None
        if any(word in clause for word in EVENT_WORDS):
            kinds.append("events")
        elif shop:
            kinds.append("places")
        elif read_date(clause) is not None or _topics(clause, with_diet=False):
            kinds.append("events")  # 週日想帶孩子去玩: a day and a topic, no event word
        else:
            kinds.append(None)
    if "events" not in kinds or "places" not in kinds:
        return _same_kind_asks(clauses, kinds)
    first = next(kind for kind in kinds if kind)
    mine = " ".join(clause for clause, kind in zip(clauses, kinds) if kind in (first, None))
    theirs = " ".join(clause for clause, kind in zip(clauses, kinds) if kind not in (first, None))
    # each ask keeps its own township; one said only once serves both (trial 2 finding 9:
    # 12/12鹿港有活動嗎？另外彰化市有全素的店嗎 → 鹿港 events, 彰化市 全素 shops)
    mine_areas, their_areas = townships_in(mine), townships_in(theirs)
    area = mine_areas[0] if mine_areas else (their_areas[0] if their_areas else "")
    their_area = their_areas[0] if their_areas else area
    if area and not mine_areas:
        mine = f"{area} {mine}"
    if first == "events":
        diet, unrecorded = read_diet(theirs)
        keep = diet not in (None, "any") and not _is_generic_diet(theirs, diet, unrecorded)
        return mine, first, (SecondAsk(PlacesSearch(their_area or None, diet if keep else None)),)
    return mine, first, (SecondAsk(EventsSearch(their_area or None, read_date(theirs))),)


#: The conditions an ask of each kind sets, by the name its search (and its postback) uses.
_ASK_CONDITIONS = {"events": ("area", "date", "keyword"), "places": ("area", "dietary_type")}
#: An area said as the whole county (全彰化): a condition of its own, unlike an area left unsaid.
_ALL_AREAS = "*"
#: The most asks of one kind offered as buttons beside the one searched.
SECOND_ASKS_MAX = 2


def _ask_conditions(text: str, kind: str, *, picker: bool = False) -> dict[str, str] | None:
    """The conditions one ask sets on its own (``area`` ``*`` for 全彰化), or None when its words are no
    plain search of that kind (a limit, an unreadable date; a township picker unless ``picker``)."""
    proposal = _search(text, ())
    searched = proposal.tool == f"search_local_{kind}" or (
        picker and proposal.tool == "needs_area" and proposal.args.get("kind", "places") == kind)
    if not searched or isinstance(proposal.args.get("date"), Unreadable):
        return None
    said = {name: str(encoded(proposal.args[name])) for name in _ASK_CONDITIONS[kind] if proposal.args.get(name)}
    if kind == "places" and said.get("dietary_type") == "any":
        said.pop("dietary_type")
    if not said.get("area") and (COUNTY in text or _WHOLE_COUNTY.search(text)):
        said["area"] = _ALL_AREAS
    return said


def _same_kind_asks(clauses: list[str], kinds: list[str | None]) -> tuple[str, str, tuple[SecondAsk, ...]] | None:
    """Two asks of one kind, each with conditions of its own (聖誕節員林有活動嗎？還有12/5到12/7全彰化的市集;
    員林有全素的店嗎？還有鹿港的蛋奶素): the first is searched on its own words, each later one is the note
    a ``SecondAsk`` with every condition it sets (no ``area``: every township), offered as a
    button. Their conditions
    are never merged: a condition a later ask leaves open is the first's (還有鹿港的呢 keeps the date);
    one the first leaves open is not filled from a later one.

    Returns:
        (text of the first ask, its kind, the notes), or None when the message is one ask: a later clause
        that only adds a condition (週六有活動嗎？有親子的嗎) or only names another township (聖誕節員林有
        活動嗎？還有鹿港的呢: ``other_areas``, whose button keeps the date and topic) refines the first.
    Source: trial 8 finding F3.
    """
    groups: list[tuple[str, list[str]]] = []  # (kind, clauses): an ask with the clauses that follow it
    for clause, kind in zip(clauses, kinds):
        if kind and (not groups or groups[-1][0]):
            groups.append((kind, [clause]))
        elif groups:
            groups[-1][1].append(clause)
            groups[-1] = (groups[-1][0] or kind or "", groups[-1][1])
        else:
            groups.append((kind or "", [clause]))
    asks = [(kind, " ".join(words)) for kind, words in groups if kind]
    if len(asks) < 2 or len({kind for kind, _ in asks}) != 1:
        return None
    kind = asks[0][0]
    first = _ask_conditions(asks[0][1], kind, picker=True)  # 有全素的店嗎？還有鹿港的蛋奶素: the picker first
    if first is None:
        return None
    mine, notes = [asks[0][1]], list[SecondAsk]()
    for _, text in asks[1:]:
        later = _ask_conditions(text, kind)
        if later is None:
            mine.append(text)
            continue
        differ = {name for name in later if name in first and later[name] != first[name]}
        adds = {name for name in later if name not in first}
        if not differ or (differ == {"area"} and not adds and _ALL_AREAS not in (first["area"], later["area"])):
            mine.append(text)  # a refinement, or another township (other_areas keeps the rest)
            continue
        if len(notes) == SECOND_ASKS_MAX:
            continue
        asked = {**first, **later}
        query = {("diet" if name == "dietary_type" else name): asked[name] for name in _ASK_CONDITIONS[kind]
                 if asked.get(name) and asked[name] != _ALL_AREAS}
        notes.append(SecondAsk(EventsSearch(query.get("area"), date_arg(query.get("date")), query.get("keyword"))
                               if kind == "events" else PlacesSearch(query.get("area"), query.get("diet"))))
    if not notes:
        return None
    return " ".join(mine), kind, tuple(notes)


#: Someone who asks, not what is asked about (阿嬤想問…, 我媽要我問…): never an event topic.
_PEOPLE = (r"阿公|阿嬤|阿媽|爺爺|奶奶|外公|外婆|長輩|老人家?|爸爸|媽媽|老爸|老媽|爸|媽|小孩|孩子|兒子|女兒|朋友|鄰居|"
           r"同事|老師|家人|婆婆|公公|老婆|老公|太太|先生|"
           # Taiwanese kin words (trial 4 finding 10: 我阿母吃早齋)
           r"阿母|阿爸|阿爹|老母|阿伯|阿姨|阿嬸|阿叔|阿舅|阿妗|阿姑|孫仔|孫子|孫女|後生|查某囝|囝仔")
_ASKER = re.compile(rf"(?:{_PEOPLE})(?:們)?(?:想|要|有|在|剛剛|一直)?(?:叫我|要我|請我|託我|讓我)?(?:問|知道|打聽|說)")
#: Someone who goes, not what the event is about (阿嬤想帶孫子去, 想帶爸媽去, 帶小孩去玩, 阿公要去, 阿嬤想看):
#: no event topic when said after the events question (``_without_goers``), like who asks, nor anywhere
#: in a message that names an event or another topic (阿公想去看龍舟: the boats, not 長輩 events only).
#: Not a topic asked for (有長輩的活動嗎, 親子活動, 適合小孩的活動 still filter).
#: Source: trial 7, F2; trial 8, finding 1.
_GOERS = rf"(?:{_PEOPLE}|爸媽|父母|孫|小朋友|長者|老人|家裡的人)(?:們)?"
_GOER = re.compile(rf"(?<!適合)(?<!給)(?<!的)(?:{_GOERS}(?:也|都)?(?:想要?|要|會|打算|準備)?"
                   rf"(?:帶|陪)(?:我的?|著)?(?:{_GOERS})?|(?:想要?|要|會|打算|準備)?(?:帶|陪)(?:我的?|著)?{_GOERS}"
                   rf"|{_GOERS}(?:也|都)?(?:想要?|要|會|打算|準備))"
                   r"(?:一起|出)?(?:去|來|出門|參加|過去|玩|走走|看|逛)")


def _without_goers(text: str) -> str:
    """``text`` without who goes, said after the events question (這禮拜六日有啥活動 阿嬤想帶孫子去).

    Only after the first event word: a party said before it may describe the event asked for
    (帶小朋友去的活動, 阿嬤想去走走 鹿港這個月有什麼活動) and without an event word the people may be
    the only cue of an events ask (週日想帶孩子去玩), so those keep their topic as before.
    """
    ends = [at + len(word) for word in EVENT_WORDS if (at := text.find(word)) >= 0]
    if not ends:
        return text
    cut = min(ends)
    return text[:cut] + _GOER.sub("｜", text[cut:])


#: Another person's diet (我媽媽吃全素, 朋友說他吃素, 幫我爸找全素): searched, never offered as the
#: user's own memory. The user with them (我跟我媽都吃素, 我們全家吃素) is the user's own.
_OTHERS_DIET = re.compile(
    rf"(?:{_PEOPLE}|他們|她們|他|她|客人|客戶|男友|女友|男朋友|女朋友|哥哥|姊姊|姐姐|弟弟|妹妹|岳母|岳父|另一半|室友|同學|親戚)"
    r"(?:們)?(?:也|都|是|有在|只|只能|平常|現在|一直|要|想|固定|習慣|吃的是|說)*(?:吃)?"
    r"(?:全素|純素|蛋奶素|奶蛋素|奶素|素食|蔬食|早齋|鍋邊素|方便素|五辛素|初一十五|齋|素|vegan)"
    rf"|(?:幫|替|給|帶)(?:我)?(?:的)?(?:{_PEOPLE}|他|她)")
_WITH_ME = re.compile(rf"我(?:和|跟|與|同|還有|以及)(?:我)?(?:的)?(?:{_PEOPLE})|我們|我家|全家|一家")


def _diet_of_other(t: str) -> bool:
    """True when the diet said is someone else's, not the user's (see _OTHERS_DIET)."""
    return bool(_OTHERS_DIET.search(t)) and not _WITH_ME.search(t)


#: Words that name no finer type than 蔬食.
_GENERIC_DIET_WORDS = frozenset({"蔬食", "素食", "吃素", "素", "vegetarian", "veggie"})
#: Choosing the broad type on purpose (素食就好, 一般素食, 不用全素): then it is this turn's condition.
_BROAD_ON_PURPOSE = re.compile(r"就好|就可以|都可以|都行|一般|只要|隨便|不一定|不用.{0,2}(?:全素|純素|蛋奶|奶素)")


def _is_generic_diet(t: str, diet: str, unrecorded: str | None) -> bool:
    """True when the diet is a plain 素食 / 蔬食 that names no finer type and does not choose the broad
    type on purpose: a remembered finer type (全素) then fills it (trial 1 finding 9; DESIGN §7)."""
    if diet != "vegetarian" or unrecorded:
        return False
    plain, negated = _unnegated(t)
    if negated or _BROAD_ON_PURPOSE.search(t):
        return False
    word = next((w for w, _, _ in _ALL_DIET_WORDS if _has_word(plain, w)), None)
    return word in _GENERIC_DIET_WORDS


def _without_names(t: str, named: list[dict[str, str]]) -> str:
    """``t`` without the shop names it mentions (和米素食 names a shop, not a diet)."""
    for place in named:
        for spelling in place_aliases(place["name"]):
            # with the generic words said after a short name, spelt any way (JOHN手做蔬食: 手做蔬食 is the
            # name, not a diet asked; trial 2, minor finding)
            t = re.sub(re.escape(spelling) + _NAME_TAIL, "｜", t)
    return t


#: Generic words that may follow a shop's short name as part of how it is said (手作蔬食, 手做素食館).
_NAME_TAIL = r"(?:手[作做]|[蔬素]食|館|坊|餐廳|小館|料理)*"


#: Shops and places that are not somewhere to eat, though their names hold 店 / 飯 (LOCAL has no data).
_NOT_FOOD_SHOPS = re.compile(r"便利商店|超商|商店|飯店|書店|花店|藥局|藥房|五金行|文具店|服飾店|鞋店|眼鏡行|眼鏡店|手機行"
                             r"|機車行|車行|洗衣店|理髮店|美髮店|寵物店|民宿|旅館|酒店")


#: Words that only carry a question (請問, 有沒有, 哪裡, 嗎 …): what is left after them, the places and
#: the limits is the subject asked about.
_ASK_FILLER = re.compile(
    r"請問|想問|想知道|我想|我要|想要|幫我|可以|能不能|有沒有|有什麼|有哪些|有啥|什麼|甚麼|啥|哪裡|哪邊|哪些|哪個|哪家|哪間"
    r"|推薦|介紹|一下|看看|資訊|資料|周邊|周圍|旁邊|一帶|地方|東西|還有|是誰|是什麼|多少|在哪|怎麼樣|如何|好不好"
    r"|晚上|早上|中午|下午|傍晚|白天|假日|平日|現在|最近|今晚|明晚"
    r"|[那呢嗎嘛啊呀喔哦啦耶欸的在去有是找查我你妳們好請幾個間家些一都也要想跟和與及或誰了吧哪裡嘿]")
_SUBJECT_NOISE = re.compile(r"[\s\d\W_]+")


def unknown_subject(text: str) -> str | None:
    """The subject of a question that is neither a township, a date, a diet, an event nor a limit
    (鹿港天后宮幾點開 → 天后宮, 花壇鄉長是誰 → 鄉長, 彰化縣長是誰 → 縣長), or None.

    Used only where no shop, diet, event or date word was read: the reply says LOCAL has no such
    data, instead of listing shops. Source: newcomer trial 1 finding 7.
    """
    rest = text
    for spelling in sorted(list(TOWNSHIPS) + [name[:-1] for name in TOWNSHIPS if len(name) > 2]
                           + ["集合點附近", "這附近", "附近", "這裡", "這邊", COUNTY, "彰化"], key=len, reverse=True):
        rest = rest.replace(spelling, " ")
    for _, words in SIDE_LIMITS:
        for word in words:
            rest = rest.replace(word, " ")
    for word in _GREETINGS + _THANKS + _ACK:
        if word not in rest:
            continue  # neither replacement below can change the text
        rest = re.sub(rf"(?<![a-z]){re.escape(word)}(?![a-z])", " ", rest) if word.isascii() else rest.replace(word, " ")
    rest = _SUBJECT_NOISE.sub("", _ASK_FILLER.sub(" ", rest))
    return rest or None


#: Asking for a government office, school or other body, or for a phone number, address or site:
#: LOCAL has no directory (彰化縣政府電話幾號). A shop's phone is in its card (和米素食電話).
_DIRECTORY = re.compile(r"鄉長|鎮長|市長|縣長|議長|身分證|身份證|護照|戶籍|戶口|健保卡|駕照|行照|繳稅|報稅|罰單|補助|津貼|敬老卡|政府|公所|戶政|地政|稅務|稅捐|警察局|派出所|消防隊|衛生所|郵局|銀行|區公所|里長|村長|議員|立委|"
                        r"代表會|農會|清潔隊|垃圾車|機關|服務中心|服務處|電話|手機號|分機|傳真|地址|信箱|email|e-mail|"
                        r"網址|官網|網站|客服專線|統一編號|統編")


#: A short word right before 活動 / 素食 that may be a misspelt place (鹿巷活動, 花潭有素食嗎).
_PLACE_BEFORE_ASK = re.compile(r"^(?:請問|我想查|我想找|想查|想找|查|找)?(?P<word>[\u4e00-\u9fff]{2,3}?)"
                               r"(?:的|有什麼|有沒有|有哪些|有)?(?:活動|素食|蔬食|吃素)")
#: Words that sit there but are not places.
_NOT_PLACES = ("什麼", "哪裡", "附近", "最近", "好玩", "所有", "全部", "有沒", "推薦", "其他", "哪些", "哪個", "熱門",
               "好吃", "大型", "小型", "特別", "假日", "平日", "晚上", "早上", "下午", "社區", "社群", "宗教", "一般", "在地",
               "地方", "本地", "這裡", "那裡", "免費", "一些", "有趣", "好的", "類似", "相關", "大家", "小朋友")


def unknown_place(text: str) -> str | None:
    """A place-like word before 活動 / 素食 that is no Changhua township (鹿巷活動 → 鹿巷), or None.

    Place-like: 2–3 Han characters sharing a character with a township name, and not a date, topic,
    diet or event word. The caller says it was not recognised and offers the townships.
    Source: issue 9 follow-up item 7.
    """
    match = _PLACE_BEFORE_ASK.match(re.sub(r"\s+", "", text))
    if match is None:
        return None
    word = match.group("word")
    known = [w for w, _ in EVENT_TOPICS] + list(EVENT_WORDS) + [w for w, _ in DIET_WORDS] + list(_NOT_PLACES)
    if any(k in word or word in k for k in known) or read_date(word) is not None or townships_in(word):
        return None
    names = {name[:-1] for name in TOWNSHIPS} | set(TOWNSHIPS)
    return word if any(ch in name for name in names for ch in word) else None


#: What is left of a follow-up about another township (那鹿港呢, 還有員林嗎): no conversation state
#: is kept offline, so the reply asks whether events or shops are meant.
_FOLLOW_UP = re.compile(r"(?:那|那麼|那如果|還有|換)\s*(?:呢|咧|勒|嗎|的呢)?[\s?？!！。.~～]*|(?:呢|咧|勒)[\s?？!！。.~～]*")


def _strip_townships(text: str) -> str:
    """``text`` without its township spellings (full names and aliases)."""
    for name in sorted(townships_in(text), key=len, reverse=True):
        text = text.replace(name, "")
        short = name[:-1]
        text = text.replace(short, "") if len(short) >= 2 else text
    return text


def _ack_only(text: str) -> bool:
    """ok / 好 / 收到 / 了解 and nothing else."""
    return re.sub(r"[\s!！.。~～]+", "", text) in _ACK



#: Words that make a date a span (過年期間, 連假期間): part of the date, not a question (trial 7 F7).
_DATE_SPAN_WORD = re.compile(r"期間|這段時間|那段時間|前後")
#: Tools whose reply can say what the data does not record beside what it found (trial 5).
_DETAIL_TOOLS = ("search_local_events", "search_local_places", "find_place", "needs_area")
#: Booking a doctor (可以幫我掛號嗎 彰基): LOCAL cannot; not a question about a drug or an illness.
_APPOINTMENT = re.compile(r"掛號|看診|門診|預約(?:醫生|醫師|看病|看診|門診)|約診|回診")
#: Stands where a limit's phrase was (要怎麼去, 要自己帶): its clause is answered by the limit.
_LIMIT_MARK = "〓"
#: Details a side limit already says (trial 4 finding 3, 8): the limit's sentence stays, no second one.
_SAID_BY_LIMIT: dict[Note, Limit] = {NotRecorded(DetailKind.PETS): Limit.PETS, NotRecorded(DetailKind.BRING): Limit.BRING}
#: The topic a suitability question names (老人家可以去嗎 → 長輩): not a filter when it is asked that way.
_SUIT_TOPIC = {"老人家": "長輩", "老人": "長輩", "長輩": "長輩", "長者": "長輩", "阿公": "長輩", "阿嬤": "長輩",
               "銀髮族": "長輩", "小孩": "親子", "小朋友": "親子", "孩子": "親子", "兒童": "親子", "小孩子": "親子"}


@functools.cache
def _vocabulary() -> tuple[str, ...]:
    """Every word the router reads (townships, diet, event, topic, place, limit and small-talk words)."""
    names = list(TOWNSHIPS) + [name[:-1] for name in TOWNSHIPS if len(name) > 2] + [COUNTY, "彰化", "縣"]
    diets = [word for word, _ in DIET_WORDS] + [word for word, _ in UNRECORDED_DIETS] + ["素"]
    topics = [word for word, _ in EVENT_TOPICS + _EVENT_DIET_TOPICS]
    limits = [word for _, words in LIMITS + SIDE_LIMITS for word in words]
    people = _PEOPLE.split("|")
    return tuple(names + diets + topics + list(EVENT_WORDS) + list(PLACE_WORDS) + limits + people
                 + list(_GREETINGS + _THANKS + _MORE_THANKS) + list(_ELSEWHERE))


def _with_details(t: str, proposal: Proposal) -> Proposal:
    """``proposal`` with notes for the questions it does not answer (shared.turn.details).

    Named details (要帶水嗎, 可以刷卡嗎, 狗可以去嗎, 小孩幾歲可以, 會不會很多人, 有椅子坐嗎) are said beside a
    search, a limit or alone; any other question clause is said only beside a search (有沒有報佳音).
    A suitability question (老人家可以去嗎) is not a 長輩 filter when the search has another condition.
    掛號 is said as a booking LOCAL cannot make, not as a question about an illness.
    Source: trial 5 findings 1, 2, 7, 8, 14, 15 and the minors 掛號 and 報佳音; DESIGN §5.
    """
    tool, args = proposal.tool, dict(proposal.args)
    notes = tuple(note for note in proposal.notes if not isinstance(note, (NotRecorded, Unasked)))
    kinds = list(args.get("kinds") or [])
    if tool == "show_limits" and ({Limit.CRISIS, Limit.EMERGENCY} & set(kinds)):
        return proposal
    if _APPOINTMENT.search(t) and (tool in ("show_limits", "show_local_help") or (
            not any(word in t for word in EVENT_WORDS) and read_diet(t)[0] is None and not places_named_in(t))):
        # 可以幫我掛號嗎 彰基, 幫我預約明天看診: no booking of a doctor; an illness said too keeps the medical line
        ill = Limit.MEDICAL in _limits(_APPOINTMENT.sub("｜", t), LIMITS)
        kinds = [kind for kind in kinds if kind not in (Limit.MEDICAL, Limit.BOOKING)]
        return Proposal("show_limits", {"kinds": ([Limit.MEDICAL] if ill else []) + kinds + [Limit.APPOINTMENT]},
                        proposal.source)
    if Limit.MEDICAL in notes and _APPOINTMENT.search(t) and Limit.MEDICAL not in _limits(_APPOINTMENT.sub("｜", t), LIMITS):
        notes = tuple(Limit.APPOINTMENT if note == Limit.MEDICAL else note for note in notes)  # …順便幫我掛號
    if tool not in _DETAIL_TOOLS + ("show_limits", "show_local_help", "greeting", "thanks") or "新需求" in t:
        return proposal
    plain = t
    for pattern in (_NO_PUNGENT, _NO_DAIRY, _OTHER_FOOD, _NO_EGG, _ASKER, _GOER, _WHOLE_COUNTY, _DATE_SPAN_WORD):
        plain = pattern.sub("｜", plain)
    for pattern in (_PARKING, _TRAVEL, _APPOINTMENT, _BRING, _DISTANCE):
        plain = pattern.sub(_LIMIT_MARK, plain)  # a limit said here: its clause is answered
    named = places_named_in(t)
    words = _vocabulary() + tuple(spelling for place in named for spelling in place_aliases(place["name"]))
    plain = _without_names(plain, named) if named else plain
    said_words = tuple(part for note in notes for word in words_of(note)
                       for part in re.split(r"[,、/|\s]+", word) if part)
    if tool in ("search_local_events", "needs_area"):  # 龍舟賽是哪一天: the event's name is what was searched
        said_words += tuple(word for word in re.split(r"[|\s]+", f"{args.get('keyword') or ''} {event_named(t) or ''}")
                            if word)
    found = read_details(plain, words + said_words, read_date,
                         lambda clause: _LIMIT_MARK in clause or bool(_limits(clause, SIDE_LIMITS) or _hard_limits(clause)))
    said = set(notes) | set(kinds)  # no_pets / no_bring (trial 4) already say it: never twice
    found = tuple(note for note in found if _SAID_BY_LIMIT.get(note) not in said)
    places = tool in ("search_local_places", "find_place") or args.get("kind") == "places"
    if places and NotRecorded(DetailKind.END_TIME) in found:  # 開到幾點 at a shop is its hours
        notes += () if Limit.HOURS in notes else (Limit.HOURS,)
    if places:  # an event's details (70歲的阿嬤想找素食: no age line about a shop)
        found = tuple(note for note in found if not (isinstance(note, NotRecorded) and note.kind in EVENT_ONLY_DETAILS))
    if tool != "search_local_events":  # 要多久 beside a bus or a shop is the transport or hours limit
        found = tuple(note for note in found if note != NotRecorded(DetailKind.END_TIME))
    if tool not in _DETAIL_TOOLS or Limit.BOOKING in notes or any(isinstance(note, UnknownTownship) for note in notes):
        found = tuple(note for note in found if isinstance(note, NotRecorded))  # the limit or the picker answers it
    who = suitability_people(t)
    if tool == "search_local_events" and who and args.get("keyword"):
        topic = _SUIT_TOPIC.get(who)
        terms = args["keyword"].split(" ")
        rest = [term for term in terms if term != topic]
        if topic and len(rest) < len(terms) and (rest or args.get("date") or args.get("area")):
            args["keyword"] = " ".join(rest) or None  # 一月九號 花壇市集 老人家可以去嗎: the market, not 市集 AND 長輩
    if not found and args == proposal.args and notes == proposal.notes:
        return proposal
    if tool in ("show_local_help", "greeting", "thanks"):  # 你好 可以帶狗嗎: the detail, and the menu
        return Proposal("show_limits", {"kinds": []}, proposal.source, notes + found) if found else proposal
    return Proposal(tool, args, proposal.source, notes + found)
