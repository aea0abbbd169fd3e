"""Request numbers as the resident and the staff read them (shared.handoff.codes), for the tests."""
from __future__ import annotations

import re

from shared.handoff.codes import SHOWN, of_request

#: A shown request number (``A7K-3QF``) anywhere in a text.
SHOWN_CODE = SHOWN


def shown_of(request: dict) -> str:
    """The number a stored request is shown by (``A7K-3QF``); fails for a request without a code."""
    code = of_request(request)
    assert code is not None, "the request has no display code"
    return code.grouped


def shown_in(text: str) -> list[str]:
    """Every request number shown in ``text``, in order."""
    return re.findall(SHOWN, text)


def grouped(bare: str) -> str:
    """A stored code (``A7K3QF``, as ``make user-data`` lists it) as it is shown (``A7K-3QF``)."""
    return f"{bare[:3]}-{bare[3:]}"
