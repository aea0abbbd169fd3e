"""The dates residents write, read without a clock and resolved later with one.

``read_date`` (pure) turns a message into a ``DateSpec`` (shared.turn.datespec: a week, a weekday, a
written date, a holiday …), or ``Unreadable`` when the text clearly names a date that is not read;
``DateSpec.resolve`` turns it into Asia/Taipei days (start, end exclusive) for a given "today". A
date that is not read never becomes "all dates": it is ``Unreadable``, and the turn engine answers
「我看不懂這個日期」 with choices. Time words are read whole (``WHOLE_WORDS``): 想確認一下星期六 is this
Saturday, never 下星期六.

What is read (weeks start on Monday; a day without a year is the *nearest* such day, so 11/22 on
2026-12-01 is 2026-11-22, shown as past, and 1/9 is 2027-01-09):
- written dates: 2026-12-05, 2026/12/5, 2026年12月5日, 民國115年12月5日, 115/12/5, 12/5, 12-5,
  12月5日, 12月5號, 十二月五號 (Chinese numerals read by ``cn2an``); a day without a month (5號, 廿五號,
  十五號) is the *coming* one: this month's when it has not passed (today counts), else next month's
  (``coming_day_of_month``: 25號 on 12/26 is 1/25), never silently a past day; 大年初五 / 過年初三 is that day
  of the Lunar New Year (the calendar's first 春節 day + N − 1), a bare 初五 is ``Unreadable``;
  two of them joined by 到 / ~ / 至 / 、 / 和 / 跟 are a range covering both (12/5到12/7, 12/5、12/6); so are
  any two dates joined by 跟 / 和 / 或 / 還是 / 、 / 到 (後天跟大後天, 明天或週六, 聖誕節跟跨年: ``Both``; one
  side unread makes the pair ``Unreadable``); joined by 到 / 至 / ~ / - they are a range from
  the first to the second (``Range``), a week prefix on the first end carrying to a bare weekday on the
  second (下個禮拜一到禮拜三 = 12/7–12/9, 下週三到五, 下週六跟週日), and a range whose end is before its start
  (下週五到週三, 12/7到12/5) is unreadable, never re-ordered; two dates side by side with
  no joiner (禮拜六禮拜日, 週六 週日, 12/5 12/6) are both read;
- a dotted month.day (12.5, 1.9, 12．5) is a date unless written as a number: a price, distance, rating,
  version or clock time (100.5元, 1.5公里, 4.5顆星, 早上9.30) is not;
- a month alone: 1月, 一月, 12月 → that whole month (the nearest one);
- holidays: 聖誕節 (12/25), 跨年 (12/31), 元旦 (1/1); a holiday's 連假 (元旦連假, 清明連假) is the holiday with the
  weekend days and calendar holidays next to it (元旦連假 2027: Friday 1/1 to Sunday 1/3); a bare 連假 is ``Unreadable``; 過年 / 春節 / 農曆新年 (Lunar New Year, from the
  ``holidays`` package's Taiwan calendar, eve and make-up days included), 除夕, and every day that
  calendar names in its public, optional and workday categories, read whole or by the end of the name
  (中秋節, 端午節, 國慶日, 行憲紀念日, 開國紀念日, 軍人節, 植樹節, 婦女節 …); a …節 / …紀念日 it does not name
  (護士節, 結婚紀念日) is ``Unreadable`` (a festival that is an event, 音樂節, is no date);
- days: 今天 / 今晚 / 今日, 明天 / 明晚, 後天, 大後天, 昨天 / 昨晚, 前天, 大前天 (大大後天 is ``Unreadable``);
- Taiwanese and colloquial words, read as the words above: 今仔日, 今暗, 明仔載 / 明仔再, 後日, 落後日 (大後天),
  昨昏 / 昨暝, 前日, 頂禮拜 (上), 後禮拜 (下), 拜六, 月尾 (月底), 元月 (1月), 今明兩天 / 這兩天 (今天跟明天), 明後天,
  假日 (週末); 今日頭條, 明日之星, 禮拜堂, 做禮拜 are no dates; 這幾天, 過幾天, 年後, 下半月 are ``Unreadable``;
- weeks: 這週 / 本週, 下週, 上週, 週末 / 這週末, 下週末, 上週末, 週六 / 下週三 / 上禮拜五 / 這星期日 …, with
  下下 / 上上 two weeks away (下下禮拜天, 上上週, 下下週末; 下下下 is ``Unreadable``); a weekday in digits
  (禮拜6, 週6, 星期7 = 日, 周６ after NFKC);
- lunar dates, converted by ``lunardate``: 農曆 / 舊曆 / 陰曆 + month + day (農曆十一月十五 → 2026-12-23, 農曆11/15,
  閏六月), 臘月初八, 正月十五, X月初N; 農曆初一 / 農曆十五 (no month) is the coming one; 農曆七月 the whole lunar
  month; a 農曆 not read otherwise is ``Unreadable`` (or a lunar holiday: 農曆新年, 農曆除夕), never solar;
- months: 這個月, 下個月, 上個月 (下下個月 / 上上個月 are ``Unreadable``, never 下個月 read out of them);
  a day inside one: 上個月22號, 下個月3號, 本月12號 (that one day;
  上上個月3號 is ``Unreadable``); 年底 (the nearest December), 年初 (January); early / middle / late in a month: 下個月初 (1–10), 月中 (11–20),
  上個月底 / 12月底 / 1月下旬 (21 to the month's end);
- English: Xmas / X'mas / Christmas (12/25), Christmas Eve, New Year (1/1), New Year's Eve,
  Chinese New Year / CNY, Valentine's, Halloween, Mother's / Father's Day, Dragon Boat, Mid-Autumn,
  today / tonight / tomorrow / (this|next|last) weekend / week / month;
- 元宵 (lunar 1/15: the calendar's first 春節 day + 14), 母親節 (second Sunday of May), 父親節 (8/8),
  萬聖節 (10/31); lunar days LOCAL does not compute (七夕, 中元, 重陽, 尾牙 …) are ``Unreadable``.

Source: README, the offline router's dates; https://pypi.org/project/lunardate/;
https://python-holidays.readthedocs.io (country_holidays("TW")); cn2an on PyPI.
"""
from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable

