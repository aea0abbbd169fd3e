"""tools/reply_samples.py (make replies): the sizes it reports, and README quoting its page's table."""
from __future__ import annotations

from pathlib import Path

from tools import reply_samples

REPO = Path(__file__).resolve().parents[3]


def test_reply_samples_measure_counts_read_lines_not_buttons():
    text = "資料來源：名單\n\n── 卡片 1/2 ──\n和米素食\n快速回覆：\n  [1] 選單"
    assert reply_samples.measure({"text": text, "messages": 2}) == "2 則訊息，2 行，11 字"


def test_reply_samples_readme_quotes_the_page_table():
    page = (REPO / "docs" / "results" / "replies.md").read_text(encoding="utf-8")
    rows = [line for line in page.split("\n") if line.startswith(("| A ", "| An "))]
    assert len(rows) == len(reply_samples.SAMPLES)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert all(row in readme for row in rows), "README's before/after table differs from docs/results/replies.md"
