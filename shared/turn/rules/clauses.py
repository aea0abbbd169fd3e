"""Where one ask of a message ends and another starts, and how many clauses are read one by one."""
from __future__ import annotations

import re

#: Where a second ask starts: a sentence end, or 順便 / 另外 / 也想 / 然後 / 再幫我 / 還有 (not 還有12/6).
ASK_BREAK = re.compile(r"[？?！!。；;\n]+|，(?=順便|另外|也|然後|再|還有)|順便|另外|也想|然後|再幫我|以及|還有(?![\d\s]*\d)")
#: The most clauses of one message read one by one as asks (beside a limit, a named shop, or two
#: asks in one message): a resident's message has a few. Those after it are read together, as one
#: last clause, so every word is still read once and the work per message is bounded: each clause
#: read on its own costs a diet, date and topic reading.
CLAUSES_MAX = 16


def clauses_read(clauses: list[str]) -> list[str]:
    """``clauses`` with those after the CLAUSES_MAX-th joined (by a space) into the last one read."""
    if len(clauses) <= CLAUSES_MAX:
        return clauses
    return clauses[:CLAUSES_MAX - 1] + [" ".join(clauses[CLAUSES_MAX - 1:])]


#: Where one ask ends and another starts, for a limit asked beside a search (spaces count here).
LIMIT_CLAUSE_BREAK = re.compile(r"[？?！!。；;\n，,]+|\s+")

