"""The chat page in a real browser: Debian's chromium, headless, through its own chromedriver
(``/usr/bin/chromedriver``, apt's ``chromium-driver``; Selenium never downloads a driver here).

Shared by the browser tests (tests/integration/tools/test_chatpage_browser.py) and ``make screenshots``
(``python -m tools.chatpage.browser --out out/screenshots``): ``Stack`` starts what ``make run`` starts
(``tools.devserver``, serve-only, on free ports and a run directory of its own); ``Page`` drives the
page as a person does (types, taps, picks a point on the map); each ``flow_*`` walks one conversation
and returns what the page showed, for a test to assert or a screenshot to keep.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tools.function_process import free_port

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
WAIT_SECONDS = 30.0
WINDOW = (1000, 1000)
#: The screenshots the README shows (copied to docs/images/ by make screenshots).
README_SHOTS = ("search", "confirm", "staff")


def unavailable() -> str | None:
    """Why the browser cannot run here (None: it can)."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not path.exists():
            return f"{path} is missing (apt-get install -y {package}; .ci/run installs it when it runs as root)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (requirements-dev.lock)"
    return None


class Stack:
    """``make run`` in serve-only mode on free ports, with its own run directory; stopped on exit. With
    ``richmenu``, LOCAL's rich menu is then applied to its LINE stand-in as ``make richmenu`` applies it
    (docs/configuration.md, the rich menu on the stand-in); ``richmenu_note`` says why not when it could
    not be (no font)."""

    def __init__(self, richmenu: bool = True) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="chatpage-")
        self.process: subprocess.Popen | None = None
        self.urls: dict[str, str] = {}
        self.richmenu = richmenu
        self.richmenu_note: str | None = None
        self._env: dict[str, str] = {}

    def __enter__(self) -> Stack:
        from tools.devserver import PORT_VARIABLES

        run_dir = Path(self._tmp.name)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "GOOGLE_", "GEMINI_"))}
        env.update({variable: str(free_port()) for variable, _ in PORT_VARIABLES.values()})
        env.update(LOCAL_SERVE_ONLY="1", LOCAL_RUN_DIR=str(run_dir), LOCAL_MODEL="offline",
                   LOCAL_RICHMENU="0",  # applied below, once, when asked for: not twice at once
                   LOCAL_STORE_URL=f"sqlite:///{run_dir / 'local.sqlite3'}")
        self.process = subprocess.Popen([sys.executable, "-m", "tools.devserver", "--start-timeout", "90"], cwd=REPO,
                                        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.__exit__()
            raise RuntimeError(f"make run did not start; logs in {run_dir}")
        self.urls = json.loads(line)
        self._env = env
        if self.richmenu:
            self.apply_richmenu()
        return self

    def apply_richmenu(self) -> None:
        """``python -m tools.richmenu apply`` against this stack's stand-in, with make run's token."""
        from tools.devserver import DEV_SECRETS

        env = {**self._env, "LINE_API_BASE_URL": self.urls["line_standin"],
               "LINE_CHANNEL_ACCESS_TOKEN": DEV_SECRETS["LINE_CHANNEL_ACCESS_TOKEN"]}
        done = subprocess.run([sys.executable, "-m", "tools.richmenu", "apply"], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            self.richmenu_note = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]

    @property
    def page_url(self) -> str:
        """The chat page's URL."""
        return self.urls["chatpage"]

    def __exit__(self, *exc_info: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._tmp.cleanup()


def start_browser(width: int = WINDOW[0], height: int = WINDOW[1]) -> Any:
    """Headless chromium through /usr/bin/chromedriver."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--window-size={width},{height}", "--lang=zh-TW", "--no-proxy-server",
                     "--disable-background-networking", "--disable-component-update"):
        options.add_argument(argument)
    # the residents' clock, as their phones show message times (LOCAL's own times are Asia/Taipei)
    service = Service(executable_path=str(CHROMEDRIVER), env={**os.environ, "TZ": "Asia/Taipei"})
    return webdriver.Chrome(service=service, options=options)


class Page:
    """The chat page as a person uses it, in one browser."""

    def __init__(self, driver: Any, url: str, shots: Path | None = None) -> None:
        self.driver = driver
        self.url = url
        self.shots = shots  # make screenshots: where moment() saves

    def moment(self, name: str) -> None:
        """A screenshot of this moment of a flow, when screenshots are being taken."""
        if self.shots is not None:
            self.screenshot(self.shots / f"{name}.png")

    def open(self) -> Page:
        self.driver.get(self.url)
        self.until(lambda d: d.find_element("tag name", "body").get_attribute("data-ready") == "1", "the page to start")
        return self

    def until(self, condition: Any, what: str, timeout: float = WAIT_SECONDS) -> Any:
        """Wait for ``condition``; an element the page redrew meanwhile (a new message redraws its
        chat) only makes it look again."""
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, timeout, poll_frequency=0.1,
                             ignored_exceptions=[StaleElementReferenceException]).until(condition, f"waited for {what}")

    def click(self, find: Any, what: str) -> None:
        """Click what ``find()`` returns once it is there, finding it again if the page redrew it."""
        def attempt(driver: Any) -> bool:
            element = find()
            if element is None:
                return False
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
            element.click()
            return True

        self.until(attempt, what)

    def log(self, pane: str) -> Any:
        return self.driver.find_element("id", f"{pane}-log")

    def log_text(self, pane: str) -> str:
        return self.driver.execute_script("return document.getElementById(arguments[0]).innerText", f"{pane}-log")

    def wait_for_text(self, pane: str, text: str, count: int = 1) -> str:
        """Wait until ``text`` shows ``count`` times (at least) in the pane's chat; its text."""
        self.until(lambda d: self.log_text(pane).count(text) >= count, f"{text!r} ×{count} in the {pane} chat")
        return self.log_text(pane)

    def settle(self, seconds: float = 1.5) -> None:
        """Wait until nothing is being sent, then ``seconds`` more for late pushes to show."""
        self.until(lambda d: d.find_element("tag name", "body").get_attribute("data-sending") in (None, "0"),
                   "the sends to finish")
        time.sleep(seconds)

    def say(self, pane: str, text: str) -> None:
        """Type ``text`` in the pane's box and press Enter."""
        from selenium.webdriver.common.keys import Keys

        box = self.driver.find_element("id", f"{pane}-input")
        box.clear()
        box.send_keys(text, Keys.ENTER)

    def buttons(self, pane: str, label: str) -> list[Any]:
        return [b for b in self.log(pane).find_elements("css selector", "button") if b.text.strip() == label]

    def tap(self, pane: str, label: str) -> None:
        """Tap the latest button labelled ``label`` in the pane's chat (waiting for it)."""
        self.click(lambda: (self.buttons(pane, label) or [None])[-1], f"a {label!r} button in the {pane} chat")

    def chips(self, pane: str) -> list[str]:
        return self.driver.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map(c => c.textContent)", f"#{pane}-chips .chip")

    def tap_chip(self, pane: str, label: str) -> None:
        chips = lambda: self.driver.find_elements("css selector", f"#{pane}-chips .chip")  # noqa: E731
        self.click(lambda: next((c for c in chips() if c.text == label), None), f"a {label!r} chip in the {pane} chat")

    def switch_resident(self, name: str) -> None:
        tab = next(t for t in self.driver.find_elements("css selector", "#resident-tabs button")
                   if t.text.startswith(name))
        tab.click()

    def menu_areas(self) -> list[str]:
        """The rich menu's areas as a screen reader names them (none: no rich menu shown)."""
        return self.driver.execute_script(
            "return [...document.querySelectorAll('#richmenu .area')].filter(a => a.offsetParent !== null)"
            ".map(a => a.getAttribute('aria-label'))")

    def tap_menu(self, label: str) -> None:
        """Tap the rich menu's area named ``選單：label``."""
        areas = lambda: self.driver.find_elements("css selector", "#richmenu .area")  # noqa: E731
        self.click(lambda: next((a for a in areas() if a.get_attribute("aria-label") == f"選單：{label}"), None),
                   f"the rich menu's {label!r}")

    def cards(self, pane: str) -> list[str]:
        """The cards' accessible names (their altText), oldest first."""
        return self.driver.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map(c => c.getAttribute('aria-label'))",
            f"#{pane}-log .flex-card")

    def share_location(self, township: str) -> None:
        """📍, pick a township on the map, share."""
        self.driver.find_element("id", "resident-location").click()
        self.until(lambda d: d.find_element("id", "location-dialog").get_attribute("open") is not None, "the map")
        self.driver.find_element("css selector", f"#location-map .town[data-name='{township}']").click()
        self.moment("location-map")
        self.driver.find_element("id", "location-send").click()

    def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(path))


