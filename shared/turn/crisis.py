"""Words of suicidal intent, self-harm or despair: read before anything else, answered with the
crisis reply (1925 安心專線, 119, 110; shared.replies.menu.LIMIT_WORDS["crisis"]).

Residents rarely type 自殺. They write 想去死, 不想再撐了, 活著好累, 自我了斷, 一了百了, 撐不下去,
想消失, 不想醒來. The rules below read the *kinds* of phrasing, not a list of sentences:

- a death wish: 想 / 好想 / 想要 / 想去 / 寧願 / 乾脆 / 不如 + 死 (想去死, 好想死掉, 乾脆死一死), 死了算了,
  死掉算了, 去死一死; but not 想死你了 (I miss you) or 笑死 / 熱死 / 餓死 (hyperbole, no 想);
- not wanting to live or go on: 不想活, 活不下去, 不想再活, 活著好累 / 活著沒意義 / 活著幹嘛, 不想再撐,
  撐不下去, 撐不住了, 熬不下去, 不想醒來, 想消失, 不想存在, 離開這個世界, 跟這個世界說再見, 生無可戀,
  一了百了, 想不開, 沒人在乎我, 我是大家的累贅, 寫好遺書;
- life without meaning: 活著 / 活下去 / 人生 / 生命 + 沒 / 沒有 / 毫無 / 失去 + (什麼) 意義 / 希望 / 價值 / 動力
  (我覺得活下去沒什麼意義了, 人生毫無意義), 活著有什麼用;
- being a burden or better gone: 沒有我 / 少了我 / 我不在了 / 我走了 … 大家 / 家人會過得比較好 / 更好 / 輕鬆
  (大家沒有我應該會過得比較好吧), 我只會拖累大家, 我是多餘的, useless with age (老了沒路用, 我無路用);
- why one still lives, or having lived enough, as older people say it: 不知道為什麼還要活著, 還活著幹嘛,
  活夠了, 每天等死, 怎麼還不死, 閻羅王怎麼還不來收我, 老天爺怎麼不帶我走; a wish to join the dead,
  given up (算了): 早點去找老伴算了, 跟著他走算了 (never 為什麼還要活動, 活到老學到老, 去找老伴吃飯,
  跟她去好了, 明天早點走);
- an overdose question, or one already taken: a whole strip, box or bottle or many of a medicine taken at
  once (安眠藥一次吃一整排會怎樣, 吃多少顆安眠藥會死, 致死量, 剛剛把整瓶藥都吞了): the crisis reply
  (119 first) comes before the medical limit;
- ending one's life or harming oneself: 自殺, 自我了斷, 了斷, 了結自己, 結束生命, 結束這一切, 輕生, 尋死,
  尋短, 自殘, 傷害自己, 割腕, 跳樓, 跳河, 燒炭, 上吊, 吞藥, 吃很多安眠藥;
- English: suicide, kill myself, want to die, end my life, self-harm, cut myself.

Distress that is no risk statement (心情不好, 憂鬱, 好想哭, 好孤單, 沒人陪我, 陪我聊聊, 崩潰, 壓力好大) is read
apart by ``is_distress``: it gets a short, gentle reply that offers 1925 (which listens to these too),
not the suicide-prevention text; a risk word said with it (心情不好 不想活了) makes it a crisis.

For the risk kinds, when in doubt the crisis reply is the safe answer: it is a short, kind text with the numbers and
the menu, so a false alarm costs little and a miss may cost a life. Negation is *not* read (我沒有
想死 still gets the numbers), and someone else's words (阿公說他不想活了) get them too: 1925 helps
the people around a person at risk as well.

Source: Taiwan Ministry of Health and Welfare 1925 安心專線 (24 h, free);
https://www.mohw.gov.tw/cp-16-48245-1.html.
"""
from __future__ import annotations

import re

