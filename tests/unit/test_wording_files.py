"""Wording lives in one place per domain (docs/design.md §7, Wording): every module of shared/ and functions/
holding Chinese text is listed here, either as a wording file (sentences a resident or staff member
reads) or as a reading file (words read from what people write, names in the data, the model's
instructions, a configured default); a message is worded with Chinese text only inside a wording file.
A new module with Chinese text fails until it is placed in one of the two lists,
so a reviewer can read every sentence a resident may see in the wording files.
"""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from tests.unit.turn.test_turn_notes_are_typed import docstring_nodes

REPO = Path(__file__).resolve().parents[2]
#: The wording files, per domain: every sentence a person reads.
WORDING = {
    "turn": ["shared/turn/wording.py"],
    "replies (menu, shops, events, buttons)": ["shared/replies/menu.py", "shared/replies/places.py",
                                               "shared/replies/events.py", "shared/replies/next_steps.py",
                                               "shared/replies/area_picker.py", "shared/replies/refusals.py",
                                               "shared/replies/nearby.py", "shared/replies/richmenu.py"],
    "handoff": ["shared/handoff/wording.py", "shared/handoff/cards.py", "shared/handoff/status.py",
                "shared/handoff/codes.py"],  # a request's number, or for an older one when it was made
    "memory": ["shared/memory/replies.py", "shared/memory/cards.py"],
    "staff": ["shared/staff/wording.py", "shared/staff/cards.py", "shared/staff/relay.py", "shared/staff/audit.py"],
    "delivery": ["shared/context.py"],  # the head of a restated reply (RESTATED_HEAD)
}
#: The reading files: words matched in what people write, names of places and sources, the model's
#: instructions and tool descriptions; the display name's default. None of them words a message.
READING = {
    "shared/address.py", "shared/areas.py", "shared/diets.py", "shared/config.py", "shared/routing.py",
    "shared/agent/calls.py", "shared/agent/prompts.py", "shared/agent/tools.py",
    "shared/events/activities.py", "shared/events/search.py", "shared/events/source.py",
    "shared/places/search.py", "shared/places/curated.py", "shared/places/layers.py", "shared/places/restaurants.py",
    "shared/places/ingest.py", "shared/text.py",
    "shared/handoff/drafts.py", "shared/handoff/cancel_words.py", "shared/handoff/status_words.py",
    "shared/memory/phrases.py", "shared/memory/diet_dropped.py", "shared/staff/flow.py",
    "shared/turn/crisis.py", "shared/turn/dates.py", "shared/turn/datespec.py", "shared/turn/details.py",
    "shared/turn/engine.py", "shared/turn/pickers.py", "shared/turn/near_me.py", "shared/turn/reading.py",
    "shared/turn/router.py",
}
READING_FOLDERS = ("shared/turn/rules/", "shared/turn/vocabulary/")
#: The line-bot-sdk builders of what a person reads, and the keywords that hold the words.
BUILDERS = {"TextMessage", "FlexText", "FlexMessage", "MessageAction", "PostbackAction", "URIAction",
            "DatetimePickerAction", "checked_postback", "area_postback"}
WORD_KEYWORDS = {"text", "alt_text", "label", "display_text"}
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _modules() -> list[Path]:
    return sorted(path for root in ("shared", "functions") for path in (REPO / root).rglob("*.py"))


@functools.cache
def _tree(path: Path) -> ast.Module:
    """The parsed module (read once for the three tests; never changed by them)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _name(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def _chinese(node: ast.AST, skip: set[int] = frozenset()) -> list[str]:  # type: ignore[assignment]
    return [item.value for item in ast.walk(node) if isinstance(item, ast.Constant) and isinstance(item.value, str)
            and id(item) not in skip and _CJK.search(item.value)]


def _builder(call: ast.Call) -> str | None:
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return name if name in BUILDERS else None


def _is_wording(name: str) -> bool:
    return any(name in files for files in WORDING.values())


def _is_reading(name: str) -> bool:
    return name in READING or name.startswith(READING_FOLDERS)


def test_wording_files_every_module_with_chinese_text_is_a_wording_or_a_reading_file():
    unplaced = []
    for path in _modules():
        tree = _tree(path)
        said = _chinese(tree, docstring_nodes(tree))
        if said and not (_is_wording(_name(path)) or _is_reading(_name(path))):
            unplaced.append((_name(path), said[:3]))
    assert not unplaced, f"Chinese text outside the wording files (place it, or list the module): {unplaced}"


def test_wording_files_messages_are_worded_only_in_the_wording_files():
    outside = []
    for path in _modules():
        if _is_wording(_name(path)):
            continue
        for call in ast.walk(_tree(path)):
            if isinstance(call, ast.Call) and _builder(call):
                words = [value for keyword in call.keywords if keyword.arg in WORD_KEYWORDS
                         for value in _chinese(keyword.value)] + [value for arg in call.args for value in _chinese(arg)]
                if words:
                    outside.append((_name(path), call.lineno, words[:2]))
    assert not outside, f"a message worded outside the wording files: {outside}"


def test_wording_files_listed_exist_and_hold_words():
    for name in [file for files in WORDING.values() for file in files] + sorted(READING):
        path = REPO / name
        assert path.exists(), name
        tree = _tree(path)
        assert _chinese(tree, docstring_nodes(tree)), f"{name} holds no Chinese text: take it off the list"
