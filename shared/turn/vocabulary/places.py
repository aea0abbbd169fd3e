"""Words of a shop ask and of places: meal and shop words, kinds of eating place the catalog does not
record, places that are no place to eat, places outside the county, the townships' English names, and
words that sit where a place does but are none.

Data only: the rules that read them are in shared.turn.router and its families.
"""
from __future__ import annotations

import re

#: Words of a shop or meal ask (besides diet words).
PLACE_WORDS: tuple[str, ...] = ("店", "吃", "餐廳", "餐", "小吃", "料理", "便當", "麵", "飯", "早午餐", "咖啡")

#: Kinds of eating place the catalog does not record (自助餐, 火鍋, 早餐店): named as not recorded; the
#: search runs on the diet alone.
SHOP_KINDS = ("自助餐", "吃到飽", "buffet", "火鍋", "麵店", "早餐店", "早午餐", "咖啡廳", "咖啡店", "甜點", "飲料店", "手搖",
              "滷味", "鹹酥雞", "餐車", "拉麵", "披薩", "漢堡", "牛排", "便當", "小吃店", "夜市")

#: Shops and places that are not somewhere to eat, though their names hold 店 / 飯 (LOCAL has no data).
NOT_FOOD_SHOPS = re.compile(r"便利商店|超商|商店|飯店|書店|花店|藥局|藥房|五金行|文具店|服飾店|鞋店|眼鏡行|眼鏡店|手機行"
                            r"|機車行|車行|洗衣店|理髮店|美髮店|寵物店|民宿|旅館|酒店")

#: Places outside Changhua County: LOCAL has no data there (台中有素食嗎).
ELSEWHERE = ("臺北", "台北", "新北", "桃園", "新竹", "苗栗", "臺中", "台中", "南投", "雲林", "嘉義", "臺南", "台南",
             "高雄", "屏東", "宜蘭", "花蓮", "臺東", "台東", "基隆", "澎湖", "金門", "馬祖")

#: The official (Hanyu Pinyin) English names of Changhua's 26 townships, case-folded; ``changhua`` alone
#: is the county or the city, so it reads as the vague 彰化. Source: Changhua County Government's
#: English site (https://www.chcg.gov.tw/eng/).
ENGLISH_TOWNSHIPS: tuple[tuple[str, str], ...] = (
    ("changhua city", "彰化市"), ("changhua county", "彰化縣"), ("lukang", "鹿港鎮"), ("hemei", "和美鎮"),
    ("xianxi", "線西鄉"), ("shengang", "伸港鄉"), ("fuxing", "福興鄉"), ("xiushui", "秀水鄉"), ("huatan", "花壇鄉"),
    ("fenyuan", "芬園鄉"), ("yuanlin", "員林市"), ("xihu", "溪湖鎮"), ("tianzhong", "田中鎮"), ("dacun", "大村鄉"),
    ("puyan", "埔鹽鄉"), ("puxin", "埔心鄉"), ("yongjing", "永靖鄉"), ("shetou", "社頭鄉"), ("ershui", "二水鄉"),
    ("beidou", "北斗鎮"), ("erlin", "二林鎮"), ("tianwei", "田尾鄉"), ("pitou", "埤頭鄉"), ("fangyuan", "芳苑鄉"),
    ("dacheng", "大城鄉"), ("zhutang", "竹塘鄉"), ("xizhou", "溪州鄉"), ("changhua", "彰化"),
)

#: Words that may sit before 活動 / 素食 where a misspelt place would (鹿巷活動) but are no place.
NOT_PLACES = ("什麼", "哪裡", "附近", "最近", "好玩", "所有", "全部", "有沒", "推薦", "其他", "哪些", "哪個", "熱門",
              "好吃", "大型", "小型", "特別", "假日", "平日", "晚上", "早上", "下午", "社區", "社群", "宗教", "一般", "在地",
              "地方", "本地", "這裡", "那裡", "免費", "一些", "有趣", "好的", "類似", "相關", "大家", "小朋友")

#: Words that may sit where a township does but are no misspelt township (員林還是社區, 鹿港和北部).
NOT_TOWNSHIP_TYPOS = ("社區", "市區", "鄉下", "北部", "南部", "中部", "東部", "西部", "大家", "市場", "家裡", "附近",
                      "外面", "那邊", "這邊", "其他", "別的", "二手", "大人", "小孩", "田裡", "北邊", "南邊")

#: Asking for a government office, school or other body, or for a phone number, address or site:
#: LOCAL has no directory (彰化縣政府電話幾號). A shop's phone is in its card (和米素食電話).
DIRECTORY = re.compile(r"鄉長|鎮長|市長|縣長|議長|身分證|身份證|護照|戶籍|戶口|健保卡|駕照|行照|繳稅|報稅|罰單|補助|津貼|敬老卡|政府|公所|戶政|地政|稅務|稅捐|警察局|派出所|消防隊|衛生所|郵局|銀行|區公所|里長|村長|議員|立委|"
                       r"代表會|農會|清潔隊|垃圾車|機關|服務中心|服務處|電話|手機號|分機|傳真|地址|信箱|email|e-mail|"
                       r"網址|官網|網站|客服專線|統一編號|統編")