from shared.turn.datespec import (
    Both,
    DateSpec,
    DayOfMonth,
    Days,
    Holiday,
    LongWeekend,
    LunarDate,
    LunarDay,
    LunarMonth,
    Month,
    MonthDay,
    MonthPart,
    NewYearDay,
    Part,
    Range,
    RelativeDay,
    RelativeMonth,
    Unreadable,
    Week,
    Weekday,
    tw_calendar,
)
from shared.turn.vocabulary.dates import COLLOQUIAL as _COLLOQUIAL
from shared.turn.vocabulary.dates import COMPUTED_HOLIDAYS as _COMPUTED_HOLIDAYS
from shared.turn.vocabulary.dates import DAY_WORDS as _DAY_WORDS
from shared.turn.vocabulary.dates import ENGLISH_DATES as _ENGLISH_DATES
from shared.turn.vocabulary.dates import FIXED_HOLIDAYS as _FIXED_HOLIDAYS
from shared.turn.vocabulary.dates import HOLIDAY_ALIASES as _HOLIDAY_ALIASES
from shared.turn.vocabulary.dates import LUNAR_EVE_WORDS as _LUNAR_EVE_WORDS
from shared.turn.vocabulary.dates import LUNAR_WORDS as _LUNAR_WORDS
from shared.turn.vocabulary.dates import UNREAD_HOLIDAYS as _UNREAD_HOLIDAYS

UNREADABLE = Unreadable()

_NUMERAL = "零〇一二兩三四五六七八九十廿卅"
_CN_MONTH = re.compile(rf"(?<![{_NUMERAL}])([{_NUMERAL}]{{1,3}})(?=\s*月)")
_CN_DAY = re.compile(rf"(?<=月)(\s*)([{_NUMERAL}]{{1,3}})(?=\s*[日號号]|(?![{_NUMERAL}個个]))")
_CN_YEAR = re.compile(rf"([{_NUMERAL}]{{2,4}})(?=\s*年)")
#: A day of the month in Chinese numerals with no month (廿五號, 十五號, 初五 is below): 廿 = 20, 卅 = 30.
_CN_BARE_DAY = re.compile(rf"(?<![{_NUMERAL}月\d初])([{_NUMERAL}]{{1,3}})(?=\s*[號号](?!碗|份|人))")
#: A lunar day: 大年初五 / 過年初三 / 春節初二 → that day of the Lunar New Year (the calendar's first 春節
#: day + N − 1); a bare 初五 (which month?) is ``unreadable``. 初一十五 (a diet) and 月初 are not days.
_LUNAR_DAY = re.compile(rf"(大年|過年|春節|新年|正月)?初([一二三四五六七八九十]|10|[1-9])(?![{_NUMERAL}\d])")

_YMD = re.compile(r"(?<![\d/.\-])(\d{4}|1\d{2})\s*(?:年|/|-|\.)\s*(\d{1,2})\s*(?:月|/|-|\.)\s*(\d{1,2})(?![\d/\-])")
_MD = re.compile(
    r"(?<![\d/:.])(\d{1,2})\s*(?:月\s*(\d{1,2})(?:\s*[日號号]|(?![\d個个場场人位次天點点時时分歲岁塊元碗份]))"
    r"|/(\d{1,2})(?![\d/])|-(\d{1,2})(?![\d\-])|[.．](\d{1,2})(?![\d.．]))")
#: A dotted month.day (12.5, 1.9, 12．5) is a date only outside a number's context: not a price, distance,
#: weight, rating, dose, version or clock time (100.5元, 1.5公里, 4.5顆星, 9.30開門, 早上8.30, 版本1.2).
_DOT_UNIT = re.compile(r"^\s*(?:元|塊|圓|萬|千|百|公里|公尺|公分|公斤|公克|克|km|cm|mm|kg|m(?![a-z])|g(?![a-z])|k(?![a-z])|%|％|倍|折|成|分|顆|星|度|°"
                       r"|小時|時|點|個|人|歲|杯|碗|份|斤|兩|吋|寸|坪|秒|mg|ml|cc|l(?![a-z])|開|左右)")
_DOT_BEFORE = re.compile(r"(?:[$＄]|nt|ntd|v|ver|版本?|第|評分|分數|早上|上午|中午|下午|晚上|凌晨|半夜|約|大約|距離|身高|體重|血壓|血糖|體溫)\s*$")
_NUMBER_CONTEXT = re.compile(r"元|塊錢|價|多少錢|費用|公里|公尺|距離|多遠|評分|幾顆星|版本|身高|體重|血壓|血糖|體溫|匯率|折扣|打折|度數")
#: A day inside a relative month: 上個月22號, 下個月3號, 這個月5日, 本月12號 (the day is required).
_RELATIVE_MONTH_DAY = re.compile(r"(?<![上下])(上上|下下|上|下|這|这|本)一?[個个]?\s*月\s*(\d{1,2})\s*(?:[日號号]|(?![\d個个場场人位次天點点時时分歲岁月/\-.]))")
#: Early, middle or late in a month: 下個月初, 上個月底, 12月底, 1月中旬, 月底 (this month).
_MONTH_PART = re.compile(r"(?<![上下正臘腊])(?:(上上|下下|上|下|這|这|本)一?[個个]?\s*|(\d{1,2})\s*)?月\s*(初|中旬|中|底|末|上旬|下旬)")
_PARTS: dict[str, Part] = {"初": "early", "上旬": "early", "中": "mid", "中旬": "mid", "底": "late", "末": "late",
                           "下旬": "late"}
_RANGE_JOIN = re.compile(r"^\s*(?:到|至|~|～|-|－|—|、|,|，|和|跟|及|與|还有|還有)\s*$")
_DAY_ONLY = re.compile(r"(?<![\d月/\-])(\d{1,2})\s*[號号](?!碗|份|人)")
_MONTH_ONLY = re.compile(r"(?<![\d個个])(\d{1,2})\s*月(?!\s*\d)(?!份[的]?\d)")

