"""The budget of one answer, as an older resident reads it on a phone (docs/design.md §7, Wording), checked on
the LINE JSON of a reply; and every reply kind of the eval (tests/eval/cases/) rendered to check it.

The budget of one answer:

* at most ``MAX_MESSAGES`` (2) messages: one text, one Flex, or a text then a card (never two texts, never
  a text after a card);
* the text before a card at most ``TEXT_BEFORE_CARD_MAX`` (60) characters, besides its one source line
  (「資料來源：…」, at most ``SOURCE_LINE_MAX`` characters);
* a card's notes (the lines under its separator) at most ``CARD_NOTES_MAX`` (3), each at most
  ``CARD_NOTE_MAX_CHARS`` characters;
* a text without a card at most ``TEXT_MAX_LINES`` lines;
* the source said once: the word 「來源」 at most once in the answer;
* no internal id (data versions, request ids are the store's keys) and no jargon (``JARGON``), nor an
  English word that is not a name: LINE and Google, a name from the data (a shop, an event), or a word
  the resident wrote.

Pure functions of the messages (camelCase dicts, as LINE receives them); ``render_cases`` runs the eval's
own harness (tools/eval.py, the router reader) to produce them.
"""
from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from shared.handoff.codes import SHOWN
from tools.line_messages import _walk as walk

MAX_MESSAGES = 2
TEXT_BEFORE_CARD_MAX = 60
SOURCE_LINE_MAX = 30
CARD_NOTES_MAX = 3
CARD_NOTE_MAX_CHARS = 40
TEXT_MAX_LINES = 8
#: Words a resident does not know, in any reply (docs/design.md §7: 快照, LOCAL, TDX, postback, 帳號代碼).
JARGON = ("快照", "LOCAL", "TDX", "postback", "帳號代碼", "snapshot", "版本")
#: Internal ids: data versions (places-2026-09-27.1, events-demo-2026-11-30.1).
INTERNAL_ID = re.compile(r"\b(?:places|events)-[a-z-]*\d{4}-\d{2}-\d{2}(?:\.\d+)?|events-demo")
#: English words that are names residents know.
KNOWN_NAMES = frozenset({"LINE", "Google"})
_ENGLISH = re.compile(r"[A-Za-z]{2,}")
REPO = Path(__file__).resolve().parents[1]


def data_names() -> frozenset[str]:
    """The English words inside the data's own names (John手作蔬食): names, not LOCAL's words."""
    catalog = json.loads((REPO / "data" / "places-catalog.json").read_text(encoding="utf-8"))
    events = json.loads((REPO / "data" / "events-demo.json").read_text(encoding="utf-8"))
    names = [place["name"] for place in catalog["places"]] + [event["title"] for event in events["events"]]
    return frozenset(word.lower() for name in names for word in _ENGLISH.findall(name))


def _texts(node: Any, keys: tuple[str, ...]) -> list[str]:
    found: list[str] = []

    def visit(value: dict) -> bool:
        found.extend(item for key, item in value.items() if key in keys and isinstance(item, str))
        return False

    walk(node, visit)
    return found


def visible_text(messages: list[dict]) -> str:
    """What the resident can read: every text, alt text and button label, joined by newlines."""
    return "\n".join(_texts(messages, ("text", "altText", "label")))


def _chat_text(messages: list[dict]) -> str:
    """What the chat bubbles show (no alt text, no button labels): where a source is said."""
    shown = []
    for message in messages:
        if message.get("type") == "text":
            shown.append(message["text"])
        else:
            shown += _texts(message.get("contents"), ("text",))
    return "\n".join(shown)


def bubbles(message: dict) -> list[dict]:
    """The bubbles of a Flex message (one, or a carousel's)."""
    contents = message.get("contents") or {}
    return contents.get("contents", []) if contents.get("type") == "carousel" else [contents]


def card_notes(bubble: dict) -> list[str]:
    """The notes of a card: the texts of its body after its first separator."""
    items = ((bubble.get("body") or {}).get("contents")) or []
    kinds = [item.get("type") for item in items]
    if "separator" not in kinds:
        return []
    return [text for item in items[kinds.index("separator") + 1:] for text in _texts(item, ("text",))]


def _shape_problems(messages: list[dict]) -> list[str]:
    kinds = [message.get("type") for message in messages]
    if len(messages) > MAX_MESSAGES:
        return [f"{len(messages)} messages ({', '.join(map(str, kinds))}), at most {MAX_MESSAGES}"]
    if len(messages) == 2 and kinds != ["text", "flex"]:
        return [f"two messages must be a text then a card, not {kinds}"]
    if len(messages) == 2:
        return _text_before_card_problems(messages[0]["text"])
    if len(messages) == 1 and kinds == ["text"] and messages[0]["text"].count("\n") >= TEXT_MAX_LINES:
        return [f"a text of {messages[0]['text'].count(chr(10)) + 1} lines, at most {TEXT_MAX_LINES}"]
    return []