# --------------------------------------------------------------------------------- the flows
def flow_search(page: Page) -> dict:
    """花壇有素食店嗎 → a text and a card of shops, with quick replies."""
    page.say("resident", "花壇有素食店嗎")
    page.until(lambda d: page.cards("resident"), "a shop card")
    page.settle(0.3)
    return {"log": page.log_text("resident"), "cards": page.cards("resident"), "chips": page.chips("resident")}


def flow_confirm(page: Page) -> dict:
    """A handoff request: its confirm card tapped twice; one request, the second tap told it is registered."""
    page.say("resident", "新需求：想參加週六的社區走讀")
    page.tap("resident", "確認送出")
    page.wait_for_text("resident", "單號")
    page.tap("resident", "確認送出")
    page.wait_for_text("resident", "不會重複登記")
    page.until(lambda d: page.buttons("staff", "我來處理"), "the staff card in the group")
    page.settle()
    return {"log": page.log_text("resident"), "staff_log": page.log_text("staff"),
            "staff_cards": len(page.buttons("staff", "我來處理"))}


def flow_staff(page: Page) -> dict:
    """The staff group takes the request (我來處理), then closes it (已完成); the resident hears each once."""
    page.tap("staff", "我來處理")
    page.wait_for_text("resident", "已有專人接手")
    page.tap("staff", "已完成")
    page.wait_for_text("resident", "處理結束")
    page.settle()
    return {"log": page.log_text("resident"), "staff_log": page.log_text("staff")}


