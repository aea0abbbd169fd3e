"""Small talk and fillers: greetings, thanks, acknowledgements, the words that only carry a question, and
the people who ask or go (kin words, Taiwanese ones included).

Data only: the rules that read them are in shared.turn.router and its families.
"""
from __future__ import annotations

import re

#: A greeting (matched whole for Latin words), season's greetings included.
GREETINGS = ("你好", "您好", "哈囉", "哈摟", "嗨", "hi", "hello", "hey", "早安", "午安", "晚安", "安安", "在嗎",
             "有人嗎", "嘿", "早", "早上好", "午安好", "下午好", "晚上好", "大家好",
             # season's greetings: a greeting, not an events question about the holiday (聖誕快樂)
             "聖誕快樂", "耶誕快樂", "聖誕節快樂", "新年快樂", "新春快樂", "元旦快樂", "春節快樂", "過年好", "恭喜發財",
             "中秋快樂", "中秋節快樂", "端午快樂", "端午節快樂", "佳節愉快", "節日快樂", "平安夜快樂", "情人節快樂",
             "母親節快樂", "父親節快樂", "merry christmas", "merry xmas", "happy new year", "happy holidays")

#: Thanks.
THANKS = ("謝謝你", "謝謝您", "謝謝", "謝啦", "謝了", "感謝", "多謝", "感恩", "3q", "thx", "thanks", "thank you",
          "辛苦了", "讚")

#: Thanks said in other words, read only inside a longer message.
MORE_THANKS = ("很有幫助", "幫大忙", "太好了", "好棒", "太棒了", "辛苦")

#: ok / 收到: an acknowledgement, said alone.
ACK = ("ok", "okay", "好", "好的", "了解", "收到", "知道了", "嗯", "恩", "好喔", "好哦", "喔", "哦", "👌", "👍")

#: What may be left of small talk once its words are taken out (particles, punctuation, emoji).
FILLER = re.compile(r"[\s好的喔哦啊呀啦了嗯恩耶欸唷囉嘍你您們大家ok!?！？。，,.~～…:：)(（）👍🙏😊❤️]+")

#: Words that only carry a question (請問, 有沒有, 哪裡, 嗎 …): what is left after them, the places and
#: the limits is the subject asked about.
ASK_FILLER = re.compile(
    r"請問|想問|想知道|我想|我要|想要|幫我|可以|能不能|有沒有|有什麼|有哪些|有啥|什麼|甚麼|啥|哪裡|哪邊|哪些|哪個|哪家|哪間"
    r"|推薦|介紹|一下|看看|資訊|資料|周邊|周圍|旁邊|一帶|地方|東西|還有|是誰|是什麼|多少|在哪|怎麼樣|如何|好不好"
    r"|晚上|早上|中午|下午|傍晚|白天|假日|平日|現在|最近|今晚|明晚"
    r"|[那呢嗎嘛啊呀喔哦啦耶欸的在去有是找查我你妳們好請幾個間家些一都也要想跟和與及或誰了吧哪裡嘿]")

#: Someone who asks, not what is asked about (阿嬤想問…, 我媽要我問…): never an event topic.
PEOPLE = (r"阿公|阿嬤|阿媽|爺爺|奶奶|外公|外婆|長輩|老人家?|爸爸|媽媽|老爸|老媽|爸|媽|小孩|孩子|兒子|女兒|朋友|鄰居|"
          r"同事|老師|家人|婆婆|公公|老婆|老公|太太|先生|"
          # Taiwanese kin words (我阿母吃早齋)
          r"阿母|阿爸|阿爹|老母|阿伯|阿姨|阿嬸|阿叔|阿舅|阿妗|阿姑|孫仔|孫子|孫女|後生|查某囝|囝仔")
