"""TDX adapter of the activity source: OAuth client credentials, then the tourism activity API.

- Token: ``POST`` the OIDC token endpoint (``grant_type=client_credentials``, ``client_id``,
  ``client_secret``, form-encoded) → ``{access_token, expires_in}``; the token is cached until
  ``expires_in`` minus a margin (measured on the injected clock). A 401 from the API mid-run drops
  the cached token, fetches a new one and repeats the request once; a second 401 is a refusal.
- Activities: ``GET {api_base}/v2/Tourism/Activity/{city}?$format=JSON`` (restaurants for the places
  import: ``/v2/Tourism/Restaurant/{city}``, the same client) with
  ``Authorization: Bearer <token>`` and, when a previous ``Last-Modified`` is known,
  ``If-Modified-Since``; 304 means nothing changed.
- Limits: every request has a (connect, read) timeout; 429 and 5xx are retried with exponential
  backoff (``Retry-After`` respected) by urllib3's ``Retry`` mounted on a ``requests`` session.

Secrets never reach a log or an error message. Only ``shared.wiring`` imports this module.

Source: TDX 新手指引 "API授權驗證與使用方式" (https://motc-ptx.gitbook.io/tdx-xin-shou-zhi-yin) and
tdxmotc/SampleCode: token URL ``/auth/realms/TDXConnect/protocol/openid-connect/token``, ``expires_in``
86400 s by default, "do not fetch a token per call" (the token endpoint is rate-limited per IP);
Tourism V2 ``/v2/Tourism/Activity/{City}``; If-Modified-Since where the API supports it (304);
RFC 6749 §4.4 (client credentials); urllib3 ``Retry``.
"""
from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import MaxRetryError, NewConnectionError, TimeoutError
from urllib3.util.retry import Retry

from shared.clock import Clock, utc_now
from shared.events.source import (
    TDX_SOURCE_NAME,
    Fetched,
    SourceInvalid,
    SourceRefused,
    SourceUnavailable,
)

CHANGHUA = "ChanghuaCounty"
RETRY_STATUSES = (429, 500, 502, 503, 504)
#: Refresh a token this long before TDX says it expires (seconds).
TOKEN_MARGIN_SECONDS = 60


def _transport_reason(exc: requests.RequestException) -> str:
    """``timeout`` for a connect or read timeout (also when urllib3 wrapped it after its retries),
    else ``connection_failed``."""
    if isinstance(exc, requests.Timeout):
        return "timeout"
    cause = exc.args[0] if exc.args else None
    reason = cause.reason if isinstance(cause, MaxRetryError) else None
    # urllib3's NewConnectionError (refused) subclasses ConnectTimeoutError for old callers.
    if isinstance(reason, TimeoutError) and not isinstance(reason, NewConnectionError):
        return "timeout"
    return "connection_failed"