_WEEK = r"(?:週|周|禮拜|礼拜|星期|拜)"
_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": None}
_WEEK_PHRASE = re.compile(rf"(?<![上下])(上上[個个]?|下下[個个]?|上一?[個个]?|下一?[個个]?|這一?[個个]?|这[個个]?|本)?\s*{_WEEK}\s*([一二三四五六日天末])?"
                          rf"(?:\s*[、,和跟與与及或/]?\s*([六日]))?")
_BARE_WEEKEND = re.compile(r"(?<![上下])(上上[個个]?|下下[個个]?|上一?[個个]?|下一?[個个]?|這|这|本)?\s*[週周]末")

_ENGLISH_DATE = [(re.compile(rf"(?<![a-z]){pattern}(?![a-z])"), value) for pattern, value in _ENGLISH_DATES]
_LATIN = re.compile(r"[a-z]")

#: Text that clearly names a date: if nothing above read it, the value is ``unreadable``.
_DATE_CUE = re.compile(rf"(?<!\d)\d{{1,2}}\s*/\s*\d|(?<!\d)\d{{1,2}}\s*月(?!\s*\d+\s*[個个場场人位次天點点時时分歲岁])|(?:上上|下下){_WEEK}"
                       rf"|這幾[天日]|过幾天|過幾天|近幾天|年後|[上下]半月|{_WEEK}\s*[089](?![\d次天日個个小時时點点人號号])")


#: Words that contain a day word but name no date: a news app, a TV show, a church, a service.
_NOT_DATES = re.compile(r"今日頭條|今日新聞|明日之星|昨日重現|禮拜堂|(?:做|主日)禮拜(?![一二三四五六日天\d])|星期五餐廳")
_COLLOQUIAL_RE = [(re.compile(pattern), word) for pattern, word in _COLLOQUIAL]
#: Any one of those words, longest first (明仔載 before 明仔): a date said in Taiwanese, as a whole.
COLLOQUIAL_DATE_WORDS = re.compile("|".join(f"(?:{pattern})" for pattern, _ in _COLLOQUIAL))
#: A weekday in digits (禮拜6, 週6, 星期6, 周６ after NFKC; 7 = Sunday), not a count (一週3次, 週休2日).
_DIGIT_WEEKDAY = re.compile(r"(週|周|禮拜|礼拜|星期|拜)\s*([1-7])(?![\d次天日個个小點点時时人號号/.\-:月])")


#: Whole words that end in 上 or 下, whose 上 / 下 is never a week or month prefix (下週, 上個月): the
#: filler 一下 (看一下, 問一下, 等一下, 確認一下), and words of a time or a place (早上, 晚上, 馬上,
#: 樓上, 樓下, 線上, 網上). Before a week or month word such a word is read as a break, so the time word
#: is read whole: 想確認一下星期六 asks about this Saturday, 看一下下禮拜 about next week (一下, then
#: 下禮拜), 查一下上個月22號 about last month's 22nd, 馬上週末了 about this weekend. A 上 / 下 that may
#: end a name (花壇鄉下週末, 鹿港鎮上週末, 八卦山下星期六) stays a prefix: the name is read first.
#: Source: README, the offline router's dates (time words are read whole).
WHOLE_WORDS: tuple[str, ...] = ("一下", "早上", "晚上", "馬上", "樓上", "樓下", "線上", "網上")
#: Not after a weekday's or a number's word, where 一 ends that word (禮拜一下週三, 初一下個月, 十一下週).
#: One space at most between words: the reading form (shared.text) collapses runs of spaces.
_WORD_BEFORE_TIME = re.compile("(?<![週周拜期初十廿卅])(?:" + "|".join(WHOLE_WORDS)
                               + rf")(?=\s?[上下]{{0,3}}\s?(?:一?[個个])?\s?(?:{_WEEK}|月))")
#: A week or month word after such a word with nothing to say which (問一下個月, 看一下個禮拜六): a
#: date is named, but not which one, so it is unreadable (asked again), never this one or next.
_WHICH_LEFT_OUT = re.compile(rf"｜\s?[個个]\s?(?:{_WEEK}|月)")


def _whole_words(text: str) -> str:
    """``text`` with each WHOLE_WORDS word before a week or month word replaced by a break (｜)."""
    return _WORD_BEFORE_TIME.sub("｜", text)


def _colloquial(text: str) -> str:
    """今仔日 → 今天, 禮拜6 → 禮拜六, 頂禮拜 → 上禮拜 …; words like 今日頭條 or 禮拜堂 are blanked out."""
    text = _NOT_DATES.sub("｜", text)
    for pattern, word in _COLLOQUIAL_RE:
        text = pattern.sub(word, text)
    return _DIGIT_WEEKDAY.sub(lambda m: m.group(1) + "一二三四五六日"[int(m.group(2)) - 1], text)


def _cn_numerals(text: str) -> str:
    """十二月五號 → 12月5號, 二零二六年 → 2026年 (cn2an); other text is left as it is."""
    # cn2an loads only when a numeral is there to read, not at import nor for every text: a cold
    # start answering a fixed entry reads no date, and importing it (with proces,
    # which compiles its address patterns) took about 0.2 s of CPU on a text's first turn.
    def number(match: re.Match[str], group: int = 1) -> str:
        import cn2an

        try:
            return str(int(cn2an.cn2an(match.group(group).replace("廿", "二十").replace("卅", "三十"), "smart")))
        except (ValueError, KeyError):
            return match.group(0)

    def year(match: re.Match[str]) -> str:
        import cn2an

        digits = "".join("0" if ch in "零〇" else str(cn2an.cn2an(ch, "smart")) for ch in match.group(1)
                         if ch in "零〇一二三四五六七八九")
        return digits if len(digits) == len(match.group(1)) else match.group(0)

    text = _CN_YEAR.sub(year, text)
    text = _CN_MONTH.sub(number, text)
    text = _CN_DAY.sub(lambda m: m.group(1) + number(m, 2), text)
    return _CN_BARE_DAY.sub(number, text)


