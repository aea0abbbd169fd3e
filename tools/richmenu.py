"""Draw LOCAL's rich menu and apply it to the LINE channel, idempotently (``make richmenu``).

The menu itself (size, tiles, words, colours, actions) is ``shared.replies.richmenu``; this tool draws
its image with Pillow in Debian's Noto Sans CJK TC (``fonts-noto-cjk``), then, through line-bot-sdk
v3 (``MessagingApi`` at ``LINE_API_BASE_URL``, ``MessagingApiBlob`` at ``LINE_API_DATA_BASE_URL``,
bearer ``LINE_CHANNEL_ACCESS_TOKEN``, all read by ``shared.config``):

1. hashes the menu: SHA-256 of the request body without its name (size, selected, chatBarText,
   areas) and of the image's bytes; the menu's ``name`` is ``NAME_PREFIX`` + that hash;
2. lists the channel's rich menus: one named so already → no new menu (its image is uploaded only if
   a run stopped before it was); none → ``create_rich_menu`` and ``set_rich_menu_image``;
3. makes it the default (``set_default_rich_menu``) unless it already is;
4. deletes every other menu whose name starts with ``NAME_PREFIX`` (ones this tool made before); a
   menu made another way is left alone.

So a second run with the same image and areas creates, uploads and deletes nothing. Each step is
safe to repeat after a failure: a run that stopped part-way is finished by the next one.

Usage::

    python -m tools.richmenu [apply]            # the above; one JSON line on stdout
    python -m tools.richmenu image --out FILE   # only draw the image (PNG), no LINE call

Exit status: 0 done; 1 LINE refused a call or could not be reached (stderr names the step, the
status and LINE's message); 2 the font is missing, the image would be refused, or the configuration
is incomplete (stderr says what to do). The access token is never printed.

Sources: LINE Messaging API reference, "Rich menu" (create, upload image on api-data.line.me, set
default, list, delete; images JPEG or PNG of the menu's size, at most 1 MB); docs/deploy.md, "The
rich menu".
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

from linebot.v3.messaging import (
    ApiClient,
    ApiException,
    Configuration,
    MessagingApi,
    MessagingApiBlob,
    RichMenuRequest,
)
from urllib3.exceptions import HTTPError

from shared.config import ConfigError, Settings
from shared.line import limits
from shared.replies import richmenu

#: Every menu this tool makes is named so, then the content hash (64 hex digits).
NAME_PREFIX = "local-richmenu sha256:"
#: Debian's fonts-noto-cjk; the Traditional Chinese face of its collection is used.
FONT_DIR = Path("/usr/share/fonts/opentype/noto")
FONT_FILE = "NotoSansCJK-Bold.ttc"
FONT_FAMILY = "Noto Sans CJK TC"
#: Text sizes in px of the 2500 px wide image. A phone shows the image about 390 dp wide, so 150 px
#: is about 23 dp and 84 px about 13 dp (a phone's body text is 14–16 dp).
WORD_PX = 150
HINT_PX = 84
#: The space kept free between a tile's text and its edges, and between the word and the hint (px).
PADDING = 48
LINE_SPACING = 36
#: Seconds for one LINE call (an upload of up to 1 MB included).
REQUEST_TIMEOUT_SECONDS = 30.0

T = TypeVar("T")
Box = tuple[int, int, int, int]  # left, top, right, bottom in px, right and bottom exclusive


class FontMissing(RuntimeError):
    """The CJK font is not installed; the message says how to install it."""


class RichMenuError(RuntimeError):
    """LINE refused one call, or could not be reached.

    Attributes:
        step: what was being done (``create``, ``upload image`` …).
        status: LINE's HTTP status, or None when no answer came.
    """

    def __init__(self, step: str, status: int | None, message: str):
        self.step, self.status = step, status
        super().__init__(f"{step}: " + (f"LINE answered {status}: " if status else "") + message)


@dataclass(frozen=True)
class CjkFont:
    """One face of a font collection: the file and the face's index in it."""

    path: Path
    index: int

    def at(self, size_px: int) -> Any:
        """The face at ``size_px`` (a Pillow ``FreeTypeFont``)."""
        from PIL import ImageFont

        return ImageFont.truetype(str(self.path), size_px, index=self.index)


def find_font(directory: Path = FONT_DIR) -> CjkFont:
    """The Noto Sans CJK TC bold face in ``directory``.

    Raises:
        FontMissing: the file is absent, or holds no such face.
    """
    from PIL import ImageFont

    path = directory / FONT_FILE
    if not path.is_file():
        raise FontMissing(f"{path} is missing: install Debian's fonts-noto-cjk "
                          "(apt-get install fonts-noto-cjk; `make richmenu` does it when run as root)")
    for index in range(32):  # a collection has a handful of faces; Pillow raises OSError past the last
        try:
            family = ImageFont.truetype(str(path), 16, index=index).getname()[0]
        except OSError:
            break
        if family == FONT_FAMILY:
            return CjkFont(path, index)
    raise FontMissing(f"{path} has no {FONT_FAMILY} face")


