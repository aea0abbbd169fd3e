"""The TDX adapter against the local TDX stand-in over loopback HTTP: token caching and refresh,
retries with backoff on 429/5xx, timeouts, If-Modified-Since (docs/design.md §5). No network."""
from __future__ import annotations

import json
import socket
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from shared.events.source import SourceInvalid, SourceRefused, SourceUnavailable
from shared.events.tdx import TOKEN_MARGIN_SECONDS, TdxActivitySource
from tools.tdx_standin import CLIENT_ID, CLIENT_SECRET, TdxStandin

RECORDS = json.loads((Path(__file__).resolve().parents[2] / "fixtures" / "tdx" / "changhua-activities.json")
                     .read_text(encoding="utf-8"))


class Clock:
    def __init__(self):
        self.at = datetime(2026, 11, 30, 2, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture
def tdx():
    with TdxStandin(RECORDS, expires_in=3600) as standin:
        yield standin


@pytest.fixture
def clock():
    return Clock()


def _source(tdx: TdxStandin, clock=None, *, secret: str = CLIENT_SECRET, retries: int = 2,
            timeout: float = 5.0) -> TdxActivitySource:
    return TdxActivitySource(api_base_url=tdx.api_base_url, token_url=tdx.token_url, client_id=CLIENT_ID,
                             client_secret=secret, timeout_seconds=timeout, max_retries=retries,
                             backoff_seconds=0.001, clock=clock or Clock())


def _statuses(tdx: TdxStandin, kind: str) -> list[int]:
    return [call["status"] for call in tdx.calls(kind)]


def test_tdx_fetch_returns_records_and_last_modified(tdx):
    fetched = _source(tdx).fetch()
    assert fetched.records == RECORDS and fetched.last_modified
    assert fetched.origin.endswith("/api/basic/v2/Tourism/Activity/ChanghuaCounty")


def test_tdx_token_cached_until_expiry_then_fetched_again(tdx, clock):
    source = _source(tdx, clock)
    source.fetch()
    clock.at += timedelta(seconds=3600 - TOKEN_MARGIN_SECONDS - 1)
    source.fetch()
    assert _statuses(tdx, "token") == [200]
    clock.at += timedelta(seconds=1)
    source.fetch()
    assert _statuses(tdx, "token") == [200, 200]


def test_tdx_token_expired_mid_run_refreshed_once(tdx):
    source = _source(tdx)
    source.fetch()
    tdx.expire_tokens()  # the cached token is still "valid" by its clock, but TDX says 401
    fetched = source.fetch()
    assert fetched.records == RECORDS
    assert _statuses(tdx, "token") == [200, 200]
    assert _statuses(tdx, "activity") == [200, 401, 200]


def test_tdx_second_401_after_refresh_is_refused(tdx):
    source = _source(tdx)
    tdx.fail_next("activity", 401, times=2)
    with pytest.raises(SourceRefused) as caught:
        source.fetch()
    assert caught.value.reason == "unauthorized"
    assert _statuses(tdx, "token") == [200, 200] and _statuses(tdx, "activity") == [401, 401]


def test_tdx_wrong_credentials_refused_without_retry(tdx):
    with pytest.raises(SourceRefused) as caught:
        _source(tdx, secret="wrong").fetch()
    assert caught.value.reason == "token_http_401" and _statuses(tdx, "token") == [401]
    assert tdx.calls("activity") == []


def test_tdx_500_retried_then_unavailable_with_status_reason(tdx):
    tdx.fail_next("activity", 500, times=3)
    with pytest.raises(SourceUnavailable) as caught:
        _source(tdx, retries=2).fetch()
    assert caught.value.reason == "http_500"
    assert _statuses(tdx, "activity") == [500, 500, 500]


@pytest.mark.parametrize("status", [429, 502, 503])
def test_tdx_transient_status_retried_then_succeeds(tdx, status):
    tdx.fail_next("activity", status, times=2)
    assert _source(tdx, retries=2).fetch().records == RECORDS
    assert _statuses(tdx, "activity") == [status, status, 200]


def test_tdx_token_endpoint_5xx_retried(tdx):
    tdx.fail_next("token", 503, times=1)
    assert _source(tdx, retries=1).fetch().records == RECORDS
    assert _statuses(tdx, "token") == [503, 200]


def test_tdx_404_refused_not_retried(tdx):
    tdx.fail_next("activity", 404, times=1)
    with pytest.raises(SourceRefused) as caught:
        _source(tdx).fetch()
    assert caught.value.reason == "http_404" and _statuses(tdx, "activity") == [404]


def test_tdx_if_modified_since_unchanged_is_not_modified(tdx):
    source = _source(tdx)
    first = source.fetch()
    again = source.fetch(if_modified_since=first.last_modified)
    assert again.records is None and again.last_modified == first.last_modified
    assert [c["if_modified_since"] for c in tdx.calls("activity")] == [False, True]
    tdx.set_records(RECORDS[:1])
    assert source.fetch(if_modified_since=first.last_modified).records == RECORDS[:1]


def test_tdx_answer_not_a_list_is_invalid(tdx):
    tdx.set_records([])
    tdx._records = {"value": []}  # an answer of another shape
    with pytest.raises(SourceInvalid):
        _source(tdx).fetch()


def test_tdx_read_timeout_is_unavailable():
    with socket.socket() as silent:  # accepts connections (backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        base = f"http://127.0.0.1:{silent.getsockname()[1]}"
        source = TdxActivitySource(api_base_url=base, token_url=f"{base}/token", client_id="a", client_secret="b",
                                   timeout_seconds=0.2, max_retries=0, backoff_seconds=0.001)
        with pytest.raises(SourceUnavailable) as caught:
            source.fetch()
    assert caught.value.reason == "token_timeout"


def test_tdx_connection_refused_is_unavailable():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    source = TdxActivitySource(api_base_url=base, token_url=f"{base}/token", client_id="a", client_secret="b",
                               timeout_seconds=1.0, max_retries=1, backoff_seconds=0.001)
    with pytest.raises(SourceUnavailable) as caught:
        source.fetch()
    assert caught.value.reason == "token_connection_failed"
