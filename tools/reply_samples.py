"""``make replies``: three answers as a resident reads them (a shop answer, an events answer, a forget
answer), rendered as text by tools/chat.py from the replies the eval's harness produces (tools/eval.py,
offline router, clock pinned to 2026-12-01 10:00 Asia/Taipei), written to docs/results/replies.md.

``--before REV`` renders the same three answers at another commit too (its tree from ``git archive``,
run in a subprocess), so the page shows them before and after. Never the network; nothing is written
outside the page and a temporary directory.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from datetime import datetime, timezone
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "results" / "replies.md"
WIDTH = 44
#: The three answers, as eval cases (tests/eval/README.md): what the resident sends, after what.
SAMPLES = [
    {"id": "sample-shop", "title": "A shop answer", "input": "彰化市有素食店嗎？", "expect": {}},
    {"id": "sample-events", "title": "An events answer", "input": "這週末彰化市有什麼活動？", "expect": {}},
    {"id": "sample-forget", "title": "A forget answer", "input": "以後不用記了，刪掉", "setup": {"remembered": "蔬食"},
     "expect": {}},
]


def rendered() -> dict[str, dict]:
    """{sample id: {"text": the reply as text, "messages": how many messages}} in this tree."""
    import logging

    from shared import logs
    from tools import eval as harness
    from tools.chat import render_messages

    logs.configure()
    logging.getLogger("local").setLevel(logging.CRITICAL)
    out: dict[str, dict] = {}

    class Recording(harness.Harness):
        def _score(self, expect: dict, observed: dict) -> list[str]:
            out.setdefault(self.case_id, {"text": render_messages(observed["messages"], width=WIDTH),
                                          "messages": len(observed["messages"])})
            return []

    with tempfile.TemporaryDirectory(prefix="local-replies-") as workdir:
        recording = Recording("router", Path(workdir))
        for sample in SAMPLES:
            recording.case_id = sample["id"]  # type: ignore[attr-defined]
            outcome = recording.run(sample)
            if outcome.status == "error":
                raise RuntimeError(f"{sample['id']}: {outcome.failures}")
    return out


def rendered_at(rev: str) -> dict[str, dict]:
    """The same samples rendered at commit ``rev`` (this file run in that commit's tree)."""
    archive = subprocess.run(["git", "archive", "--format=tar", rev], cwd=REPO, capture_output=True, check=True)
    with tempfile.TemporaryDirectory(prefix="local-replies-before-") as tree:
        with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
            tar.extractall(tree, filter="data")
        result = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--json"], cwd=tree,
                                env={**os.environ, "PYTHONPATH": tree}, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def measure(reply: dict) -> str:
    """「2 則訊息，13 行，264 字」 of a rendering: its messages, the lines a resident reads (buttons and
    card rules left out) and their characters."""
    body = reply["text"].split("快速回覆：")[0]
    read = [line for line in body.split("\n") if line.strip() and not line.startswith(("──", "  ["))]
    return f"{reply['messages']} 則訊息，{len(read)} 行，{sum(len(line) for line in read)} 字"


def summary(after: dict[str, dict], before: dict[str, dict] | None) -> list[str]:
    """A table: each sample's size before and after (messages, lines, characters read)."""
    rows = ["| reply | before | after |", "|---|---|---|"]
    rows += [f"| {sample['title']}: 「{sample['input']}」 | {measure(before[sample['id']]) if before else '—'} | "
             f"{measure(after[sample['id']])} |" for sample in SAMPLES]
    return rows


def page(after: dict[str, dict], before: dict[str, dict] | None, rev: str | None) -> str:
    lines = ["# Three replies, as a resident reads them", "",
             f"Written by `make replies` (`python -m tools.reply_samples`) on {datetime.now(timezone.utc).date()}; "
             "do not edit by hand. Each reply is rendered by tools/chat.py from the eval harness's reply "
             "(offline router, 2026-12-01 10:00 Asia/Taipei); `[n]` is a button. Sizes count the lines a "
             "resident reads (wrapped at 44 columns), not the buttons.", "", *summary(after, before), ""]
    for sample in SAMPLES:
        lines += [f"## {sample['title']}: 「{sample['input']}」", ""]
        if before is not None:
            lines += [f"Before (commit {rev}):", "", "```", before[sample["id"]]["text"], "```", "", "After:", ""]
        lines += ["```", after[sample["id"]]["text"], "```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.reply_samples", description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=None, help="a commit to render before (e.g. main)")
    parser.add_argument("--json", action="store_true", help="print the renderings as JSON (used by --before)")
    parser.add_argument("--out", type=Path, default=PAGE)
    args = parser.parse_args(argv)
    if args.json:
        print(json.dumps(rendered(), ensure_ascii=False))
        return 0
    before = rendered_at(args.before) if args.before else None
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(page(rendered(), before, args.before), encoding="utf-8")
    print(f"replies: {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
