"""Small talk: a greeting, thanks or ok said alone, a greeting before a question, asking what LOCAL is."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from shared.diets import has_word
from shared.turn.ask import Flag
from shared.turn.proposal import SEARCH_TOOLS, Proposal
from shared.turn.vocabulary.talk import ACK, FILLER, GREETINGS, THANKS

if TYPE_CHECKING:
    from shared.turn.rules.message import Message

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


def thanks_alone(m: Message) -> Proposal | None:
    """Thanks and nothing else."""
    return Proposal("thanks") if only_small_talk(m.text, THANKS) else None


def greeting_alone(m: Message) -> Proposal | None:
    """A greeting (or a greeting and thanks) and nothing else."""
    return Proposal("greeting") if only_small_talk(m.text, GREETINGS + THANKS) else None


def about(m: Message) -> Proposal | None:
    """你們是誰, 怎麼用: what LOCAL is or can do, answered like a greeting (and the menu)."""
    return Proposal("greeting") if ABOUT.search(m.text) else None


def greeted(m: Message, proposal: Proposal) -> Proposal:
    """A search answered after a greeting that opens the message (早上好 今天有什麼活動): the note ``greeted``."""
    if proposal.tool in SEARCH_TOOLS and GREETING_FIRST.match(m.text):
        return proposal.with_notes(Flag.GREETED)
    return proposal
