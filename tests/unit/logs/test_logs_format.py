"""The JSON log line survives what hostile input can put in a field (issue 13)."""
from __future__ import annotations

import json
import logging

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