def _text_before_card_problems(text: str) -> list[str]:
    lines = text.split("\n")
    sources = [line for line in lines if line.startswith("資料來源：")]
    problems = [f"a source line of {len(line)} characters: {line}" for line in sources if len(line) > SOURCE_LINE_MAX]
    said = sum(len(line) for line in lines if line not in sources) + max(0, len(lines) - len(sources) - 1)
    if said > TEXT_BEFORE_CARD_MAX:
        problems.append(f"text before the card is {said} characters besides its source, at most {TEXT_BEFORE_CARD_MAX}")
    return problems


def _card_problems(messages: list[dict]) -> list[str]:
    problems = []
    for message in messages:
        if message.get("type") != "flex":
            continue
        for bubble in bubbles(message):
            notes = card_notes(bubble)
            if len(notes) > CARD_NOTES_MAX:
                problems.append(f"a card with {len(notes)} notes, at most {CARD_NOTES_MAX}: {notes}")
            problems += [f"a card note of {len(note)} characters: {note}" for note in notes
                         if len(note) > CARD_NOTE_MAX_CHARS]
    return problems


def _word_problems(messages: list[dict], said: str, names: frozenset[str]) -> list[str]:
    text = visible_text(messages)
    # a request's number as residents read it (A7K-3QF, codes.SHOWN) has letters, but is neither English
    # nor jargon, whatever letters it draws (TDX-4KF); the internal id (req-20261202-cf3b…) is not
    # exempt: a reply that shows it fails the budget
    words = SHOWN.sub("", text)
    problems = [f"says the jargon {word!r}" for word in JARGON if word in words]
    problems += [f"shows the internal id {found!r}" for found in INTERNAL_ID.findall(text)]
    allowed = {word.lower() for word in KNOWN_NAMES} | names | {word.lower() for word in _ENGLISH.findall(said)}
    english = sorted({word for word in _ENGLISH.findall(words) if word.lower() not in allowed})
    problems += [f"says the English {english}"] if english else []
    sources = _chat_text(messages).count("來源")
    problems += [f"names its source {sources} times, once at most"] if sources > 1 else []
    return problems


def problems(messages: list[dict], *, said: str = "", names: frozenset[str] = frozenset()) -> list[str]:
    """Every way one answer breaks the budget (empty: within it).

    Args:
        messages: the answer as LINE JSON (camelCase dicts).
        said: what the resident wrote this conversation (their own English words may be echoed back).
        names: English words of the data's names (``data_names()``).
    """
    return _shape_problems(messages) + _card_problems(messages) + _word_problems(messages, said, names)


def _said(case: dict) -> str:
    steps = (case.get("setup") or {}).get("steps", [])
    return " ".join([case.get("input", ""), *(step.get("text", "") for step in steps)])


def _for_staff(case: dict) -> bool:
    """The observed step is a staff button: its answer is for the staff group, not a resident."""
    return "staff" in ((case.get("setup") or {}).get("observe") or {})


def render_cases(cases: Iterable[dict], reader: str = "router", standin=None) -> list[tuple[dict, list[dict]]]:
    """Every case's observed reply (and the reply after its ``tap``), on one reader of the eval's harness
    (``router``, or ``model`` with the Gemini stand-in ``standin``): [(case, messages)], in case order.
    Cases for other readers only, and staff buttons' answers, are skipped."""
    from tools import eval as harness

    class Recording(harness.Harness):
        def __init__(self, workdir: Path):
            super().__init__(reader, workdir, standin)
            self.replies: list[list[dict]] = []

        def _score(self, expect: dict, observed: dict) -> list[str]:
            self.replies.append(observed["messages"])
            return super()._score(expect, observed)

    rendered = []
    with tempfile.TemporaryDirectory(prefix="local-budget-") as workdir:
        recording = Recording(Path(workdir))
        for case in cases:
            if reader not in case.get("readers", harness.READERS) or _for_staff(case):
                continue
            recording.replies.clear()
            outcome = recording.run(case)
            if outcome.status == "error":  # a crash renders nothing: never within budget by silence
                raise RuntimeError(f"{case['id']}: {outcome.failures}")
            rendered += [(case, messages) for messages in recording.replies]
    return rendered


def over_budget(cases: Iterable[dict], reader: str = "router", standin=None) -> dict[str, list[str]]:
    """{case id: its problems} for every case whose reply breaks the budget, on that reader."""
    names = data_names()
    found: dict[str, list[str]] = {}
    for case, messages in render_cases(cases, reader, standin):
        wrong = problems(messages, said=_said(case), names=names)
        if wrong:
            found.setdefault(case["id"], []).extend(wrong)
    return found