def _relative_month(which: str | None) -> RelativeMonth:
    """上 → last month, 下 → next month, 這 / 本 / nothing → this month."""
    return RelativeMonth({"上": -1, "下": 1}.get(which or "", 0))


def _written(text: str) -> DateSpec | None:
    """A written date, month-day, range or day of month; None when there is none."""
    return _in_a_month(text) or _written_day(text)


def _in_a_month(text: str) -> DateSpec | None:
    """A day of a relative month (上個月22號) or a part of a month (下個月初, 12月底); None otherwise."""
    relative = _RELATIVE_MONTH_DAY.search(text)
    if relative:
        if relative.group(1) in ("上上", "下下"):
            return UNREADABLE  # 上上個月3號: not read, never a whole month
        return DayOfMonth(int(relative.group(2)), _relative_month(relative.group(1)))
    part = _MONTH_PART.search(text)
    if part:
        which, month, name = part.groups()
        if which in ("上上", "下下"):
            return UNREADABLE
        return MonthPart(Month(int(month)) if month else _relative_month(which), _PARTS[name])
    return None


def _written_day(text: str) -> DateSpec | None:
    """A written date (2026/12/5, 12/5, 12.5, 12月5號), two joined as a range (12/5到12/7), or a day
    of the month alone (25號); None otherwise."""
    found = _YMD.search(text)
    if found:
        year, month, day = (int(group) for group in found.groups())
        return MonthDay(month, day, year + (1911 if year < 1000 else 0))
    days = [m for m in _MD.finditer(text) if m.group(5) is None or _dotted_date(text, m)]
    if days:
        values = [MonthDay(int(m.group(1)), int(m.group(2) or m.group(3) or m.group(4) or m.group(5))) for m in days]
        if len(days) >= 2 and _RANGE_JOIN.match(text[days[0].end():days[1].start()]):
            return Range(values[0], values[1])
        return values[0]
    found = _DAY_ONLY.search(text)
    if found:
        return DayOfMonth(int(found.group(1)))
    return None


def _dotted_date(text: str, found: re.Match[str]) -> bool:
    """True when a dotted month.day (``_MD``'s fifth group: 12.5, 1.9) is a date: a real month and day,
    not written as a number (a price, distance, rating, time or version; see _DOT_UNIT)."""
    month, day = int(found.group(1)), int(found.group(5))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return False  # 15.5, 0.5, 3.14: a number
    return not (_DOT_UNIT.match(text[found.end():]) or _DOT_BEFORE.search(text[:found.start()])
                or _NUMBER_CONTEXT.search(text))


#: A lunar date: 農曆十一月十五 (after _cn_numerals: 農曆11月15), 舊曆12月初八, 陰曆閏6月初一, 農曆11/15,
#: 臘月初八, 正月十五, and X月初N (初 + a numeral is a lunar day); 農曆十五 / 農曆初一 (no month) is the coming one.
_LUNAR_PREFIX = re.compile(r"農曆|舊曆|陰曆|古曆|農暦|舊暦|陰暦")
_LUNAR_DAY_NUMBER = r"初\s*(?:[一二三四五六七八九十]|10|[1-9])|[一二三四五六七八九十廿卅]{1,3}|\d{1,2}"
_LUNAR_DATE = re.compile(
    rf"(?P<leap>閏|闰)?\s*(?P<month>正|臘|腊|冬|\d{{1,2}}|[一二三四五六七八九十]{{1,3}})\s*(?:月\s*(?P<day>{_LUNAR_DAY_NUMBER})"
    rf"|/\s*(?P<slash_day>\d{{1,2}}))(?![\d個个場场人位次天點点時时分歲岁塊元碗份/起])")
_LUNAR_MONTH = re.compile(r"(?P<leap>閏|闰)?\s*(?P<month>正|臘|腊|冬|\d{1,2}|[一二三四五六七八九十]{1,3})\s*月(?!\s*[初中底末上下旬])")
_LUNAR_BARE_DAY = re.compile(rf"^\s*(?P<day>{_LUNAR_DAY_NUMBER})(?![\d個个場场人位次天點点時时分歲岁塊元碗份月/])")
#: 初一十五 (vegetarian on the 1st and 15th of each lunar month) is a diet, not a date.
_LUNAR_DIET = re.compile(r"初一\s*[、,跟和及與]?\s*十五")


def _lunar_number(word: str) -> int | None:
    """正 → 1, 臘 → 12, 冬 → 11, 初八 → 8, 十五 → 15, 廿三 → 23, 15 → 15; None when not a number."""
    word = word.replace("初", "").strip()
    named = {"正": 1, "臘": 12, "腊": 12, "冬": 11}
    if word in named:
        return named[word]
    if word.isdigit():
        return int(word)
    import cn2an  # on first use (see _cn_numerals)
    try:
        return int(cn2an.cn2an(word.replace("廿", "二十").replace("卅", "三十"), "smart"))
    except (ValueError, KeyError):
        return None


def _lunar(text: str) -> DateSpec | None:
    """A lunar-calendar date → a LunarDate (閏六月初一: a leap month), a LunarDay (農曆十五: the coming
    one) or a LunarMonth (農曆七月); Unreadable when 農曆 / 舊曆 / 陰曆 is written but no lunar date is
    read (never its solar reading); None when the text names no lunar date.

    Without a prefix only 臘月 / 正月 / 冬月 with a day, and X月初N, are lunar (正月初N is left to
    ``_lunar_day``: the Lunar New Year's days).
    """
    prefix = _LUNAR_PREFIX.search(text)
    if _LUNAR_DIET.search(text):
        return None
    for found in _LUNAR_DATE.finditer(text):
        prefixed = bool(prefix and found.start() >= prefix.end() and not text[prefix.end():found.start()].strip())
        if prefixed or _lunar_without_prefix(found):
            return _lunar_date(found)
    return None if prefix is None else _after_lunar_prefix(text[prefix.end():])