@dataclass(frozen=True)
class PlacedTile:
    """Where one tile and its two lines of text are drawn, each a ``Box`` in px of the image."""

    tile: richmenu.Tile
    area: Box
    word: Box
    hint: Box


def _text_box(font: Any, text: str, centre_x: int, top: int) -> tuple[Box, tuple[int, int]]:
    """The ink box of ``text`` drawn centred on ``centre_x`` with its ink starting at ``top``, and the
    point to give Pillow's ``draw.text`` for that."""
    left, ink_top, right, bottom = font.getbbox(text)
    x = centre_x - (right - left) // 2 - left
    y = top - ink_top
    return (x + left, top, x + right, top + bottom - ink_top), (x, y)


def layout(font: CjkFont) -> list[tuple[PlacedTile, tuple[int, int], tuple[int, int]]]:
    """Each tile's boxes (word over hint, centred in its area) and the points Pillow draws them at.

    The text's own ink is measured with the font, so what is checked is what is drawn.
    """
    word_font, hint_font = font.at(WORD_PX), font.at(HINT_PX)
    placed = []
    for index, tile in enumerate(richmenu.TILES):
        bounds = richmenu.tile_bounds(index)
        area = (bounds.x, bounds.y, bounds.x + bounds.width, bounds.y + bounds.height)
        word_height = _ink_height(word_font, tile.word)
        hint_height = _ink_height(hint_font, tile.hint)
        top = area[1] + (bounds.height - word_height - LINE_SPACING - hint_height) // 2
        centre = area[0] + bounds.width // 2
        word, word_at = _text_box(word_font, tile.word, centre, top)
        hint, hint_at = _text_box(hint_font, tile.hint, centre, word[3] + LINE_SPACING)
        placed.append((PlacedTile(tile, area, word, hint), word_at, hint_at))
    return placed


def _ink_height(font: Any, text: str) -> int:
    _, top, _, bottom = font.getbbox(text)
    return bottom - top


def draw(font: CjkFont) -> bytes:
    """The menu's image: a PNG of ``richmenu.WIDTH`` × ``HEIGHT`` px, each tile its colour with a white
    gap around it, the word and the hint centred on it.

    Raises:
        ValueError: the PNG is over LINE's limit (``limits.RICH_MENU_IMAGE_BYTES``).
    """
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (richmenu.WIDTH, richmenu.HEIGHT), richmenu.GAP_COLOUR)
    pen = ImageDraw.Draw(image)
    word_font, hint_font = font.at(WORD_PX), font.at(HINT_PX)
    half = richmenu.GAP // 2
    for placed, word_at, hint_at in layout(font):
        left, top, right, bottom = placed.area
        pen.rectangle((left + half, top + half, right - half - 1, bottom - half - 1), fill=placed.tile.background)
        pen.text(word_at, placed.tile.word, font=word_font, fill=richmenu.TEXT)
        pen.text(hint_at, placed.tile.hint, font=hint_font, fill=richmenu.HINT)
    buffer = io.BytesIO()
    image.save(buffer, "PNG", optimize=True)
    data = buffer.getvalue()
    if len(data) > limits.RICH_MENU_IMAGE_BYTES:
        raise ValueError(f"the image is {len(data)} bytes; LINE takes at most {limits.RICH_MENU_IMAGE_BYTES}")
    return data


@dataclass(frozen=True)
class MenuPlan:
    """The menu to apply: its request (named by its hash), its PNG image and the hash."""

    request: RichMenuRequest
    image: bytes
    content_hash: str

    @property
    def name(self) -> str:
        return NAME_PREFIX + self.content_hash


