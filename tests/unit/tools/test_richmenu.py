"""The rich menu: its definition (``shared.replies.richmenu``), the image ``tools.richmenu`` draws, the
content hash, and ``apply`` against the LINE stand-in through line-bot-sdk's own clients (a stand-in
thread on loopback)."""
from __future__ import annotations

import dataclasses
import functools
import io
import re

import pytest
from linebot.v3.messaging import RichMenuRequest

from shared.config import LINE_API_DATA_DEFAULT, Settings
from shared.line import limits
from shared.replies import richmenu
from tests.conftest import REPO
from tools import richmenu as tool
from tools.line_standin import DEFAULT_RICH_MENU_PATH, RICH_MENU_PATH, LineStandin, rich_menu_problems

Image = pytest.importorskip("PIL.Image", reason="Pillow (requirements-dev.lock) draws the rich menu")
TOKEN = "richmenu-unit-token"


def _font_or_skip() -> tool.CjkFont:
    try:
        return tool.find_font()
    except tool.FontMissing as exc:
        pytest.skip(f"no CJK font to draw the labels with: {exc}")


@pytest.fixture(scope="module")
def drawn() -> tuple[tool.CjkFont, bytes]:
    font = _font_or_skip()
    return font, tool.draw(font)


@functools.cache
def _plain_image(colour=(40, 40, 40)) -> bytes:
    """A PNG of the menu's size without text: the apply tests need no font."""
    buffer = io.BytesIO()
    Image.new("RGB", (richmenu.WIDTH, richmenu.HEIGHT), colour).save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture
def standin():
    with LineStandin(access_token=TOKEN) as running:
        yield running


@pytest.fixture
def clients(standin):
    settings = Settings.from_env({"LINE_API_BASE_URL": standin.url, "LINE_CHANNEL_ACCESS_TOKEN": TOKEN})
    api, blob = tool.clients(settings)
    yield api, blob
    api.api_client.close()
    blob.api_client.close()


def _writes(standin, since: int = 0) -> list[tuple[str, str]]:
    """(method, path) of every recorded call that changed something, ids shown as ``{id}``."""
    return [(c["method"], re.sub(r"richmenu-[0-9a-f]{32}", "{id}", c["path"]))
            for c in standin.calls(since) if c["method"] != "GET"]


def _last_seq(standin) -> int:
    calls = standin.calls()
    return calls[-1]["seq"] if calls else 0


# --- the definition ---------------------------------------------------------------------------

def test_richmenu_definition_is_a_menu_line_takes():
    request = richmenu.rich_menu_request(tool.NAME_PREFIX + "0" * 64)

    assert rich_menu_problems(request.to_dict()) == []
    assert limits.units(richmenu.CHAT_BAR_TEXT) <= limits.RICH_MENU_CHAT_BAR_TEXT


def test_richmenu_areas_cover_the_image_once_each():
    covered = Image.new("L", (richmenu.WIDTH, richmenu.HEIGHT), 0)
    for area in richmenu.areas():
        b = area.bounds
        patch = covered.crop((b.x, b.y, b.x + b.width, b.y + b.height))
        assert patch.getextrema() == (0, 0), f"{area.action.label} overlaps another tile"
        covered.paste(1, (b.x, b.y, b.x + b.width, b.y + b.height))
    assert covered.getextrema() == (1, 1), "some of the image is no tile's"


def _luminance(rgb: richmenu.Rgb) -> float:
    """WCAG 2.1 relative luminance of an sRGB colour."""
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: richmenu.Rgb, b: richmenu.Rgb) -> float:
    light, dark = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.mark.parametrize("tile", richmenu.TILES, ids=[t.data for t in richmenu.TILES])
def test_richmenu_every_tile_reads_at_aaa_contrast(tile):
    # WCAG 2.1 success criterion 1.4.6 (level AAA): at least 7:1 for text.
    assert _contrast(richmenu.TEXT, tile.background) >= 7, tile.word
    assert _contrast(richmenu.HINT, tile.background) >= 7, tile.hint


# --- the image ----------------------------------------------------------------------------------

def test_richmenu_image_is_a_png_of_the_menus_size_within_lines_limit(drawn):
    _, image = drawn

    with Image.open(io.BytesIO(image)) as opened:
        assert (opened.format, opened.size) == ("PNG", (richmenu.WIDTH, richmenu.HEIGHT))
    assert len(image) <= limits.RICH_MENU_IMAGE_BYTES


