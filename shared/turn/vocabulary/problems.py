"""Words of a problem for the town hall (a blocked drain, a broken street light, rubbish not collected),
and of the question said around it (順便問一下 … 要找誰).

Data only: the rules that read them are in shared.turn.rules.problems.
"""
from __future__ import annotations

import re

#: A problem in the street or the neighbourhood that the township office or the county handles
#: (水溝堵住了, 路燈壞了, 垃圾沒人收, 路上有坑洞), read on the reading form.
PROBLEM = re.compile(
    r"(?:水溝|排水溝|溝渠|下水道|水溝蓋|水管|自來水管|路燈|燈|馬路|路面|道路|人行道|號誌|紅綠燈|樹|樹枝|電線|招牌|橋)"
    r"[^，。？?！!\s]{0,4}(?:壞|破|堵|塞|不通|斷|倒|不亮|不會亮|沒亮|沒有亮|積水|漏水|淹水|掉下|歪|故障|一直閃"
    r"|臭|不見|被偷|裂|凹|下陷|翹起|有洞)"
    r"|坑洞|凹洞|破洞|路(?:上|面)?(?:有)?(?:洞|坑)|(?:馬路|路面|路上|人行道|巷子|巷口)[^，。？?！!\s]{0,5}(?:洞|坑)"
    r"|積水|淹水"
    r"|垃圾[^，。？?！!\s]{0,4}(?:沒人收|沒有人收|沒收|沒來收|不收|堆|亂丟|沒人處理|沒人管)|(?:沒人|沒有人)(?:來)?收垃圾"
    # 垃圾車都不來, 垃圾車沒有來, 垃圾車過站不停
    r"|垃圾車[^，。？?！!\s]{0,4}(?:不來|沒來|沒有來|沒到|不到|沒經過|不經過|不停|沒停|過站|提早|太早)"
    r"|(?:流浪狗|野狗|流浪貓)[^，。？?！!\s]{0,4}(?:很多|好多|咬|追|亂|吠|叫|擋)"
    r"|(?:好多|很多|一堆|一群|成群)的?(?:流浪狗|野狗|流浪貓)"
    # noise: 隔壁工廠噪音很大, 半夜施工很吵
    r"|噪音|(?:很|好|太|超)吵|吵得|吵到|吵死|擾鄰"
    r"|違規停車|亂停車|車子亂停|廢棄車")
#: Simplified forms of the Traditional characters in the patterns below, which are read on the message as
#: typed (the words offered are the resident's own, not their reading form: OpenCC writes 社區 as 社群).
_SIMPLIFIED = {"請": "请", "問": "问", "誰": "谁", "該": "该", "麼": "么", "辦": "办", "處": "处", "裡": "里",
               "個": "个", "單": "单", "給": "给", "電": "电", "話": "话", "應": "应", "嗎": "吗", "負": "负",
               "責": "责", "會": "会", "順": "顺", "說": "说", "還": "还", "對": "对", "後": "后", "們": "们",
               "這": "这", "沒": "没", "門": "门", "題": "题"}


def _either(pattern: str) -> str:
    """``pattern`` with each Traditional character of ``_SIMPLIFIED`` read in either script."""
    return "".join(f"[{c}{_SIMPLIFIED[c]}]" if c in _SIMPLIFIED else c for c in pattern)


#: Where a clause ends or another starts: a sentence end or a comma, a space, or a word that brings in
#: another matter (順便問一下, 另外, 還有, 對了).
CLAUSE_BREAK = re.compile(r"[？?！!。；;\n，,、]+|\s+|" + _either(r"順便(?:問一下|問|說一下|說|請問)?|另外|還有(?![\d\s]*\d)|對了|然後"))
#: Words that only lead into a clause (請問, 想問, 我想說).
LEAD = re.compile(_either(r"^(?:請問|想問|我想問|問一下|我想說|跟你說|跟你們說|那個|就是)+"))
#: The question asked about the problem, after its words (要找誰, 該打給誰, 怎麼辦): not part of the problem.
ASKED_ABOUT = re.compile(_either(r"(?:(?:要|該|可以|能|得|應該)?(?:找誰|找哪裡|找哪個單位|打給誰|打去哪|打哪支電話|問誰|反映給誰"
                                 r"|怎麼辦|怎麼處理|誰處理|誰管|誰負責|有人管嗎|可以處理嗎|能處理嗎|能修嗎|可以修嗎|會修嗎)"
                                 r"|嗎|呢|啊|耶|欸|啦)+$"))
