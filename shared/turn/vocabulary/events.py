"""Words of an events ask: event words, topics (a resident's word → the snapshot's), event kinds said after a
title-like word, and the topics a suitability question names.

Data only: the rules that read them are in shared.turn.router and its families.
"""
from __future__ import annotations

#: Words that ask for events (docs/design.md §5).
EVENT_WORDS: tuple[str, ...] = (
    "活動", "市集", "展覽", "講座", "走讀", "表演", "節目", "課程", "好玩", "去哪玩", "玩什麼", "音樂會",
    "演唱", "祭典", "廟會", "踩街", "晚會", "體驗營", "演講", "工作坊", "研習", "電影", "比賽", "路跑", "燈會",
    "特展", "畫展",
    # in English (What events are there in Huatan?), read after case-folding
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
    # the kind of event asked for (講座, 音樂表演, 展覽 …) filters too, or is said unmatched
    ("講座", "講座"), ("演講", "講座"), ("研習", "研習"), ("課程", "課程"), ("上課", "課程"), ("工作坊", "工作坊"),
    ("音樂", "音樂"), ("演唱", "音樂"), ("唱歌", "音樂"), ("合唱", "音樂"), ("表演", "表演"), ("演出", "表演"),
    ("戲劇", "戲劇"), ("布袋戲", "戲劇"), ("歌仔戲", "戲劇"), ("舞蹈", "舞蹈"), ("跳舞", "舞蹈"),
    ("展覽", "展覽"), ("畫展", "展覽"), ("特展", "展覽"), ("展出", "展覽"), ("電影", "電影"), ("放映", "電影"),
    ("祭典", "祭典"), ("廟會", "廟會"), ("遶境", "遶境"), ("踩街", "踩街"), ("晚會", "晚會"), ("體驗營", "體驗營"),
    ("比賽", "比賽"), ("路跑", "路跑"), ("馬拉松", "路跑"), ("煙火", "煙火"), ("燈會", "燈會"),
)

#: Diet words are also event topics inside an events question (有蔬食的市集嗎).
EVENT_DIET_TOPICS: tuple[tuple[str, str], ...] = (("蔬食", "蔬食"), ("素食", "蔬食"), ("吃素", "蔬食"))

#: Kinds of event said after a title-like word (龍舟賽, 燈籠展, 媽祖祭, 花卉嘉年華), besides EVENT_WORDS.
EVENT_KINDS = r"(?:嘉年華|博覽會|音樂節|藝術節|文化節|燈節|花季|賽|展|祭)"

#: The topic a suitability question names (老人家可以去嗎 → 長輩): not a filter when it is asked that way.
SUITABILITY_TOPICS = {"老人家": "長輩", "老人": "長輩", "長輩": "長輩", "長者": "長輩", "阿公": "長輩", "阿嬤": "長輩",
               "銀髮族": "長輩", "小孩": "親子", "小朋友": "親子", "孩子": "親子", "兒童": "親子", "小孩子": "親子"}
