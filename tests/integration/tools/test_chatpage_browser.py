"""The chat page in a real browser (Debian's chromium, headless, through /usr/bin/chromedriver) against
one ``make run`` stack for the whole module: what the page shows for a search, a handoff confirm card
tapped twice, the staff group's take and close, a consent card and a location share, and that a person
with a screen reader or a keyboard can use it. Skips, saying why, where chromium is not installed."""
from __future__ import annotations

import pytest
import requests

from tools.chatpage import browser
from tools.chatpage.server import RESIDENTS

try:
    from selenium.webdriver.common.keys import Keys
except ImportError:  # the module skips below
    Keys = None

pytestmark = [pytest.mark.slow(seconds=30),
              pytest.mark.skipif(browser.unavailable() is not None, reason=f"no browser: {browser.unavailable()}")]


@pytest.fixture(scope="module")
def stack():
    with browser.Stack() as running:
        yield running


@pytest.fixture(scope="module")
def page(stack):
    driver = browser.start_browser()
    try:
        yield browser.Page(driver, stack.page_url).open()
    finally:
        driver.quit()


def test_chatpage_rich_menu_read_from_the_stand_in_taps_as_a_phone(page, stack):
    if stack.richmenu_note:
        pytest.skip(f"the rich menu could not be applied: {stack.richmenu_note}")
    shown = browser.flow_richmenu(page)

    assert "選單：查活動" in shown["areas"] and "選單：查蔬食" in shown["areas"]
    assert "查蔬食" in shown["log"]  # the area's displayText, as the resident's bubble

    # the chat bar says what a tap does: 收 while the menu is open, 開 once it is closed, and back
    bar = page.driver.find_element("id", "richmenu-bar")
    assert "收" in bar.text and "開" not in bar.text and bar.get_attribute("aria-expanded") == "true"
    bar.click()
    assert "開" in bar.text and "收" not in bar.text and bar.get_attribute("aria-expanded") == "false"
    assert page.menu_areas() == []  # closed: no area shows
    bar.click()
    assert "收" in bar.text and page.menu_areas()


def test_chatpage_search_shows_the_answer_a_card_named_by_its_alt_text_and_quick_reply_chips(page):
    shown = browser.flow_search(page)

    assert "花壇有素食店嗎" in shown["log"]  # the resident's own bubble
    assert "和米素食" in shown["log"]  # the card's body, rendered
    assert any(name.startswith("蔬食店家") and "和米素食" in name for name in shown["cards"])  # altText
    assert "選單" in shown["chips"]


def test_chatpage_handoff_confirm_tapped_twice_then_staff_take_and_close_tell_the_resident_once_each(page):
    confirmed = browser.flow_confirm(page)

    assert confirmed["log"].count("已登記你的服務詢問") == 1  # one request
    assert confirmed["log"].count("不會重複登記") == 1  # the second tap, told kindly
    assert confirmed["staff_cards"] == 1  # the group is told once
    assert "確認送出" in confirmed["log"]  # the postback's displayText, as the resident's bubble

    closed = browser.flow_staff(page)

    assert closed["log"].count("已有專人接手") == 1
    assert closed["log"].count("標示為處理結束") == 1
    assert "我來處理" in closed["staff_log"] and "已完成" in closed["staff_log"]


def test_chatpage_switching_residents_shows_each_ones_own_chat(page):
    page.switch_resident("住民B")
    page.until(lambda d: "住民B" in d.find_element("id", "resident-title").text, "住民B's chat")

    assert "花壇有素食店嗎" not in page.log_text("resident")
    assert "我來處理" in page.log_text("staff")  # the staff group stays beside it

    page.switch_resident("住民A")
    page.until(lambda d: "花壇有素食店嗎" in page.log_text("resident"), "住民A's chat again")


def test_chatpage_consent_card_approved_is_remembered(page):
    page.switch_resident("住民B")
    shown = browser.flow_consent(page)

    assert any("全素" in name for name in shown["cards"])  # the consent card, named by its altText
    assert "同意記住" in shown["log"]
    assert "已經記住你的飲食偏好：全素" in shown["log"]


