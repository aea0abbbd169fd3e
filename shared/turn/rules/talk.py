"""Small talk: a greeting, thanks or ok said alone, a greeting before a question, asking what LOCAL is."""
from __future__ import annotations

import re

from shared.diets import has_word
from shared.turn.vocabulary.talk import ACK, FILLER

#: Asking what LOCAL is or can do: answered like a greeting (what it can do, and the menu).
ABOUT = re.compile(r"^(?:請問)?(?:你|妳|你們)(?:是誰|是什麼|會什麼|能做什麼|可以做什麼|會做什麼)|怎麼用|怎麼使用|有什麼功能")


#: A greeting that opens a message before a question (早上好 今天有什麼活動, 你好，花壇有素食嗎): the
#: question is answered, and the reply opens with a greeting line (note ``greeted``). Not 早上有活動嗎.
GREETING_FIRST = re.compile(r"^(?:你好|您好|哈囉|哈摟|嗨|hi|hello|hey|早安|午安|晚安|安安|早上好|下午好|晚上好|大家好|早)"
                             r"(?:呀|啊|喔|唷|哦|啦|~|～)*(?:[\s,，!！。.、~～]+|(?=請問|想問|我想|我要))")


def only_small_talk(text: str, words: tuple[str, ...]) -> bool:
    found = False
    for word in sorted(words, key=len, reverse=True):
        if has_word(text, word):
            found, text = True, text.replace(word, " ")
    return found and not FILLER.sub("", text)


def ack_only(text: str) -> bool:
    """ok / 好 / 收到 / 了解 and nothing else."""
    return re.sub(r"[\s!！.。~～]+", "", text) in ACK
