"""shared.bounded_json: JSON from outside, refused with a reason however it fails to be read."""
from __future__ import annotations

import pytest

from shared.bounded_json import MalformedJSON, deeper_than, loads


@pytest.mark.parametrize("data, reason", [
    (b"\xff{}", "not_utf8"), (b"{", "not_json"), (b'{"a": NaN}', "not_json"), (b"[Infinity]", "not_json"),
    (b"9" * 5000, "not_json"),  # longer than Python converts
    (b"[" * 100_000 + b"]" * 100_000, "too_deep"),  # json itself raises RecursionError here
    (b'[[[["x"]]]]', "too_deep"), (b'{"a": {"b": {"c": {"d": 1}}}}', "too_deep"),
    (b'{"\\ud800": 1}', "not_text"), (b'["ok", "\\udfff"]', "not_text"),
])
def test_bounded_json_refuses_with_its_reason(data, reason):
    with pytest.raises(MalformedJSON) as raised:
        loads(data, max_depth=3)
    assert raised.value.reason == reason


def test_bounded_json_reads_up_to_its_depth_and_any_unicode_text():
    assert loads('{"a": [{"b": "花壇🙂\\u00e9"}]}', max_depth=3) == {"a": [{"b": "花壇🙂é"}]}
    assert loads(b"7", max_depth=0) == 7
    assert deeper_than({"a": [1]}, 1) and not deeper_than({"a": [1]}, 2)
    assert not deeper_than(["\ud800"], 1)  # depth only: the webhook keeps such text to answer it
