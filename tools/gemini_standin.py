"""A local stand-in for the Gemini API ``generateContent`` endpoint, answering from a script.

The real google-genai client reaches it through google-genai's own ``GOOGLE_GEMINI_BASE_URL``
(``google.genai._base_url.get_base_url``), so tests and ``make run`` exercise the real client
and the real ADK ``Runner`` over HTTP, without the network. It speaks the REST shape of
https://ai.google.dev/api/generate-content (``POST /{version}/models/{model}:generateContent``):

* a function call: ``{"candidates": [{"content": {"role": "model", "parts": [{"functionCall":
  {"name": ..., "args": {...}}, "thoughtSignature": "..."}]}, "finishReason": "STOP", "index": 0}],
  "usageMetadata": {..., "thoughtsTokenCount": N}}``. As Gemini 3 does, the first function-call part
  carries a ``thoughtSignature`` (a text answer: its last part), which the caller must send back
  unchanged in a later request of the same turn (https://ai.google.dev/gemini-api/docs/thought-signatures);
  ``usageMetadata`` counts the prompt (about 4 characters a token), the answer and the thinking;
* text: the same with ``{"text": ...}`` parts;
* an error: HTTP status with ``{"error": {"code", "message", "status"}}`` (429 RESOURCE_EXHAUSTED,
  500 INTERNAL, 503 UNAVAILABLE, …), as https://ai.google.dev/gemini-api/docs/troubleshooting lists;
  a 429 also carries a ``Retry-After`` header and a ``google.rpc.RetryInfo`` detail with its
  ``retryDelay`` (``DEFAULT_RETRY_AFTER_SECONDS`` unless the step says; https://ai.google.dev/gemini-api/docs/rate-limits);
* a candidate without content and ``finishReason: MALFORMED_FUNCTION_CALL``.

A script is a list of steps, consumed in order (one per ``generateContent`` call). A step is a
JSON object with one of:

* ``{"function_call": {"name": "search_local_places", "args": {...}}}`` or
  ``{"function_calls": [{...}, {...}]}`` (several calls in one answer);
* ``{"text": "..."}``;
* ``{"error": 429}`` or ``{"error": {"code": 503, "status": "UNAVAILABLE", "message": "..."}}``;
* ``{"finish_reason": "MALFORMED_FUNCTION_CALL"}`` (no content); ``{"finish_reason": "MAX_TOKENS"}`` (no
  content) or ``{"finish_reason": "MAX_TOKENS", "parts": "text"}`` (cut-off prose);
* ``{"blocked": "prompt"}``: ``promptFeedback.blockReason`` ``SAFETY`` with its ``safetyRatings`` and no
  candidates; ``{"blocked": "candidate"}``: one candidate with ``finishReason`` ``SAFETY``, its
  ``safetyRatings`` and no content;
* ``{"candidates": []}``: a 200 with an empty ``candidates`` list (and no ``promptFeedback``);
* ``{"raw_body": "not json"}`` (a 200 whose body is not JSON);

A call to an unknown function is a ``function_call`` with another ``name``; malformed arguments are
``"args"`` that are no object (``{"name": "search_local_places", "args": "花壇"}``), sent as given.
A 429 may say when to try again: ``{"error": {"code": 429, "retry_after_seconds": 7}}`` sends the
``Retry-After`` header and a ``google.rpc.RetryInfo`` detail (``retryDelay: "7s"``).

plus, on any step, ``"delay_seconds": 2.5`` (wait before answering) and ``"when": "花壇"`` (the
step is used only for a request whose last user text contains that substring; steps with
``when`` are looked up first, the others are consumed first-in first-out); on an answer with content,
``"thought_signature": "..."`` (the signature to send, base64; ``null``: none, as Gemini 2.5 without
thinking) and ``"thoughts_tokens": 120``.

With no step left, the stand-in reads nothing into the text itself: it answers with the scripted
call it was given for exactly that text (``calls``; run on its own, the ``model_call`` of the eval
case with that input, tests/eval/cases/), or else with prose saying it has no script, which LOCAL
never sends (the resident gets the help menu). That is what ``make run`` uses with
``LOCAL_MODEL=standin``, so a person can watch a model turn end to end without a key; it is not
Gemini, and it never reads the text with LOCAL's own router.

Stand-in-only endpoints (not Gemini, not recorded): ``POST /__script`` (``{"steps": [...]}``,
replaces the queue), ``GET /__requests?since=SEQ`` (recorded requests with ``seq > SEQ``),
``GET /__health``. Every ``generateContent`` call is recorded (in memory, and appended as one JSON
line to ``record_path`` when given) as ``{"seq", "at", "path", "model", "body", "status", "step"}``;
the API key header is never recorded.

Run on its own: ``python -m tools.gemini_standin --port 8091 [--script steps.json] [--record
calls.jsonl] [--cases tests/eval/cases]`` (prints ``{"url": ...}`` as one JSON line on stdout once it is listening).
"""
from __future__ import annotations

