"""The process's model client at interpreter exit (shared/agent/client.py), in a new interpreter: the
async HTTP session the model turns used is closed by the client's atexit hook, not left to the OS."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow(seconds=6)

SCRIPT = """
import atexit
sessions = []
# registered before shared.agent.client's own hook, so it runs after it (atexit runs last-in first-out)
atexit.register(lambda: print("closed" if sessions and all(s.closed for s in sessions) else "open", flush=True))
from tools.gemini_standin import GeminiStandin
from shared.config import Settings
from shared.agent.client import run_on_model_loop, shared_model
standin = GeminiStandin().start()
settings = Settings.from_env({"LOCAL_MODEL": "standin", "GOOGLE_GEMINI_BASE_URL": standin.url})
client = shared_model(settings).api_client
standin.script([{"text": "ok"}])
answer = run_on_model_loop(client.aio.models.generate_content(model=settings.model_id, contents="x"),
                           timeout_seconds=20)
assert answer.text == "ok"
sessions.extend(client._api_client._aiohttp_sessions.values())
print("used", len(sessions), flush=True)
"""


def test_agent_client_exit_closes_the_async_session():
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["used", "1", "closed"]
