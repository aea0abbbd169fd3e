"""Who may act as staff: a member of the configured LINE staff group, optionally on an allowlist.

An event reaches a staff action only when its source is a ``group`` whose ``groupId`` is
``LOCAL_STAFF_GROUP_ID`` and it carries a ``userId`` that ``LOCAL_STAFF_USER_IDS`` allows (every
member when the list is empty). Anything else — a one-to-one chat, a room, another group, a
member outside the allowlist, no staff group configured — is refused before any store access.

Source: docs/design.md §10; LINE Messaging API, webhook event ``source`` (``type`` user | group | room,
``groupId``, ``userId``).
"""
from __future__ import annotations

from dataclasses import dataclass

from shared.config import Settings
from shared.keys import SigningKeys, SigningNotConfigured, staff_hash
from shared.staff.audit import staff_label

#: Refusal reasons (log words; the reply explains each kindly).
NO_STAFF_GROUP = "no_staff_group"
NOT_STAFF_GROUP = "not_staff_group"
NO_USER = "no_user"
NOT_ALLOWED = "not_allowed"


@dataclass(frozen=True)
class StaffMember:
    """A verified staff member.

    Args:
        user_id: the LINE user id from the verified event (kept in memory only, never stored).
        hashed: ``shared.keys.staff_hash`` of it: what history and audit store.
    """

    user_id: str
    hashed: str

    @property
    def label(self) -> str:
        """「工作人員 #ab12」: how other staff are told who acted."""
        return staff_label(self.hashed)


class NotStaff(Exception):
    """The event may not act as staff (``reason``: one of this module's refusal words); nothing is done."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


def source_fields(source: object) -> tuple[str | None, str | None, str | None]:
    """``(type, groupId, userId)`` of a line-bot-sdk webhook ``Source`` (or None for each missing)."""
    return (getattr(source, "type", None), getattr(source, "group_id", None), getattr(source, "user_id", None))


def in_staff_group(settings: Settings, source: object) -> bool:
    """True when the event comes from the configured staff group."""
    kind, group_id, _ = source_fields(source)
    return bool(settings.staff_group_id) and kind == "group" and group_id == settings.staff_group_id


def staff_member(settings: Settings, source: object) -> StaffMember:
    """The staff member behind an event's source.

    Returns:
        StaffMember for a user of the staff group who is on the allowlist (if any).
    Raises:
        NotStaff: ``no_staff_group`` (no staff group or no ``LOCAL_SIGNING_KEY`` configured), ``not_staff_group`` (a one-to-one chat, a
            room or another group), ``no_user`` (no ``userId``), ``not_allowed`` (outside the allowlist).
    """
    if not settings.staff_group_id:
        raise NotStaff(NO_STAFF_GROUP)
    if not in_staff_group(settings, source):
        raise NotStaff(NOT_STAFF_GROUP)
    _, _, user_id = source_fields(source)
    if not user_id:
        raise NotStaff(NO_USER)
    if settings.staff_user_ids and user_id not in settings.staff_user_ids:
        raise NotStaff(NOT_ALLOWED)
    try:
        keys = SigningKeys.from_settings(settings)
    except SigningNotConfigured as exc:  # no staff card can be signed or checked either
        raise NotStaff(NO_STAFF_GROUP) from exc
    return StaffMember(user_id, staff_hash(keys, settings.tenant_id, user_id))
