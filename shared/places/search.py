"""search_local_places: the read-only place search over the versioned catalog.

Source: docs/design.md §5 (search_local_places: needs_area for 附近, strict dietary types need evidence,
places stay searchable after the campaign ends).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from typing import Any

from shared.areas import TOWNSHIPS, WHOLE_COUNTY, UnknownArea, is_vague_area, normalize_area
from shared.clock import require_aware
from shared.diets import DIET_TYPES
from shared.places.catalog import (
    EVIDENCE_TYPES,
    UNKNOWABLE_FIELDS,
    CatalogError,
    Place,
    PlaceCatalog,
    load_place_catalog,
)

#: Accepted dietary_type values; None means "any".
DIETARY_TYPES: tuple[str, ...] = DIET_TYPES

#: Keywords that only restate "a place to eat" or a diet; they narrow nothing, so they are dropped.
#: A diet word is never turned into a dietary filter here: diet comes from dietary_type only.
GENERIC_KEYWORDS = frozenset({"店", "店家", "吃", "吃的", "餐廳", "推薦", "美食", "蔬食", "素食", "吃素", "素",
                              "蔬食店", "素食店"})


class UnknownDietaryType(ValueError):
    """dietary_type is not one of vegetarian, vegan, ovo_lacto, lacto, any."""


def normalize_dietary_type(value: str | None) -> str:
    """Validate a dietary_type argument.

    Args:
        value: one of DIETARY_TYPES (any case, surrounding spaces allowed), or None / "" for any.
    Returns:
        The canonical type, "any" when the condition is left open.
    Raises:
        UnknownDietaryType: any other value.
    Source: docs/design.md §5 (Dietary types).
    """
    if value is None or not value.strip():
        return "any"
    cleaned = value.strip().lower()
    if cleaned not in DIETARY_TYPES:
        raise UnknownDietaryType(f"unknown dietary_type {value!r}; expected one of {DIETARY_TYPES}")
    return cleaned


def place_matches_diet(place: Place, dietary_type: str) -> bool:
    """Tell whether a place has evidence for a dietary type.

    Args:
        place: a catalog place.
        dietary_type: a canonical type from DIETARY_TYPES.
    Returns:
        any → True; vegetarian → evidence for any vegetarian type (vegetarian or a stricter one);
        vegan / ovo_lacto / lacto → evidence for exactly that type. The name (e.g. a 素 in it) is
        never evidence.
    Source: docs/design.md §5 (a strict type matches only places with evidence for that type).
    """
    if dietary_type == "any":
        return True
    if dietary_type == "vegetarian":
        return any(kind in place.dietary_evidence for kind in EVIDENCE_TYPES)
    return dietary_type in place.dietary_evidence


def _effective_keyword(keyword: str | None) -> str | None:
    cleaned = (keyword or "").strip()
    return None if not cleaned or cleaned in GENERIC_KEYWORDS else cleaned


def _matches_keyword(place: Place, keyword: str | None) -> bool:
    if keyword is None:
        return True
    needle = keyword.casefold()
    return needle in place.name.casefold() or needle in place.address.casefold()


#: Generic words at the end of a shop's name: what is left is the name residents say (John, 和米).
#: LOCAL's own vocabulary, not a source's.
_NAME_SUFFIXES: tuple[str, ...] = ("手作蔬食", "蔬食館", "素食館", "蔬食坊", "素食坊", "蔬食", "素食", "餐廳", "小吃",
                                   "手作", "餐館", "麵館", "食堂")


def _names_a_place(word: str) -> bool:
    """A township (田尾, 員林市), its alias, or a vague area word (彰化, 附近)."""
    if is_vague_area(word):
        return True
    try:
        normalize_area(word)
    except UnknownArea:
        return False
    return True


def place_aliases(name: str) -> tuple[str, ...]:
    """The spellings that name one shop, in NFKC and case-folded: the full name, and the name without generic
    suffixes (John手作蔬食 → john手作蔬食, john) when what is left has ≥ 2 CJK or ≥ 3 Latin letters
    and is not a place word: 田尾蔬食坊 is not 「田尾」, which names the township (a township or its
    alias, or a vague word such as 彰化: shared.areas), so 田尾有素食嗎 stays a township's search.

    A name made only of generic words (素食館, 蔬食, 素食小吃) has no spelling: 員林有素食館嗎 asks for
    the township's shops, not for that one (its township's search lists it).

    Args:
        name: the catalog name.
    Returns:
        Distinct spellings, longest first; () for a generic name.
    """
    name = unicodedata.normalize("NFKC", name)  # ＧＲＥＥＮ蔬食 as residents type it: GREEN蔬食
    spellings = {name.casefold()}
    short = name
    changed = True
    while changed:
        changed = False
        for suffix in _NAME_SUFFIXES:
            if short.endswith(suffix) and len(short) > len(suffix):
                short, changed = short[: -len(suffix)], True
    short = short.strip().casefold()
    if short in _NAME_SUFFIXES or short in GENERIC_KEYWORDS:
        return ()
    if len(short) >= (3 if short.isascii() else 2) and not _names_a_place(short):
        spellings.add(short)
    return tuple(sorted(spellings, key=len, reverse=True))


_latin_head = re.compile(r"^[A-Za-z][A-Za-z'’.&\s]*")


def _named_spans(folded: str, catalog: PlaceCatalog) -> list[tuple[int, int, dict[str, str]]]:
    """(start, end, view) per shop a spelling of which is in the text: where its longest spelling found
    first appears."""
    spans = []
    for place in catalog.places:
        hits = [(folded.find(spelling), len(spelling)) for spelling in place_aliases(place.name) if spelling in folded]
        if hits:
            start, length = min(hits, key=lambda hit: (-hit[1], hit[0]))
            spans.append((start, start + length, {"id": place.id, "name": place.name, "area": place.area}))
    return spans


def _outside_longer(spans: list[tuple[int, int, dict[str, str]]]) -> list[tuple[int, int, dict[str, str]]]:
    """The spans not inside another shop's longer one: 慈心素食在哪 names 慈心素食, not also 慈心蔬食坊
    (whose short spelling 慈心 is only part of the name written)."""
    return [(start, end, view) for start, end, view in spans
            if not any(other_start <= start and end <= other_end and other_end - other_start > end - start
                       for other_start, other_end, _ in spans)]


def places_named_in(text: str, *, catalog: PlaceCatalog | None = None) -> list[dict[str, str]]:
    """The catalog shops a message names, by name or alias, case-insensitively; read-only.

    Args:
        text: the message in its reading form (case-folded, Traditional; never logged).
        catalog: default: load_place_catalog(); an unusable catalog names no shop.
    Returns:
        [{id, name, area}] in the order the names appear in the text; [] when none.
    A shop is found by its name, an alias or case-insensitive Latin, as residents write it.
    """
    try:
        catalog = load_place_catalog() if catalog is None else catalog
    except CatalogError:
        return []
    folded = text.casefold()
    found = [(start, view) for start, _, view in _outside_longer(_named_spans(folded, catalog))]
    if not found:
        found = _named_by_latin_tail(catalog, folded)
    return [view for _, view in sorted(found, key=lambda pair: pair[0])]


def _named_by_latin_tail(catalog: PlaceCatalog, folded: str) -> list[tuple[int, dict[str, str]]]:
    """The shops a case-folded message names by the Chinese rest of a Latin-headed name (約翰手作蔬食
    for John手作蔬食), a rest of at least 4 characters that only one shop's name holds:
    [(where in ``folded`` it starts, {id, name, area})], in catalog order."""
    tails = {place.id: _latin_head.sub("", place.name) for place in catalog.places if _latin_head.match(place.name)}
    found = []
    for place in catalog.places:
        tail = tails.get(place.id, "")
        if len(tail) >= 4 and tail in folded and sum(tail in other.name for other in catalog.places) == 1:
            found.append((folded.find(tail), {"id": place.id, "name": place.name, "area": place.area}))
    return found


#: How close a typed word must be to a shop's spelling to ask 「你是說…嗎？」 (difflib ratio, 0–1).
CLOSE_NAME_RATIO = 0.75
#: The most distinct stretches of one message fully compared with a shop's spelling (after difflib's
#: cheap upper bounds let them through): a resident's message holds a few; a longer message full of
#: near-names is asked about the closest of its first ones. It bounds place_close_to's work per message.
CLOSE_NAME_COMPARISONS_MAX = 256
_WORDLIKE = re.compile(r"[a-z0-9\u4e00-\u9fff]+")
_LATIN_WORD = re.compile(r"[a-z]+")


def place_close_to(text: str, *, catalog: PlaceCatalog | None = None) -> dict[str, str] | None:
    """The catalog shop a message names with a typo (合米素食 → 和米素食, jonh手作 → John手作蔬食), or None.

    Every spelling of a shop (place_aliases) of at least 4 characters is compared with each stretch
    of the message one character shorter, as long or one longer (Latin spellings only with whole
    Latin words), by ``difflib.SequenceMatcher.ratio``; the best stretch at CLOSE_NAME_RATIO or above
    wins. It never decides alone: the caller asks 「你是說…嗎？」 with a button.

    Cost, linear in the text: a stretch is compared only when it holds enough of the spelling's
    characters to reach the ratio at all (where those characters are is found by one scan), each
    distinct stretch once, and only after ``real_quick_ratio`` and ``quick_ratio``, difflib's upper
    bounds of ``ratio`` (as ``difflib.get_close_matches`` does), let it through; at most
    CLOSE_NAME_COMPARISONS_MAX full comparisons per message. The answer is the one comparing every
    stretch would give, for any message with fewer candidates than that.

    Args:
        text: the message in its reading form (case-folded, Traditional; never logged); a message
            that names a shop exactly (places_named_in) should not be passed.
        catalog: default: load_place_catalog(); an unusable catalog names no shop.
    Returns:
        {id, name, area, typed, spelling}: the shop, the stretch as typed and the spelling it is
        close to; None when no stretch is close enough.
    Source: https://docs.python.org/3/library/difflib.html#difflib.SequenceMatcher.ratio
    """
    import difflib  # on first use, not at import: a cold start answering a fixed entry never needs it

    try:
        catalog = load_place_catalog() if catalog is None else catalog
    except CatalogError:
        return None
    best: tuple[float, dict[str, str]] | None = None
    budget = [CLOSE_NAME_COMPARISONS_MAX]
    names = [(place, spelling, difflib.SequenceMatcher(None, "", spelling))  # the spelling's tables, once
             for place in catalog.places for spelling in place_aliases(place.name) if len(spelling) >= 4]
    shortest = min((len(spelling) // 2 for _, spelling, _ in names), default=0)
    # a chunk said twice gives nothing new: only a closer stretch replaces the best one
    for chunk in dict.fromkeys(_WORDLIKE.findall(text.casefold())):
        if len(chunk) < shortest:
            continue  # shorter than any stretch that can reach the ratio (2·len / (len + spelling))
        for place, spelling, matcher in names:
            close = _closest_stretch(chunk, place, spelling, matcher, budget)
            if close is not None and (best is None or close[0] > best[0]):
                best = close
    return best[1] if best else None


def _closest_stretch(chunk: str, place: Place, spelling: str, matcher: Any,
                     budget: list[int]) -> tuple[float, dict[str, str]] | None:
    """How close a stretch of ``chunk`` comes to ``spelling`` (one of ``place``'s, held by ``matcher``
    as its second sequence; Latin spellings only against whole Latin words; ``budget`` the full
    comparisons left): (best ratio, {id, name, area, typed, spelling}) with ``typed`` the longest
    close stretch (合米素食, not just 米素食), or None when no stretch reaches CLOSE_NAME_RATIO."""
    stretches = _LATIN_WORD.findall(chunk) if spelling.isascii() else _stretches_near(chunk, spelling)
    close = _close_stretches(matcher, dict.fromkeys(stretches), budget)
    if not close:
        return None
    ratio = max(ratio for ratio, _ in close)
    typed = max(close, key=lambda pair: (len(pair[1]), pair[0]))[1]
    return ratio, {"id": place.id, "name": place.name, "area": place.area, "typed": typed, "spelling": spelling}


def _stretches_near(chunk: str, spelling: str) -> list[str]:
    """The stretches of ``chunk`` one character shorter than ``spelling``, as long or one longer, in that
    order and left to right, that hold enough of the spelling's characters to reach CLOSE_NAME_RATIO:
    ``ratio`` is 2·M / (both lengths) with M at most the stretch's characters that are in the spelling.

    Cost: one scan for those characters, then per window size the windows around each run of them."""
    hits = [found.start() for found in re.finditer("[" + re.escape("".join(set(spelling))) + "]", chunk)]
    stretches: list[str] = []
    for size in (len(spelling) - 1, len(spelling), len(spelling) + 1):
        need = next((count for count in range(1, size + 1)
                     if 2.0 * count / (size + len(spelling)) >= CLOSE_NAME_RATIO), size + 1)
        for first in range(len(hits) - need + 1):
            # the windows whose first such character is hits[first] and that reach hits[first + need - 1]
            low = max(hits[first - 1] + 1 if first else 0, hits[first + need - 1] - size + 1)
            high = min(hits[first], len(chunk) - size)
            stretches.extend(chunk[start:start + size] for start in range(low, high + 1))
    return stretches


def _close_stretches(matcher: Any, stretches: dict[str, None], budget: list[int]) -> list[tuple[float, str]]:
    """(ratio, stretch) for each stretch at CLOSE_NAME_RATIO or above, in the given order; ``matcher``
    holds the spelling as its second sequence (difflib caches it), ``budget`` the full comparisons left."""
    close = []
    for stretch in stretches:
        matcher.set_seq1(stretch)
        if matcher.real_quick_ratio() < CLOSE_NAME_RATIO or matcher.quick_ratio() < CLOSE_NAME_RATIO:
            continue
        if budget[0] <= 0:
            break
        budget[0] -= 1
        ratio = matcher.ratio()
        if ratio >= CLOSE_NAME_RATIO:
            close.append((ratio, stretch))
    return close


def diet_listed(names: list[str], dietary_type: str, *, catalog: PlaceCatalog | None = None) -> list[tuple[str, str]]:
    """Whether each named shop's catalog entry lists a dietary type (和米素食跟john手作 哪間有全素).

    Args:
        names: catalog names (as places_named_in returns them).
        dietary_type: a canonical type other than ``any``.
        catalog: default: load_place_catalog().
    Returns:
        [(name, state)] in the given order, state one of ``listed`` (evidence for the type),
        ``not_recorded`` (only 蔬食 is recorded, so a finer type is neither listed nor ruled out) or
        ``not_listed``; unknown names are skipped, and an unusable catalog gives [].
    Source: docs/design.md §5 (a strict type matches only places with evidence).
    """
    try:
        catalog = load_place_catalog() if catalog is None else catalog
    except CatalogError:
        return []
    by_name = {place.name: place for place in catalog.places}
    states = []
    for name in names:
        place = by_name.get(name)
        if place is None:
            continue
        if place_matches_diet(place, dietary_type):
            states.append((name, "listed"))
        elif set(place.dietary_evidence) <= {"vegetarian"}:
            states.append((name, "not_recorded"))
        else:
            states.append((name, "not_listed"))
    return states


def _place_view(place: Place, catalog: PlaceCatalog) -> dict[str, Any]:
    """The place as returned to callers, with every cited source resolved."""
    return {
        "id": place.id,
        "name": place.name,
        "area": place.area,
        "address": place.address,
        "phone": place.phone,
        "dietary_options": list(place.dietary_options),
        "dietary_evidence": {
            kind: catalog.sources[place.dietary_evidence[kind]].as_dict() for kind in place.dietary_options
        },
        "dietary_scope": place.dietary_scope,
        "field_sources": {field: catalog.sources[sid].as_dict() for field, sid in place.field_sources.items()},
        "in_campaign": place.in_campaign,
        **dict(place.unknown),
        "unknown_fields": list(place.unknown_fields),
    }


def areas_with_places(*, catalog: PlaceCatalog | None = None) -> list[str] | None:
    """The townships the catalog has at least one shop in, in TOWNSHIPS order; None when the catalog
    cannot be read (then nothing may be said about which townships have shops).

    Used where a shop search is only offered, not run (an events ask with a shop ask beside it): a
    township with no shop data is said so, not offered as a dead-end button.
    """
    try:
        return _areas_with_places(load_place_catalog() if catalog is None else catalog)
    except CatalogError:
        return None


def _areas_with_places(catalog: PlaceCatalog) -> list[str]:
    present = {place.area for place in catalog.places}
    return [township for township in TOWNSHIPS if township in present]


def _unknown_fields(places: tuple[Place, ...]) -> list[str]:
    return [field for field in UNKNOWABLE_FIELDS if any(field in place.unknown_fields for place in places)]


def _search_scope(area: str | None) -> tuple[str | None, bool, bool]:
    """What a search's ``area`` asks for: (township, every_township, needs_area). ``全彰化``
    (WHOLE_COUNTY) is every township (township None); None, blank or a vague word (附近, 彰化) needs
    an area (township None); else the full township name (花壇 → 花壇鄉).

    Raises:
        UnknownArea: area is neither a township nor vague (e.g. 台北).
    """
    every_township = area is not None and area.strip() == WHOLE_COUNTY
    needs_area = not every_township and (area is None or not area.strip() or is_vague_area(area))
    township = None if area is None or needs_area or every_township else normalize_area(area)
    return township, every_township, needs_area


def search_local_places(
    area: str | None,
    dietary_type: str | None,
    keyword: str | None,
    *,
    now: datetime,
    catalog: PlaceCatalog | None = None,
    expected_version: str | None = None,
) -> dict[str, Any]:
    """Search the place catalog by township, dietary type and keyword; read-only.

    Args:
        area: a township name or alias (花壇 → 花壇鄉); ``全彰化`` (shared.areas.WHOLE_COUNTY) for every
            township (``query.area`` is then None); or None / a vague word (附近, 彰化) to get needs_area.
        dietary_type: vegetarian | vegan | ovo_lacto | lacto | any; None means any.
        keyword: optional text matched (case-insensitively) in name or address; generic words such
            as 店 / 吃 / 餐廳 / 蔬食 are dropped.
        now: aware instant of the turn; the campaign state is computed in Asia/Taipei.
        catalog: an already loaded catalog; default: load_place_catalog().
        expected_version: the catalog_version the turn started with; a different loaded version
            gives "unavailable" rather than stale or mixed data.
    Returns:
        {status: "ok"|"needs_area"|"no_match"|"unavailable",
         query: {area, dietary_type, keyword} (effective arguments: full township or None, the
             canonical type, the keyword or None),
         places: [{id, name, area, address, phone, dietary_options, dietary_evidence {type: source},
             dietary_scope, field_sources {field: source}, in_campaign, open_now, hours,
             coordinates ({lat, lng, source} or None), walking_distance_m, accessibility (None = not
             recorded), unknown_fields}], where a source is {id, kind, name, accessed_on, url, scope},
         total, unknown_fields (null fields of the returned places, or of the catalog when none are
             returned), campaign_state: "not_started"|"active_by_announcement"|"ended" (None when
             unavailable), campaign (Campaign.as_dict() or None), catalog_version, recorded_on,
         area_choices: townships that have places (with ok, needs_area and no_match: next steps)}.
    Raises:
        ValueError: ``now`` is naive.
        UnknownDietaryType: dietary_type is not a known type.
        UnknownArea: area is neither a township nor vague (e.g. 台北).
    Source: docs/design.md §5 (search_local_places).
    """
    require_aware(now)
    diet = normalize_dietary_type(dietary_type)
    effective_keyword = _effective_keyword(keyword)
    township, every_township, needs_area = _search_scope(area)
    result: dict[str, Any] = {
        "status": "unavailable",
        "query": {"area": township, "dietary_type": diet, "keyword": effective_keyword},
        "places": [],
        "total": 0,
        "unknown_fields": [],
        "campaign_state": None,
        "campaign": None,
        "catalog_version": None,
        "recorded_on": None,
    }
    try:
        catalog = load_place_catalog() if catalog is None else catalog
    except CatalogError:
        return result
    if expected_version is not None and expected_version != catalog.catalog_version:
        return result
    result.update(
        campaign_state=catalog.campaign.state_at(now),
        campaign=catalog.campaign.as_dict(),
        catalog_version=catalog.catalog_version,
        recorded_on=catalog.recorded_on.isoformat(),
    )
    if needs_area:
        return {**result, "status": "needs_area", "unknown_fields": _unknown_fields(catalog.places),
                "area_choices": _areas_with_places(catalog)}
    found = tuple(
        place for place in catalog.places
        if (every_township or place.area == township) and place_matches_diet(place, diet)
        and _matches_keyword(place, effective_keyword)
    )
    if not found:
        return {**result, "status": "no_match", "unknown_fields": _unknown_fields(catalog.places),
                "area_choices": _areas_with_places(catalog)}
    return {
        **result,
        "status": "ok",
        "places": [_place_view(place, catalog) for place in found],
        "total": len(found),
        "unknown_fields": _unknown_fields(found),
        "area_choices": _areas_with_places(catalog),
    }


def place_view(place: Place, catalog: PlaceCatalog) -> dict[str, Any]:
    """One place as search_local_places lists it (every cited source resolved), for other answers
    that show a shop card (the nearest shops: shared.places.nearby)."""
    return _place_view(place, catalog)