import argparse
import base64
import itertools
import json
import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tools.standin_server import StandinServer

#: ``/v1beta/models/gemini-2.5-flash:generateContent`` (any API version).
_GENERATE = re.compile(r"^/(?P<version>v[0-9][a-z0-9.]*)/models/(?P<model>[^/:]+):generateContent$")
SCRIPT_PATH = "/__script"
REQUESTS_PATH = "/__requests"
HEALTH_PATH = "/__health"
#: The eval cases whose scripted calls ``main`` answers with (tests/eval/README.md).
DEFAULT_CASES = Path(__file__).resolve().parents[1] / "tests" / "eval" / "cases"
MAX_BODY_BYTES = 4 * 1024 * 1024

#: google.rpc status names for the HTTP codes a script may ask for.
_STATUS_NAMES = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}


#: Thinking tokens an answer reports when its step names none (a short reading at a low thinking level).
DEFAULT_THOUGHTS_TOKENS = 96
#: What a 429 asks the caller to wait when its step names nothing (seconds).
DEFAULT_RETRY_AFTER_SECONDS = 30
_SIGNATURES = itertools.count(1)
#: The keys of a step, one of which says what the answer is.
ANSWER_KEYS = ("function_call", "function_calls", "text", "error", "finish_reason", "raw_body", "blocked",
               "candidates")
#: The safety rating a blocked prompt or candidate carries (https://ai.google.dev/api/generate-content#safetyrating).
_BLOCKED_RATINGS = [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True},
                    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}]


@dataclass
class Answer:
    """One HTTP answer: status, body (JSON-able, or raw text), whether it is raw, and extra headers."""

    status: int
    body: Any
    raw: bool = False
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Step:
    """One scripted answer (see the module docstring for the keys)."""

    spec: dict[str, Any]
    when: str | None = None
    delay_seconds: float = 0.0

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> "Step":
        """Validate one step.

        Raises:
            ValueError: not an object, or none (or more than one) of the answer keys.
        """
        if not isinstance(spec, dict):
            raise ValueError("a step must be a JSON object")
        kinds = [key for key in ANSWER_KEYS if key in spec]
        if len(kinds) != 1:
            raise ValueError(f"a step needs exactly one answer key, got {kinds or 'none'}")
        delay = spec.get("delay_seconds", 0)
        if not isinstance(delay, (int, float)) or delay < 0:
            raise ValueError("delay_seconds must be a non-negative number")
        when = spec.get("when")
        return cls(dict(spec), when if isinstance(when, str) else None, float(delay))