def content_hash(image: bytes, request: RichMenuRequest) -> str:
    """SHA-256 (hex) of the menu as LINE shows it: the request's JSON body without its ``name``
    (size, selected, chatBarText, areas; keys sorted) and the image's bytes. Equal hashes, equal menus;
    a line-bot-sdk that serialised the same request otherwise would replace the menu once."""
    body = {key: value for key, value in request.to_dict().items() if key != "name"}
    digest = hashlib.sha256()
    digest.update(json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    digest.update(b"\0")
    digest.update(hashlib.sha256(image).digest())
    return digest.hexdigest()


def plan(image: bytes, request_for: Callable[[str], RichMenuRequest] = richmenu.rich_menu_request) -> MenuPlan:
    """The plan for ``image`` and the menu ``request_for(name)`` builds (``shared.replies.richmenu``)."""
    digest = content_hash(image, request_for(NAME_PREFIX))
    request = request_for(NAME_PREFIX + digest)
    limits.check(request.name, limits.RICH_MENU_NAME, "rich menu name")
    return MenuPlan(request, image, digest)


@dataclass(frozen=True)
class Applied:
    """What one run did: the default menu's id and hash, and whether it created, uploaded, set the
    default, and which of this tool's older menus it deleted."""

    rich_menu_id: str
    content_hash: str
    created: bool
    uploaded: bool
    set_default: bool
    deleted: tuple[str, ...]


def _call(step: str, fn: Callable[[], T]) -> T:
    """Run one SDK call; its failure becomes a ``RichMenuError`` naming ``step``."""
    try:
        return fn()
    except ApiException as exc:
        message = str(exc.reason or "")
        try:
            message = json.loads(exc.body or "{}").get("message", message)
        except (ValueError, AttributeError):
            pass
        raise RichMenuError(step, exc.status, message) from exc
    except HTTPError as exc:
        raise RichMenuError(step, None, f"LINE could not be reached ({exc.__class__.__name__})") from exc


def _default_id(api: MessagingApi) -> str | None:
    """The channel's default rich menu id; None when there is none (LINE answers 404)."""
    try:
        return _call("read the default", lambda: api.get_default_rich_menu_id(
            _request_timeout=REQUEST_TIMEOUT_SECONDS).rich_menu_id)
    except RichMenuError as exc:
        if exc.status == 404:
            return None
        raise


def _has_image(blob: MessagingApiBlob, menu_id: str) -> bool:
    try:
        _call("read the image", lambda: blob.get_rich_menu_image(menu_id, _request_timeout=REQUEST_TIMEOUT_SECONDS))
    except RichMenuError as exc:
        if exc.status == 404:
            return False
        raise
    return True


def apply(menu: MenuPlan, api: MessagingApi, blob: MessagingApiBlob) -> Applied:
    """Make ``menu`` the channel's default rich menu, creating and uploading only what is missing, then
    delete this tool's other menus (see the module's steps).

    Raises:
        RichMenuError: LINE refused a call or could not be reached; what was done before stays, and
            the next run finishes it.
    """
    timeout = {"_request_timeout": REQUEST_TIMEOUT_SECONDS}
    listed = _call("list", lambda: api.get_rich_menu_list(**timeout)).richmenus
    ours = [m for m in listed if m.name.startswith(NAME_PREFIX)]
    default = _default_id(api)
    same = [m.rich_menu_id for m in ours if m.name == menu.name]
    existing = default if default in same else next(iter(same), None)  # the default first, if it is one
    created = existing is None
    menu_id = existing or _call("create", lambda: api.create_rich_menu(menu.request, **timeout)).rich_menu_id
    uploaded = created or not _has_image(blob, menu_id)
    if uploaded:
        # line-bot-sdk v3 sends no Content-Type of its own for this call: the image's is given here.
        _call("upload image", lambda: blob.set_rich_menu_image(
            menu_id, menu.image, _headers={"Content-Type": "image/png"}, **timeout))
    if default != menu_id:
        _call("set default", lambda: api.set_default_rich_menu(menu_id, **timeout))
    deleted = tuple(m.rich_menu_id for m in ours if m.rich_menu_id != menu_id)
    for old in deleted:
        _call("delete an older menu", lambda old=old: api.delete_rich_menu(old, **timeout))
    return Applied(menu_id, menu.content_hash, created, uploaded, default != menu_id, deleted)


def clients(settings: Settings) -> tuple[MessagingApi, MessagingApiBlob]:
    """line-bot-sdk's two clients: ``MessagingApi`` at ``line_api_base_url`` and ``MessagingApiBlob`` at
    ``line_api_data_base_url`` (the SDK's blob calls go to api-data.line.me only when no host is set)."""
    token = settings.line_channel_access_token or ""
    return (MessagingApi(ApiClient(Configuration(host=settings.line_api_base_url, access_token=token))),
            MessagingApiBlob(ApiClient(Configuration(host=settings.line_api_data_base_url, access_token=token))))


def main(argv: list[str] | None = None) -> int:
    """Draw the menu; ``apply`` it (the default) or write the ``image``; see the module's exit statuses."""
    parser = argparse.ArgumentParser(prog="python -m tools.richmenu", description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", choices=("apply", "image"), default="apply")
    parser.add_argument("--out", type=Path, help="with image: where to write the PNG")
    args = parser.parse_args(argv)
    if args.command == "image" and args.out is None:
        parser.error("image needs --out FILE")
    try:
        image = draw(find_font())
    except (FontMissing, ValueError) as exc:
        print(f"richmenu: {exc}", file=sys.stderr)
        return 2
    menu = plan(image)
    if args.command == "image":
        args.out.write_bytes(image)
        print(json.dumps({"out": str(args.out), "bytes": len(image), "content_hash": menu.content_hash}))
        return 0
    try:
        settings = Settings.from_env(required=("LINE_CHANNEL_ACCESS_TOKEN",))
    except ConfigError as exc:
        print(f"richmenu: {exc}", file=sys.stderr)
        return 2
    try:
        applied = apply(menu, *clients(settings))
    except RichMenuError as exc:
        print(f"richmenu: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({**asdict(applied), "deleted": list(applied.deleted)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