def _lunar_without_prefix(found: re.Match[str]) -> bool:
    """True when a _LUNAR_DATE match is lunar with no 農曆 before it: 臘月 / 冬月 / 正月 with a day, or
    X月初N (正月初N is left to ``_lunar_day``: the Lunar New Year's days)."""
    month_word, day_word = found.group("month"), found.group("day") or found.group("slash_day")
    if found.group("slash_day") or month_word == "正" and day_word.startswith("初"):
        return False
    return month_word in ("臘", "腊", "冬", "正") or bool(re.match(r"初\s*[一二三四五六七八九十]", day_word))


def _lunar_date(found: re.Match[str]) -> DateSpec:
    """A _LUNAR_DATE match → its LunarDate; Unreadable when its month or day is no lunar one."""
    month = _lunar_number(found.group("month"))
    day = _lunar_number(found.group("day") or found.group("slash_day"))
    if month is None or day is None or not (1 <= month <= 12 and 1 <= day <= 30):
        return UNREADABLE
    return LunarDate(month, day, bool(found.group("leap")))


def _after_lunar_prefix(rest: str) -> DateSpec | None:
    """What follows a 農曆 that starts no lunar month-and-day: a lunar month (農曆七月), a lunar
    festival left to _holiday (農曆七夕), a day (農曆十五); Unreadable or None otherwise."""
    month_only = _LUNAR_MONTH.match(rest.lstrip())
    if month_only:
        month = _lunar_number(month_only.group("month"))
        if month is None or not 1 <= month <= 12 or month_only.group("leap"):
            return UNREADABLE
        return LunarMonth(month)
    if any(word in rest for word in _UNREAD_HOLIDAYS):
        return None  # 農曆七夕: the festival's own reading (_holiday: unreadable)
    bare = _LUNAR_BARE_DAY.match(rest)
    if bare:
        day = _lunar_number(bare.group("day"))
        return LunarDay(day) if day is not None and 1 <= day <= 30 else UNREADABLE
    return None


def _lunar_day(text: str) -> DateSpec | None:
    """大年初五 → NewYearDay(5); a bare 初五 → Unreadable; None when there is no lunar day.

    初一十五 (vegetarian on the 1st and 15th, a diet) and 初一到初五 (the holiday block) are left to the
    other readers.
    """
    if "初一十五" in text or "初一到初五" in text:
        return None
    found = _LUNAR_DAY.search(text)
    if found is None:
        return None
    prefix, numeral = found.groups()
    number = int(numeral) if numeral.isdigit() else "一二三四五六七八九十".index(numeral) + 1
    if prefix == "正月" and number == 1:
        return None  # 正月初一: the holiday block, as before
    if prefix:
        return NewYearDay(number)
    return UNREADABLE


#: A named day the calendar does not list and LOCAL does not compute (護士節, 結婚紀念日, 世界地球日):
#: ``unreadable``, never "all dates".
_NAMED_DAY = re.compile(r"[\u4e00-\u9fff]紀念日|(?P<stem>[\u4e00-\u9fff]{1,3})節(?![目省能約奏拍制儉慶日])"
                        r"|世界[\u4e00-\u9fff]{1,4}日|國際[\u4e00-\u9fff]{1,4}日|地球日|志工日")
#: Words ending in 節 that name no day: a season, a detail, a festival that is an event (音樂節 is
#: searched as an event topic), LOCAL's own 蔬食節 campaign.
_NOT_A_DAY = ("季節", "細節", "章節", "環節", "禮節", "關節", "情節", "音節", "調節", "時節", "佳節", "過節", "小節",
              "名節", "氣節", "貞節", "逢年過節")
_FESTIVAL_STEMS = ("音樂", "藝術", "電影", "影", "美食", "文化", "花", "燈", "茶", "酒", "爵士", "動漫", "童玩", "戲劇",
                   "舞蹈", "設計", "農業", "閱讀", "書", "蔬食", "咖啡", "風箏", "海洋", "螃蟹", "搖滾", "親子", "市集")


def _named_day_unread(text: str) -> bool:
    """True when ``text`` names a day (…紀念日, …節, 世界…日) that nothing read (see _NAMED_DAY)."""
    for found in _NAMED_DAY.finditer(text):
        word, stem = found.group(0), found.group("stem")
        if any(word.endswith(other) or other in text[max(0, found.start() - 2):found.end()] for other in _NOT_A_DAY):
            continue
        if stem and stem.endswith(_FESTIVAL_STEMS):
            continue
        return True
    return False


def _calendar_day(text: str) -> DateSpec | None:
    """A day named as the Taiwan calendar names it, public, optional or observed (行憲紀念日, 植樹節,
    婦女節, 開國紀念日, 軍人節) → a Holiday of the calendar's name; None when none is named.

    A name is read whole or by its end (開國紀念日 is 中華民國開國紀念日), at least two characters
    before 紀念日 / 節. Source: python-holidays' Taiwan calendar (categories
    public, optional, workday).
    """
    if not any(end in text for end in CALENDAR_NAME_ENDS):
        return None  # no name can be there: the calendar (holidays) is not loaded for this text
    best: dict[str, int] = {}
    for name in _calendar_names():
        tail = "紀念日" if name.endswith("紀念日") else "節" if name.endswith("節") else ""
        shortest = len(tail) + 2 if tail else len(name)
        size = next((size for size in range(len(name), shortest - 1, -1) if name[-size:] in text), 0)
        if size:
            best[name] = size
    if not best:
        return None
    longest = max(best.values())
    found = [name for name, size in best.items() if size == longest]
    # 誕辰紀念日 alone fits 國父 / 孔子 / 佛陀: which one is not known, so the date is not read
    return Holiday(found[0]) if len(found) == 1 else UNREADABLE


def _holiday(text: str) -> DateSpec | None:
    """A holiday named by LOCAL's words, in English, or by the Taiwan calendar; Unreadable for one
    LOCAL does not compute (七夕, 冬至, 護士節); None when none is named."""
    if "七夕" in text:
        return UNREADABLE  # 七夕情人節 is lunar 7/7, not 2/14
    return _local_holiday(text) or _english_date(text) or _calendar_or_unread(text)


