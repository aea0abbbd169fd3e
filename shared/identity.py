"""Who is acting. ``actor = (tenant_id, user_id)``; the user id comes only from a verified
webhook event source, the tenant from configuration (docs/design.md §2). The model never supplies it."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Actor:
    """A LINE account within one tenant (one LINE channel). ``user_id`` is "U" + 32 hex."""

    tenant_id: str
    user_id: str
