"""One step of the six-process memory acceptance, run as its own OS process:

    python tests/integration/functions/memory_step_process.py approve|search|correct|forget

It builds the webhook use case from the environment exactly as functions/webhook does
(``shared.wiring.webhook_service``: SQLite store file, LINE stand-in, functions/memory over HTTP),
feeds it signed webhook bodies, reads the replies back from the stand-in's ``/__calls`` and prints
one JSON line ``{"step", "replies": [text…]}``. It shares nothing with other steps but the store file.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import requests  # noqa: E402

from shared import logs, wiring  # noqa: E402
from shared.config import WEBHOOK_REQUIRED, Settings  # noqa: E402
from shared.wiring import webhook_service  # noqa: E402
from tests.memory_support import postbacks  # noqa: E402
from tools import line_events  # noqa: E402

USER = "U7a1e5b0c2d3f4a5b6c7d8e9f0a1b2c3d"


def _event(kind: str, value: str) -> dict:
    if kind == "message":
        return line_events.text_event(value, user_id=USER)
    return line_events.postback_event(value, user_id=USER)


def send(service, settings: Settings, event: dict) -> list[dict]:
    raw = line_events.webhook_body([event], "U" + "0" * 32)
    result = service.handle(raw.decode(), line_events.sign(raw, settings.line_channel_secret or ""))
    assert result.status == 200, result
    calls = requests.get(settings.line_api_base_url + "/__calls", timeout=5).json()
    [reply] = [c for c in calls if c["path"] == "/v2/bot/message/reply"
               and (c.get("body") or {}).get("replyToken") == event["replyToken"]]
    return reply["body"]["messages"]


def words(messages: list[dict]) -> str:
    return json.dumps(messages, ensure_ascii=False)


def approve_button(messages: list[dict]) -> str:
    return postbacks(messages)["同意記住"]


def main(step: str) -> None:
    settings = Settings.from_env(os.environ, required=WEBHOOK_REQUIRED)
    logs.use_user_hasher(wiring.user_hasher(settings))  # as functions/webhook/main.py does
    service = webhook_service(settings)
    replies = []
    if step in ("approve", "correct"):
        ask = "長輩吃素，以後優先找蔬食，幫我記住" if step == "approve" else "改成蛋奶素"
        card = send(service, settings, _event("message", ask))
        replies.append(words(card))
        replies.append(words(send(service, settings, _event("postback", approve_button(card)))))
    elif step == "search":
        replies.append(words(send(service, settings, _event("message", "花壇有推薦吃的嗎？"))))
    elif step == "forget":
        replies.append(words(send(service, settings, _event("message", "忘記我的飲食偏好"))))
    else:
        raise SystemExit(f"unknown step {step!r}")
    print(json.dumps({"step": step, "pid": os.getpid(), "replies": replies}, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1])