def _local_holiday(text: str) -> DateSpec | None:
    """LOCAL's own holiday words: 聖誕 / 跨年 / 元旦 …, the Lunar New Year's, the calendar's spoken
    names (清明, 中秋 …) and the computed days (元宵, 母親節)."""
    for word, month_day in _FIXED_HOLIDAYS:
        if word in text:
            return month_day
    if any(word in text for word in _LUNAR_EVE_WORDS):
        return Holiday("農曆除夕")
    if any(word in text for word in _LUNAR_WORDS):
        return _LUNAR_NEW_YEAR
    for word, name in _HOLIDAY_ALIASES:
        if word in text:
            return Holiday(name)
    for word, value in _COMPUTED_HOLIDAYS:
        if word in text:
            return value
    return None


def _english_date(text: str) -> DateSpec | None:
    if not _LATIN.search(text):  # every English date word has a Latin letter: no scan of them otherwise
        return None
    return next((value for pattern, value in _ENGLISH_DATE if pattern.search(text)), None)


def _calendar_or_unread(text: str) -> DateSpec | None:
    """A day the Taiwan calendar names, or Unreadable for a named day nothing reads; else None."""
    if any(word in text for word in _UNREAD_HOLIDAYS):
        return UNREADABLE
    named = _calendar_day(text)
    if named is not None:
        return named
    return UNREADABLE if _named_day_unread(text) else None


def _weeks_of(which: str) -> int | None:
    """A week prefix → weeks from this one: 上上 −2, 上 −1, 這 / 本 0, 下 1, 下下 2; None when there is none."""
    if not which:
        return None
    if which.startswith(("上上", "下下")):
        return -2 if which.startswith("上") else 2
    if which.startswith(("上", "下")):
        return -1 if which.startswith("上") else 1
    return 0


def _week(text: str) -> DateSpec | None:
    """A week phrase; a named day beats a weekend (這週末的週六 → the coming Saturday, 下週末的週日 →
    next week's Sunday)."""
    if re.search(rf"(?:上上上|下下下)[個个]?\s*(?:{_WEEK}|月)", text):
        return UNREADABLE  # 下下下週三, 上上上個週末: three weeks away is not read, never this week
    values = [value for value in (_week_value(match) for match in _WEEK_PHRASE.finditer(text)) if value]
    if not values:
        found = _BARE_WEEKEND.search(text)
        return None if found is None else Week(_weeks_of(found.group(1) or "") or 0, weekend=True)
    return UNREADABLE if UNREADABLE in values else _day_beats_weekend(values)


def _day_beats_weekend(values: list[DateSpec]) -> DateSpec:
    """The week phrases read, as one: a named day in a weekend's week (下週末的週日: next week's
    Sunday), else the first day, weekend or week."""
    weekends = [value for value in values if isinstance(value, Week) and value.weekend]
    days = [value for value in values if isinstance(value, Weekday)]
    if weekends and days:
        day, weeks = days[0], weekends[0].weeks
        if weeks in (1, -1) and day.weeks is None and day.day in (5, 6):
            return Weekday(day.day, weeks)  # 下週末的週日: next week's Sunday
        return day
    return (days or weekends or values)[0]


def _week_value(match: re.Match[str]) -> DateSpec | None:
    """One week phrase → a Week or Weekday; None when it is not a week (拜拜, 一星期)."""
    which, day, second = match.group(1) or "", match.group(2), match.group(3)
    weeks = _weeks_of(which)
    if weeks in (-2, 2):  # 下下禮拜天, 上上週三, 下下週末, 下下個禮拜: two weeks away
        return _two_weeks_away(weeks, day, second)
    if day is None:
        if match.group(0).strip() in ("拜", "星期") or not which:
            return None  # 拜拜, 一星期: not a week
        return Week(weeks or 0)
    weekday = _WEEKDAYS[day]
    if weekday is None or (day == "六" and second in ("日", "天")) or (day == "日" and second == "六"):
        return Week(weeks or 0, weekend=True)  # 週末, 週六日, 禮拜日六
    return Weekday(weekday, weeks)


def _two_weeks_away(weeks: int, day: str | None, second: str | None) -> DateSpec:
    """下下 / 上上 with a week word: the week (下下禮拜), its weekend (下下週末, 下下週六日) or a day."""
    weekday = _WEEKDAYS[day] if day else None
    if weekday is None or (weekday == 5 and second in ("日", "天")):
        return Week(weeks, weekend=day is not None)
    return Weekday(weekday, weeks)


_DAY_CUE = re.compile(r"[天晚日早夜月]")
_DAY_WORDS_RE: tuple[tuple[re.Pattern[str], DateSpec], ...] = tuple((re.compile(pattern), value)
                                                                     for pattern, value in _DAY_WORDS)


def _day_words(text: str) -> list[DateSpec]:
    """The day words of ``text`` (今天, 大後天 …) in order, longest first where they overlap (後天 inside
    大後天 is not a second day).

    Cost: one scan per word, and per match a look at the characters it covers (a word already taken
    marks its characters), so linear in ``len(text)`` however many day words it repeats."""
    if not _DAY_CUE.search(text):
        return []  # every day word holds one of these characters
    taken: list[tuple[int, int, DateSpec]] = []
    covered = bytearray(len(text))
    for pattern, value in _DAY_WORDS_RE:  # listed longest first
        for found in pattern.finditer(text):
            if not any(covered[found.start():found.end()]):
                taken.append((found.start(), found.end(), value))
                covered[found.start():found.end()] = b"\x01" * (found.end() - found.start())
    return [value for _, _, value in sorted(taken, key=lambda taken_word: taken_word[0])]


