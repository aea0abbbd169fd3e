"""Read the Changhua township out of an address written the way Taiwan writes it.

One reader for every source of addresses (TDX events, place importers), so they agree on what an
address says. It reads, in this order, at the head of the text:

- width and compatibility forms: ``unicodedata`` NFKC (full-width ５１０ and the ideographic space
  become 510 and a plain space); 台 → 臺 (a two-entry variant map, not a converter: the rest of an
  address must stay as written); runs of spaces become one;
- an optional 臺灣 / 臺灣省 prefix;
- an optional postal code (3 digits, or 3+2 / 3+3: 51044, 510012, 510-012; in brackets or not)
  before the county, after it, or both (``510彰化縣員林市…``, ``彰化縣 510員林市…``, ``彰化縣510員林市…``);
- an optional 彰化縣;
- one of the 26 full township names (員林市, never the alias 員林: street and shop names contain
  aliases), or a former full name (員林鎮, before 2015) read as the township it is now. Without a
  county the full name alone is enough: no other county of Taiwan has a township of these names
  (``員林市中山路…``).

When no township name follows, the first three digits of a postal code name the township alone
(500 彰化市, 510 員林市, … from ``data/townships.json``). A township name wins over a postal code that
disagrees with it (the name is what people read and correct; a code is often copied from an old
form). Only the first ``MAX_ADDRESS_CHARS`` characters are read, so the cost is bounded whatever
the length of the text, and every pattern is linear (no nested quantifiers).

Outcomes: an ``AddressReading`` (the township, the postal code as written or None, the rest of the
address), or an ``AddressSkip`` naming why no township could be read. ``read_township`` applies the
same reader to a record's ``Town`` field, then its address, then its location name.

Source: data/townships.json (names and postal codes; the codes from Chunghwa Post's 3+3 postal code
list, https://www.post.gov.tw/post/internet/Postal/index.jsp?ID=208); docs/data.md (Addresses).
"""
from __future__ import annotations

import enum
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from shared.areas import COUNTY, FORMER_NAMES, POSTAL_CODES, TOWNSHIPS, UnknownArea, normalize_area

#: The longest prefix of a text that is read (characters, after NFKC); the rest is never looked at.
MAX_ADDRESS_CHARS = 200

#: Variant characters read as their standard form (Ministry of Education's standard 臺), and 巿 (U+5DFF),
#: the look-alike often typed for 市 (U+5E02) in government records (員林巿): no address means 巿.
_VARIANTS = str.maketrans({"台": "臺", "县": "縣", "巿": "市"})

#: Taiwan's other counties and cities (and the pre-2010 names still seen on old records), in their
#: standard 臺 spelling: an address that starts with one is outside Changhua.
#: Source: Ministry of the Interior, 全國行政區域 (https://www.ris.gov.tw/app/portal/346).
OTHER_COUNTIES: tuple[str, ...] = (
    "臺北市", "新北市", "桃園市", "臺中市", "臺南市", "高雄市", "基隆市", "新竹市", "嘉義市",
    "新竹縣", "苗栗縣", "南投縣", "雲林縣", "嘉義縣", "屏東縣", "宜蘭縣", "花蓮縣", "臺東縣",
    "澎湖縣", "金門縣", "連江縣", "臺北縣", "桃園縣", "臺中縣", "臺南縣", "高雄縣",
)

_CODE = r"\(?[0-9]{3}(?:-?[0-9]{2,3})?(?![0-9])\)?"
#: The head of an address: prefix, postal codes and county, each optional, spaces between allowed.
_HEAD = re.compile(
    rf"(?:(?P<code1>{_CODE}) ?)?(?:臺灣省|臺灣)? ?(?:(?P<code2>{_CODE}) ?)?(?P<county>{COUNTY})? ?"
    rf"(?:(?P<code3>{_CODE}) ?)?"
)
#: Every full township name, and a former full name (員林鎮) read as the township it is now.
_FULL_NAMES = {**{name: name for name in TOWNSHIPS}, **FORMER_NAMES}
_TOWNSHIP = re.compile("|".join(sorted(_FULL_NAMES, key=len, reverse=True)))
_OTHER_COUNTY = re.compile("|".join(OTHER_COUNTIES))


class AddressSkip(enum.Enum):
    """Why no township could be read; the value is the counted reason.

    EMPTY: no text at all (None, blank).
    OTHER_COUNTY: the address starts with another county or city of Taiwan (臺中市西區…).
    NO_TOWNSHIP: neither a township name nor a Changhua postal code where the address starts
        (彰化縣中山路…, 中山路 100 號, 400 中山路…).
    """

    EMPTY = "empty"
    OTHER_COUNTY = "other_county"
    NO_TOWNSHIP = "no_township"


@dataclass(frozen=True)
class AddressReading:
    """What an address says about where it is.

    Attributes:
        township: the township's full name, e.g. "員林市".
        postal_code: the postal code as written, digits only ("510", "51044", "510012"), or None.
        rest: what follows the township (or the county and code when the code named the
            township), in the read form (NFKC, 臺, single spaces), e.g. "中山路一段 100 號"; may be "".
        county_named: True when the address says 彰化縣.
        by: "name" when a township name was read, "postal_code" when only the code named it.
    """

    township: str
    postal_code: str | None
    rest: str
    county_named: bool
    by: Literal["name", "postal_code"]


