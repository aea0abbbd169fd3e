"""``make run`` puts LOCAL's rich menu on its LINE stand-in, so the chat page shows it under the chat."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
import requests

from tests.conftest import free_run_ports
from tools.demo import wait_until
from tools.devserver import DEV_SECRETS, REPO


def _font_note() -> str | None:
    from tools.richmenu import FontMissing, find_font

    try:
        find_font()
    except FontMissing as exc:
        return str(exc)
    return None


def _serve(tmp_path, **extra: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINE_", "LOCAL_", "GOOGLE_", "GEMINI_"))}
    env.update(free_run_ports())
    env.update(LOCAL_SERVE_ONLY="1", LOCAL_STORE_URL=f"sqlite:///{tmp_path / 'run.sqlite3'}",
               LOCAL_RUN_DIR=str(tmp_path / "run"), **extra)
    return subprocess.Popen([sys.executable, "-m", "tools.devserver", "--start-timeout", "60"], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _default_menu(standin: str) -> dict | None:
    headers = {"Authorization": f"Bearer {DEV_SECRETS['LINE_CHANNEL_ACCESS_TOKEN']}"}
    found = requests.get(f"{standin}/v2/bot/user/all/richmenu", headers=headers, timeout=5)
    if found.status_code != 200:
        return None
    return requests.get(f"{standin}/v2/bot/richmenu/{found.json()['richMenuId']}", headers=headers, timeout=5).json()


def _stop(server: subprocess.Popen) -> None:
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=60) == 0


@pytest.mark.slow(seconds=6)
def test_devserver_puts_the_rich_menu_on_its_stand_in(tmp_path):
    note = _font_note()
    if note:
        pytest.skip(f"the rich menu's image needs a CJK font: {note}")
    server = _serve(tmp_path)
    try:
        assert server.stdout is not None
        standin = json.loads(server.stdout.readline())["line_standin"]
        menu = wait_until(lambda: _default_menu(standin), 90)
        labels = {area["action"].get("displayText") or area["action"].get("text") for area in menu["areas"]}
        assert {"查活動", "查蔬食", "留下服務詢問", "我的偏好"} <= labels
    finally:
        _stop(server)


@pytest.mark.slow(seconds=4)
def test_devserver_with_local_richmenu_0_leaves_the_stand_in_without_a_menu(tmp_path):
    server = _serve(tmp_path, LOCAL_RICHMENU="0")
    try:
        assert server.stdout is not None
        standin = json.loads(server.stdout.readline())["line_standin"]
        assert _default_menu(standin) is None
        assert not (tmp_path / "run" / "richmenu.log").exists()
    finally:
        _stop(server)