def retrying_session(*, max_retries: int, backoff_seconds: float) -> requests.Session:
    """A requests session that retries 429/5xx, connection errors and read timeouts with backoff.

    Args:
        max_retries: retries after the first attempt (0: none).
        backoff_seconds: urllib3 ``backoff_factor``: sleeps of factor × 2^(n−1) between retries.
    Returns:
        The session; after the last retry the final response is returned (not raised), so its
        status can be recorded.
    """
    retry = Retry(total=max_retries, connect=max_retries, read=max_retries, status=max_retries,
                  backoff_factor=backoff_seconds, status_forcelist=RETRY_STATUSES,
                  allowed_methods=frozenset({"GET", "POST"}), respect_retry_after_header=True,
                  raise_on_status=False)
    session = requests.Session()
    adapter = HTTPAdapter(max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


class TdxTokens:
    """A client-credentials token, fetched on first use and cached until it nearly expires.

    Args:
        session: the HTTP session.
        token_url: TDX's OIDC token endpoint.
        client_id, client_secret: the TDX application's credentials (Secret Manager in production).
        timeout_seconds: per request.
        clock: aware-time source for the expiry.
    """

    def __init__(self, session: requests.Session, token_url: str, client_id: str, client_secret: str, *,
                 timeout_seconds: float, clock: Clock = utc_now):
        self._session = session
        self._token_url = token_url
        self._client_id = client_id
        self._client_secret = client_secret
        self._timeout_seconds = timeout_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._token: str | None = None
        self._expires_at: datetime | None = None
        self.fetch_count = 0

    def get(self) -> str:
        """A valid access token (cached or new).

        Raises:
            SourceUnavailable: timeout, connection failure, or 429/5xx after the retries.
            SourceRefused: the credentials were refused (4xx).
            SourceInvalid: the answer has no ``access_token``.
        """
        with self._lock:
            now = self._clock()
            if self._token is not None and self._expires_at is not None and now < self._expires_at:
                return self._token
            self._token, self._expires_at = self._fetch(now)
            return self._token

    def invalidate(self) -> None:
        """Forget the cached token (after a 401); the next ``get`` fetches a new one."""
        with self._lock:
            self._token = self._expires_at = None

    def _fetch(self, now: datetime) -> tuple[str, datetime]:
        self.fetch_count += 1
        try:
            response = self._session.post(
                self._token_url,
                data={"grant_type": "client_credentials", "client_id": self._client_id,
                      "client_secret": self._client_secret},
                headers={"Content-Type": "application/x-www-form-urlencoded"},
                timeout=self._timeout_seconds)
        except requests.RequestException as exc:
            raise SourceUnavailable("token_" + _transport_reason(exc)) from None
        if response.status_code in RETRY_STATUSES:
            raise SourceUnavailable(f"token_http_{response.status_code}")
        if response.status_code != 200:
            raise SourceRefused(f"token_http_{response.status_code}")
        try:
            body = response.json()
            token = body["access_token"]
            expires_in = float(body.get("expires_in", 0))
        except (ValueError, KeyError, TypeError):
            raise SourceInvalid("token_not_understood") from None
        if not isinstance(token, str) or not token:
            raise SourceInvalid("token_not_understood")
        return token, now + timedelta(seconds=max(0.0, expires_in - TOKEN_MARGIN_SECONDS))


class TdxActivitySource:
    """Fetches one county's activities from TDX.

    Args:
        api_base_url: e.g. ``https://tdx.transportdata.tw/api/basic`` (``TDX_API_BASE_URL``).
        token_url: ``TDX_TOKEN_URL``.
        client_id, client_secret: ``TDX_CLIENT_ID`` / ``TDX_CLIENT_SECRET``.
        city: TDX's city code (``ChanghuaCounty``).
        dataset: the Tourism V2 dataset (``Activity``; ``Restaurant`` for the places import).
        timeout_seconds: per request (connect and read), ``LOCAL_TDX_TIMEOUT_SECONDS``.
        max_retries: 429/5xx/connection retries per request, ``LOCAL_TDX_MAX_RETRIES``.
        backoff_seconds: ``LOCAL_TDX_BACKOFF_SECONDS`` (urllib3 backoff factor).
        clock: aware-time source for the token's expiry.
        session: an injected session (tests); built with ``retrying_session`` when None.
    """

    kind = "tdx"
    name = TDX_SOURCE_NAME

    def __init__(self, *, api_base_url: str, token_url: str, client_id: str, client_secret: str,
                 city: str = CHANGHUA, dataset: str = "Activity", timeout_seconds: float = 10.0, max_retries: int = 3,
                 backoff_seconds: float = 1.0, clock: Clock = utc_now, session: requests.Session | None = None):
        self.url = f"{api_base_url.rstrip('/')}/v2/Tourism/{dataset}/{city}"
        self._timeout_seconds = timeout_seconds
        self._session = session or retrying_session(max_retries=max_retries, backoff_seconds=backoff_seconds)
        self.tokens = TdxTokens(self._session, token_url, client_id, client_secret,
                                timeout_seconds=timeout_seconds, clock=clock)

    def fetch(self, *, if_modified_since: str | None = None) -> Fetched:
        """Fetch every activity of the county (see the module docstring).

        Raises:
            SourceUnavailable: ``timeout``, ``connection_failed``, ``http_429`` / ``http_5xx`` after the
                retries, or the token endpoint's equivalents (``token_…``).
            SourceRefused: ``unauthorized`` (401 after one refresh), ``http_4xx``, ``token_http_4xx``.
            SourceInvalid: ``not_json`` or ``not_a_list``.
        """
        response = self._get(if_modified_since)
        if response.status_code == 401:
            self.tokens.invalidate()  # expired or revoked mid-run: one fresh token, one more try
            response = self._get(if_modified_since)
            if response.status_code == 401:
                raise SourceRefused("unauthorized")
        status = response.status_code
        if status == 304:
            return Fetched(records=None, last_modified=if_modified_since, origin=self.url)
        if status in RETRY_STATUSES:
            raise SourceUnavailable(f"http_{status}")
        if status != 200:
            raise SourceRefused(f"http_{status}")
        try:
            records: Any = response.json()
        except ValueError:
            raise SourceInvalid("not_json") from None
        if not isinstance(records, list):
            raise SourceInvalid("not_a_list")
        return Fetched(records=records, last_modified=response.headers.get("Last-Modified"), origin=self.url)

    def _get(self, if_modified_since: str | None) -> requests.Response:
        headers = {"Authorization": f"Bearer {self.tokens.get()}", "Accept": "application/json"}
        if if_modified_since:
            headers["If-Modified-Since"] = if_modified_since
        try:
            return self._session.get(self.url, params={"$format": "JSON"}, headers=headers,
                                     timeout=self._timeout_seconds)
        except requests.RequestException as exc:
            raise SourceUnavailable(_transport_reason(exc)) from None
