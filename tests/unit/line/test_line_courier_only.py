"""Every LINE send goes through the courier (``shared/outbox.py``): no other module in ``shared/``,
``functions/`` or ``tools/`` calls the LINE port's ``reply`` or ``push``, or takes either method
off a gateway to call it later. Read with ``ast``; nothing is imported."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
#: The courier, and the adapter that implements the port's methods (it defines them, never calls them).
ALLOWED = {Path("shared/outbox.py"), Path("shared/line/messaging.py")}
SEND_METHODS = {"reply", "push"}


def _ends_in_line(node: ast.expr) -> bool:
    """``line``, ``self.line``, ``ctx.line``, ``service.line``, …: an expression naming a gateway."""
    return (isinstance(node, ast.Name) and node.id == "line") or (isinstance(node, ast.Attribute)
                                                                   and node.attr == "line")


def send_calls(source: str) -> list[int]:
    """Line numbers of ``<x>.reply(…)`` / ``<x>.push(…)`` calls, and of ``<gateway>.reply`` /
    ``<gateway>.push`` taken as a value."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SEND_METHODS:
            found.add(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr in SEND_METHODS and _ends_in_line(node.value):
            found.add(node.lineno)
    return sorted(found)


def test_line_courier_only_sender_in_the_code():
    scanned, offenders = 0, []
    for folder in ("shared", "functions", "tools"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT)
            scanned += 1
            if relative not in ALLOWED:
                offenders += [f"{relative}:{line}" for line in send_calls(path.read_text(encoding="utf-8"))]
    assert scanned > 100
    assert offenders == []


def test_line_courier_only_scan_finds_direct_sends():
    probe = ("def f(self, ctx, line):\n"
             "    self.line.reply(token, [m], timeout_seconds=1)\n"
             "    ctx.line.push(to, [m], retry_key=k, timeout_seconds=1)\n"
             "    send = line.push\n"
             "    return run.reply\n")
    assert send_calls(probe) == [2, 3, 4]


def test_line_courier_only_the_courier_sends():
    courier = (ROOT / "shared" / "outbox.py").read_text(encoding="utf-8")
    assert len(send_calls(courier)) == 2  # send_reply and send_push
