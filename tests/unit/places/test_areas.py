"""Township resolution: aliases, longest match first, vague areas (docs/design.md §5 Areas)."""

from __future__ import annotations

import json

import pytest

from shared.areas import (
    ALIASES,
    TOWNSHIPS,
    TOWNSHIPS_PATH,
    VAGUE_WORDS,
    AreaMatch,
    UnknownArea,
    match_area,
    normalize_area,
    vague_words_in,
)


def test_townships_data_has_26_with_aliases_except_changhua_city():
    rows = json.loads(TOWNSHIPS_PATH.read_text(encoding="utf-8"))
    assert len(TOWNSHIPS) == 26 == len(set(TOWNSHIPS))
    assert "彰化市" in TOWNSHIPS and "彰化" not in ALIASES
    assert len(ALIASES) == 25 and set(ALIASES.values()) == set(TOWNSHIPS) - {"彰化市"}
    assert "彰化" in rows["note"]


@pytest.mark.parametrize(("text", "township"), [
    ("花壇有推薦吃的嗎", "花壇鄉"),
    ("花壇", "花壇鄉"),
    ("鹿港週末活動", "鹿港鎮"),
    ("員林", "員林市"),
])
def test_match_area_alias_without_suffix_maps_to_full_name(text, township):
    assert match_area(text) == AreaMatch("township", township)


@pytest.mark.parametrize(("text", "township"), [("員林市", "員林市"), ("溪湖鎮的店", "溪湖鎮"),
                                                ("彰化縣花壇鄉", "花壇鄉")])
def test_match_area_full_name_matches_longest_spelling(text, township):
    assert match_area(text) == AreaMatch("township", township)


def test_match_area_two_townships_earliest_wins():
    assert match_area("員林市或花壇").township == "員林市"
    assert match_area("花壇或員林市").township == "花壇鄉"


@pytest.mark.parametrize("text", ["彰化市", "彰化市有什麼店", "我在彰化市附近"])
def test_match_area_changhua_city_is_township_not_vague(text):
    assert match_area(text) == AreaMatch("township", "彰化市")


@pytest.mark.parametrize("text", ["彰化", "彰化有什麼好吃的", "彰化縣", "彰化縣的素食"])
def test_match_area_bare_changhua_is_vague(text):
    assert match_area(text) == AreaMatch("vague")


@pytest.mark.parametrize("text", ["附近", "這附近有素食嗎", "集合點附近"])
def test_match_area_nearby_words_are_vague(text):
    assert match_area(text) == AreaMatch("vague", None)


def test_match_area_township_with_nearby_word_is_township():
    assert match_area("花壇集合點附近") == AreaMatch("township", "花壇鄉")


@pytest.mark.parametrize("text", ["今天想吃素", "", "台北"])
def test_match_area_no_place_word_is_none(text):
    assert match_area(text).kind == "none"


@pytest.mark.parametrize(("value", "township"), [
    ("花壇", "花壇鄉"),
    ("花壇鄉", "花壇鄉"),
    (" 員林 ", "員林市"),
    ("彰化市", "彰化市"),
    ("彰化縣花壇鄉", "花壇鄉"),
])
def test_normalize_area_name_or_alias_returns_full_name(value, township):
    assert normalize_area(value) == township


@pytest.mark.parametrize("value", ["台北", "附近", "彰化", "彰化縣", "", "花壇鄉附近", "員林市區"])
def test_normalize_area_not_a_township_raises_unknown_area(value):
    with pytest.raises(UnknownArea):
        normalize_area(value)


def test_unknown_area_is_a_value_error():
    assert issubclass(UnknownArea, ValueError)


@pytest.mark.parametrize("text, words", [
    ("附近有素食嗎", ("附近",)), ("這附近有素食嗎", ("附近",)), ("集合點附近吃什麼", ("附近",)),
    ("這邊有什麼好吃的", ("這邊",)), ("這裡有活動嗎", ("這裡",)),
    ("彰化縣有素食嗎", ("彰化縣",)), ("彰化有素食店嗎", ("彰化",)),
    ("彰化附近有什麼活動", ("附近", "彰化")), ("彰化縣彰化哪裡有", ("彰化縣", "彰化")),
    ("有素食嗎", ()),
])
def test_vague_words_in_names_only_what_was_said(text, words):
    assert vague_words_in(text) == words


def test_vague_words_in_finds_a_word_in_every_vague_message():
    for word in VAGUE_WORDS:
        assert match_area(f"{word}有什麼").kind == "vague"
        assert vague_words_in(f"{word}有什麼"), word
