"""Date and holiday words, as data: the holidays LOCAL names itself, English day words, lunar holidays it
does not compute, spoken names of the calendar's holidays, day and month words and Taiwanese day words.

Data only: shared.turn.dates reads them (the Taiwan calendar's own names come from the ``holidays``
package there).
"""
from __future__ import annotations

from shared.turn.datespec import DateSpec, Holiday, MonthDay, RelativeDay, RelativeMonth, Unreadable, Week

#: LOCAL's words for days the Taiwan calendar names differently or does not list (the date part
#: of 跨年 is 12/31; 聖誕節 is 12/25, which the calendar lists as 行憲紀念日).
FIXED_HOLIDAYS: tuple[tuple[str, DateSpec], ...] = (
    ("聖誕夜", MonthDay(12, 24)), ("平安夜", MonthDay(12, 24)), ("聖誕", MonthDay(12, 25)), ("耶誕", MonthDay(12, 25)),
    ("跨年", MonthDay(12, 31)), ("元旦", MonthDay(1, 1)), ("情人節", MonthDay(2, 14)), ("萬聖節", MonthDay(10, 31)),
    ("父親節", MonthDay(8, 8)),
)

#: English holiday and day words (on the case-folded reading form, as whole words). Longer phrases
#: first: "chinese new year" before "new year", "christmas eve" before "christmas".
ENGLISH_DATES: tuple[tuple[str, DateSpec], ...] = (
    (r"christmas eve|x[\'’]?-?mas eve", MonthDay(12, 24)), (r"christmas|x[\'’]?-?mas|xmas", MonthDay(12, 25)),
    (r"(?:chinese|lunar) new year'?s? eve", Holiday("農曆除夕")),
    (r"chinese new year|lunar new year|cny|spring festival", Holiday("lunar_new_year")),
    (r"new year'?s? eve|nye", MonthDay(12, 31)), (r"new year'?s?(?: day)?", MonthDay(1, 1)),
    (r"valentine'?s?(?: day)?", MonthDay(2, 14)), (r"halloween", MonthDay(10, 31)),
    (r"lantern festival", Holiday("lantern")), (r"mother'?s day", Holiday("mothers_day")),
    (r"father'?s day", MonthDay(8, 8)),
    (r"dragon boat(?: festival)?", Holiday("端午節")), (r"mid-?\s?autumn(?: festival)?|moon festival", Holiday("中秋節")),
    (r"tomb[- ]sweeping(?: day)?|qingming", Holiday("民族掃墓節")), (r"double ten|national day", Holiday("國慶日")),
    (r"children'?s day", Holiday("兒童節")), (r"labou?r day", Holiday("勞動節")),
    (r"day after tomorrow", RelativeDay(2)), (r"tomorrow|tmr|tmrw", RelativeDay(1)), (r"tonight|today", RelativeDay(0)),
    (r"yesterday", RelativeDay(-1)), (r"next weekend", Week(1, weekend=True)),
    (r"last weekend", Week(-1, weekend=True)),
    (r"(?:this )?weekend", Week(0, weekend=True)), (r"next week", Week(1)), (r"last week", Week(-1)),
    (r"this week", Week(0)), (r"next month", RelativeMonth(1)), (r"last month", RelativeMonth(-1)),
    (r"this month", RelativeMonth(0)),
)

#: Holidays of the lunar calendar that the Taiwan calendar does not list and LOCAL does not compute:
#: named, they are ``unreadable`` (「我看不懂這個日期」 with choices), never "all dates".
UNREAD_HOLIDAYS = ("七夕", "中元", "重陽", "尾牙", "冬至", "臘八", "臘月", "寒假", "暑假", "boxing day", "媽祖生", "清明連假", "連假", "easter", "thanksgiving")

#: 元宵 is lunar 1/15: the calendar's first 春節 day (lunar 1/1) + 14 days. 母親節: the second Sunday of May.
COMPUTED_HOLIDAYS: tuple[tuple[str, DateSpec], ...] = (("元宵", Holiday("lantern")), ("母親節", Holiday("mothers_day")))

