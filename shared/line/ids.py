"""The formats of LINE's ids, as the Messaging API documents them.

An id that does not match is not LINE's: the event carrying it is refused before anything is
stored or logged under it (a lone surrogate in ``"userId":"\\ud800"`` cannot even be encoded).

Source: LINE Messaging API reference, "Webhook Event Objects" (``webhookEventId`` is a ULID;
source ``userId`` "U" + 32 hex, ``groupId`` "C" + 32 hex, ``roomId`` "R" + 32 hex).
"""
from __future__ import annotations

import re

#: ``userId``: "U" followed by 32 lowercase hex digits.
USER_ID = re.compile(r"U[0-9a-f]{32}")
#: ``groupId``: "C" followed by 32 lowercase hex digits.
GROUP_ID = re.compile(r"C[0-9a-f]{32}")
#: ``roomId``: "R" followed by 32 lowercase hex digits.
ROOM_ID = re.compile(r"R[0-9a-f]{32}")
#: ``webhookEventId``: a ULID, 26 characters of digits and capital letters (LINE's ULIDs use
#: Crockford's base32, a subset; the shape is what keeps a store id and a log field safe).
WEBHOOK_EVENT_ID = re.compile(r"[0-9A-Z]{26}")
#: ``replyToken``: an opaque token; LINE's are short and URL-safe. Anything else is not LINE's.
REPLY_TOKEN = re.compile(r"[0-9A-Za-z_\-.~]{1,256}")


def is_user_id(value: object) -> bool:
    """True when ``value`` is a LINE user id ("U" + 32 lowercase hex)."""
    return isinstance(value, str) and USER_ID.fullmatch(value) is not None


def id_problem(raw: dict) -> str | None:
    """The first id in one raw webhook event that is not in LINE's format, or None.

    Args:
        raw: one element of the body's ``events`` (already a dict).
    Returns:
        A short reason for the log ("bad_webhook_event_id", "bad_user_id", "bad_group_id",
        "bad_room_id", "bad_reply_token"), or None when every id present matches.
    """
    checks = [("webhookEventId", WEBHOOK_EVENT_ID, raw, "bad_webhook_event_id"),
              ("replyToken", REPLY_TOKEN, raw, "bad_reply_token")]
    source = raw.get("source")
    if isinstance(source, dict):
        checks += [("userId", USER_ID, source, "bad_user_id"), ("groupId", GROUP_ID, source, "bad_group_id"),
                   ("roomId", ROOM_ID, source, "bad_room_id")]
    for key, pattern, holder, reason in checks:
        if key in holder and not (isinstance(holder[key], str) and pattern.fullmatch(holder[key])):
            return reason
    return None
