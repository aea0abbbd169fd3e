"""line-bot-sdk v3 adapter of the LINE gateway, pointed at ``LINE_API_BASE_URL``."""
from __future__ import annotations

import json
import threading
from typing import Any, Sequence

from linebot.v3.messaging import (
    ApiClient,
    ApiException,
    Configuration,
    MessagingApi,
    PushMessageRequest,
    ReplyMessageRequest,
    ShowLoadingAnimationRequest,
)
from urllib3.exceptions import ConnectTimeoutError, HTTPError, MaxRetryError, NewConnectionError

from shared.line.port import LineApiError, LineNeverStarted, LineOutcomeUnknown, PushResult, Quota

#: urllib3 errors meaning no connection was ever made (``NewConnectionError`` is a
#: ``ConnectTimeoutError`` in urllib3 2): nothing reached LINE.
_NOT_CONNECTED = (NewConnectionError, ConnectTimeoutError)


class _OnePassBody:
    """A request model whose body is built in one pass (mixed into line-bot-sdk's request models).

    Every ``to_dict`` that line-bot-sdk v3 generates is pydantic's ``dict(by_alias=True,
    exclude_none=True)``, after which it replaces each nested model's value by that model's own
    ``to_dict()``: the same call again, so a subtree is walked once for every level above it. For the
    menu (a text with three quick replies) that was about two thirds of the request's serialisation
    (profiled: 0.2 ms of CPU per reply). One call of the same pydantic method gives the
    same body (``tests/unit/line/test_line_request_bodies.py`` compares them on LOCAL's messages).
    """

    def to_dict(self) -> dict[str, Any]:
        """The JSON body by alias, without None fields, as the generated ``to_dict`` gives it."""
        return self.dict(by_alias=True, exclude_none=True)  # type: ignore[attr-defined]


class _ReplyMessageRequest(_OnePassBody, ReplyMessageRequest):
    """``ReplyMessageRequest`` serialised in one pass."""


class _PushMessageRequest(_OnePassBody, PushMessageRequest):
    """``PushMessageRequest`` serialised in one pass."""


def _post(api: MessagingApi, path: str, body: dict[str, Any], timeout_seconds: float) -> None:
    """POST ``body`` (JSON) to ``path`` with the channel's bearer token through ``api``'s ``ApiClient``,
    as the generated ``MessagingApi`` methods do; the answer's body is not read into a model.

    Raises: what ``ApiClient.call_api`` raises (``ApiException`` for an error status, urllib3's errors).
    """
    api.api_client.call_api(
        path, "POST", {}, [], {"Accept": "application/json", "Content-Type": "application/json"},
        body=body, post_params=[], files={}, response_types_map={}, auth_settings=["Bearer"],
        _return_http_data_only=True, _preload_content=True, _request_timeout=timeout_seconds,
        collection_formats={})


