"""make run with LOCAL_MODEL=standin: the agent function and the Gemini stand-in start too, and a
free-text turn is answered by the model path end to end."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import free_run_ports
from tools.devserver import REPO, build_env, model_label

pytestmark = pytest.mark.slow


def test_devserver_standin_model_sets_the_base_url_and_starts_the_standin(tmp_path):
    config = build_env({"LOCAL_MODEL": "standin", "LOCAL_GEMINI_STANDIN_PORT": "9555"}, repo=tmp_path)
    assert config.start_gemini_standin and config.env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:9555"
    assert "LOCAL_MODEL=standin" in model_label(config.env)
    offline = build_env({}, repo=tmp_path)
    assert not offline.start_gemini_standin and "GOOGLE_GEMINI_BASE_URL" not in offline.env
    assert "gemini-standin" not in offline.ports and model_label(offline.env).startswith("offline router")
    external = build_env({"LOCAL_MODEL": "standin", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:1"}, repo=tmp_path)
    assert not external.start_gemini_standin and external.env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:1"


@pytest.mark.slow(seconds=14)
def test_devserver_headless_turn_goes_through_the_model_standin(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "GOOGLE_", "GEMINI_"))}
    env.update(free_run_ports())
    env.update(LOCAL_MODEL="standin", LOCAL_READER="model_first", LOCAL_HEADLESS="1", LOCAL_RICHMENU="0", LOCAL_STORE_URL=f"sqlite:///{tmp_path / 'run.sqlite3'}",
               LOCAL_RUN_DIR=str(tmp_path / "run"))  # its own run directory: other tests may run make run too
    lines = '{"text": "花壇有素食嗎？", "wait_seconds": 120}\n{"text": "我要預約"}\n'
    done = subprocess.run([sys.executable, "-m", "tools.devserver", "--start-timeout", "60"], cwd=REPO, env=env,
                          input=lines, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    places, menu = [json.loads(line) for line in done.stdout.splitlines()]
    assert "和米素食" in json.dumps(places, ensure_ascii=False) and "查蔬食" in json.dumps(menu, ensure_ascii=False)
    recorded = [json.loads(line) for line in (tmp_path / "run" / "gemini-calls.jsonl").read_text().splitlines()]
    assert any("花壇有素食嗎" in json.dumps(call["body"], ensure_ascii=False) for call in recorded)


def test_devserver_second_run_in_one_checkout_stops_with_the_first_ones_pid(tmp_path):
    import subprocess
    import sys

    from tools.devserver import hold_run_dir

    first = hold_run_dir(tmp_path)
    assert first is not None
    second = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                             "from tools.devserver import hold_run_dir; "
                             "sys.exit(0 if hold_run_dir(Path(sys.argv[1])) is None else 1)", str(tmp_path)],
                            capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert f"pid {os.getpid()}" in second.stderr and "another make run" in second.stderr
    first.close()  # the first run ended: the directory is free again
    again = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                            "from tools.devserver import hold_run_dir; "
                            "sys.exit(0 if hold_run_dir(Path(sys.argv[1])) is not None else 1)", str(tmp_path)],
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
