"""Read TDX's restaurants into a layer: only those whose class or name says vegetarian, every record validated.

A record is one element of the JSON array ``GET /v2/Tourism/Restaurant/{City}?$format=JSON`` answers
(Tourism V2, 觀光資訊資料庫 › 餐飲: ``RestaurantID``, ``RestaurantName``, ``Description``, ``Address``,
``ZipCode``, ``Phone``, ``OpenTime``, ``WebsiteUrl``, ``Picture``, ``Position {PositionLon, PositionLat,
GeoHash}``, ``Class``, ``MapUrl``, ``ParkingInfo``, ``City``, ``SrcUpdateTime``, ``UpdateTime``; the
Tourism Administration's open-data copy writes the class as ``Class1``/``Class2``/``Class3``).

Rules:
- kept only when 素 or 蔬食 is in ``Class`` / ``Class1`` / ``Class2`` / ``Class3`` or the name, else
  counted as ``not_vegetarian``; its diet is then ``vegetarian`` only (「蔬食，未確認素別」): TDX does
  not say which kind, so 全素 / 蛋奶素 / 奶素 never match it unless a curated list says so;
- the county: ``City`` must name 彰化縣 (shared.address.record_in_county: any width, 台 or 臺, a 臺灣
  prefix or not; or be missing while the address names no other county); else ``out_of_county``;
- the township: read from the address by shared.address (a township name or a postal code), else
  from ``ZipCode`` (a Changhua postal code), else ``no_township``;
- the phone: TDX writes ``886-4-7284398``; it is kept as people dial it (``04-7284398``); a phone
  that is not digits and dashes is left out (null), the place kept;
- the coordinates: ``Position`` when it lies in the county (shared.geo.in_county), with this source;
  else null;
- the hours: ``OpenTime`` as TDX writes it (free text, at most MAX_TEXT_CHARS characters), with this
  source; null when empty. Whether the shop is open now stays unknown.
A record that breaks a rule is skipped and counted under its first failed reason.

Source: TDX Tourism V2 API (https://tdx.transportdata.tw, 觀光 › 餐飲; the RestaurantTourismInfo
schema), docs/design.md §5.
"""
from __future__ import annotations

import re
from datetime import date
from typing import Any

from shared.address import record_in_county
from shared.geo import checked_point, in_county
from shared.places.layers import TDX, Layer, RowSkip, township_in_address

SOURCE_ID = "tdx_restaurants"
SOURCE_KIND = "tdx_restaurant"
#: How replies name this data (docs/design.md §7: in people's words).
SOURCE_NAME = "交通部觀光署資料"
VEGETARIAN_WORDS: tuple[str, ...] = ("素", "蔬食")
CLASS_FIELDS: tuple[str, ...] = ("Class", "Class1", "Class2", "Class3")
MAX_TEXT_CHARS = 120

SKIP_REASONS: tuple[str, ...] = (
    "not_an_object", "missing_id", "duplicate_id", "missing_name", "not_vegetarian", "out_of_county",
    "missing_address", "no_township",
)
_PHONE = re.compile(r"^[0-9\-#()]{7,20}$")


