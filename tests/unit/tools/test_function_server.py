"""The request head reader of tools/function_server.py: when a head has ended, however it arrives."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tools.function_server import RequestHead, header_timeout_seconds

HEAD = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n"


def _ends_at(data: bytes) -> list[int]:
    """The byte counts at which a head fed one byte at a time reports its end."""
    head = RequestHead(deadline=0.0)
    return [index + 1 for index in range(len(data)) if head.add(data[index:index + 1])]


def test_request_head_a_byte_at_a_time_ends_at_the_blank_line():
    assert _ends_at(HEAD + b"{}")[0] == len(HEAD)


@settings(derandomize=True, database=None)
@given(st.lists(st.integers(min_value=0, max_value=len(HEAD) + 2), max_size=6))
def test_request_head_ends_where_the_blank_line_is_however_the_bytes_are_split(cuts):
    data = HEAD + b"{}"
    bounds = sorted({0, len(data), *cuts})
    head = RequestHead(deadline=0.0)
    ended = [end for start, end in zip(bounds, bounds[1:]) if head.add(data[start:end])]
    assert ended[0] == next(end for end in bounds if end >= len(HEAD))  # the piece that completes it
    assert bytes(head.data) == data  # what follows the head is kept for the parser


def test_request_head_empty_lines_before_the_request_line_do_not_end_it():
    assert _ends_at(b"\r\n\r\n\n" + HEAD)[0] == 5 + len(HEAD)


def test_request_head_bare_line_feeds_end_it_for_the_parser_to_judge():
    assert _ends_at(b"GET / HTTP/1.1\nHost: x\n\n") == [24]


def test_request_head_without_its_blank_line_never_ends():
    assert _ends_at(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a\r" * 500) == []


def test_header_timeout_seconds_default_and_setting():
    assert header_timeout_seconds({}) == 10.0
    assert header_timeout_seconds({"LOCAL_HEADER_TIMEOUT_SECONDS": "1.5"}) == 1.5
    for bad in ("0", "-1", "soon"):
        with pytest.raises(ValueError):
            header_timeout_seconds({"LOCAL_HEADER_TIMEOUT_SECONDS": bad})
