"""The Cloud Tasks adapter's imports, in a new interpreter: importing the queue modules and the wiring
does not load the client library (it is loaded on first enqueue)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow


def test_cloud_tasks_importing_the_queue_does_not_load_the_client_library():
    probe = ("import sys, shared.queue, shared.queue.embedded, shared.queue.cloudtasks, shared.wiring; "
             "print(any(m.startswith('google.cloud.tasks') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"