def read_form(text: str) -> str:
    """The form an address is read in: the first MAX_ADDRESS_CHARS characters, NFKC, 台 → 臺, 巿 → 市,
    one space for each run of spaces, stripped."""
    head = unicodedata.normalize("NFKC", text[:MAX_ADDRESS_CHARS]).translate(_VARIANTS)
    return " ".join(head.split())


def read_address(text: str | None) -> AddressReading | AddressSkip:
    """Read the township from an address as Taiwan writes it.

    Args:
        text: an address, e.g. "510彰化縣員林市中山路一段100號", "彰化縣 510員林市…", "員林市中山路…",
            "台灣彰化縣鹿港鎮…", full- or half-width; any length (only the head is read); never logged.
    Returns:
        AddressReading, or AddressSkip saying why no township could be read. Never raises.
    Source: module docstring; data/townships.json.
    """
    if not isinstance(text, str):
        return AddressSkip.EMPTY
    form = read_form(text)
    if not form:
        return AddressSkip.EMPTY
    head = _HEAD.match(form)
    assert head is not None  # every part is optional: it always matches, possibly empty
    code = next((head[name] for name in ("code1", "code2", "code3") if head[name]), None)
    code = code.strip("()").replace("-", "") if code else None
    at = head.end()
    named = _TOWNSHIP.match(form, at)
    if named:
        return AddressReading(_FULL_NAMES[named[0]], code, form[named.end():].strip(), bool(head["county"]), "name")
    if not head["county"] and _OTHER_COUNTY.match(form, at):
        return AddressSkip.OTHER_COUNTY
    by_code = POSTAL_CODES.get(code[:3]) if code else None
    if by_code:
        return AddressReading(by_code, code, form[at:].strip(), bool(head["county"]), "postal_code")
    return AddressSkip.NO_TOWNSHIP


def names_other_county(text: str | None) -> bool:
    """True when ``text`` (an address or a ``City`` field) starts with another county or city of
    Taiwan, after the same prefix, postal code and width reading as read_address."""
    return read_address(text) is AddressSkip.OTHER_COUNTY


def record_in_county(city: object, address: str | None) -> bool:
    """Whether a source record (TDX's activities and restaurants) is of Changhua County: its ``City``
    names 彰化縣 (any width, 台 or 臺, with or without a 臺灣 / 臺灣省 prefix); without a ``City``, its
    address does not start with another county (an address without a county is read by its township).

    Args:
        city: the record's ``City`` field, any type (None or blank: absent).
        address: its address, or None.
    """
    if isinstance(city, str) and city.strip():
        return read_form(city).removeprefix("臺灣省").removeprefix("臺灣").strip() == COUNTY
    return not names_other_county(address)


@dataclass(frozen=True)
class TownshipReading:
    """The township of a record with several fields, and the field it came from.

    Attributes:
        township: full name, e.g. "鹿港鎮".
        field: "town" (a Town field), "address", or "location" (a location or place name).
        address: the AddressReading when the address was read successfully, else None (kept so the
            postal code and rest are not parsed again elsewhere).
    """

    township: str
    field: Literal["town", "address", "location"]
    address: AddressReading | None = None


def _from_town(town: str | None) -> str | None:
    if not isinstance(town, str) or not town.strip():
        return None
    try:
        return normalize_area(read_form(town))
    except UnknownArea:
        return None


def _from_location(name: str | None) -> str | None:
    """The one full township name a location name contains anywhere (鹿港鎮天后宮, 彰化縣員林市公所
    前廣場), or None when it names none or several different ones."""
    if not isinstance(name, str):
        return None
    found = {_FULL_NAMES[spelling] for spelling in _TOWNSHIP.findall(read_form(name))}
    return found.pop() if len(found) == 1 else None


def read_township(
    *, town: str | None = None, address: str | None = None, location: str | None = None
) -> TownshipReading | AddressSkip:
    """The township of a record, from the first field that names one.

    Order: ``town`` (a township name or alias, e.g. TDX's Town "員林市" or "員林"), then ``address``
    (read_address), then ``location`` (a single full township name anywhere in the name).

    Args:
        town, address, location: the record's fields, any of them None or malformed.
    Returns:
        TownshipReading, or the AddressSkip of the address when no field names a township
        (EMPTY when no field had any text; OTHER_COUNTY when the address starts with another county
        and the other fields name no township). Never raises.
    """
    from_town = _from_town(town)
    read = read_address(address)
    reading = read if isinstance(read, AddressReading) else None
    if from_town:
        return TownshipReading(from_town, "town", reading)
    if reading:
        return TownshipReading(reading.township, "address", reading)
    from_location = _from_location(location)
    if from_location:
        return TownshipReading(from_location, "location", None)
    if read is AddressSkip.EMPTY and any(isinstance(v, str) and v.strip() for v in (town, location)):
        return AddressSkip.NO_TOWNSHIP
    assert isinstance(read, AddressSkip)
    return read
