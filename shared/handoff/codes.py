"""Readable request numbers: a short display code per request, unique per tenant (docs/design.md §4).

A code is 6 characters from ``ALPHABET``: Crockford's Base32 alphabet (https://www.crockford.com/base32.html,
which already leaves out I, L, O and U) without 0, 1, 2, 5, S and Z, so no two characters look alike
on a phone screen or sound alike read out (0/O, 1/I/L, 2/Z, 5/S). 26 characters, 26**6 ≈ 3 × 10**8
codes. A code holds at least one digit and at least one letter, so an English word is never read as
one. It is stored bare (``A7K3QF``, the request's ``display_code``) and shown grouped
(``A7K-3QF``).

Uniqueness: one document per code and tenant, ``handoff_codes/{code_doc_id(tenant, code)}``, created in
the same transaction as the request (``assign``). The candidates are drawn deterministically from the
tenant, the operation's document id and an attempt number (``candidate``): a transaction that re-runs
draws the same candidates and reads their documents again, so nothing random happens inside it, and
a code taken by another request is passed over for the next attempt.

The internal ``request_id`` (``req-YYYYMMDD-<hex>``) stays the key of postbacks, notices and audit;
the code is what people read. A request stored before codes existed has none: it is shown by the
day and time it was made (``label``).
"""
from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

from shared.clock import wall_clock_text
from shared.store import StoreUnavailable, Transaction

#: One document per (tenant, code): the code's owner. Fields: tenant_id, code, operation_doc, created_at.
CODES = "handoff_codes"
#: Crockford's Base32 alphabet without 0, 1, 2, 5, S and Z (I, L, O and U are not in it).
ALPHABET = "346789ABCDEFGHJKMNPQRTVWXY"
LENGTH = 6
#: The most candidates one create tries (each taken one costs a read); ≈ 0 chance of running out
#: while fewer than a few million codes are used per tenant.
MAX_ATTEMPTS = 12
_DIGITS = frozenset("346789")
_CHAR = f"[{ALPHABET}]"
#: A code as people type it: six characters, a space or a dash allowed between any two, not inside a
#: longer word or number.
_SAID = re.compile(rf"(?<![0-9A-Z]){_CHAR}(?:[ \-]?{_CHAR}){{{LENGTH - 1}}}(?![0-9A-Z])")


#: A code as LOCAL shows it (grouped, ``A7K-3QF``), to find it in a reply.
SHOWN = re.compile(rf"{_CHAR}{{3}}-{_CHAR}{{3}}")


class CodesExhausted(StoreUnavailable):
    """Every candidate of one create was taken (``MAX_ATTEMPTS``): nothing is written, and the create
    is met like a store that did not answer (retryable with the same key)."""


@dataclass(frozen=True)
class DisplayCode:
    """One request's display code.

    Args:
        value: 6 characters of ``ALPHABET`` (upper case, no dash), with a digit and a letter.
    Raises:
        ValueError: another shape.
    """

    value: str

    def __post_init__(self) -> None:
        if not is_code(self.value):
            raise ValueError("not a display code")

    @property
    def grouped(self) -> str:
        """``A7K-3QF``: what the resident and the staff read."""
        return f"{self.value[:3]}-{self.value[3:]}"

    def __str__(self) -> str:
        return self.grouped


def is_code(value: object) -> bool:
    """True for 6 characters of ``ALPHABET`` holding at least one digit and one letter."""
    return (isinstance(value, str) and len(value) == LENGTH and all(c in ALPHABET for c in value)
            and any(c in _DIGITS for c in value) and not all(c in _DIGITS for c in value))


def find_in(text: str) -> DisplayCode | None:
    """The first display code said in a message, in any of the ways people type it: ``A7K-3QF``,
    ``a7k3qf``, ``A7K 3QF``, full-width ``Ａ７Ｋ－３ＱＦ`` (NFKC), or None.

    Args:
        text: the message as sent or in its reading form (never logged).
    """
    said = said_in(text)
    return said[0] if said else None


