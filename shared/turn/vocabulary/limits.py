"""Words of what LOCAL has no data or tool for: each limit kind with the words that ask for it.
Crisis (suicidal intent, self-harm, despair) is read by shared.turn.crisis.

Data only: the rules that read them are in shared.turn.router and its families.
"""
from __future__ import annotations

import re

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
                 # 會不會很冷 要帶外套嗎
                 "會不會很冷", "會不會冷", "會不會很熱", "會不會熱", "很冷嗎", "很熱嗎", "外套", "雨傘", "幾度")),
)

#: Limits that may sit beside a search: the search runs and the reply says the limit too.
SIDE_LIMITS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("no_booking", ("訂位", "預約", "預訂", "訂餐", "訂桌", "幫我訂", "訂兩", "訂一", "外送")),
    ("no_hours", ("幾點開", "幾點關", "開到幾點", "營業", "有開", "開著", "開門", "公休", "休息嗎", "現在開",
                  "還開", "幾點打烊", "打烊")),
    ("no_price", ("多少錢", "價格", "價錢", "費用", "收費", "免費", "要錢", "幾塊", "貴不貴", "便宜", "菜單", "門票",
                  "票價", "入場費", "報名費")),
    ("no_registration", ("報名",)),
    # pets (what to bring and distance are read by patterns: shared.turn.router)
    ("no_pets", ("帶狗", "帶貓", "寵物", "毛小孩", "狗狗", "狗可以", "貓可以", "牽狗")),
)

# -- what LOCAL cannot help with, by kind (read by shared.turn.rules.limits: fraud, stance, off_topic) --------

#: A scam named as such, or a suspicious call or message (這是不是詐騙, 接到奇怪的電話).
SCAM_SAID = re.compile(r"詐騙|被騙|騙子|騙錢|騙人|詐財|是不是騙|(?:可疑|奇怪|陌生)的?(?:電話|來電|簡訊|訊息|人)")
#: Someone posing as an official or a company (自稱檢察官, 假冒健保局, 冒充警察).
IMPERSONATION = re.compile(r"自稱|假冒|冒充|冒名|假扮|假裝是")
#: Money asked for: a transfer, a withdrawal, a deposit or fee, gift cards, a "safe" account (要先匯錢,
#: 要我去領錢, 要監管帳戶).
MONEY_ASKED = re.compile(r"匯款|匯錢|匯過去|匯給|轉帳|轉錢|轉過去|領錢|領出|提款|提領|ATM|atm|監管帳戶|安全帳戶|保證金"
                         r"|手續費|解除分期|點數卡|遊戲點數|買點數|保釋金|交保|虛擬貨幣|比特幣|存摺|提款卡|密碼"
                         # 要我匯20萬, 要借錢, 借我五萬, 先付錢, 要繳罰款
                         r"|匯\s*[0-9一二兩三四五六七八九十百千萬]|借錢|借我|借[0-9一二兩三四五六七八九十百千萬]"
                         r"|付錢|付款|先付|要付|繳錢|繳款|先繳|要繳|罰款|贖金|給錢|拿錢|送錢|寄錢")
#: What a scam says first: a prize, an account in trouble, an official, or a caller (有人打電話說我中獎).
SCAM_STORY = re.compile(r"中獎|中大獎|抽中|得獎|帳戶[^，。？?]{0,3}(?:盜用|凍結|異常|冒用|被用)|洗錢|涉(?:嫌|案)|通緝|"
                        r"檢察官|法院|地檢署|警察|警官|法官|健保局|健保署|國稅局|打電話|來電|簡訊|有人(?:說|叫|要|傳)"
                        # a caller or a message (打來, line 傳來), or a relative in danger or with a new number
                        r"|打來|傳來|傳訊|line ?傳|綁架|綁票|撞到人|出車禍|車禍|被抓|被關|被打|"
                        r"換(?:了)?(?:新)?(?:號碼|電話|手機|門號|line)|新號碼")
#: An account in trouble said alone (說我帳戶被盜用): the first step of a known scam.
ACCOUNT_TROUBLE = re.compile(r"帳戶[^，。？?]{0,3}(?:被盜用|被凍結|被冒用|被人用|涉案)|監管帳戶|安全帳戶")
#: A kidnapping told by a caller (有人打電話說我兒子被綁架): a known scam script even before money is named.
KIDNAP = re.compile(r"綁架|綁票|撕票")
#: A caller or a message (打電話, 打來, 來電, 簡訊, line 傳來): who tells a scam story.
CALLER = re.compile(r"打電話|打來|來電|電話[^，。？?]{0,3}說|接到[^，。？?]{0,4}電話|簡訊|訊息|line|賴|傳來|有人(?:說|叫|要|傳)")
#: Who a scam poses as: an office, the police, a court, a bank or a phone company (說是健保局, 銀行來電).
OFFICE_POSED = re.compile(r"健保局|健保署|檢察官|地檢署|警察|警官|警局|法院|法官|銀行|電信公司|中華電信|電信|國稅局"
                          r"|戶政|郵局|客服|金管會|調查局")
#: What a posed office says went wrong: a card, an account or a number stolen or misused, or a call put
#: through to a prosecutor (卡被盜用, 門號被冒用, 要轉接檢察官, 帳戶要監管).
MISUSE = re.compile(r"盜用|冒用|盜刷|被盜|被冒|轉接|監管|凍結|涉案|涉嫌|洗錢|通緝|出庭|傳票|人頭帳戶|偽造")

#: Politics and elections: whom to vote for, a party, a candidate (你支持哪個候選人, 該投誰).
POLITICS = re.compile(r"候選人|選舉|投票給|投給誰|投給哪|該投|投誰|要投哪|選誰|選哪(?:個|一個|位)|政黨|國民黨|民進黨|民眾黨"
                      r"|時代力量|藍綠|統獨|政治|罷免|公投|支持哪(?:個|一個|位|黨)|支持誰|挺誰|哪(?:個|一)黨")
#: Religion asked as a choice or a judgement (哪個宗教比較好, 該信什麼教), not a temple's event.
RELIGION = re.compile(r"宗教|信(?:什麼|哪個|哪一個)教|(?:佛教|道教|基督教|天主教|伊斯蘭教|回教|一貫道)"
                      r"[^，。？?]{0,6}(?:比較好|哪個好|好不好|該信|要不要信|對不對|準不準)|哪(?:個|一個)神(?:比較|最)")
#: Writing, chatting or general knowledge (幫我寫一首詩, 講個笑話, 美國總統是誰): not LOCAL's to answer.
OFF_TOPIC = re.compile(r"寫(?:一)?(?:首|篇|封|段|個)?(?:詩|文章|作文|信|歌|歌詞|故事|小說|對聯|賀詞|祝福|心得|報告|程式)"
                       r"|作詩|翻譯|(?:講|說|來)(?:一)?(?:個|則|點)?笑話|笑話|陪我聊|聊(?:聊)?天(?!紀錄|記錄|內容|的內容)|猜謎|謎語|算命|星座|運勢|塔羅"
                       r"|總統是誰|首相是誰|首都|是誰發明|(?:股票|股市|基金|匯率|樂透|明牌)"
                       r"|[0-9０-９]+\s*[加減乘除+×÷]\s*[0-9０-９]+"
                       r"|(?:美國|日本|中國|韓國|英國|法國|德國|世界)[^，。？?]{0,4}(?:總統|首相|國王|首都|最高|最大|最長)")