@pytest.mark.parametrize("index", range(len(richmenu.TILES)), ids=[t.data for t in richmenu.TILES])
def test_richmenu_labels_fit_their_tiles_and_nothing_else_is_drawn_there(drawn, index):
    font, image = drawn
    placed = tool.layout(font)[index][0]
    left, top, right, bottom = placed.area
    inset = richmenu.GAP // 2 + tool.PADDING
    for box in (placed.word, placed.hint):  # the text's own ink, measured with the font
        assert left + inset <= box[0] and box[2] <= right - inset, (placed.tile.word, box)
        assert top + inset <= box[1] and box[3] <= bottom - inset, (placed.tile.word, box)
    assert placed.word[3] <= placed.hint[1]  # the hint is under the word, not over it
    with Image.open(io.BytesIO(image)) as opened:
        pixels = opened.convert("RGB")
        tile = pixels.crop((left + richmenu.GAP, top + richmenu.GAP, right - richmenu.GAP, bottom - richmenu.GAP))
        # Outside the two text boxes the tile is its colour only: no text ran past what was measured.
        for box in (placed.word, placed.hint):
            tile.paste(placed.tile.background, (box[0] - left - richmenu.GAP, box[1] - top - richmenu.GAP,
                                                box[2] - left - richmenu.GAP, box[3] - top - richmenu.GAP))
        assert tile.getcolors() == [(tile.width * tile.height, placed.tile.background)]
        word_colours = {colour for _, colour in pixels.crop(placed.word).getcolors(1 << 16)}
        assert richmenu.TEXT in word_colours  # and the word is drawn where it was measured


def test_richmenu_word_is_large_for_older_readers(drawn):
    font, _ = drawn
    # A phone shows the 2500 px image about 390 dp wide: a word of 140 px of ink or more is about 22 dp.
    heights = {placed.tile.word: placed.word[3] - placed.word[1] for placed, _, _ in tool.layout(font)}
    assert min(heights.values()) >= 120, heights


def test_richmenu_font_is_the_one_the_makefile_installs():
    makefile = (REPO / "Makefile").read_text()
    assert f"RICHMENU_FONT := {tool.FONT_DIR / tool.FONT_FILE}" in makefile
    assert "fonts-noto-cjk" in makefile


def test_richmenu_missing_font_says_which_package(tmp_path):
    with pytest.raises(tool.FontMissing, match="fonts-noto-cjk"):
        tool.find_font(tmp_path)


# --- the content hash ---------------------------------------------------------------------------

def _request(**changes) -> RichMenuRequest:
    request = richmenu.rich_menu_request("ignored")
    return request.copy(update=changes)


def test_richmenu_hash_is_the_same_for_the_same_menu_whatever_its_name():
    image = _plain_image()

    assert tool.content_hash(image, _request(name="a")) == tool.content_hash(image, _request(name="b"))
    assert tool.plan(image).name == tool.plan(image).name
    assert len(tool.plan(image).name) <= limits.RICH_MENU_NAME


@pytest.mark.parametrize("change", [
    {"chat_bar_text": "打開選單"},
    {"selected": not richmenu.OPEN_BY_DEFAULT},
    {"size": richmenu.rich_menu_request("x").size.copy(update={"height": 843})},
    {"areas": richmenu.areas()[:-1]},
    {"areas": [area.copy(update={"bounds": area.bounds.copy(update={"x": area.bounds.x + 1})})
               for area in richmenu.areas()]},
], ids=["chat_bar_text", "selected", "size", "one_area_fewer", "bounds_moved"])
def test_richmenu_hash_changes_with_what_line_shows(change):
    image = _plain_image()

    assert tool.content_hash(image, _request(**change)) != tool.content_hash(image, _request())


def test_richmenu_hash_changes_with_the_image():
    assert tool.content_hash(_plain_image((1, 2, 3)), _request()) != tool.content_hash(_plain_image(), _request())


# --- apply: idempotent against the stand-in ------------------------------------------------------

def test_richmenu_apply_on_a_new_channel_creates_uploads_and_sets_one_default(standin, clients):
    menu = tool.plan(_plain_image())

    applied = tool.apply(menu, *clients)

    assert (applied.created, applied.uploaded, applied.set_default, applied.deleted) == (True, True, True, ())
    assert _writes(standin) == [("POST", RICH_MENU_PATH), ("POST", RICH_MENU_PATH + "/{id}/content"),
                                ("POST", DEFAULT_RICH_MENU_PATH + "/{id}")]
    api, blob = clients
    assert api.get_default_rich_menu_id().rich_menu_id == applied.rich_menu_id
    assert api.get_rich_menu(applied.rich_menu_id).name == menu.name
    assert bytes(blob.get_rich_menu_image(applied.rich_menu_id)) == menu.image