#: Words for the Lunar New Year, read from the calendar: the eve, and the whole holiday block.
LUNAR_EVE_WORDS = ("除夕", "小年夜")

LUNAR_WORDS = ("正月初", "過年", "春節", "農曆新年", "農曆年", "舊曆年", "大年初一", "初一到初五", "年假")

#: Spoken names of Taiwan calendar holidays → a word of the calendar's own (zh_TW) name.
HOLIDAY_ALIASES: tuple[tuple[str, str], ...] = (
    ("二二八", "和平紀念日"), ("228", "和平紀念日"), ("清明", "民族掃墓節"), ("掃墓", "民族掃墓節"),
    ("雙十", "國慶日"), ("國慶", "國慶日"), ("勞動節", "勞動節"), ("端午", "端午節"),
    ("中秋", "中秋節"), ("兒童節", "兒童節"), ("教師節", "孔子誕辰紀念日"), ("光復節", "臺灣光復"),
    ("行憲", "行憲紀念日"), ("國父誕辰", "國父誕辰紀念日"), ("國父逝世", "國父逝世紀念日"), ("佛誕", "佛陀誕辰紀念日"),
    ("浴佛", "佛陀誕辰紀念日"), ("孔子誕辰", "孔子誕辰紀念日"),
)

#: Day and month words, read as relative days and months (大大後天 is no date LOCAL reads).
DAY_WORDS: tuple[tuple[str, DateSpec], ...] = (
    ("大大後天", Unreadable()), ("大大前天", Unreadable()), ("(?:上上|下下)一?[個个]?\\s*月", Unreadable()),
    ("大後天", RelativeDay(3)), ("大前天", RelativeDay(-3)),
    ("後天", RelativeDay(2)), ("前天", RelativeDay(-2)),
    ("昨天", RelativeDay(-1)), ("昨晚", RelativeDay(-1)), ("昨日", RelativeDay(-1)),
    ("明天", RelativeDay(1)), ("明晚", RelativeDay(1)), ("明早", RelativeDay(1)), ("明日", RelativeDay(1)),
    ("今天", RelativeDay(0)), ("今晚", RelativeDay(0)), ("今日", RelativeDay(0)), ("今早", RelativeDay(0)),
    ("今夜", RelativeDay(0)),
    ("下一?[個个]?\\s*月", RelativeMonth(1)), ("上一?[個个]?\\s*月", RelativeMonth(-1)),
    ("(?:這|这|本)一?[個个]?\\s*月", RelativeMonth(0)),
)

#: Taiwanese and colloquial day words → the Mandarin words read below (longest first). 今仔日 = 今天,
#: 明仔載 / 明仔再 = 明天, 後日 = 後天, 落後日 = 大後天, 昨昏 = 昨天, 頂禮拜 = 上禮拜, 後禮拜 = 下禮拜, 月尾 = 月底.
COLLOQUIAL: tuple[tuple[str, str], ...] = (
    (r"今仔暗|今暗|今夜", "今晚"), (r"今仔日", "今天"),
    (r"明仔暗", "明晚"), (r"明仔載|明仔再|明仔早|明仔日|明仔", "明天"),
    (r"落後日", "大後天"), (r"(?<![最之以然午往])後日(?![本子期])", "後天"),
    (r"昨昏|昨暗|昨暝|昨眠", "昨天"), (r"(?<![提日])前日(?![本子期])", "前天"),
    (r"(?<![山屋樓楼])頂頂(?:[個个])?(?=禮拜|星期|週|周|拜)", "上上"),
    (r"(?<![山屋樓楼])頂(?:[個个])?(?=禮拜|星期|週|周|拜)", "上"),
    (r"頂[個个]?月", "上個月"),
    (r"(?<![之以然最午往飯])後(?:[個个])?(?=禮拜|礼拜)", "下"),
    (r"月尾", "月底"), (r"元月", "1月"),
    (r"今明兩?天|這兩天|这两天", "今天跟明天"), (r"明後兩?天", "明天跟後天"),
    (r"(?<![國定續例休節])假日", "週末"),
)