#: A wish to die: a wanting word, then 死 (想去死, 好想死掉, 寧願死, 不如死了算了). 想死你 (miss you) is not.
_DEATH_WISH = re.compile(
    r"(?:想|想要|好想|很想|真想|想去|要去|寧願|寧可|乾脆|不如|想欲|只想|巴不得|恨不得)(?:去|要|直接|就)?死(?!你|妳|您|我了)"
    r"|死(?:了|掉)?(?:算了|比較好|一死|就好了|就沒事|解脫)"
    r"|(?:去|讓我)死一死|(?:活著|活下去)(?:有|還有)?(?:什麼|啥)意(?:義|思)"
)
#: Not wanting to live or go on, or wanting to disappear.
_NO_WILL = re.compile(
    r"不想(?:再)?活(?!動)|活不下去|不要活(?!動)|不想再?撐|撐不(?:下去|住|了)|熬不(?:下去|住|過去)|不想(?:再)?(?:醒來|醒過來|存在)"
    r"|活著(?:好|很|真的?|太)?(?:累|痛苦|沒意[義思]|沒有意[義思]|幹嘛|做什麼|好難)|活得(?:好|很|太)?(?:累|痛苦)"
    r"|想(?:要)?消失|從世界上消失|離開(?:這個)?(?:世界|人世)|生無可戀|一了百了|想不開|沒有活下去|不如不要活"
    r"|(?:人生|生活|活著)(?:已經)?沒(?:有)?(?:希望|意義)|毋想活|沒辦法再撐"
    r"|(?:跟|向|和)(?:這個)?世界(?:說)?(?:再見|告別|道別)|告別(?:這個)?世界|去另一個世界|沒(?:有)?人(?:會)?在乎我"
    r"|我(?:只)?是(?:大家的|家人的|別人的)?(?:累贅|負擔)|(?:寫|留)(?:好)?(?:了)?遺書"
    r"|(?:活著|活下去|繼續活|人生|生命|我的生活)[^，。,.!！?？]{0,6}?(?:沒|沒有|毫無|失去|找不到|看不到)(?:什麼|任何|一點)?"
    r"(?:意義|意思|希望|價值|動力|盼望|目標)"
    r"|活著(?:有|還有)?(?:什麼|啥)用|活著(?:到底)?(?:是)?為了什麼"
    # asking why one still lives (不知道為什麼還要活著, 還活著幹嘛) or having lived enough (活夠了, 每天等死)
    r"|(?:為什麼|為何|為了什麼|幹嘛|幹麻|何必|憑什麼)(?:我)?(?:還|還要|要|繼續)?(?:活|活著|活下去)(?![動力潑到])"
    r"|(?:還|繼續)(?:活|活著|活下去)(?:幹嘛|幹麻|做什麼|要幹嘛|有什麼用|為了什麼|有什麼意思)"
    r"|活(?:夠|太久|膩)了|(?:每天|只能|就是)?在?等死(?!人|我)|(?:怎麼|為什麼)還(?:不|沒)死"
    # waiting to be taken (閻羅王怎麼還不來收我, 老天爺怎麼不帶我走), or wishing to join the dead
    r"|(?:老天|老天爺|天公|閻羅王|閻王|菩薩|佛祖|上帝|上天)[^，。,.!！?？]{0,6}?(?:帶我走|帶走我|把我帶走|收我|收了我|把我收走|來收)"
    r"|(?:去|想去)(?:找|陪)(?:我)?(?:的)?(?:老伴|先生|老公|太太|老婆|牽手|爸爸?|媽媽?|阿公|阿嬤|孩子|兒子|女兒|他|她)算了"
    r"|(?:跟著?|隨)(?:我)?(?:的)?(?:老伴|先生|老公|太太|老婆|牽手|爸爸?|媽媽?|阿公|阿嬤|孩子|兒子|女兒|他|她)(?:一起)?(?:走|去)算了"
)
#: Being a burden, or the people around better off without one (大家沒有我應該會過得比較好吧).
_BURDEN = re.compile(
    r"(?:沒有我|沒了我|少了我|少我一個|我不在了?|我走了|我離開了?|我消失了?|我死了)[^。!！?？]{0,12}?"
    r"(?:比較好|更好|會好|輕鬆|開心|快樂|幸福|解脫|好過|省事)"
    r"|(?:只會|一直|總是)?(?:拖累|連累)(?:大家|家人|別人|你們|所有人)|我是多餘的|我(?:很|好|真的)?多餘|我(?:真的)?(?:很|好)?沒用(?:的人)?(?:啊|吧|了)?$"
    # useless with age, in Taiwanese too (老了沒路用, 我無路用了), or a waste of living (活著浪費糧食)
    r"|(?:我|老了|人老了|老人家?|這把年紀)(?:真的|已經|就是|都)?(?:沒|無)路用|活著(?:只是)?(?:浪費|白費)|我是(?:個)?廢物"
)
#: A question about taking too much of a medicine at once (安眠藥一次吃一整排會怎樣): an overdose
#: question gets the crisis reply first, before the medical limit.
_MEDICINE = r"(?:安眠藥|助眠藥|鎮定劑|止痛藥|普拿疼|感冒藥|血壓藥|降血壓藥|降血糖藥|抗憂鬱藥|精神科的藥|藥丸|藥片|藥)"
_OVERDOSE = re.compile(
    rf"(?:吃|吞)(?:了|掉)?(?:一整|整)(?:排|盒|罐|瓶|包|袋)(?:的)?{_MEDICINE}"
    rf"|{_MEDICINE}[^，。,.]{{0,4}}(?:一次|一口氣|全部)?(?:吃|吞)(?:了|掉|下)?(?:一整|整)(?:排|盒|罐|瓶|包|袋)"
    rf"|(?:吃|吞)(?:了|掉)?(?:很多|一大把|一堆|大量|過量|好幾十|幾十|\d{{2,}})(?:顆|粒)?(?:的)?{_MEDICINE}"
    rf"|{_MEDICINE}[^，。,.]{{0,4}}(?:一次|一口氣)?(?:吃|吞)(?:了)?(?:很多|一大把|一堆|大量|過量|幾十|好幾十|\d{{2,}})"
    rf"|(?:吃|吞)(?:多少|幾)(?:顆|粒|包)?{_MEDICINE}?(?:會|才會|就會)(?:死|走|醒不來)|致死量|吃(?:太多|過量)(?:的)?{_MEDICINE}"
    rf"|{_MEDICINE}(?:吃|吞)(?:太多|過量)|把(?:所有的?|全部的?)?{_MEDICINE}(?:全部|都|一次)(?:吞|吃)"
    rf"|把(?:一整|整)(?:排|盒|罐|瓶|包|袋)(?:的)?{_MEDICINE}?(?:全部|都|一次)?(?:吞|吃)|農藥(?:喝|吃)|(?:喝|吃)(?:了)?(?:農藥|清潔劑|漂白水)"
)
#: Ending one's life or harming oneself.
_SELF_HARM = re.compile(
    r"自殺|自盡|自我了斷|了斷|了結(?:自己|生命|這一切)?|結束(?:自己|我的)?(?:的)?生命|結束(?:這一切|自己)|輕生|尋死|尋短"
    r"|自殘|傷害自己|割腕|割手|跳樓|跳河|跳海|燒炭|上吊|吞藥|(?:吞|一次吃)(?:了)?(?:很多|一堆|整包|整瓶|全部的?)(?:安眠)?藥|(?:很多|一堆|整包|整瓶)安眠藥"
)
#: Distress: low mood, loneliness, unbearable pressure, no risk said: the gentle reply with 1925
#: (``is_distress``); everyday hyperbole (受不了, 快瘋了, 累死了) is not listed. 絕望 is despair: a crisis.
_DISTRESS = re.compile(
    r"憂鬱|抑鬱|心情(?:很|好|超|真的|非常|一直)?(?:差|不好|低落|很糟|糟透|好糟)|(?:好|很|一直|真的)想哭|一直哭|哭了一整"
    r"|(?:好|很|超|真的)(?:孤單|寂寞|痛苦)|沒(?:有)?人(?:陪|理|關心)我|陪我聊|崩潰|壓力(?:好|很|太|超)大|撐好久了"
)
#: Despair: a crisis, not distress.
_DESPAIR = re.compile(r"絕望")
#: English, on the case-folded reading form.
_ENGLISH = re.compile(r"\bsuicid|\bkill(?:ing)? myself\b|\b(?:want(?:s)? to|wanna|going to|gonna) die\b"
                      r"|\bend (?:my|it) (?:life|all)\b|\bself[- ]?harm|\bcut(?:ting)? myself\b"
                      r"|\bdon'?t want to (?:live|be alive|wake up)\b|\bno reason to live\b|\bcan'?t go on\b")


def is_crisis(text: str) -> bool:
    """True when ``text`` speaks of suicidal intent, self-harm or not wanting to live.

    Args:
        text: the message in its reading form (shared.text.reading_form: NFKC, Traditional,
            case-folded); never logged.
    Returns:
        True for any phrasing of the risk kinds in the module docstring (not distress alone: see
        ``is_distress``); negation is not read.
    Source: docs/design.md §5 (safety replies come first).
    """
    compact = re.sub(r"\s+", "", text)
    return bool(_DEATH_WISH.search(compact) or _NO_WILL.search(compact) or _SELF_HARM.search(compact)
                or _BURDEN.search(compact) or _OVERDOSE.search(compact) or _DESPAIR.search(compact)
                or _ENGLISH.search(text))


def is_distress(text: str) -> bool:
    """True when ``text`` (reading form) speaks of low mood, loneliness or pressure (心情不好, 好孤單,
    壓力好大) and of no risk (``is_crisis`` is False): the gentle reply, 1925 offered.
    Source: 1925 安心專線 (24 h) listens to any distress; https://www.mohw.gov.tw/cp-16-48245-1.html."""
    return bool(_DISTRESS.search(re.sub(r"\s+", "", text))) and not is_crisis(text)
