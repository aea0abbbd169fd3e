"""Read an operator's curated place list (CSV or JSON) into a layer: every row validated, never guessed.

The list is what a town hall keeps: the festival's partner shops, or its own survey. One row per shop;
the columns (CSV header, or the keys of each JSON object; JSON is an array of such objects):

| column | required | what |
|---|---|---|
| ``name`` | yes | the shop's name as the list writes it |
| ``address`` | yes | its address; the township is read from its start (shared.address: 510彰化縣員林市…, 員林市…) |
| ``township`` | no | one of the 26 townships (員林 or 員林市); must agree with the address when both name one |
| ``phone`` | no | digits, spaces, ``-``, ``()``, ``+``, ``#``, 7 to 15 digits |
| ``diet`` | no | the diets the list states: 蔬食, 全素, 蛋奶素, 奶素 (or vegetarian, vegan, ovo_lacto, lacto), several joined by 、 , ; / or spaces; empty: the list states none |
| ``lat``, ``lng`` | no | both or neither, WGS84 degrees inside the county (shared.geo.in_county) |
| ``festival`` | no | 是 / 否 (empty: 否): the shop is on the festival's list, so its card says where the campaign stands |
| ``list_name`` | yes | the list's name in people's words, at most ``LIST_NAME_MAX`` characters (彰化縣蔬食節店家名單) |
| ``list_url`` | yes | where the list is published (``https://…`` or ``http://…``) |
| ``accessed_on`` | yes | the day the list was read, ``YYYY-MM-DD`` |

Rows are skipped and counted by the first reason that applies (``SKIP_REASONS``); a file whose header
is not this schema (a missing required column, an unknown one) is refused whole (``CuratedFileError``).

Source: docs/data.md (Places from lists and TDX: the schema), docs/design.md §5.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from datetime import date
from pathlib import Path
from typing import Any

from shared.address import names_other_county
from shared.areas import UnknownArea, normalize_area
from shared.geo import checked_point, in_county
from shared.places.layers import CURATED, Layer, RowSkip, merge_key, township_in_address

REQUIRED_COLUMNS: tuple[str, ...] = ("name", "address", "list_name", "list_url", "accessed_on")
OPTIONAL_COLUMNS: tuple[str, ...] = ("township", "phone", "diet", "lat", "lng", "festival")
COLUMNS: tuple[str, ...] = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
#: A list's name is said in the one source line of an answer (≤ 30 characters with the day).
LIST_NAME_MAX = 10
MAX_TEXT_CHARS = 120

#: Why a row was skipped, in the order they are checked.
SKIP_REASONS: tuple[str, ...] = (
    "not_an_object", "unknown_column", "missing_name", "missing_address", "missing_source", "bad_source",
    "out_of_county", "bad_township", "no_township", "township_mismatch", "bad_phone", "bad_diet", "bad_coordinates",
    "bad_festival", "duplicate",
)

#: The diet words a list may state, and the type each is evidence of (shared.diets labels).
DIET_COLUMN_WORDS: dict[str, str] = {
    "蔬食": "vegetarian", "素食": "vegetarian", "vegetarian": "vegetarian",
    "全素": "vegan", "純素": "vegan", "vegan": "vegan",
    "蛋奶素": "ovo_lacto", "奶蛋素": "ovo_lacto", "ovo_lacto": "ovo_lacto",
    "奶素": "lacto", "lacto": "lacto",
}
#: The reason a value that is not text or a number (a JSON list, object or true/false) gives, per column.
_NOT_TEXT = {"name": "missing_name", "address": "missing_address", "township": "bad_township", "phone": "bad_phone",
             "diet": "bad_diet", "lat": "bad_coordinates", "lng": "bad_coordinates", "festival": "bad_festival",
             "list_name": "bad_source", "list_url": "bad_source", "accessed_on": "bad_source"}
_FESTIVAL = {"": False, "否": False, "是": True}
_PHONE = re.compile(r"^[0-9()+\-# ]+$")
_DIET_SPLIT = re.compile(r"[、,，;；/\s]+")
SOURCE_KIND = "operator_list"


class CuratedFileError(ValueError):
    """The file cannot be read as a list at all; ``reason`` is a short word (``not_utf8``, ``not_json``,
    ``not_csv``, ``not_a_list``, ``missing_columns``, ``unknown_columns``, ``empty``, ``unreadable``, ``unknown_format``)."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


def _json_rows(text: str) -> list[Any]:
    try:
        rows = json.loads(text)
    except json.JSONDecodeError:
        raise CuratedFileError("not_json") from None
    if not isinstance(rows, list):
        raise CuratedFileError("not_a_list", "a JSON array of row objects")
    return rows


def _csv_rows(text: str) -> list[Any]:
    """The rows of a CSV list. Raises CuratedFileError (``not_csv``: the csv module cannot read it, e.g.
    a field over its 131,072-character limit; ``missing_columns``, ``unknown_columns``)."""
    reader = csv.DictReader(io.StringIO(text))
    try:
        header = [column.strip() for column in reader.fieldnames or []]
        missing = [column for column in REQUIRED_COLUMNS if column not in header]
        if missing:
            raise CuratedFileError("missing_columns", ", ".join(missing))
        unknown = [column for column in header if column not in COLUMNS]
        if unknown:
            raise CuratedFileError("unknown_columns", ", ".join(unknown))
        return [{(key or "").strip(): value for key, value in row.items()} for row in reader]
    except csv.Error as exc:
        raise CuratedFileError("not_csv", str(exc)[:100]) from None