#: Two dates joined (後天跟大後天, 明天或週六, 這週末和下週末, 聖誕節跟跨年): both are read. Each side is
#: the words next to the joiner, up to a space or a sentence mark.
_PAIR_JOIN = re.compile(r"跟|和|與|及|以及|或是|或者|或|還是|、|到|至|~|～|-|－|—|–")
#: Joiners that make a range from the first date to the second (下週一到週三, 週三~週五): the end is
#: never before the start.
_RANGE_JOINERS = ("到", "至", "~", "～", "-", "－", "—", "–")
_PAIR_SIDE_END = re.compile(r"[\s，,。？?！!；;]")
#: A weekday written alone after a weekday and a joiner: 下週三到五, 禮拜一至三.
_BARE_WEEKDAY_WORD = re.compile(r"^\s*([一二三四五六日天])(?![一二三四五六七八九十百千\d家個个間点點號号次位些起樣样人份碗天日月年週周])")


def _weekday_of(value: DateSpec | None) -> int | None:
    """The weekday (0 = Monday) of a bare weekday (the coming one: 週三, 週六); else None."""
    return value.day if isinstance(value, Weekday) and value.weeks is None else None


def _second_of(first: DateSpec, second: DateSpec | None, right: str) -> DateSpec | None:
    """The second date of a pair, in the first's week when it is a bare weekday (下週三到週五, 下週三到五).

    Args:
        first: the first side's date.
        second: the second side's date, or None when it read no date.
        right: the second side's text (a weekday alone, 五, is read after a weekday).
    """
    if second is None and isinstance(first, Weekday):
        word = _BARE_WEEKDAY_WORD.match(right)
        if word:
            second = Weekday(_WEEKDAYS[word.group(1)] or 0)  # 一 … 日 / 天: never 末
    weekday = _weekday_of(second)
    if weekday is not None and isinstance(first, Weekday) and first.weeks is not None:
        return Weekday(weekday, first.weeks)  # 下週三到週五: next week's Friday
    return second


#: The most joiners ``_pair`` looks at, and the most characters of each side it reads (the words
#: next to a joiner): a resident's two dates are joined within a few words, and these bound the
#: pair rule's work per message whatever the text (each side is read once per joiner).
PAIR_JOINS_MAX = 16
PAIR_SIDE_MAX = 64


def _pair(text: str, first: DateSpec) -> DateSpec | None:
    """Both(…) when ``text`` joins two dates and ``first`` (the one read) is one of them; Range(…)
    when the joiner is 到 / 至 / ~ / - (from the first to the second); None otherwise (one date, or a
    reading that already covers both: 12/5到12/7, 週六和週日).

    A week prefix on the first side carries to a bare weekday on the second (下週三到週五 is next
    week's Wednesday to Friday; 下週六跟週日 next week's two days). Each side is the words next to the
    joiner up to a space or a sentence mark, at most PAIR_SIDE_MAX characters; the first
    PAIR_JOINS_MAX joiners are tried. Cost: one scan for the joiners and one for the sentence marks,
    then at most PAIR_JOINS_MAX times three readings of at most PAIR_SIDE_MAX characters.

    """
    ends = [found.start() for found in _PAIR_SIDE_END.finditer(text)]  # where a side stops
    for tried, join in enumerate(_PAIR_JOIN.finditer(text)):
        if tried == PAIR_JOINS_MAX:
            break
        left, right = _pair_sides(text, join, ends)
        joined = _joined(first, left, right, ranged=join.group(0) in _RANGE_JOINERS) \
            if left.strip() and right.strip() else None
        if joined is not None:
            return joined
    return None


def _pair_sides(text: str, join: re.Match[str], ends: list[int]) -> tuple[str, str]:
    """The words before and after a joiner, spaces next to it skipped (下週一 到 週三), each up to the
    nearest space or sentence mark (``ends``: where those are, in order) and at most PAIR_SIDE_MAX
    characters. Cost: the spaces skipped, and two binary searches in ``ends``."""
    stop, start = join.start(), join.end()
    while stop > 0 and text[stop - 1].isspace():
        stop -= 1
    while start < len(text) and text[start].isspace():
        start += 1
    before = bisect.bisect_left(ends, stop)  # how many ends lie before ``stop``
    left_from = ends[before - 1] + 1 if before else 0
    after = bisect.bisect_left(ends, start)
    right_to = ends[after] if after < len(ends) else len(text)
    return text[max(left_from, stop - PAIR_SIDE_MAX):stop], text[start:min(right_to, start + PAIR_SIDE_MAX)]


def _joined(first: DateSpec, left: str, right: str, *, ranged: bool) -> DateSpec | None:
    """The two dates of one joiner's sides as Both / Range, when ``first`` is one of them; None when a
    side reads no date, both read the same, or ``first`` is neither (see _pair)."""
    left_value = _one_date(left)
    right_value = _second_of(left_value, _one_date(right), right) if left_value else None
    if left_value is None or right_value is None or left_value == right_value:
        return None
    days = ranged and isinstance(left_value, RelativeDay) and isinstance(right_value, RelativeDay) \
        and first == Days(left_value, right_value)  # 後天到明天: a range, never re-ordered
    if first not in (left_value, right_value, _one_date(right)) and not days:
        return None
    if UNREADABLE in (left_value, right_value):
        return UNREADABLE  # 冬至跟聖誕節: one of the two is not read, so neither is searched alone
    return Range(left_value, right_value) if ranged else Both(left_value, right_value)


#: Where a date is written, for two dates side by side with no joiner (禮拜六禮拜日, 12/5 12/6, 週六 週日).
_MENTION = re.compile(rf"(?:上上|下下|上一?[個个]?|下一?[個个]?|這一?[個个]?|这[個个]?|本)?\s*{_WEEK}\s*[一二三四五六日天]"
                      r"|(?<![\d/:.])\d{1,2}\s*(?:/\s*\d{1,2}|月\s*\d{1,2}\s*[日號号]?)(?![\d/])"
                      r"|大後天|大前天|後天|前天|昨天|明天|今天|今晚|明晚")
#: The kinds that name one day, or a day of a week: the ones that may stand side by side.
_DAY_KINDS = (Weekday, MonthDay, RelativeDay)