def _usage(prompt: Any, parts: list[dict], thoughts_tokens: int) -> dict[str, int]:
    """``usageMetadata`` as Gemini reports it: prompt, answer and thinking tokens (about 4 characters a token)."""
    prompt_tokens = max(1, len(json.dumps(prompt, ensure_ascii=False)) // 4) if prompt is not None else 1
    answer_tokens = max(1, len(json.dumps(parts, ensure_ascii=False)) // 4) if parts else 0
    return {"promptTokenCount": prompt_tokens, "candidatesTokenCount": answer_tokens,
            "thoughtsTokenCount": thoughts_tokens,
            "totalTokenCount": prompt_tokens + answer_tokens + thoughts_tokens}


def new_thought_signature() -> str:
    """An opaque signature, base64 as Gemini sends it (``+`` and ``/`` included, as real ones carry)."""
    return base64.b64encode(f"standin-thought-{next(_SIGNATURES):06d}".encode() + b"\xfb\xef\xff").decode()


def _signed(parts: list[dict], spec: dict[str, Any]) -> list[dict]:
    """The parts with a ``thoughtSignature`` on the first function call (else on the last part)."""
    signature = spec["thought_signature"] if "thought_signature" in spec else new_thought_signature()
    if not parts or signature is None:
        return parts
    calls = [index for index, part in enumerate(parts) if "functionCall" in part]
    at = calls[0] if calls else len(parts) - 1
    return [{**part, "thoughtSignature": signature} if index == at else part for index, part in enumerate(parts)]


def _content_answer(parts: list[dict], model: str, finish_reason: str = "STOP", *, spec: dict[str, Any] | None = None,
                    prompt: Any = None) -> Answer:
    spec = spec or {}
    candidate: dict[str, Any] = {"finishReason": finish_reason, "index": 0}
    if parts:
        candidate["content"] = {"role": "model", "parts": _signed(parts, spec)}
    thoughts = int(spec.get("thoughts_tokens", DEFAULT_THOUGHTS_TOKENS))
    return Answer(200, {"candidates": [candidate], "usageMetadata": _usage(prompt, parts, thoughts),
                        "modelVersion": model})


def _error_answer(spec: Any) -> Answer:
    if isinstance(spec, int):
        spec = {"code": spec}
    code = int(spec.get("code", 500))
    status = spec.get("status") or _STATUS_NAMES.get(code, "UNKNOWN")
    message = spec.get("message") or f"stand-in error {code} ({status})"
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    retry_after = spec.get("retry_after_seconds")
    if retry_after is None and code == 429:
        retry_after = DEFAULT_RETRY_AFTER_SECONDS  # Gemini's 429 always says when to try again
    if retry_after is None:
        return Answer(code, {"error": error})
    error["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{int(retry_after)}s"}]
    return Answer(code, {"error": error}, headers={"Retry-After": str(int(retry_after))})


def _blocked_answer(where: str, model: str, prompt: Any = None) -> Answer:
    """A prompt blocked before any candidate (``promptFeedback``), or a candidate stopped for safety."""
    if where == "prompt":
        return Answer(200, {"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": _BLOCKED_RATINGS},
                            "usageMetadata": _usage(prompt, [], 0), "modelVersion": model})
    candidate = {"finishReason": "SAFETY", "index": 0, "safetyRatings": _BLOCKED_RATINGS}
    return Answer(200, {"candidates": [candidate], "usageMetadata": _usage(prompt, [], DEFAULT_THOUGHTS_TOKENS),
                        "modelVersion": model})


def answer_step(step: Step, model: str, prompt: Any = None) -> Answer:
    """The HTTP answer a step describes (``prompt``: the request body, for the token counts)."""
    spec = step.spec
    if "function_call" in spec or "function_calls" in spec:
        calls = spec.get("function_calls") or [spec["function_call"]]
        return _content_answer([{"functionCall": {"name": c.get("name"), "args": c.get("args", {})}}
                                for c in calls], model, spec=spec, prompt=prompt)
    if "text" in spec:
        return _content_answer([{"text": str(spec["text"])}], model, spec=spec, prompt=prompt)
    if "error" in spec:
        return _error_answer(spec["error"])
    if "finish_reason" in spec:
        parts = [{"text": "花壇鄉有幾家素食店，例如"}] if spec.get("parts") == "text" else []
        return _content_answer(parts, model, str(spec["finish_reason"]), spec=spec, prompt=prompt)
    if "blocked" in spec:
        return _blocked_answer(str(spec["blocked"]), model, prompt)
    if "candidates" in spec:
        return Answer(200, {"candidates": [], "usageMetadata": _usage(prompt, [], 0), "modelVersion": model})
    return Answer(200, str(spec["raw_body"]), raw=True)


def last_user_text(body: Any) -> str:
    """The text of the last ``user`` content of a generateContent request body ("" if none)."""
    contents = body.get("contents") if isinstance(body, dict) else None
    for content in reversed(contents or []):
        if isinstance(content, dict) and content.get("role", "user") == "user":
            texts = [part.get("text") for part in content.get("parts") or [] if isinstance(part, dict)]
            texts = [text for text in texts if isinstance(text, str)]
            if texts:
                return "\n".join(texts)
    return ""


#: What the stand-in answers when nothing is scripted for a text: prose, which LOCAL never sends (the
#: resident gets the help menu), so a demo without a script is honest about it.
NO_SCRIPT_TEXT = "（Gemini 替身：這句話沒有預先寫好的呼叫）"


