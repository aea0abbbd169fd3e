"""LINE's length limits, counted the way LINE counts them: in UTF-16 code units.

Python's ``len`` counts code points; LINE counts UTF-16 code units, so every character outside the
Basic Multilingual Plane (most emoji, 𠮷) counts twice. A draft of 200 emoji is 208 code points of
``altText`` but 408 units, over LINE's 400: LINE refuses the whole reply (400) and the resident
gets nothing. Every renderer fits its strings here, and the LINE stand-in (``tools/line_standin.py``)
checks every message it receives with ``message_problems``, answering 400 as LINE does.

Source: LINE Messaging API reference, "Message objects" and "Action objects" (text 5,000; altText
400; action label 20; postback displayText 300 and data 300; message action text 300; quick reply
items 13; buttons template text 160, or 60 with a title or image; confirm template text 240) and
"Character counting in a text" (UTF-16 code units); docs/design.md §11.
"""
from __future__ import annotations

from typing import Any

#: Limits in UTF-16 code units.
TEXT = 5000
ALT_TEXT = 400
ACTION_LABEL = 20
DISPLAY_TEXT = 300
POSTBACK_DATA = 300
MESSAGE_ACTION_TEXT = 300
BUTTONS_TEXT = 160
BUTTONS_TEXT_WITH_TITLE = 60
CONFIRM_TEXT = 240
QUICK_REPLY_ITEMS = 13
ELLIPSIS = "…"

#: Rich menus (LINE Messaging API reference, "Rich menu object", "Upload rich menu image"): a name of at
#: most 300 characters, a chat bar text of at most 14, 1–20 tappable areas, a size 800–2500 px wide, at
#: least 250 px high and at least 1.45 times as wide as high (2500×1686 and 2500×843 are LINE's
#: templates), an image of at most 1 MB (counted here as 1,000,000 bytes, the stricter reading) in
#: JPEG or PNG, and actions of these kinds only (no location, camera or clipboard action).
RICH_MENU_NAME = 300
RICH_MENU_CHAT_BAR_TEXT = 14
RICH_MENU_AREAS = 20
RICH_MENU_WIDTH = (800, 2500)
RICH_MENU_MIN_HEIGHT = 250
RICH_MENU_MIN_RATIO = 1.45
RICH_MENU_IMAGE_BYTES = 1_000_000
RICH_MENU_IMAGE_TYPES = ("image/png", "image/jpeg")
RICH_MENU_ACTION_TYPES = frozenset({"postback", "message", "uri", "datetimepicker", "richmenuswitch"})


class LimitExceeded(ValueError):
    """A string is longer than LINE allows (checked before sending); not retryable."""


def units(text: str) -> int:
    """How LINE counts ``text``: UTF-16 code units (a character outside the BMP counts 2)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def fit(text: str, limit: int, ellipsis: str = ELLIPSIS) -> str:
    """``text`` unchanged when it fits ``limit`` units, else cut at a character boundary and ended
    with ``ellipsis``, the whole within ``limit`` units (a surrogate pair is never split)."""
    if units(text) <= limit:
        return text
    budget = limit - units(ellipsis)
    kept, used = [], 0
    for char in text:
        size = units(char)
        if used + size > budget:
            break
        kept.append(char)
        used += size
    return "".join(kept) + ellipsis


def check(text: str, limit: int, what: str) -> str:
    """``text`` when it fits ``limit`` units.

    Raises:
        LimitExceeded: naming ``what`` (e.g. "postback data"), its length and LINE's limit.
    """
    if units(text) > limit:
        raise LimitExceeded(f"{what} is {units(text)} UTF-16 units; LINE allows {limit}")
    return text


#: (JSON key as sent, limit) for the strings inside an action object.
_ACTION_FIELDS = (("label", ACTION_LABEL), ("displayText", DISPLAY_TEXT), ("data", POSTBACK_DATA))
#: Keys whose value is an action object, or a list of them.
_ACTION_KEYS = frozenset({"action", "defaultAction", "actions"})


def action_problems(action: Any, where: str = "action") -> list[tuple[str, str]]:
    """Every limit one action object (camelCase JSON, as sent to LINE) breaks: label, displayText, data,
    and a message action's text.

    Returns:
        ``[(property path, LINE-style message)]`` as ``message_problems`` gives them; empty when none.
    """
    if not isinstance(action, dict):
        return []
    fields = _ACTION_FIELDS + ((("text", MESSAGE_ACTION_TEXT),) if action.get("type") == "message" else ())
    return [(f"{where}.{key}", f"Length must be between 0 and {limit}") for key, limit in fields
            if isinstance(action.get(key), str) and units(action[key]) > limit]


def message_problems(message: Any, where: str = "messages[0]") -> list[tuple[str, str]]:
    """Every limit one message object (camelCase JSON, as sent to LINE) breaks.

    Returns:
        ``[(property path, LINE-style message)]``, e.g. ``("messages[0].altText", "Length must be
        between 0 and 400")``; empty when the message keeps every limit above.
    """
    problems: list[tuple[str, str]] = []

    def over(value: Any, limit: int, path: str) -> None:
        if isinstance(value, str) and units(value) > limit:
            problems.append((path, f"Length must be between 0 and {limit}"))

    def walk(node: Any, path: str, is_action: bool = False) -> None:
        if isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, f"{path}[{index}]", is_action)
            return
        if not isinstance(node, dict):
            return
        if is_action:
            problems.extend(action_problems(node, path))
        for key, value in node.items():
            walk(value, f"{path}.{key}", key in _ACTION_KEYS)

    if not isinstance(message, dict):
        return problems
    if message.get("type") == "text":
        over(message.get("text"), TEXT, f"{where}.text")
    over(message.get("altText"), ALT_TEXT, f"{where}.altText")
    template = message.get("template")
    if isinstance(template, dict):
        if template.get("type") == "buttons":
            titled = bool(template.get("title") or template.get("thumbnailImageUrl"))
            over(template.get("text"), BUTTONS_TEXT_WITH_TITLE if titled else BUTTONS_TEXT, f"{where}.template.text")
        elif template.get("type") == "confirm":
            over(template.get("text"), CONFIRM_TEXT, f"{where}.template.text")
    quick = message.get("quickReply")
    if isinstance(quick, dict) and isinstance(quick.get("items"), list) and len(quick["items"]) > QUICK_REPLY_ITEMS:
        problems.append((f"{where}.quickReply.items", f"Size must be between 1 and {QUICK_REPLY_ITEMS}"))
    walk(message, where)
    return problems
