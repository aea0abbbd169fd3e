"""Near me over real HTTP: a functions-framework webhook process on loopback, signed location bodies, the LINE
stand-in. With the shipped catalog (no shop has sourced coordinates) a location in the county is answered
with the townships that have shops as buttons and no distance; Taichung's city centre is told it is outside
the county; once the places template (one shop with a position from its list) is imported into the store, a
location beside that shop lists it first with its straight-line distance."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest
import requests
from geographiclib.geodesic import Geodesic

from shared.places.ingest import ingest_curated
from shared.places.search import areas_with_places
from shared.store.sqlite import SqliteStore, path_from_url
from tests.conftest import REPO, all_text, line_body, location_event, recorded_replies, sign
from tools import reply_budget

YUANLIN_STATION = (23.9593, 120.5701)
TEMPLATE_SHOP = (23.96, 120.57)  # 範例素食便當's lat, lng in data/places-template.csv


def _post(url: str, standin, event: dict) -> list[dict]:
    """POST one signed event; assert 200 and one reply; its messages (JSON dicts)."""
    body = line_body(event)
    response = requests.post(url, data=body, timeout=10,
                             headers={"Content-Type": "application/json", "X-Line-Signature": sign(body)})
    assert response.status_code == 200
    [reply] = recorded_replies(standin, event["replyToken"])
    return reply["body"]["messages"]


@pytest.mark.slow
def test_near_me_http_location_answers_without_inventing_distances(start_function, base_env, line_standin):
    webhook = start_function("webhook", base_env)
    townships = areas_with_places()
    in_county = _post(webhook.url, line_standin, location_event(24.0818, 120.5386, address="500彰化縣彰化市中正路一段"))
    words = all_text(in_county)
    assert all(township in words for township in townships) and "公里" not in words and "公尺" not in words
    labels = [item["action"].get("label") for item in in_county[-1]["quickReply"]["items"]]
    assert labels == ["分享我的位置", *townships]
    taichung = _post(webhook.url, line_standin, location_event(24.1477, 120.6736, user_id="U" + "7" * 32))
    assert "不在彰化縣" in all_text(taichung)

    store = SqliteStore(path_from_url(base_env["LOCAL_STORE_URL"]), deadline_seconds=5.0)
    imported = ingest_curated(store, REPO / "data" / "places-template.csv", now=datetime(2026, 11, 30, 2, tzinfo=timezone.utc))
    assert imported.outcome == "snapshot_written"
    near = _post(webhook.url, line_standin, location_event(*YUANLIN_STATION, user_id="U" + "8" * 32))
    assert [message["type"] for message in near] == ["text", "flex"]
    first_card = near[1]["contents"]["contents"][0]
    metres = Geodesic.WGS84.Inverse(*YUANLIN_STATION, *TEMPLATE_SHOP)["s12"]
    assert "範例素食便當" in all_text([near[1] | {"contents": first_card}])
    assert f"直線約 {int(round(metres, -1))} 公尺" in all_text([near[1] | {"contents": first_card}])
    assert reply_budget.problems(near) == []