class SdkLineGateway:
    """LINE gateway over ``linebot.v3.messaging.MessagingApi``.

    Args:
        base_url: ``https://api.line.me`` or a stand-in's URL.
        access_token: the channel access token (never logged).
        api: an injected MessagingApi (tests); built lazily otherwise.
    """

    def __init__(self, base_url: str, access_token: str, api: MessagingApi | None = None):
        self._base_url = base_url
        self._access_token = access_token
        self._api = api
        self._lock = threading.Lock()

    def _messaging(self) -> MessagingApi:
        with self._lock:
            if self._api is None:
                config = Configuration(host=self._base_url, access_token=self._access_token)
                config.retries = 0  # one attempt: an unknown outcome is decided by the caller
                self._api = MessagingApi(ApiClient(config))
            return self._api

    def reply(self, reply_token: str, messages: Sequence[Any], *, timeout_seconds: float) -> None:
        """See ``LineGateway.reply``.

        The request is validated once, as the SDK's model (``ReplyMessageRequest``), and sent through
        the SDK's ``ApiClient.call_api`` as ``MessagingApi.reply_message`` sends it (same path,
        headers, bearer token, body, timeout and errors), without what that method adds around it:
        pydantic's ``validate_arguments`` validating the request again in ``reply_message`` and again in
        ``reply_message_with_http_info``, and the answer's ``ReplyMessageResponse``, which LOCAL never
        reads (profiled: about a fifth of the reply's CPU; compared in
        ``tests/unit/line/test_line_request_bodies.py``).
        """
        request = _ReplyMessageRequest(reply_token=reply_token, messages=list(messages))
        self._call(lambda api: _post(api, "/v2/bot/message/reply", request.to_dict(), timeout_seconds))

    def push(self, to: str, messages: Sequence[Any], *, retry_key: str,
             timeout_seconds: float) -> PushResult:
        """See ``LineGateway.push``."""
        request = _PushMessageRequest(to=to, messages=list(messages))
        try:
            response = self._call(lambda api: api.push_message_with_http_info(
                request, x_line_retry_key=retry_key, _request_timeout=timeout_seconds))
        except LineApiError as exc:
            if exc.status == 409:
                return PushResult(getattr(exc, "accepted_request_id", None), duplicate=True)
            raise
        headers = getattr(response, "headers", None) or {}
        return PushResult(headers.get("x-line-request-id"))

    def show_loading(self, chat_id: str, *, seconds: int, timeout_seconds: float) -> None:
        """See ``LineGateway.show_loading``."""
        request = ShowLoadingAnimationRequest(chat_id=chat_id, loading_seconds=seconds)
        self._call(lambda api: api.show_loading_animation(request, _request_timeout=timeout_seconds))

    def quota(self, *, timeout_seconds: float) -> Quota:
        """See ``LineGateway.quota``: ``MessagingApi.get_message_quota`` (``type`` ``limited`` with its
        ``value``, or ``none``) and ``get_message_quota_consumption`` (``totalUsage``)."""
        limit = self._call(lambda api: api.get_message_quota(_request_timeout=timeout_seconds))
        used = self._call(lambda api: api.get_message_quota_consumption(_request_timeout=timeout_seconds))
        kind = getattr(limit.type, "value", limit.type)
        return Quota(limit=int(limit.value) if kind == "limited" and limit.value is not None else None,
                     used=int(used.total_usage or 0))

    def _call(self, fn):
        """Run one SDK call; translate every failure to its row of the outcome table (``shared.line.port``).

        Raises:
            LineApiError: LINE answered an error status (REFUSED, NOT_DELIVERED or UNKNOWN by status).
            LineNeverStarted: no connection was made. urllib3 wraps a refused or timed-out connect
                in ``MaxRetryError`` (its ``reason`` holds the ``NewConnectionError``), so it is unwrapped.
            LineOutcomeUnknown: sent without an answer (read timeout, connection lost after sending).
        """
        try:
            return fn(self._messaging())
        except ApiException as exc:
            error = LineApiError(exc.status or 0, str(exc.reason or ""), body_message=_body_message(exc.body))
            headers = exc.headers or {}
            error.accepted_request_id = headers.get("x-line-accepted-request-id")
            raise error from exc
        except MaxRetryError as exc:
            if isinstance(exc.reason, _NOT_CONNECTED):
                raise LineNeverStarted(exc.reason.__class__.__name__) from exc
            raise LineOutcomeUnknown(exc.reason.__class__.__name__) from exc
        except _NOT_CONNECTED as exc:
            raise LineNeverStarted(exc.__class__.__name__) from exc
        except HTTPError as exc:
            raise LineOutcomeUnknown(exc.__class__.__name__) from exc


def _body_message(body: Any) -> str | None:
    """The ``message`` of an error answer's JSON body (LINE's error shape), or None when it has none."""
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str):
        return None
    try:
        parsed = json.loads(body[:4096])
    except ValueError:
        return None
    message = parsed.get("message") if isinstance(parsed, dict) else None
    return message if isinstance(message, str) else None