def flow_consent(page: Page) -> dict:
    """幫我記住我吃全素 → a consent card → 同意記住."""
    page.say("resident", "幫我記住我吃全素")
    page.tap("resident", "同意記住")
    page.settle()
    return {"log": page.log_text("resident"), "cards": page.cards("resident")}


def flow_location(page: Page) -> dict:
    """📍 → 花壇鄉 on the map → shared: the resident's location bubble, and LOCAL's answer."""
    before = len(page.log("resident").find_elements("css selector", ".row.bot"))
    page.share_location("花壇鄉")
    page.until(lambda d: page.log("resident").find_elements("css selector", ".row.mine .location-card"),
               "the location bubble")
    page.until(lambda d: len(page.log("resident").find_elements("css selector", ".row.bot")) > before, "an answer")
    page.settle(0.3)
    return {"log": page.log_text("resident"),
            "location": page.log("resident").find_element("css selector", ".row.mine .location-card").text}


def flow_richmenu(page: Page) -> dict:
    """The rich menu under the chat: its 查蔬食 area tapped sends its postback, shown as 「查蔬食」."""
    before = len(page.log("resident").find_elements("css selector", ".row.bot"))
    areas = page.menu_areas()
    page.tap_menu("查蔬食")
    page.until(lambda d: len(page.log("resident").find_elements("css selector", ".row.bot")) > before, "an answer")
    page.settle(0.3)
    return {"areas": areas, "log": page.log_text("resident")}


FLOWS = (("richmenu", flow_richmenu), ("search", flow_search), ("confirm", flow_confirm), ("staff", flow_staff), ("consent", flow_consent),
         ("location", flow_location))


def main(argv: list[str] | None = None) -> int:
    """``make screenshots``: every flow through the page, one PNG each in ``--out``; the README's three
    copied to ``--docs``."""
    parser = argparse.ArgumentParser(prog="python -m tools.chatpage.browser", description=main.__doc__)
    parser.add_argument("--out", type=Path, default=REPO / "out" / "screenshots")
    parser.add_argument("--docs", type=Path, default=REPO / "docs" / "images")
    args = parser.parse_args(argv)
    reason = unavailable()
    if reason:
        print(f"screenshots: {reason}", file=sys.stderr)
        return 2
    with Stack() as stack:
        driver = start_browser()
        try:
            page = Page(driver, stack.page_url, args.out).open()
            for name, flow in FLOWS:
                flow(page)
                page.screenshot(args.out / f"{name}.png")
                print(args.out / f"{name}.png", flush=True)
                if name == "richmenu":  # closed by its chat bar, as a person does to read the chat
                    page.driver.find_element("id", "richmenu-bar").click()
                if name == "staff":  # a fresh resident for the next flows, as a phone of another person
                    page.switch_resident("住民B")
        finally:
            driver.quit()
    args.docs.mkdir(parents=True, exist_ok=True)
    for name in README_SHOTS:
        shutil.copyfile(args.out / f"{name}.png", args.docs / f"chatpage-{name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