def test_richmenu_apply_twice_the_second_changes_nothing(standin, clients):
    menu = tool.plan(_plain_image())
    first = tool.apply(menu, *clients)
    after_first = _last_seq(standin)

    second = tool.apply(menu, *clients)

    assert second == dataclasses.replace(first, created=False, uploaded=False, set_default=False)
    assert _writes(standin, after_first) == []  # only reads: list, default, image
    assert len(clients[0].get_rich_menu_list().richmenus) == 1


def test_richmenu_apply_changed_menu_replaces_this_tools_menus_and_keeps_others(standin, clients):
    api, _ = clients
    foreign = api.create_rich_menu(_request(name="made in the LINE console")).rich_menu_id
    old = tool.apply(tool.plan(_plain_image((9, 9, 9))), *clients)

    new = tool.apply(tool.plan(_plain_image()), *clients)

    assert new.created and new.uploaded and new.set_default and new.rich_menu_id != old.rich_menu_id
    assert new.deleted == (old.rich_menu_id,)
    assert {m.rich_menu_id for m in api.get_rich_menu_list().richmenus} == {foreign, new.rich_menu_id}
    assert api.get_default_rich_menu_id().rich_menu_id == new.rich_menu_id


def test_richmenu_apply_finishes_a_run_that_stopped_before_the_upload(standin, clients):
    api, _ = clients
    menu = tool.plan(_plain_image())
    stopped = api.create_rich_menu(menu.request).rich_menu_id  # created, never uploaded nor default

    applied = tool.apply(menu, *clients)

    assert (applied.rich_menu_id, applied.created, applied.uploaded, applied.set_default) == (stopped, False, True, True)
    assert api.get_default_rich_menu_id().rich_menu_id == stopped


def test_richmenu_apply_same_menu_no_longer_default_is_only_made_default_again(standin, clients):
    menu = tool.plan(_plain_image())
    first = tool.apply(menu, *clients)
    clients[0].cancel_default_rich_menu()
    since = _last_seq(standin)

    again = tool.apply(menu, *clients)

    assert (again.rich_menu_id, again.created, again.uploaded, again.set_default) == (first.rich_menu_id, False, False, True)
    assert _writes(standin, since) == [("POST", DEFAULT_RICH_MENU_PATH + "/{id}")]


@pytest.mark.parametrize("after_processing", [False, True], ids=["refused", "answer_lost"])
def test_richmenu_apply_failed_create_names_the_step_and_the_next_run_makes_one_menu(standin, clients,
                                                                                   after_processing):
    menu = tool.plan(_plain_image())
    standin.fail_next(RICH_MENU_PATH, 500, after_processing=after_processing)

    with pytest.raises(tool.RichMenuError) as raised:
        tool.apply(menu, *clients)
    applied = tool.apply(menu, *clients)

    assert (raised.value.step, raised.value.status) == ("create", 500)
    # A create whose answer was lost made the menu: the next run finds it by its name and finishes it.
    assert applied.created is not after_processing and applied.uploaded and applied.set_default
    assert [m.rich_menu_id for m in clients[0].get_rich_menu_list().richmenus] == [applied.rich_menu_id]


def test_richmenu_apply_refused_token_is_a_clear_401(standin):
    settings = Settings.from_env({"LINE_API_BASE_URL": standin.url, "LINE_CHANNEL_ACCESS_TOKEN": "wrong"})

    with pytest.raises(tool.RichMenuError) as raised:
        tool.apply(tool.plan(_plain_image()), *tool.clients(settings))

    assert (raised.value.step, raised.value.status) == ("list", 401)
    assert "wrong" not in str(raised.value)


# --- where the calls go ---------------------------------------------------------------------------

@pytest.mark.parametrize("env, api, data", [
    ({}, "https://api.line.me", LINE_API_DATA_DEFAULT),
    ({"LINE_API_BASE_URL": "https://api.line.me/"}, "https://api.line.me", LINE_API_DATA_DEFAULT),
    ({"LINE_API_BASE_URL": "http://127.0.0.1:8090/"}, "http://127.0.0.1:8090", "http://127.0.0.1:8090"),
    ({"LINE_API_BASE_URL": "http://127.0.0.1:8090", "LINE_API_DATA_BASE_URL": "http://127.0.0.1:8091/"},
     "http://127.0.0.1:8090", "http://127.0.0.1:8091"),
], ids=["line", "line_named", "standin", "both_named"])
def test_richmenu_clients_use_lines_two_hosts_or_one_standin(env, api, data):
    settings = Settings.from_env(env)
    messaging, blob = tool.clients(settings)

    assert (messaging.api_client.configuration.host, blob.api_client.configuration.host) == (api, data)
