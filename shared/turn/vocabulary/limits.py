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
                         r"|付錢|付款|先付|要付|繳錢|繳款|先繳|要繳|罰款|贖金|給錢|拿錢|送錢|寄錢|關稅|解凍金|驗證碼")
#: What a scam says first: a prize, an account in trouble, an official, or a caller (有人打電話說我中獎).
SCAM_STORY = re.compile(r"中獎|中大獎|抽中|得獎|帳戶[^，。？?]{0,3}(?:盜用|凍結|異常|冒用|被用)|洗錢|涉(?:嫌|案)|通緝|"
                        r"檢察官|法院|地檢署|警察|警官|法官|健保局|健保署|國稅局|打電話|來電|簡訊|有人(?:說|叫|要|傳)"
                        # a caller or a message (打來, line 傳來), or a relative in danger or with a new number
                        r"|打來|傳來|傳訊|line ?傳|網路上|網友|陌生人|不認識的人|對方|群組|臉書|客服|綁架|綁票|撞到人|出車禍|車禍|被抓|被關|被打|"
                        r"換(?:了)?(?:新)?(?:號碼|電話|手機|門號|line)|新號碼")
#: An account, a card, an id or a number said to be misused, frozen or in a case (說我帳戶被盜用, 說我健保卡被盜用,
#: 信用卡被盜刷, 門號被冒用), or a "safe" account: the first step of a known scam, told by anyone.
ACCOUNT_TROUBLE = re.compile(r"(?:帳戶|帳號|健保卡|信用卡|金融卡|提款卡|簽帳卡|卡片|卡|身分證|證件|門號|存摺|個資)"
                             r"[^，。？?]{0,4}?(?:盜用|冒用|盜刷|被盜|被冒|冒名|被人用|被用|凍結|涉案|異常|外洩)"
                             r"|監管帳戶|安全帳戶|人頭帳戶")
#: Someone telling the resident to do something with money (要我刷卡, 叫我去ATM轉帳, 要我給驗證碼): a scam's
#: demand, unless a shop or an event is what is asked about (shared.turn.rules.limits.is_fraud).
DEMAND = re.compile(r"(?:要|叫|請|逼|教)我[^，。？?]{0,6}?(?:匯|轉帳|轉錢|刷卡|領錢|領現金|提款|提領|atm"
                    r"|買(?:遊戲)?點數|儲值|(?:給|提供|說出|唸|念)[^，。？?]{0,5}?(?:帳號|密碼|驗證碼|存摺|提款卡)"
                    r"|寄(?:提款卡|存摺|金融卡|錢|現金)|交(?:錢|現金)|面交|解除分期|開戶|辦(?:新)?帳戶|付(?:錢|款|費)|繳(?:錢|費|款))")
#: A threat a scam makes: drugs or contraband in a parcel, an arrest, a warrant, a frozen account or
#: laundering (有人說我的包裹有毒品, 說我被通緝, 說我涉及洗錢); told by anyone, it is the scam's hook.
THREAT = re.compile(r"(?:包裹|快遞|郵包|郵件|貨運|宅配|海關)[^。？?]{0,10}?(?:毒品|違禁品|藏毒|運毒|扣留|扣押|查扣|走私|假證件|假護照)"
                    r"|(?:毒品|違禁品)[^。？?]{0,10}?(?:包裹|快遞|郵包|海關)|通緝|逮捕|拘提|拘票|羈押|偵查不公開"
                    r"|洗錢|涉嫌|涉案|涉及(?:洗錢|毒品|詐騙|刑案|案件)|要被抓|會被抓|抓去關|坐牢|刑事責任|出庭|傳票|凍結")
#: Profit promised (投資保證賺錢, 穩賺不賠, 老師帶單, 飆股): the fake investment scripts.
PROFIT = re.compile(r"保證(?:會)?(?:賺|獲利|獲益|報酬|回本|收益|翻倍|不賠|穩賺|有錢)|穩賺|穩贏|穩賠不賺|零風險|高獲利|高報酬|高利息"
                    r"|飆股|帶單|老師帶(?:單|操作|你賺|大家賺|我們賺)|投資(?:群組|老師|社團|網站|平台|app|專家|達人)|股票群組|內線消息|(?:日|月|週)賺"
                    r"|投資[^，。？?]{0,8}?(?:虛擬貨幣|加密貨幣|比特幣|usdt|翻倍|獲利|賺大錢|賺很多)")
#: Scripts said by name: ATM 解除分期, a doubled charge, 猜猜我是誰, gift cards and game points, a debt
#: claimed (說我電話欠費), an online friend or a far-away soldier who wants money or sends a parcel.
SCRIPT = re.compile(r"解除分期|取消分期|重複扣款|誤設|猜猜我是誰|點數卡|買(?:遊戲)?點數|遊戲點數|禮物卡|禮品卡|mycard|gash"
                    r"|說我[^，。？?]{0,6}?欠(?:費|款|稅|錢)|一頁式"
                    r"|(?:網友|交友|網戀|網路上認識|網路認識|軍醫|美軍|聯合國)[^。？?]{0,12}?"
                    r"(?:借錢|匯|寄|包裹|投資|轉帳|禮物|關稅|手續費|保證金|付錢|給錢)")
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
