"""The chat page's server over HTTP, without a browser: it signs what it sends as LINE does, files the
stand-in's calls under the right chat, reads the rich menu through LINE's endpoints, and refuses what
is not the page's own (another origin or host, bad JSON, a bad field, a URL it was not started with)."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from linebot.v3.webhook import SignatureValidator

from tools import chat
from tools.chatpage.server import RESIDENTS, STAFF, ChatPage, ChatPageServer, Upstream
from tools.line_standin import LineStandin

SECRET = "chatpage-test-channel-secret"
TOKEN = "chatpage-test-access-token"
GROUP = "C" + "7" * 32
RESIDENT = RESIDENTS[0]["id"]
MENU_ID = "richmenu-" + "a" * 32
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32


class _Recorder(ThreadingHTTPServer):
    """A webhook (records each body and signature, answers 200) or a LINE host with a rich menu."""

    def __init__(self, routes: dict | None = None) -> None:
        self.bodies: list[tuple[bytes, str]] = []
        self.routes = routes or {}
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                recorder.bodies.append((body, self.headers.get("X-Line-Signature", "")))
                self._answer(200, "application/json", b'{"events": ["done"]}')

            def do_GET(self) -> None:  # noqa: N802
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    self._answer(401, "application/json", b"{}")
                    return
                status, kind, payload = recorder.routes.get(self.path, (404, "application/json", b'{"message": "Not found"}'))
                self._answer(status, kind, payload)

            def _answer(self, status: int, kind: str, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                return

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


@pytest.fixture
def standin():
    with LineStandin(access_token=TOKEN) as running:
        yield running


@pytest.fixture
def webhook():
    recorder = _Recorder()
    yield recorder
    recorder.stop()


def _page(webhook_url: str, standin_url: str, data_url: str | None = None) -> ChatPageServer:
    return ChatPageServer(ChatPage(Upstream(webhook_url + "/", standin_url, SECRET, TOKEN, GROUP, data_url)))


def _post(server: ChatPageServer, body, *, origin: str | None = "same", raw: bytes | None = None,
          content_type: str = "application/json") -> requests.Response:
    headers = {"Content-Type": content_type}
    if origin == "same":
        headers["Origin"] = server.url.rstrip("/")
    elif origin is not None:
        headers["Origin"] = origin
    data = raw if raw is not None else json.dumps(body, ensure_ascii=False).encode()
    return requests.post(server.url + "api/send", data=data, headers=headers, timeout=10)


def test_chatpage_sends_signed_bodies_as_a_phone_would(webhook, standin):
    with _page(webhook.url, standin.url) as server:
        assert server.url.startswith("http://127.0.0.1:")  # loopback only
        assert _post(server, {"chat": RESIDENT, "kind": "text", "text": "花壇有素食店嗎😀"}).status_code == 200
        tapped = {"type": "postback", "data": "handoff:confirm:abc.def~1", "displayText": "確認送出"}
        assert _post(server, {"chat": GROUP, "kind": "action", "action": tapped}).status_code == 200
        assert _post(server, {"chat": RESIDENT, "kind": "location", "latitude": 24.0294, "longitude": 120.538,
                              "title": "花壇鄉"}).status_code == 200
        timeline = requests.get(server.url + "api/timeline?since=0", timeout=10).json()

    validator = SignatureValidator(SECRET)
    events = []
    for body, signature in webhook.bodies:
        assert validator.validate(body.decode("utf-8"), signature)
        events += json.loads(body)["events"]
    text, postback, location = events
    assert text["message"]["text"] == "花壇有素食店嗎😀" and text["source"] == {"type": "user", "userId": RESIDENT}
    assert postback["postback"]["data"] == tapped["data"]
    assert postback["source"] == {"type": "group", "groupId": GROUP, "userId": STAFF["id"]}
    assert location["message"]["type"] == "location" and location["message"]["latitude"] == 24.0294
    shown = [(e["chat"], e.get("text") or e.get("location", {}).get("title")) for e in timeline["entries"]]
    assert shown == [(RESIDENT, "花壇有素食店嗎😀"), (GROUP, "確認送出"), (RESIDENT, "花壇鄉")]


def test_chatpage_files_replies_pushes_and_loading_under_their_chats(webhook, standin):
    other = "U" + "1" * 32
    with _page(webhook.url, standin.url) as server:
        _post(server, {"chat": RESIDENT, "kind": "text", "text": "你好"})
        token = json.loads(webhook.bodies[-1][0])["events"][0]["replyToken"]
        line = requests.Session()
        line.headers["Authorization"] = f"Bearer {TOKEN}"
        line.post(standin.url + chat.LOADING_PATH, json={"chatId": RESIDENT, "loadingSeconds": 10}, timeout=5)
        line.post(standin.url + chat.REPLY_PATH, json={"replyToken": token, "messages": [{"type": "text", "text": "回覆"}]},
                  timeout=5)
        line.post(standin.url + chat.PUSH_PATH, json={"to": GROUP, "messages": [{"type": "text", "text": "給群組"}]},
                  timeout=5)
        line.post(standin.url + chat.PUSH_PATH, json={"to": other, "messages": [{"type": "text", "text": "別人的"}]},
                  timeout=5)
        entries = requests.get(server.url + "api/timeline?since=1", timeout=10).json()["entries"]

    assert [(e["chat"], e["from"]) for e in entries] == [(RESIDENT, "loading"), (RESIDENT, "bot"), (GROUP, "bot")]
    assert entries[1]["messages"][0]["text"] == "回覆" and entries[2]["kind"] == "push"


@pytest.mark.parametrize("body, reason", [
    (None, "the body is not JSON"),
    ([1, 2], "JSON object"),
    ({"chat": "U" + "0" * 32, "kind": "text", "text": "x"}, "chat must be"),
    ({"chat": RESIDENT, "kind": "text", "text": ""}, "text must be"),
    ({"chat": RESIDENT, "kind": "text", "text": "長" * 5001}, "text is 5001 characters as LINE counts them"),
    # 5,000 code points, but LINE counts the emoji twice (UTF-16): 5,001, which LINE refuses
    ({"chat": RESIDENT, "kind": "text", "text": "x" * 4999 + "😀"}, "LINE takes at most 5000"),
    ({"chat": RESIDENT, "kind": "shout", "text": "x"}, "kind must be"),
    ({"chat": RESIDENT, "kind": "action", "action": {"type": "uri", "uri": "https://example.com/"}}, "action.type"),
    ({"chat": RESIDENT, "kind": "action", "action": {"type": "postback", "data": "x" * 301}}, "LINE takes at most 300"),
    ({"chat": RESIDENT, "kind": "location", "latitude": 91, "longitude": 120.5}, "latitude"),
    ({"chat": RESIDENT, "kind": "location", "latitude": "24", "longitude": 120.5}, "latitude"),
    ({"chat": GROUP, "kind": "location", "latitude": 24, "longitude": 120.5}, "one-to-one"),
])
def test_chatpage_refuses_bad_input_with_400(webhook, standin, body, reason):
    with _page(webhook.url, standin.url) as server:
        answer = _post(server, body, raw=b"{not json" if body is None else None)

    assert answer.status_code == 400 and reason in answer.json()["error"]
    assert webhook.bodies == []  # nothing was sent


def test_chatpage_refuses_other_origins_hosts_and_content_types(webhook, standin):
    with _page(webhook.url, standin.url) as server:
        good = {"chat": RESIDENT, "kind": "text", "text": "x"}
        assert _post(server, good, origin="http://evil.example").status_code == 403
        assert _post(server, good, origin=None).status_code == 403  # a POST must say it is the page's own
        assert _post(server, good, content_type="text/plain").status_code == 415
        port = server.url.rsplit(":", 1)[1].rstrip("/")
        rebound = requests.get(server.url + "api/config", headers={"Host": f"evil.example:{port}"}, timeout=5)
        cross = requests.get(server.url + "api/timeline", headers={"Sec-Fetch-Site": "cross-site"}, timeout=5)
        page = requests.get(server.url, timeout=5)

    assert rebound.status_code == 403 and cross.status_code == 403
    assert webhook.bodies == []
    assert page.status_code == 200 and "script-src 'self'" in page.headers["Content-Security-Policy"]


def test_chatpage_reads_the_default_rich_menu_through_line_endpoints(webhook, standin):
    menu = {"size": {"width": 2500, "height": 843}, "selected": True, "name": "main", "chatBarText": "選單",
            "areas": [{"bounds": {"x": 0, "y": 0, "width": 1250, "height": 843},
                       "action": {"type": "postback", "data": "menu:events", "displayText": "查活動", "label": "查活動"}}]}
    line = _Recorder({"/v2/bot/user/all/richmenu": (200, "application/json", json.dumps({"richMenuId": MENU_ID}).encode()),
                      f"/v2/bot/richmenu/{MENU_ID}": (200, "application/json", json.dumps(menu).encode()),
                      f"/v2/bot/richmenu/{MENU_ID}/content": (200, "image/png", PNG)})
    try:
        page = ChatPage(Upstream(webhook.url + "/", line.url, SECRET, TOKEN, GROUP))
        shown = page.richmenu(RESIDENT)
        image = page.richmenu_image(MENU_ID)
        empty = ChatPage(Upstream(webhook.url + "/", standin.url, SECRET, TOKEN, GROUP)).richmenu(RESIDENT)
    finally:
        line.stop()

    assert shown["richmenu"]["areas"] == menu["areas"] and shown["image"] == f"/api/richmenu/image?id={MENU_ID}"
    assert image == (PNG, "image/png")
    assert empty["richmenu"] is None  # a stand-in without a rich menu: none shown


@pytest.mark.parametrize("menu_id", ["../../__calls", "http://evil.example/x.png", "richmenu-a/../../b", ""])
def test_chatpage_never_fetches_a_url_the_page_names(webhook, standin, menu_id):
    with _page(webhook.url, standin.url) as server:
        answer = requests.get(server.url + "api/richmenu/image", params={"id": menu_id}, timeout=5)
        user = requests.get(server.url + "api/richmenu", params={"user": "http://evil.example/"}, timeout=5)

    assert answer.status_code == 400 and user.status_code == 400


def test_make_run_serves_the_chat_page_beside_the_stand_in_only(tmp_path):
    from tools.devserver import DEV_SECRETS, build_env, chatpage_argv

    config = build_env({"LOCAL_CHATPAGE_PORT": "18199"}, repo=tmp_path)
    assert config.ports["chatpage"] == 18199 and build_env({}, repo=tmp_path).ports["chatpage"] == 8092
    argv = chatpage_argv("python", 18199, config.ports["webhook"], config.ports["line-standin"])
    assert argv[:3] == ["python", "-m", "tools.chatpage"]
    assert not any(config.env[name] in argv for name in ("LINE_CHANNEL_SECRET", "LINE_CHANNEL_ACCESS_TOKEN"))
    assert config.env["LINE_CHANNEL_SECRET"] == DEV_SECRETS["LINE_CHANNEL_SECRET"]  # from the environment instead
    external = build_env({"LINE_API_BASE_URL": "https://api.line.me"}, repo=tmp_path)
    assert "chatpage" not in external.ports  # it reads replies from the stand-in only


def test_chatpage_sends_a_text_of_exactly_lines_limit(webhook, standin):
    text = "x" * 4998 + "😀"  # 5,000 UTF-16 code units: the most LINE takes
    with _page(webhook.url, standin.url) as server:
        assert _post(server, {"chat": RESIDENT, "kind": "text", "text": text}).status_code == 200

    [body] = [json.loads(b) for b, _ in webhook.bodies]
    assert body["events"][0]["message"]["text"] == text


def test_chatpage_refuses_a_body_over_its_limit(webhook, standin):
    with _page(webhook.url, standin.url) as server:
        answer = _post(server, None, raw=b'{"chat": "' + b"x" * 70000 + b'"}')

    assert answer.status_code == 413 and webhook.bodies == []


def test_chatpage_browser_tests_say_why_they_skip_without_chromium(tmp_path, monkeypatch):
    from tools.chatpage import browser

    monkeypatch.setattr(browser, "CHROMIUM", tmp_path / "chromium")
    assert "apt-get install -y chromium" in browser.unavailable()
    monkeypatch.setattr(browser, "CHROMEDRIVER", tmp_path / "chromedriver")
    assert "chromium" in browser.unavailable()


@pytest.mark.parametrize("latitude, longitude, title, shown_title, address", [
    (24.1477, 120.6736, "台中", "台中", None),  # Taichung's centre: the person's own title, no address
    (24.1477, 120.6736, "花壇鄉", "彰化縣外的位置", None),  # a township's name kept on a moved point: not kept
    (24.1477, 120.6736, "", "彰化縣外的位置", None),
    (24.0294, 120.538, "花壇鄉", "花壇鄉", "彰化縣花壇鄉"),  # the township's own point on the map
    (23.9600, 120.4500, "", "我的位置", None),  # in the county, no township's point: no address invented
])
def test_chatpage_labels_a_shared_point_honestly(webhook, standin, latitude, longitude, title, shown_title, address):
    with _page(webhook.url, standin.url) as server:
        assert _post(server, {"chat": RESIDENT, "kind": "location", "latitude": latitude, "longitude": longitude,
                              "title": title}).status_code == 200
        [entry] = requests.get(server.url + "api/timeline?since=0", timeout=10).json()["entries"]

    [body] = [json.loads(b) for b, _ in webhook.bodies]
    message = body["events"][0]["message"]
    assert (message["title"], message.get("address")) == (shown_title, address)
    assert (entry["location"]["title"], entry["location"]["address"] or None) == (shown_title, address)
    outside = latitude > 24.14  # Taichung
    assert entry["location"]["in_county"] is not outside
    if outside:  # a point outside the county is never called a Changhua place
        assert "彰化縣" not in json.dumps(message, ensure_ascii=False).replace("彰化縣外", "")
