"""Reading the township from an address as Taiwan writes it (shared/address.py)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.address import (
    MAX_ADDRESS_CHARS,
    AddressReading,
    AddressSkip,
    read_address,
    read_township,
)
from shared.areas import POSTAL_CODES, TOWNSHIPS

#: (address as written, township, postal code as read or None).
READ = [
    ("510彰化縣員林市中山路一段100號", "員林市", "510"),          # code before the county
    ("510 彰化縣員林市中山路一段100號", "員林市", "510"),
    ("彰化縣 510員林市中山路一段100號", "員林市", "510"),          # code after the county, a space
    ("彰化縣510員林市中山路一段100號", "員林市", "510"),           # code inside the county part
    ("彰化縣51044員林市中山路", "員林市", "51044"),               # 3+2
    ("510012彰化縣員林市中山路", "員林市", "510012"),             # 3+3
    ("510-012 彰化縣員林市中山路", "員林市", "510012"),
    ("台灣彰化縣鹿港鎮中山路100號", "鹿港鎮", None),              # 台灣 prefix
    ("臺灣彰化縣二林鎮斗苑路", "二林鎮", None),
    ("臺灣省彰化縣花壇鄉彰員路三段117號", "花壇鄉", None),
    ("505台灣彰化縣鹿港鎮中山路", "鹿港鎮", "505"),
    ("５１０彰化縣員林市中山路", "員林市", "510"),                # full-width digits
    ("彰化縣　員林市　中山路", "員林市", None),                  # ideographic spaces
    ("  彰化縣 員林市 中山路二段 ", "員林市", None),
    ("員林市中山路一段100號", "員林市", None),                   # no county
    ("彰化市華山路78號", "彰化市", None),                        # the shipped catalog's form
    ("彰化縣彰化市和美路", "彰化市", None),                      # 和美路 does not make it 和美鎮
    ("510中山路一段100號", "員林市", "510"),                     # the code alone names it
    ("彰化縣 500 中山路", "彰化市", "500"),
    ("530彰化縣二水鄉員集路", "二水鄉", "530"),
    ("500彰化縣鹿港鎮中山路", "鹿港鎮", "500"),                 # the written name wins over the code
    ("(510)彰化縣員林市中山路", "員林市", "510"),                 # a code in brackets
    ("（５１０）彰化縣員林市", "員林市", "510"),
    ("彰化縣員林鎮中山路二段", "員林市", None),                  # the name before 2015
    ("彰化縣員林巿中山路二段", "員林市", None),                  # 巿 (U+5DFF), typed for 市 in records
    ("510彰化縣彰化巿中山路", "彰化市", "510"),                   # the name, not the code, still wins
]

#: (text, why nothing is read).
SKIPPED = [
    ("", AddressSkip.EMPTY),
    ("   ", AddressSkip.EMPTY),
    (None, AddressSkip.EMPTY),
    ("彰化縣和美路", AddressSkip.NO_TOWNSHIP),           # county, no township, no code
    ("鹿港老街", AddressSkip.NO_TOWNSHIP),               # an alias alone is not trusted
    ("中山路100號", AddressSkip.NO_TOWNSHIP),
    ("400中山路", AddressSkip.NO_TOWNSHIP),              # not a Changhua code
    ("5100中山路", AddressSkip.NO_TOWNSHIP),             # four digits are not a postal code
    ("403臺中市西區市民廣場", AddressSkip.OTHER_COUNTY),
    ("台中市西區", AddressSkip.OTHER_COUNTY),
    ("南投縣南投市中興路", AddressSkip.OTHER_COUNTY),
    ("台灣臺北市信義區市府路1號", AddressSkip.OTHER_COUNTY),
]


@pytest.mark.parametrize(("text", "township", "code"), READ)
def test_read_address_reads_the_township_and_postal_code(text, township, code):
    reading = read_address(text)
    assert isinstance(reading, AddressReading)
    assert (reading.township, reading.postal_code) == (township, code)


@pytest.mark.parametrize(("text", "reason"), SKIPPED)
def test_read_address_says_why_it_reads_no_township(text, reason):
    assert read_address(text) is reason


def test_read_address_keeps_the_rest_after_the_township():
    reading = read_address("彰化縣 510 員林市 中山路一段 100 號")
    assert isinstance(reading, AddressReading)
    assert reading.rest == "中山路一段 100 號" and reading.county_named and reading.by == "name"
    by_code = read_address("510中山路")
    assert isinstance(by_code, AddressReading) and by_code.by == "postal_code" and by_code.rest == "中山路"


def test_every_township_has_a_postal_code_of_its_own():
    assert sorted(POSTAL_CODES.values()) == sorted(TOWNSHIPS)
    for code, township in POSTAL_CODES.items():
        reading = read_address(f"{code}彰化縣中山路")
        assert isinstance(reading, AddressReading) and reading.township == township


#: Records, as events (TDX: Town, Address, Location) and places (address, name) give them.
RECORDS = [
    ({"town": "員林市", "address": None}, "員林市", "town"),
    ({"town": "員林", "address": "彰化縣 510員林市"}, "員林市", "town"),            # an alias in Town is enough
    ({"town": "彰化縣花壇鄉", "address": None}, "花壇鄉", "town"),
    ({"town": "臺中市西區", "address": "彰化縣 510員林市中山路"}, "員林市", "address"),  # a Town that names none
    ({"town": None, "address": "彰化縣 510員林市中山路"}, "員林市", "address"),
    ({"address": "彰化縣花壇鄉彰員路三段117號"}, "花壇鄉", "address"),            # a place's address
    ({"address": "彰化市華山路78號", "location": "John手作蔬食"}, "彰化市", "address"),
    ({"address": None, "location": "鹿港鎮天后宮"}, "鹿港鎮", "location"),          # only in the name
    ({"address": "彰化縣和美路", "location": "彰化縣和美鎮公所前廣場"}, "和美鎮", "location"),
]

SKIPPED_RECORDS = [
    ({}, AddressSkip.EMPTY),
    ({"town": " ", "address": "", "location": None}, AddressSkip.EMPTY),
    ({"town": "西區", "address": None}, AddressSkip.NO_TOWNSHIP),
    ({"address": "彰化縣和美路", "location": "鹿港天后宮"}, AddressSkip.NO_TOWNSHIP),   # aliases only
    ({"location": "員林市到鹿港鎮的自行車道"}, AddressSkip.NO_TOWNSHIP),                # two townships
    ({"address": "403臺中市西區市民廣場", "location": "市民廣場"}, AddressSkip.OTHER_COUNTY),
]


@pytest.mark.parametrize(("fields", "township", "field"), RECORDS)
def test_read_township_takes_the_first_field_that_names_one(fields, township, field):
    reading = read_township(**fields)
    assert not isinstance(reading, AddressSkip)
    assert (reading.township, reading.field) == (township, field)


@pytest.mark.parametrize(("fields", "reason"), SKIPPED_RECORDS)
def test_read_township_skips_only_when_no_field_names_one(fields, reason):
    assert read_township(**fields) is reason


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.text(max_size=300), st.text(max_size=300))
def test_any_text_is_read_without_raising_and_only_its_head(text, tail):
    result = read_address(text)
    assert isinstance(result, (AddressReading, AddressSkip))
    record = read_township(town=text, address=tail, location=text + tail)
    assert isinstance(record, AddressSkip) or record.township in TOWNSHIPS
    # only the first MAX_ADDRESS_CHARS characters are read: what follows never changes the result,
    # so the work per address is bounded whatever its length
    head = text.ljust(MAX_ADDRESS_CHARS, "路")[:MAX_ADDRESS_CHARS]
    assert read_address(head + tail) == read_address(head)


def test_a_long_hostile_address_is_read_from_its_head_only():
    assert read_address("510" * 100_000) is AddressSkip.NO_TOWNSHIP
    reading = read_address("彰化縣" + "員林市" * 1_000_000)
    assert isinstance(reading, AddressReading) and reading.township == "員林市"
    assert len(reading.rest) < MAX_ADDRESS_CHARS
