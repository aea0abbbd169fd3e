"""``make richmenu`` as a process against the LINE stand-in: the first run creates, uploads and sets one
menu; a second run creates nothing, which the stand-in's recorded calls show."""
from __future__ import annotations

import io
import json
import os
import subprocess

import pytest

from shared.line import limits
from shared.replies import richmenu
from tests.conftest import REPO
from tools import richmenu as tool
from tools.line_standin import DEFAULT_RICH_MENU_PATH, RICH_MENU_PATH, LineStandin

Image = pytest.importorskip("PIL.Image", reason="Pillow (requirements-dev.lock) reads the uploaded image")
TOKEN = "richmenu-command-token-0123456789"

pytestmark = pytest.mark.slow(seconds=15)


@pytest.fixture(scope="module")
def standin():
    try:
        tool.find_font()
    except tool.FontMissing as exc:
        pytest.skip(f"make richmenu cannot draw the labels: {exc}")
    with LineStandin(access_token=TOKEN) as running:
        yield running


def _make_richmenu(standin) -> tuple[dict, list[dict]]:
    """Run ``make richmenu``; return its JSON line and the LINE calls it made."""
    since = standin.calls()[-1]["seq"] if standin.calls() else 0
    # Make's own variables out (a nested make would print "Entering directory" lines on stdout), and
    # every LINE_/LOCAL_ variable of the caller: the tool sees only the stand-in and its token.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LINE_", "LOCAL_")) and k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    env.update({"LINE_API_BASE_URL": standin.url, "LINE_CHANNEL_ACCESS_TOKEN": TOKEN})
    done = subprocess.run(["make", "--no-print-directory", "richmenu"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert TOKEN not in done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), standin.calls(since)


def _writes(calls: list[dict]) -> list[tuple[str, str]]:
    return [(c["method"], c["path"]) for c in calls if c["method"] != "GET"]


def test_make_richmenu_first_run_sets_one_menu_second_run_creates_nothing(standin):
    first, first_calls = _make_richmenu(standin)
    second, second_calls = _make_richmenu(standin)

    menu_id = first["rich_menu_id"]
    assert (first["created"], first["uploaded"], first["set_default"], first["deleted"]) == (True, True, True, [])
    assert _writes(first_calls) == [("POST", RICH_MENU_PATH), ("POST", f"{RICH_MENU_PATH}/{menu_id}/content"),
                                    ("POST", f"{DEFAULT_RICH_MENU_PATH}/{menu_id}")]
    assert all(c["status"] == 200 for c in first_calls if c["method"] == "POST")
    # The second run only reads: the same image and areas are there, and already the default.
    assert second == {**first, "created": False, "uploaded": False, "set_default": False}
    assert _writes(second_calls) == [] and second_calls

    [upload] = [c for c in first_calls if c["path"].endswith("/content")]
    assert upload["body"]["contentType"] == "image/png" and upload["body"]["bytes"] <= limits.RICH_MENU_IMAGE_BYTES
    [created] = [c for c in first_calls if c["path"] == RICH_MENU_PATH]
    assert [area["action"]["data"] for area in created["body"]["areas"]] == [t.data for t in richmenu.TILES]
    assert created["body"]["name"] == tool.NAME_PREFIX + first["content_hash"]


def test_make_richmenu_uploaded_image_is_the_menus_size(standin):
    result, _ = _make_richmenu(standin)

    import requests

    response = requests.get(f"{standin.url}{RICH_MENU_PATH}/{result['rich_menu_id']}/content", timeout=10,
                            headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200 and response.headers["Content-Type"] == "image/png"
    with Image.open(io.BytesIO(response.content)) as image:
        assert image.size == (richmenu.WIDTH, richmenu.HEIGHT)
    assert len(response.content) <= limits.RICH_MENU_IMAGE_BYTES