def test_chatpage_location_share_from_the_map_sends_a_location_message(page):
    page.switch_resident("住民C")
    shown = browser.flow_location(page)

    assert "花壇鄉" in shown["location"]
    # LOCAL answered it (flow_location waits for a new answer); what it says is routing's, not the page's
    assert shown["log"].rindex("彰化縣花壇鄉") < shown["log"].rindex("彰化在地小幫手")

    # typed coordinates of Taichung's centre, titled 台中: labelled by coordinates, never as a Changhua place
    driver = page.driver
    driver.find_element("id", "resident-location").click()
    page.until(lambda d: d.find_element("id", "location-dialog").get_attribute("open") is not None, "the map")
    for field, value in (("location-lat", "24.1477"), ("location-lng", "120.6736"), ("location-title-input", "台中")):
        driver.find_element("id", field).clear()
        driver.find_element("id", field).send_keys(value)
    driver.find_element("id", "location-send").click()
    cards = lambda d: page.log("resident").find_elements("css selector", ".row.mine .location-card")  # noqa: E731
    page.until(lambda d: len(cards(d)) >= 2, "the second location bubble")
    taichung = cards(driver)[-1].text
    assert "台中" in taichung and "24.1477, 120.6736（彰化縣外）" in taichung and "彰化縣台中" not in taichung


def test_chatpage_is_usable_by_keyboard_and_screen_reader(page, stack):
    driver = page.driver
    for pane in ("resident", "staff"):
        log = page.log(pane)
        assert (log.get_attribute("role"), log.get_attribute("aria-live")) == ("log", "polite")
    unnamed = driver.execute_script(
        "return [...document.querySelectorAll('button')]"
        ".filter(b => !(b.getAttribute('aria-label') || b.textContent.trim())).length")
    assert unnamed == 0  # every button has a name a screen reader reads
    cards = driver.find_elements("css selector", ".flex-card")
    assert cards and all(c.get_attribute("role") == "group" and c.get_attribute("aria-label") for c in cards)

    bubble = driver.find_element("css selector", "#resident-log .bubble")
    before = float(bubble.value_of_css_property("font-size")[:-2])
    toggle = driver.find_element("id", "large-text")
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    assert float(bubble.value_of_css_property("font-size")[:-2]) > before * 1.2
    toggle.click()

    driver.find_element("id", "layout").click()  # one chat at a time (a narrow screen), switchable
    shown = [p.is_displayed() for p in driver.find_elements("css selector", ".phone")]
    assert shown == [True, False]
    driver.find_element("id", "switch-pane").click()
    assert [p.is_displayed() for p in driver.find_elements("css selector", ".phone")] == [False, True]
    driver.find_element("id", "switch-pane").click()
    driver.find_element("id", "layout").click()

    page.switch_resident("住民C")
    _line(stack, "/v2/bot/message/push", {"to": RESIDENTS[2]["id"], "messages": [{
        "type": "text", "text": "要查什麼？", "quickReply": {"items": [
            {"type": "action", "action": {"type": "message", "label": "查活動", "text": "查活動"}}]}}]})
    page.until(lambda d: "查活動" in page.chips("resident"), "the pushed quick reply")
    mine = page.log_text("resident").count("查活動")

    def enter_on_chip(d) -> bool:  # a chip is a <button>: Enter on it taps it
        chip = d.find_element("css selector", "#resident-chips .chip")
        assert chip.tag_name == "button" and chip.get_attribute("aria-label") == "快速回覆：查活動"
        chip.send_keys(Keys.ENTER)
        return True

    page.until(enter_on_chip, "Enter on the chip")
    page.until(lambda d: page.log_text("resident").count("查活動") > mine, "the tap's bubble")


FLEX = {
    "type": "flex", "altText": "測試卡片 <b>不是 HTML</b>",
    "contents": {"type": "carousel", "contents": [
        {"type": "bubble", "size": "kilo",
         "hero": {"type": "image", "url": "https://example.com/x.png", "size": "full", "aspectRatio": "20:13"},
         "body": {"type": "box", "layout": "vertical", "spacing": "md", "contents": [
             {"type": "text", "text": '<img src=x onerror="window.pwned=1">', "wrap": True, "weight": "bold",
              "size": "xl", "color": "#ff0000"},
             {"type": "box", "layout": "baseline", "contents": [
                 {"type": "icon", "url": "https://example.com/i.png"},
                 {"type": "text", "text": "基線", "flex": 2, "margin": "sm"}]},
             {"type": "separator", "margin": "lg"},
             {"type": "box", "layout": "horizontal", "contents": [
                 {"type": "text", "text": "左", "align": "start"}, {"type": "filler"},
                 {"type": "text", "text": "右", "align": "end"}]},
             {"type": "text", "contents": [{"type": "span", "text": "粗", "weight": "bold"},
                                           {"type": "span", "text": "紅", "color": "#ff0000"}]}]},
         "footer": {"type": "box", "layout": "vertical", "contents": [
             {"type": "button", "style": "primary",
              "action": {"type": "postback", "label": "測試按鈕", "data": "x:1", "displayText": "按了測試"}}]}},
        {"type": "bubble", "body": {"type": "box", "layout": "vertical",
                                    "contents": [{"type": "text", "text": "第二張"}]}}]},
    "quickReply": {"items": [{"type": "action", "action": {"type": "location", "label": "傳送位置"}}]},
}


