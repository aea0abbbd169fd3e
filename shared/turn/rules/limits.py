"""Limits: what LOCAL has no data or tool for, said with phrases rather than words (parking, travel,
what to bring, the evening, distance, booking a doctor)."""
from __future__ import annotations

import re

#: Parking said without 停車 (車子要停哪裡, 好停嗎, 機車可以停在哪). Source: trial 2 finding 10.
PARKING = re.compile(r"(?:車子?|機車|摩托車|汽車|腳踏車|單車)[^，。？?]{0,4}停|停(?:在|去)?(?:哪|那)(?:裡|邊|兒)?"
                      r"|好不好停|好停|難停|停得(?:下|到)|停放|哪(?:裡|邊)(?:可以|能)停")


#: Getting somewhere, said without a transport word (去鹿港要坐什麼車, 開車要多久, 怎麼過去).
TRAVEL = re.compile(r"(?:坐|搭|開|騎|轉)[^，。？?]{0,3}車|怎麼(?:過去|前往|抵達)|車程|要開多久|多遠")


#: Asking what to bring or prepare for an event (要帶什麼, 要自己帶毛筆嗎): not in the data. Not bringing a
#: person or a pet (帶小朋友, 帶狗), nor a coat (the weather). Source: trial 4 finding 8 and minor.
BRING = re.compile(r"(?:要|需要|得|該|要不要)(?:自己)?(?:帶|準備|自備)"
                    r"(?!小朋友|小孩|孩子|孫|狗|貓|寵物|長輩|阿公|阿嬤|爸|媽|家人|朋友|外套|傘|雨傘)"
                    r"|帶什麼|帶啥|準備什麼|準備啥|自備")


#: Asking about the evening (今晚有什麼活動, 明晚, 晚上): the events data has start times only, so a day's
#: list may hold events that are over by then; said beside an events answer (trial 8 finding 11).
#: Not 晚安 / 晚上好 (greetings) nor 昨晚 (the past).
EVENING = re.compile(r"今晚|明晚|今夜|晚上(?!好)|晚間|夜間|傍晚")


#: Asking for the nearest shop or a distance (最近的是哪間, 離我最近, 距離多遠): no map data.
DISTANCE = re.compile(r"最近的(?:是)?(?:哪|那|一)?(?:間|家|個)|最近的[^，。？?]{0,3}(?:店|餐廳)|離[^，。？?]{0,4}最近|距離|多近|最靠近")


#: Booking a doctor (可以幫我掛號嗎 彰基): LOCAL cannot; not a question about a drug or an illness.
APPOINTMENT = re.compile(r"掛號|看診|門診|預約(?:醫生|醫師|看病|看診|門診)|約診|回診")