def scripted_calls(cases_dir: Path) -> dict[str, Step]:
    """The scripted model call of every eval case, by its exact input text (tests/eval/README.md
    ``model_call``; the first case of a text wins), for ``make run`` with ``LOCAL_MODEL=standin``.

    Raises:
        OSError, ValueError: a case file cannot be read.
    """
    calls: dict[str, Step] = {}
    for file in sorted(Path(cases_dir).glob("*.json")):
        for case in json.loads(file.read_text(encoding="utf-8")):
            call = case.get("model_call")
            if call is not None and isinstance(case.get("input"), str) and not (case.get("setup") or {}).get("observe"):
                key = "function_calls" if isinstance(call, list) else "function_call"
                calls.setdefault(text_key(case["input"]), Step({key: call}))
    return calls


def text_key(text: str) -> str:
    """A text as ``calls`` are looked up: without surrounding spaces and closing punctuation (花壇有素食嗎？
    and 花壇有素食嗎 are one question)."""
    return text.strip().rstrip("？?！!。.～~ ")


class GeminiStandin(StandinServer):
    """A scripted, recording Gemini API stand-in on loopback.

    Args:
        host: interface to bind; loopback by default.
        port: TCP port; 0 picks a free one (read it back from ``url``).
        record_path: JSON-lines file to append every recorded call to; None keeps them in memory.
        calls: what to answer for a text when no step is queued, by the last user text (``text_key``;
            ``scripted_calls``); any other text gets ``NO_SCRIPT_TEXT``.
        on_request: called with each generateContent body before it is answered (tests use it to
            change the world while "the model is thinking"); its errors become a 500.

    Use ``with GeminiStandin() as standin:`` or ``start()``/``stop()``; set the client's
    ``GOOGLE_GEMINI_BASE_URL`` to ``standin.url``.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, record_path: Path | None = None,
                 calls: dict[str, Step] | None = None,
                 on_request: Callable[[dict], None] | None = None) -> None:
        self._host = host
        self.on_request = on_request
        self._port = port
        self._record_path = Path(record_path) if record_path is not None else None
        self._calls = {text_key(text): step for text, step in (calls or {}).items()}
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._steps: list[Step] = []
        self._requests: list[dict] = []
        self._seq = 0
        self._connections_opened = 0
        self._connections_open = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------
    thread_name = "gemini-standin"

    def _new_server(self) -> ThreadingHTTPServer:
        return ThreadingHTTPServer((self._host, self._port), _make_handler(self))

    # -- script and inspection ---------------------------------------------------------
    def script(self, steps: list[dict[str, Any]]) -> None:
        """Replace the queued steps.

        Raises:
            ValueError: a step is malformed (nothing is replaced).
        """
        parsed = [Step.from_dict(step) for step in steps]
        with self._lock:
            self._steps = parsed

    def pending_steps(self) -> int:
        """How many scripted steps are still queued."""
        with self._lock:
            return len(self._steps)

    def last_seq(self) -> int:
        """The ``seq`` of the latest recorded call (0 before the first)."""
        with self._lock:
            return self._seq

    def connections(self) -> tuple[int, int]:
        """TCP connections clients made to the stand-in: (opened since start, open now)."""
        with self._lock:
            return self._connections_opened, self._connections_open

    def _connection(self, delta: int) -> None:
        with self._lock:
            self._connections_open += delta
            self._connections_opened += max(delta, 0)

    def requests(self, since_seq: int = 0) -> list[dict]:
        """Copies of the recorded generateContent calls with ``seq > since_seq``, oldest first."""
        with self._lock:
            return [json.loads(json.dumps(r)) for r in self._requests if r["seq"] > since_seq]

    # -- request handling (server threads) ----------------------------------------------
    def handle(self, method: str, raw_path: str, raw_body: bytes) -> Answer:
        """Answer one request; the HTTP handler's only entry point."""
        split = urlsplit(raw_path)
        if split.path.startswith("/__"):
            return self._control(method, split.path, parse_qs(split.query), raw_body)
        found = _GENERATE.match(split.path)
        if method != "POST" or found is None:
            return _error_answer({"code": 404, "message": f"not served by the stand-in: {method} {split.path}"})
        try:
            body = json.loads(raw_body.decode("utf-8")) if raw_body else {}
        except (UnicodeDecodeError, json.JSONDecodeError):
            return _error_answer({"code": 400, "message": "Invalid JSON payload received."})
        model = found.group("model")
        if self.on_request is not None:
            self.on_request(body)
        step, scripted = self._take_step(last_user_text(body))
        if step.delay_seconds:
            time.sleep(step.delay_seconds)
        answer = answer_step(step, model, body)
        self._record(split.path, model, body, answer, step.spec if scripted else {"unscripted": step.spec})
        return answer

    def _take_step(self, text: str) -> tuple[Step, bool]:
        with self._lock:
            for index, step in enumerate(self._steps):
                if step.when is not None and step.when in text:
                    return self._steps.pop(index), True
            for index, step in enumerate(self._steps):
                if step.when is None:
                    return self._steps.pop(index), True
        return self._calls.get(text_key(text)) or Step({"text": NO_SCRIPT_TEXT}), False

    def _control(self, method: str, path: str, query: dict[str, list[str]], raw_body: bytes) -> Answer:
        if path == HEALTH_PATH and method == "GET":
            return Answer(200, {"ok": True})
        if path == REQUESTS_PATH and method == "GET":
            try:
                since = int(query.get("since", ["0"])[0])
            except ValueError:
                return _error_answer({"code": 400, "message": "since must be an integer"})
            return Answer(200, self.requests(since))
        if path == SCRIPT_PATH and method == "POST":
            try:
                payload = json.loads(raw_body.decode("utf-8"))
                self.script(payload["steps"])
            except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                return _error_answer({"code": 400, "message": f"bad script: {exc}"})
            return Answer(200, {"queued": self.pending_steps()})
        return _error_answer({"code": 404, "message": "not found"})

    def _record(self, path: str, model: str, body: Any, answer: Answer, step: dict) -> None:
        with self._changed:
            self._seq += 1
            entry = {"seq": self._seq, "at": datetime.now(timezone.utc).isoformat(), "path": path,
                     "model": model, "body": body, "status": answer.status, "step": step}
            self._requests.append(entry)
            if self._record_path is not None:
                with self._record_path.open("a", encoding="utf-8") as sink:
                    sink.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")
            self._changed.notify_all()