def _side_by_side(text: str, first: DateSpec) -> DateSpec | None:
    """Both(…) for dates written side by side with no joiner (禮拜六禮拜日, 週六 週日, 12/5 12/6,
    下週六週日): the first and the last of the run, the week prefix carried as in _pair.
    None when no two days stand side by side, or ``first`` is not the run's first date.

    """
    mentions = list(_MENTION.finditer(text))
    for index, found in enumerate(mentions):
        run = [found]
        for following in map(mentions.__getitem__, range(index + 1, len(mentions))):  # no copy of the rest
            if text[run[-1].end():following.start()].strip():
                break
            run.append(following)
        if len(run) < 2:
            continue
        one, other = _one_date(found.group(0)), _one_date(run[-1].group(0))
        if one != first or not isinstance(one, _DAY_KINDS) or not isinstance(other, _DAY_KINDS):
            return None
        other = _second_of(one, other, "")
        return Both(one, other) if other and one != other else None
    return None


#: Texts up to this long are read once per process and remembered (the router and the detail reader
#: read the same short clauses and words many times); longer ones are read each time.
MEMO_CHARS = 64


def _memo_short(read: Callable[[str], DateSpec | None]) -> Callable[[str], DateSpec | None]:
    """``read`` with its answers for texts of at most MEMO_CHARS characters remembered (the last 4,096):
    a message that repeats a short clause pays for its reading once. ``read`` must be pure; a DateSpec
    is frozen, so a remembered answer cannot be changed by its caller."""
    remembered = functools.lru_cache(maxsize=4096)(read)

    @functools.wraps(read)
    def reading(text: str) -> DateSpec | None:
        return remembered(text) if len(text) <= MEMO_CHARS else read(text)
    reading.cache_clear = remembered.cache_clear  # type: ignore[attr-defined]
    return reading


@_memo_short
def read_date(text: str) -> DateSpec | None:
    """The date a message asks about, or None when it names none.

    Pure (no clock: the DateSpec resolves itself with the turn's day). Taiwanese and colloquial words
    are read as their Mandarin forms first. A lunar date wins (a 農曆 not read is Unreadable), then the
    most specific form: a written date, a holiday, a month alone, a week phrase, a day word (今天 …),
    a month word (下個月 …). Two dates joined (明天或週六) or side by side (禮拜六禮拜日) are Both; a
    range (下週一到週三) is a Range.

    Args:
        text: the message in its reading form (shared.text.reading_form), never logged.
    Returns:
        A DateSpec (shared.turn.datespec); Unreadable when the text names a date that none of these
        read (12/1/3, 下下下週, 大大後天, 護士節, 農曆那幾天); None when it names no date.
    """
    text = _cn_numerals(_whole_words(_colloquial(text)))
    first = _one_date(text)
    if first is None or first == UNREADABLE:
        return first
    return _pair(text, first) or _side_by_side(text, first) or first


@_memo_short
def _one_date(text: str) -> DateSpec | None:
    """read_date without the pair rule, on text whose Chinese numerals are already digits."""
    if _WHICH_LEFT_OUT.search(text):
        return UNREADABLE
    lunar = _lunar(text)
    if lunar is not None:
        return lunar
    if _LUNAR_PREFIX.search(text) and not _LUNAR_DIET.search(text):  # 農曆 … not read above: never a solar date
        value = _lunar_day(text) or _holiday(text)
        return value if value in _LUNAR_HOLIDAYS or isinstance(value, NewYearDay) else UNREADABLE
    for reader in (_written, _lunar_day, _holiday):
        value = reader(text)
        if value is not None:
            return _long_weekend(text, value)
    return _month_alone(text) or _week(text) or _day_word_date(text)


def _long_weekend(text: str, value: DateSpec) -> DateSpec:
    """元旦連假: a holiday or month-day said with 連假 is that holiday with the days off joined to it."""
    if "連假" not in text or value == _LUNAR_NEW_YEAR:  # 過年連假: already the whole block
        return value
    if isinstance(value, Holiday) or isinstance(value, MonthDay) and value.year is None:
        return LongWeekend(value)
    return value


def _month_alone(text: str) -> DateSpec | None:
    """1月, 12月 (the nearest such month); 年底 / 年尾 (the nearest December), 年初 (January)."""
    month = _MONTH_ONLY.search(text)
    if month:
        return Month(int(month.group(1)))
    for words, value in ((("年底", "年尾", "歲末"), Month(12)), (("年初",), Month(1))):
        if any(word in text for word in words):
            return value
    return None


def _day_word_date(text: str) -> DateSpec | None:
    """The day words of ``text`` (今天, 明天跟後天: both days and any between); Unreadable for one not
    read (大大後天) or a text that clearly names a date nothing read (_DATE_CUE); else None."""
    days = _day_words(text)
    if UNREADABLE in days:
        return UNREADABLE  # 大大後天: not read, never another day
    relative = [day for day in days if isinstance(day, RelativeDay)]
    if len(set(days)) >= 2 and len(relative) == len(days):
        return Days(relative[0], relative[-1])  # 明天跟後天: both days, and any between
    if days:
        return days[0]
    return UNREADABLE if _DATE_CUE.search(text) else None


_LUNAR_NEW_YEAR = Holiday("lunar_new_year")
#: Holidays of the lunar calendar, so 農曆新年 / 農曆除夕 / 農曆端午 keep their reading.
_LUNAR_HOLIDAYS = (_LUNAR_NEW_YEAR, Holiday("農曆除夕"), Holiday("lantern"), Holiday("端午節"), Holiday("中秋節"))


#: The last character of every name the Taiwan calendar gives a day (…紀念日, …節, 國慶日, 農曆除夕).
#: A name is read by its end, so a text with none of these names no day; tested against the calendar.
CALENDAR_NAME_ENDS = ("日", "節", "夕")


@functools.lru_cache(maxsize=1)
def _calendar_names() -> tuple[str, ...]:
    """Every name the Taiwan calendar gives a day (補假 and joined names split), longest first.

    A vocabulary, not a date: read from a fixed span of years (2024–2030) so it needs no clock.
    """
    names: set[str] = set()
    for _, title in tw_calendar(2027, named=True) + tw_calendar(2029, named=True):
        for name in title.split(";"):
            names.add(name.replace("（補假）", "").strip())
    return tuple(sorted((name for name in names if name), key=len, reverse=True))
