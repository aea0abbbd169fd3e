"""Words of what LOCAL has no data or tool for: each limit kind with the words that ask for it.
Crisis (suicidal intent, self-harm, despair) is read by shared.turn.crisis.

Data only: the rules that read them are in shared.turn.router and its families.
"""
from __future__ import annotations

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