def _text(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    cleaned = " ".join(value.split())
    return cleaned[:MAX_TEXT_CHARS] if cleaned else None


#: Words in which 素 does not mean vegetarian (元素咖啡, 素描早午餐, 樸素小館): taken out before 素 is looked for.
NOT_VEGETARIAN_WORDS: tuple[str, ...] = ("元素", "素描", "樸素", "素人", "素顏", "平素", "要素", "因素", "色素",
                                         "激素", "毒素", "素材", "素質", "簡素", "葷素")


def says_vegetarian(record: dict[str, Any]) -> bool:
    """素 or 蔬食 in a class field or the name, once the words in which 素 means something else
    (NOT_VEGETARIAN_WORDS) are taken out."""
    texts = [_text(record.get(name)) or "" for name in (*CLASS_FIELDS, "RestaurantName")]
    for other in NOT_VEGETARIAN_WORDS:
        texts = [text.replace(other, "") for text in texts]
    return any(word in text for text in texts for word in VEGETARIAN_WORDS)


def _township(address: str, zip_code: Any) -> str | None:
    """The township the address names; else the one TDX's own ``ZipCode`` names, read as a postal code
    written before the address (a name in the address wins over a code: shared.address)."""
    area = township_in_address(address)
    code = zip_code if isinstance(zip_code, str) else str(zip_code) if isinstance(zip_code, int) else ""
    if area is None and code.strip().isdigit():
        area = township_in_address(f"{code.strip()}{address}")
    return area


def _phone(value: Any) -> str | None:
    phone = (_text(value) or "").replace(" ", "")
    if phone.startswith("886-"):
        phone = "0" + phone[len("886-"):]
    elif phone.startswith("+886-"):
        phone = "0" + phone[len("+886-"):]
    return phone if _PHONE.match(phone) else None


def _coordinates(position: Any) -> dict[str, Any] | None:
    if not isinstance(position, dict):
        return None
    point = checked_point(position.get("PositionLat"), position.get("PositionLon"))
    if point is None or not in_county(point):
        return None
    return {"lat": point.lat, "lng": point.lng, "source": SOURCE_ID}


def _place(record: Any) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise RowSkip("not_an_object")
    restaurant_id = _text(record.get("RestaurantID"))
    if not restaurant_id:
        raise RowSkip("missing_id")
    name = _text(record.get("RestaurantName"))
    if not name:
        raise RowSkip("missing_name")
    if not says_vegetarian(record):
        raise RowSkip("not_vegetarian")
    address = _text(record.get("Address"))
    if not address:
        raise RowSkip("missing_address")
    if not record_in_county(record.get("City"), address):
        raise RowSkip("out_of_county")
    area = _township(address, record.get("ZipCode"))
    if area is None:
        raise RowSkip("no_township")
    phone = _phone(record.get("Phone"))
    hours = _text(record.get("OpenTime"))
    fields = {"name": SOURCE_ID, "area": SOURCE_ID, "address": SOURCE_ID, **({"phone": SOURCE_ID} if phone else {}),
              **({"hours": SOURCE_ID} if hours else {})}
    return {
        "id": f"tdx-{restaurant_id}", "name": name, "area": area, "address": address, "phone": phone,
        "field_sources": fields, "dietary_options": ["vegetarian"], "dietary_evidence": {"vegetarian": SOURCE_ID},
        "dietary_scope": "the class or name says vegetarian; which kind (vegan, ovo-lacto …) is not confirmed",
        "in_campaign": False, "open_now": None, "hours": hours, "coordinates": _coordinates(record.get("Position")),
        "walking_distance_m": None, "accessibility": None,
    }


def map_restaurants(records: list[Any], *, origin: str, accessed_on: date) -> Layer:
    """Validate and map TDX restaurant records.

    Args:
        records: the API's JSON array (or a file in its format).
        origin: where it was read (the API URL, or ``file:<name>``), kept as the source's url.
        accessed_on: the day it was read (Asia/Taipei).
    Returns:
        The ``tdx`` layer: the vegetarian restaurants of the county as places, the rest counted by
        reason (SKIP_REASONS).
    """
    layer = Layer(kind=TDX, received=len(records))
    seen: set[str] = set()
    for number, record in enumerate(records, start=1):
        try:
            place = _place(record)
            if place["id"] in seen:
                raise RowSkip("duplicate_id")
        except RowSkip as skip:
            layer.skip(number, skip.reason)
            continue
        seen.add(place["id"])
        layer.places.append(place)
    if layer.places:
        layer.sources[SOURCE_ID] = {
            "url": origin, "kind": SOURCE_KIND, "name": SOURCE_NAME, "accessed_on": accessed_on.isoformat(),
            "scope": "tourism restaurant records: name, address, phone, position; the class or name says "
                     "vegetarian, the kind is not confirmed",
        }
    return layer
