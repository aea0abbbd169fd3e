"""The deployed webhook's concurrency (cloudbuild.yaml: ``--concurrency`` and functions-framework's
``THREADS``) on Google's Firestore emulator: one process serves overlapping deliveries at once, each
answered once (docs/deploy.md, "Sizes")."""
from __future__ import annotations

import os
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from tests.conftest import TEST_SECRET, TEST_TOKEN, line_body, sign, text_event
from tests.deploy.test_cloudbuild import _env_pairs
from tests.deploy.test_infra import _deploy_flags
from tools.function_process import FunctionProcess
from tools.line_standin import LineStandin

REPLY = "/v2/bot/message/reply"


class OverlapStandin(LineStandin):
    """The LINE stand-in, counting the replies in flight at once (each held ``REPLY_SECONDS``)."""

    def __init__(self) -> None:
        super().__init__(access_token=TEST_TOKEN)
        self._flight = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0

    def handle(self, method, raw_path, headers, raw_body):
        if not raw_path.startswith(REPLY):
            return super().handle(method, raw_path, headers, raw_body)
        with self._flight:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            return super().handle(method, raw_path, headers, raw_body)
        finally:
            with self._flight:
                self.in_flight -= 1


def _post(url: str, body: bytes) -> int:
    return requests.post(url, data=body, timeout=30, headers={"Content-Type": "application/json",
                                                              "X-Line-Signature": sign(body)}).status_code


@pytest.mark.slow(seconds=8)
def test_webhook_at_its_deployed_threads_answers_overlapping_deliveries_on_firestore(firestore_emulator_host,
                                                                                    tmp_path):
    flags = _deploy_flags()["webhook"]
    threads = int(_env_pairs(flags["--set-env-vars"])["THREADS"])
    assert threads == int(flags["--concurrency"]) >= 8
    with OverlapStandin() as standin:
        # Each reply takes a LINE-like moment, well inside the webhook's budget and LINE timeout.
        standin.set_latency(REPLY, 0.4)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "FIRESTORE_"))}
        env.update({"LOCAL_STORE_URL": f"firestore://conc-{uuid.uuid4().hex[:10]}",
                    "FIRESTORE_EMULATOR_HOST": firestore_emulator_host, "THREADS": str(threads),
                    "LINE_CHANNEL_SECRET": TEST_SECRET, "LINE_CHANNEL_ACCESS_TOKEN": TEST_TOKEN,
                    "LINE_API_BASE_URL": standin.url, "LOCAL_TENANT_ID": "conc", "LOCAL_SIGNING_KEY": "conc-key",
                    "LOCAL_STORE_DEADLINE_SECONDS": "1.2"})  # as the e2e stack's webhook, under LINE's 2 s
        webhook = FunctionProcess("webhook", env, tmp_path / "webhook.log", start_timeout_seconds=60, preloaded=True)
        try:
            warm = line_body(text_event("選單", user_id="U" + "e" * 32))  # its first Firestore channel
            assert _post(webhook.url, warm) in (200, 503)
            _post(webhook.url, warm)
            events = [text_event("選單", user_id=f"U{i:032x}", reply_token=f"rt-conc-{i}") for i in range(threads)]
            bodies = [line_body(event) for event in events]
            start = threading.Barrier(threads)

            def deliver(body: bytes) -> int:
                start.wait(timeout=30)
                status = _post(webhook.url, body)
                for _ in range(4):  # LINE delivers a 503 again
                    if status != 503:
                        break
                    status = _post(webhook.url, body)
                return status

            with ThreadPoolExecutor(max_workers=threads) as pool:
                statuses = list(pool.map(deliver, bodies))
            assert statuses == [200] * threads, webhook.log_path.read_text()[-3000:]
            # each answered exactly once: at once, or (a delivery whose budget ran out on a busy emulator)
            # by the answer the webhook queued for itself a moment later (docs/delivery.md)
            for event in events:
                token = event["replyToken"]
                def replied(c, t=token):
                    return c["path"] == REPLY and c["body"].get("replyToken") == t
                assert len(standin.wait_for(replied, timeout_s=30)) == 1, token
            assert all(len(standin.calls(where=lambda c, t=e["replyToken"]: c["path"] == REPLY
                                         and c["body"].get("replyToken") == t)) == 1 for e in events)
            # One process had several deliveries in LINE's hands at once: it did not take them in turn.
            assert standin.most_in_flight >= 2
        finally:
            webhook.stop()