def _make_handler(standin: GeminiStandin) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "GeminiStandin/1"
        disable_nagle_algorithm = True

        def setup(self) -> None:  # one call per TCP connection (keep-alive serves many requests on it)
            super().setup()
            standin._connection(+1)

        def finish(self) -> None:
            try:
                super().finish()
            finally:
                standin._connection(-1)

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self._send(_error_answer({"code": 413, "message": "Request too large"}), close=True)
                return
            raw_body = self.rfile.read(length) if length else b""
            try:
                answer = standin.handle(self.command, self.path, raw_body)
            except Exception as exc:  # a stand-in bug must show as a 500, not a hung client
                answer = _error_answer({"code": 500, "message": f"stand-in failure: {exc.__class__.__name__}"})
            self._send(answer)

        def _send(self, answer: Answer, close: bool = False) -> None:
            payload = (answer.body if answer.raw else json.dumps(answer.body, ensure_ascii=False)).encode("utf-8")
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in answer.headers.items():
                self.send_header(name, value)
            if close:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            try:
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to tell it

        do_GET = do_POST = _serve

        def log_message(self, format: str, *args: Any) -> None:  # stdlib signature
            return

    return Handler


def main(argv: list[str] | None = None) -> int:
    """Run the stand-in until SIGINT/SIGTERM; print ``{"url": ...}`` on stdout when ready."""
    parser = argparse.ArgumentParser(prog="python -m tools.gemini_standin", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8091, help="TCP port; 0 picks a free one")
    parser.add_argument("--record", type=Path, default=None, help="append every call as JSON lines here")
    parser.add_argument("--script", type=Path, default=None, help='a JSON file {"steps": [...]} to start with')
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES,
                        help="answer a text no step covers with the scripted call of the eval case of that input")
    args = parser.parse_args(argv)
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopped.set())
    with GeminiStandin(args.host, args.port, args.record, calls=scripted_calls(args.cases)) as standin:
        if args.script is not None:
            standin.script(json.loads(args.script.read_text(encoding="utf-8"))["steps"])
        print(json.dumps({"url": standin.url, "record": str(args.record) if args.record else None}), flush=True)
        stopped.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
