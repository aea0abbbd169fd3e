"""The rich menu under the chat: its size, its tiles (words, colours, actions) and the request that
creates it, in one place. ``tools/richmenu.py`` draws the image from it and applies it to the channel
(``make richmenu``; docs/deploy.md, "The rich menu").

Six large tiles, two columns by three rows, each one word a resident already knows from the menu
(選單's quick replies, the help) with a short line under it, light text on a dark colour. A tap is a
postback ``menu:<name>``, which ``shared.routing.MENU_POSTBACKS`` answers exactly as the typed word
(查活動 …); its ``displayText`` is that word, so the chat shows what was tapped as the resident's own
message, and its ``label`` is the word too (LINE reads it aloud with the phone's accessibility
features). No tile asks for a location: a rich menu takes no location action, and LOCAL's data has
no map positions (``shared.replies.menu.LIMIT_WORDS["no_distance"]``).

Source: LINE Messaging API reference, "Rich menu object" (size, areas, chatBarText ≤ 14 characters,
an action's label read aloud) and "Postback action" (data, displayText); LINE's limits are in
``shared.line.limits``.
"""
from __future__ import annotations

from dataclasses import dataclass

from linebot.v3.messaging import (
    PostbackAction,
    RichMenuArea,
    RichMenuBounds,
    RichMenuRequest,
    RichMenuSize,
)

#: An RGB colour, each part 0–255.
Rgb = tuple[int, int, int]


@dataclass(frozen=True)
class Tile:
    """One tappable tile of the menu.

    Attributes:
        word: the large word on the tile, also the action's label and displayText (≤ 20 UTF-16 units,
            LINE's label limit); the same word typed is a fixed entry of ``shared.routing``.
        hint: the short line under the word.
        data: the postback data, ``menu:<name>`` of ``shared.routing.MENU_POSTBACKS``.
        background: the tile's colour, dark enough for ``TEXT`` and ``HINT`` to read at a contrast
            of at least 7:1 (WCAG 2.1, level AAA; checked in the tests).
    """

    word: str
    hint: str
    data: str
    background: Rgb


#: The image and the menu are 2500×1686 px, LINE's large template.
WIDTH, HEIGHT = 2500, 1686
COLUMNS, ROWS = 2, 3
#: The words in the chat bar that open and close the menu (LINE: at most 14 characters).
CHAT_BAR_TEXT = "點這裡打開選單"
#: Shown open when a resident opens the chat (``selected``), so the tiles are seen without a tap.
OPEN_BY_DEFAULT = True
#: The colours of the word and of the hint line.
TEXT: Rgb = (255, 255, 255)
HINT: Rgb = (255, 240, 200)
#: The gap between tiles (px), in ``GAP_COLOUR``: the tiles read as separate buttons.
GAP = 12
GAP_COLOUR: Rgb = (255, 255, 255)

TILES: tuple[Tile, ...] = (
    Tile("查活動", "看各鄉鎮的活動", "menu:events", (16, 72, 96)),
    Tile("查蔬食", "找有素食的店家", "menu:places", (27, 84, 45)),
    Tile("留下服務詢問", "請真人幫忙", "menu:handoff", (124, 45, 18)),
    Tile("查看原本服務單", "看服務詢問的進度", "menu:status", (74, 44, 107)),
    Tile("我的偏好", "看或刪除記住的飲食", "menu:preference", (92, 60, 0)),
    Tile("選單", "看我能幫什麼忙", "menu:main", (38, 50, 56)),
)


def tile_bounds(index: int) -> RichMenuBounds:
    """The area of tile ``index`` (0 top left, row by row), in px of the 2500×1686 image; the last
    column and row take the remainder so the areas cover the whole image.

    Raises:
        IndexError: ``index`` is not a tile's.
    """
    if not 0 <= index < COLUMNS * ROWS:
        raise IndexError(f"no tile {index} in a {COLUMNS}x{ROWS} menu")
    column, row = index % COLUMNS, index // COLUMNS
    width, height = WIDTH // COLUMNS, HEIGHT // ROWS
    x, y = column * width, row * height
    return RichMenuBounds(x=x, y=y, width=WIDTH - x if column == COLUMNS - 1 else width,
                          height=HEIGHT - y if row == ROWS - 1 else height)


def areas() -> list[RichMenuArea]:
    """Every tile's area and postback action, in ``TILES`` order."""
    return [RichMenuArea(bounds=tile_bounds(index),
                         action=PostbackAction(label=tile.word, data=tile.data, display_text=tile.word))
            for index, tile in enumerate(TILES)]


def rich_menu_request(name: str) -> RichMenuRequest:
    """The request that creates the menu, named ``name`` (never shown to residents; ≤ 300 characters)."""
    return RichMenuRequest(size=RichMenuSize(width=WIDTH, height=HEIGHT), selected=OPEN_BY_DEFAULT,
                           name=name, chat_bar_text=CHAT_BAR_TEXT, areas=areas())