def _rows_of(path: Path) -> list[Any]:
    readers = {".json": _json_rows, ".csv": _csv_rows}
    read = readers.get(path.suffix.lower())
    if read is None:
        raise CuratedFileError("unknown_format", "a .csv or .json file")
    try:
        data = path.read_bytes()
    except OSError:
        raise CuratedFileError("unreadable", path.name) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CuratedFileError("not_utf8", "save the list as UTF-8") from None
    return read(text)


def _text(row: dict[str, Any], column: str) -> str:
    value = row.get(column)
    if value is None:
        return ""
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise RowSkip(_NOT_TEXT[column])
    return " ".join(str(value).split())[:MAX_TEXT_CHARS]


def _source(row: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    name, url, day = _text(row, "list_name"), _text(row, "list_url"), _text(row, "accessed_on")
    if not (name and url and day):
        raise RowSkip("missing_source")
    try:
        accessed = date.fromisoformat(day)
    except ValueError:
        raise RowSkip("bad_source") from None
    if len(name) > LIST_NAME_MAX or not url.startswith(("https://", "http://")) or " " in url:
        raise RowSkip("bad_source")
    source_id = "list-" + hashlib.sha256(f"{name}|{url}|{accessed}".encode()).hexdigest()[:10]
    return source_id, {"url": url, "kind": SOURCE_KIND, "name": name, "accessed_on": accessed.isoformat(),
                       "scope": "an operator's curated list: name, township, address, phone, and the diets it states"}


def _township(row: dict[str, Any], address: str) -> str:
    if names_other_county(address):
        raise RowSkip("out_of_county")
    said = _text(row, "township")
    in_address = township_in_address(address)
    if said:
        try:
            said = normalize_area(said)
        except UnknownArea:
            raise RowSkip("bad_township") from None
        if in_address is not None and in_address != said:
            raise RowSkip("township_mismatch")
        return said
    if in_address is None:
        raise RowSkip("no_township")
    return in_address


def _phone(row: dict[str, Any]) -> str | None:
    phone = _text(row, "phone")
    if not phone:
        return None
    digits = sum(char.isdigit() for char in phone)
    if not _PHONE.match(phone) or not 7 <= digits <= 15:
        raise RowSkip("bad_phone")
    return phone


def _diets(row: dict[str, Any]) -> list[str]:
    words = [word for word in _DIET_SPLIT.split(_text(row, "diet").casefold()) if word]
    if any(word not in DIET_COLUMN_WORDS for word in words):
        raise RowSkip("bad_diet")
    return list(dict.fromkeys(DIET_COLUMN_WORDS[word] for word in words))


def _coordinates(row: dict[str, Any], source_id: str) -> dict[str, Any] | None:
    lat, lng = _text(row, "lat"), _text(row, "lng")
    if not lat and not lng:
        return None
    try:
        point = checked_point(float(lat), float(lng))
    except ValueError:
        raise RowSkip("bad_coordinates") from None
    if point is None or not in_county(point):
        raise RowSkip("bad_coordinates")
    return {"lat": point.lat, "lng": point.lng, "source": source_id}


def _festival(row: dict[str, Any]) -> bool:
    value = _text(row, "festival")
    if value not in _FESTIVAL:
        raise RowSkip("bad_festival")
    return _FESTIVAL[value]


def _place(row: Any) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """(catalog-shaped place, its source id, that source) for one row. Raises RowSkip."""
    if not isinstance(row, dict):
        raise RowSkip("not_an_object")
    if any(key not in COLUMNS for key in row):
        raise RowSkip("unknown_column")
    name, address = _text(row, "name"), _text(row, "address")
    if not name:
        raise RowSkip("missing_name")
    if not address:
        raise RowSkip("missing_address")
    source_id, source = _source(row)
    area = _township(row, address)
    phone = _phone(row)
    diets = _diets(row)
    coordinates = _coordinates(row, source_id)
    in_campaign = _festival(row)
    fields = {"name": source_id, "area": source_id, "address": source_id, **({"phone": source_id} if phone else {})}
    place = {
        "id": "list-" + hashlib.sha256(merge_key(name, address).encode()).hexdigest()[:12],
        "name": name, "area": area, "address": address, "phone": phone, "field_sources": fields,
        "dietary_options": diets, "dietary_evidence": {kind: source_id for kind in diets},
        "dietary_scope": "as the list states it; not every dish qualifies" if diets else "the list states no diet",
        "in_campaign": in_campaign, "open_now": None, "hours": None, "coordinates": coordinates,
        "walking_distance_m": None, "accessibility": None,
    }
    return place, source_id, source


def read_curated(path: str | Path) -> Layer:
    """Read and validate a curated list.

    Args:
        path: a ``.csv`` (UTF-8, with or without a byte-order mark; header row = COLUMNS) or a ``.json``
            file (an array of objects keyed by COLUMNS).
    Returns:
        The ``curated`` layer: the valid rows as places (in file order), every other row counted by
        its reason (SKIP_REASONS) with its row number (the first data row is 1).
    Raises:
        CuratedFileError: the file is not such a list (nothing of it is used).
    """
    rows = _rows_of(Path(path))
    if not rows:
        raise CuratedFileError("empty", "no rows")
    layer = Layer(kind=CURATED, received=len(rows))
    seen: set[str] = set()
    for number, row in enumerate(rows, start=1):
        try:
            place, source_id, source = _place(row)
            key = merge_key(place["name"], place["address"])
            if key in seen:
                raise RowSkip("duplicate")
        except RowSkip as skip:
            layer.skip(number, skip.reason)
            continue
        seen.add(key)
        layer.sources[source_id] = source
        layer.places.append(place)
    return layer