def said_in(text: str) -> tuple[DisplayCode, str] | None:
    """``find_in``'s code and the message without it (NFKC, upper case), or None."""
    folded = unicodedata.normalize("NFKC", text or "").upper()
    folded = re.sub(r"[\u2010-\u2015\u2212\u30fc\uff70_]", "-", folded)
    for found in _SAID.finditer(folded):
        bare = re.sub(r"[ \-]", "", found.group(0))
        if is_code(bare):
            return DisplayCode(bare), folded[:found.start()] + " " + folded[found.end():]
    return None


def candidate(tenant_id: str, operation_doc_id: str, attempt: int) -> str:
    """The ``attempt``-th candidate code of one operation (bare, may lack a digit or a letter).

    Deterministic: SHA-256 of ``["handoff-display-code", tenant, operation, attempt]``, read as a number
    in base 26. Not a secret: a code finds a request only for the resident who made it.
    """
    digest = hashlib.sha256(json.dumps(["handoff-display-code", tenant_id, operation_doc_id, attempt])
                            .encode("utf-8")).digest()
    number = int.from_bytes(digest, "big")
    chars = []
    for _ in range(LENGTH):
        number, index = divmod(number, len(ALPHABET))
        chars.append(ALPHABET[index])
    return "".join(chars)


#: ``(tenant_id, operation_doc_id, attempt) → bare candidate``; injectable in tests to force collisions.
CodeSource = Callable[[str, str, int], str]


def code_doc_id(tenant_id: str, code: DisplayCode) -> str:
    """64 lowercase hex: the id of the code's uniqueness document for this tenant."""
    return hashlib.sha256(json.dumps(["handoff-code", tenant_id, code.value]).encode("utf-8")).hexdigest()


def first_refs(tenant_id: str, operation_doc_id: str, source: CodeSource = candidate) -> list[tuple[str, str]]:
    """``[(CODES, id)]`` of the first candidate's uniqueness document, for the create transaction to read
    with its other documents in one call (``Transaction.get_all``); ``[]`` when that candidate is malformed."""
    bare = source(tenant_id, operation_doc_id, 0)
    return [(CODES, code_doc_id(tenant_id, DisplayCode(bare)))] if is_code(bare) else []


def assign(tx: Transaction, tenant_id: str, operation_doc_id: str, *,
           source: CodeSource = candidate, read: dict[tuple[str, str], Any] | None = None) -> DisplayCode:
    """Choose the request's code inside its create transaction: the first candidate whose uniqueness
    document is absent, or already this operation's (a re-run). Only reads; the caller writes
    ``code_doc`` with its other writes, after every read (Firestore's order).

    Args:
        read: uniqueness documents this transaction already read, by ``(CODES, id)`` (``first_refs``);
            those are not read again.
    Raises:
        CodesExhausted: ``MAX_ATTEMPTS`` candidates were all taken or malformed.
    """
    for attempt in range(MAX_ATTEMPTS):
        bare = source(tenant_id, operation_doc_id, attempt)
        if not is_code(bare):
            continue
        code = DisplayCode(bare)
        ref = (CODES, code_doc_id(tenant_id, code))
        owner = read[ref] if read is not None and ref in read else tx.get(*ref)
        if owner is None or owner.get("operation_doc") == operation_doc_id:
            return code
    raise CodesExhausted("no free display code")


def code_doc(tenant_id: str, code: DisplayCode, operation_doc_id: str, created_at: str) -> dict[str, Any]:
    """The uniqueness document of one code (no user id, no text: it only names the request)."""
    return {"tenant_id": tenant_id, "code": code.value, "operation_doc": operation_doc_id, "created_at": created_at}


def of_request(request: dict[str, Any]) -> DisplayCode | None:
    """The stored code of a request document, or None (a request made before codes existed)."""
    value = request.get("display_code")
    return DisplayCode(value) if isinstance(value, str) and is_code(value) else None


def label(request: dict[str, Any], tz: tzinfo) -> str:
    """What people read as the request's number: ``A7K-3QF``, or for a request without a code the
    time it was made, ``12/02 10:15 登記的那筆``.

    Args:
        request: a ``handoff_requests`` document (or any mapping with ``display_code`` and ``created_at``).
        tz: the wall clock of that time (Asia/Taipei, ``Settings.tz``).
    """
    code = of_request(request)
    if code is not None:
        return code.grouped
    created = request.get("created_at")
    return f"{wall_clock_text(created, tz, '%m/%d %H:%M')} 登記的那筆" if created else "較早登記的那筆"
