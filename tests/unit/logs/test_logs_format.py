"""The JSON log line survives what hostile input can put in a field, and stays bounded whatever its
fields hold (a string from a request, a huge container, an exception's message)."""
from __future__ import annotations

import json
import logging
import select
import sys

from shared.logs import JsonFormatter, hash_user


def test_logs_lone_surrogate_field_is_written_escaped_as_utf8():
    record = logging.LogRecord("local", logging.WARNING, __file__, 1, "event refused", (), None)
    record.fields = {"event_type": "mess\ud800age"}
    line = JsonFormatter().format(record)
    line.encode("utf-8")  # a lone surrogate would raise here and lose the line
    assert json.loads(line)["event_type"] == "mess\ud800age"  # escaped in the line, read back the same


def test_logs_hash_user_is_keyed_and_stable():
    assert hash_user("U" + "a" * 32) == hash_user("U" + "a" * 32)
    assert hash_user("U" + "a" * 32) != hash_user("U" + "b" * 32)
    assert len(hash_user("U" + "a" * 32)) == 16 and hash_user(None) is None
    assert hash_user("\ud800") is not None  # never raises on what a hostile body carries


def _line(message: str = "event ignored", exc_info=None, **fields) -> str:
    record = logging.LogRecord("local", logging.WARNING, __file__, 1, message, (), exc_info)
    record.fields = fields
    return JsonFormatter().format(record)


def _fits_one_write(line: str) -> bool:
    """What JsonLineHandler writes in one ``write`` with no lock: the line and its newline, UTF-8."""
    return len((line + "\n").encode("utf-8", "backslashreplace")) <= select.PIPE_BUF


def test_logs_huge_field_from_a_request_is_cut_with_its_length_and_the_line_fits_one_write():
    line = _line(event_type="x" * 100_000, error="壞" * 50_000, user="0123456789abcdef")
    entry = json.loads(line)
    assert entry["event_type"].startswith("x" * 200) and "100000" in entry["event_type"]
    assert len(entry["event_type"]) < 400 and len(entry["error"]) < 400 and "50000" in entry["error"]
    assert entry["user"] == "0123456789abcdef"  # short values stay as they are
    assert _fits_one_write(line)


def test_logs_huge_nested_and_odd_values_are_bounded():
    class Loud:
        def __str__(self):
            return "!" * 100_000

    value = json.loads(_line(detail={"k" * 10_000: ["v"] * 40}, deep=[[[[[["x"]]]]]], obj=Loud(),
                             big=10 ** 400, ok=3))
    [long_key] = value["detail"]
    assert len(long_key) < 400 and len(value["detail"][long_key]) < 40 and "40 items" in value["detail"][long_key][-1]
    node, levels = value["deep"], 0
    while isinstance(node, list):
        node, levels = node[0], levels + 1
    assert levels < 6 and node != "x" and "list" in node  # the nesting stops at a marker
    assert len(value["obj"]) < 400 and len(value["big"]) < 100 and value["ok"] == 3


def test_logs_line_of_many_long_fields_still_fits_one_write():
    line = _line(first=["a" * 1000] * 1000, second={"b": "c" * 100_000}, third="d" * 5000, kept=7)
    entry = json.loads(line)
    assert _fits_one_write(line)
    assert entry["kept"] == 7 and all(name in entry for name in ("first", "second", "third"))


def test_logs_exception_with_a_huge_message_is_bounded_and_keeps_its_type():
    try:
        raise ValueError("bad value: " + "y" * 100_000)
    except ValueError as exc:
        line = _line("event failed", exc_info=sys.exc_info(), error=str(exc))
    entry = json.loads(line)
    assert len(entry["error"]) < 400
    assert len(entry["exception"]) < 10_000
    assert entry["exception"].startswith("Traceback") and "ValueError: bad value" in entry["exception"]
