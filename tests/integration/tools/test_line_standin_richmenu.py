"""The LINE stand-in's rich menu endpoints, driven by line-bot-sdk v3's own client over loopback
(``MessagingApi`` for api.line.me's paths, ``MessagingApiBlob`` for api-data.line.me's, both pointed
at the one stand-in)."""
from __future__ import annotations

import io
import json

import pytest
import requests
from linebot.v3.messaging import (
    ApiClient,
    ApiException,
    Configuration,
    MessagingApi,
    MessagingApiBlob,
    PostbackAction,
    RichMenuArea,
    RichMenuBounds,
    RichMenuRequest,
    RichMenuSize,
)

from shared.line import limits
from tools.line_standin import DEFAULT_RICH_MENU_PATH, RICH_MENU_PATH, LineStandin

PIL = pytest.importorskip("PIL.Image", reason="Pillow (requirements-dev.lock) draws the test images")

TOKEN = "standin-richmenu-token"
WIDTH, HEIGHT = 2500, 843


@pytest.fixture(scope="module")
def standin():
    with LineStandin(access_token=TOKEN) as running:
        yield running


@pytest.fixture(scope="module")
def apis(standin):
    with ApiClient(Configuration(host=standin.url, access_token=TOKEN)) as client:
        yield MessagingApi(client), MessagingApiBlob(client)


def _image(width: int = WIDTH, height: int = HEIGHT, kind: str = "PNG") -> bytes:
    buffer = io.BytesIO()
    PIL.new("RGB", (width, height), (250, 250, 240)).save(buffer, kind)
    return buffer.getvalue()


def _menu(name: str = "test menu", **changes) -> RichMenuRequest:
    fields = {"size": RichMenuSize(width=WIDTH, height=HEIGHT), "selected": True, "name": name,
              "chat_bar_text": "選單", "areas": [RichMenuArea(
                  bounds=RichMenuBounds(x=0, y=0, width=WIDTH, height=HEIGHT),
                  action=PostbackAction(label="查活動", data="menu:events", display_text="查活動"))]}
    fields.update(changes)
    return RichMenuRequest(**fields)


def _raw(standin, method: str, path: str, body: dict | bytes, content_type: str = "application/json"):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = requests.request(method, standin.url + path, data=data, timeout=5, headers={
        "Authorization": f"Bearer {TOKEN}", "Content-Type": content_type})
    return response.status_code, response.json()


def _menu_body(**changes) -> dict:
    body = _menu().to_dict()
    body.update(changes)
    return body


def _upload(blob: MessagingApiBlob, menu_id: str, image: bytes, content_type: str = "image/png") -> None:
    # line-bot-sdk v3 sends no Content-Type of its own for this call: the caller names the image's.
    blob.set_rich_menu_image(menu_id, image, _headers={"Content-Type": content_type})


def test_rich_menu_create_upload_set_default_then_read_back_through_the_sdk(standin, apis):
    api, blob = apis
    image = _image()

    menu_id = api.create_rich_menu(_menu("round trip")).rich_menu_id
    _upload(blob, menu_id, image)
    api.set_default_rich_menu(menu_id)

    assert menu_id.startswith("richmenu-")
    assert api.get_default_rich_menu_id().rich_menu_id == menu_id
    listed = {menu.rich_menu_id: menu for menu in api.get_rich_menu_list().richmenus}
    assert listed[menu_id].name == "round trip" and listed[menu_id].chat_bar_text == "選單"
    assert listed[menu_id].areas[0].action.data == "menu:events"
    assert bytes(blob.get_rich_menu_image(menu_id)) == image
    upload = standin.calls(where=lambda c: c["path"] == f"{RICH_MENU_PATH}/{menu_id}/content"
                           and c["method"] == "POST")[0]
    assert upload["body"]["contentType"] == "image/png" and upload["body"]["bytes"] == len(image)


def test_rich_menu_default_without_an_image_answers_400_as_line(standin, apis):
    api, _ = apis
    menu_id = api.create_rich_menu(_menu("no image")).rich_menu_id

    with pytest.raises(ApiException) as raised:
        api.set_default_rich_menu(menu_id)

    assert raised.value.status == 400
    assert json.loads(raised.value.body)["message"] == "must upload richmenu image before applying it to user"


def test_rich_menu_delete_of_the_default_leaves_none_and_a_second_delete_is_404(standin, apis):
    api, blob = apis
    menu_id = api.create_rich_menu(_menu("to delete")).rich_menu_id
    _upload(blob, menu_id, _image())
    api.set_default_rich_menu(menu_id)

    api.delete_rich_menu(menu_id)

    with pytest.raises(ApiException) as default:
        api.get_default_rich_menu_id()
    with pytest.raises(ApiException) as again:
        api.delete_rich_menu(menu_id)
    assert default.value.status == 404 and again.value.status == 404
    assert menu_id not in {menu.rich_menu_id for menu in api.get_rich_menu_list().richmenus}