def _line(stack, path: str, body: dict) -> None:
    from tools.devserver import DEV_SECRETS

    answer = requests.post(stack.urls["line_standin"] + path, json=body, timeout=10,
                           headers={"Authorization": f"Bearer {DEV_SECRETS['LINE_CHANNEL_ACCESS_TOKEN']}"})
    assert answer.status_code in (200, 202), answer.text


def test_chatpage_draws_flex_layouts_loading_and_pushes_and_never_reads_text_as_html(page, stack):
    driver = page.driver
    resident_c, resident_b = (r["id"] for r in reversed(RESIDENTS[1:]))
    page.switch_resident("住民C")
    _line(stack, "/v2/bot/chat/loading/start", {"chatId": resident_c, "loadingSeconds": 20})
    page.until(lambda d: d.find_element("id", "resident-typing").is_displayed(), "the loading animation")
    _line(stack, "/v2/bot/message/push", {"to": resident_c, "messages": [
        {"type": "text", "text": "早安😀 <script>window.pwned=1</script>"}, FLEX]})
    page.until(lambda d: "第二張" in page.log_text("resident"), "the pushed carousel")
    _line(stack, "/v2/bot/message/push", {"to": resident_b, "messages": [{"type": "text", "text": "給住民B"}]})
    page.until(lambda d: "住民B1" in d.find_element("id", "resident-tabs").text.replace(" ", ""), "住民B's unread count")

    log = page.log("resident")
    assert not driver.find_element("id", "resident-typing").is_displayed()  # a message ends the animation
    assert "早安😀 <script>window.pwned=1</script>" in page.log_text("resident")
    assert '<img src=x onerror="window.pwned=1">' in page.log_text("resident")
    assert driver.execute_script("return window.pwned === undefined && !document.querySelector('#resident-log img, #resident-log script')")
    card = log.find_elements("css selector", ".flex-card")[-1]
    assert card.get_attribute("aria-label") == FLEX["altText"]
    assert len(card.find_elements("css selector", ".flex-bubble")) == 2
    assert card.find_elements("css selector", ".fx-box.baseline") and card.find_elements("css selector", ".fx-box.horizontal")
    assert card.find_elements("css selector", ".fx-separator") and card.find_elements("css selector", ".fx-image")
    assert card.find_element("css selector", ".fx-button.primary").text == "測試按鈕"
    bold = card.find_elements("css selector", ".fx-text span")[0]
    assert bold.text == "粗" and bold.value_of_css_property("font-weight") == "700"
    assert "給住民B" not in page.log_text("resident")  # another resident's push waits on that tab

    page.tap_chip("resident", "傳送位置")  # LINE's location action opens the picker
    page.until(lambda d: d.find_element("id", "location-dialog").get_attribute("open") is not None, "the map")
    driver.find_element("id", "location-cancel").click()


def test_chatpage_a_text_over_lines_limit_is_kept_with_a_note_and_never_sent(page):
    driver = page.driver
    box, note = driver.find_element("id", "resident-input"), driver.find_element("id", "resident-limit")
    sent_before = len(page.log("resident").find_elements("css selector", ".row.mine"))
    # a paste of 4,999 characters and an emoji: 5,001 as LINE counts (UTF-16), one over its limit
    driver.execute_script("arguments[0].value = 'x'.repeat(4999) + '😀';"
                          "arguments[0].dispatchEvent(new Event('input'))", box)
    assert note.is_displayed() and "5,001" in note.text and "5,000" in note.text and "沒有送出" in note.text
    box.send_keys(Keys.ENTER)
    page.settle(0.3)

    assert len(page.log("resident").find_elements("css selector", ".row.mine")) == sent_before  # nothing sent
    assert driver.execute_script("return arguments[0].value.length", box) == 5001  # kept to shorten
    assert note.is_displayed() and box.get_attribute("aria-describedby") == "resident-limit"

    driver.execute_script("arguments[0].value = arguments[0].value.slice(0, 4999);"
                          "arguments[0].dispatchEvent(new Event('input'))", box)
    assert not note.is_displayed()  # within the limit: the note goes, the text may be sent
    box.clear()
