"""The date reader's lazy imports, in a new interpreter per text: a plain text loads neither cn2an nor
the holidays calendar; a text with a numeral or a calendar name loads just that one."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("text, loaded", [
    ("花壇素食", set()), ("我要預約", set()), ("十二月五號有活動嗎", {"cn2an"}), ("植樹節有活動嗎", {"holidays"}),
])
def test_dates_numerals_and_calendar_load_only_for_a_text_that_has_them(text, loaded):
    """A plain text's first turn pays for neither cn2an (with proces's patterns) nor the calendar:
    each process's first text turn, a cold start's cost."""
    code = ("import sys; from shared.turn.dates import read_date; from shared.text import reading_form; "
            f"read_date(reading_form({text!r})); print(sorted({{'cn2an', 'holidays'}} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == repr(sorted(loaded))