def test_rich_menu_cancel_default_leaves_the_menu(standin, apis):
    api, blob = apis
    menu_id = api.create_rich_menu(_menu("kept")).rich_menu_id
    _upload(blob, menu_id, _image())
    api.set_default_rich_menu(menu_id)

    api.cancel_default_rich_menu()

    status, _ = _raw(standin, "GET", DEFAULT_RICH_MENU_PATH, b"")
    assert status == 404
    assert api.get_rich_menu(menu_id).name == "kept"


@pytest.mark.parametrize("change, prop", [
    ({"chatBarText": "一二三四五六七八九十一二三四五"}, "chatBarText"),
    ({"name": "x" * (limits.RICH_MENU_NAME + 1)}, "name"),
    ({"size": {"width": 2500, "height": 2000}}, "size"),
    ({"areas": []}, "areas"),
    ({"areas": [{"bounds": {"x": 0, "y": 0, "width": WIDTH + 1, "height": HEIGHT},
                 "action": {"type": "message", "text": "選單"}}]}, "areas[0].bounds"),
    ({"areas": [{"bounds": {"x": 0, "y": 0, "width": 10, "height": 10},
                 "action": {"type": "location", "label": "附近"}}]}, "areas[0].action.type"),
    ({"areas": [{"bounds": {"x": 0, "y": 0, "width": 10, "height": 10},
                 "action": {"type": "postback", "data": "x" * 301}}]}, "areas[0].action.data"),
], ids=["chat_bar_text_15", "name_301", "ratio_under_1_45", "no_area", "area_outside", "location_action",
        "data_301"])
def test_rich_menu_body_line_refuses_answers_400_on_create_and_validate(standin, change, prop):
    for path in (RICH_MENU_PATH, RICH_MENU_PATH + "/validate"):
        status, answer = _raw(standin, "POST", path, _menu_body(**change))

        assert status == 400 and prop in [d["property"] for d in answer["details"]]


def test_rich_menu_validate_takes_a_good_body_and_creates_nothing(standin, apis):
    api, _ = apis
    before = len(api.get_rich_menu_list().richmenus)

    api.validate_rich_menu_object(_menu("validated only"))

    assert len(api.get_rich_menu_list().richmenus) == before


@pytest.mark.parametrize("image, content_type, status", [
    (_image(WIDTH, 1686), "image/png", 400),   # not the menu's size
    (_image(kind="JPEG"), "image/png", 400),   # says PNG, is JPEG
    (b"GIF89a....", "image/gif", 415),
    (b"\x89PNG" + b"\0" * limits.RICH_MENU_IMAGE_BYTES, "image/png", 413),
], ids=["wrong_size", "wrong_type", "gif", "over_1_mb"])
def test_rich_menu_image_line_refuses_is_not_kept(standin, apis, image, content_type, status):
    api, blob = apis
    menu_id = api.create_rich_menu(_menu("bad image")).rich_menu_id

    with pytest.raises(ApiException) as raised:
        _upload(blob, menu_id, image, content_type)

    assert raised.value.status == status
    _upload(blob, menu_id, _image(kind="JPEG"), "image/jpeg")  # the menu still takes a good one
    assert bytes(blob.get_rich_menu_image(menu_id))[:2] == b"\xff\xd8"


def test_rich_menu_second_image_answers_400_and_keeps_the_first(standin, apis):
    api, blob = apis
    menu_id = api.create_rich_menu(_menu("one image")).rich_menu_id
    first = _image()
    _upload(blob, menu_id, first)

    with pytest.raises(ApiException) as raised:
        _upload(blob, menu_id, _image(kind="JPEG"), "image/jpeg")

    assert raised.value.status == 400
    assert bytes(blob.get_rich_menu_image(menu_id)) == first


def test_rich_menu_unknown_id_answers_404_everywhere(standin, apis):
    api, blob = apis
    unknown = "richmenu-" + "0" * 32

    for call in (lambda: api.get_rich_menu(unknown), lambda: api.set_default_rich_menu(unknown),
                 lambda: blob.get_rich_menu_image(unknown), lambda: _upload(blob, unknown, _image())):
        with pytest.raises(ApiException) as raised:
            call()
        assert raised.value.status == 404


def test_rich_menu_without_the_token_answers_401(standin):
    response = requests.get(standin.url + RICH_MENU_PATH + "/list", timeout=5)

    assert response.status_code == 401
