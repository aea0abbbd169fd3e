"""LINE's push quota in the sweep (shared/staff/quota.py): read at most once per sweep window,
logged, and the staff group warned once per Asia/Taipei month at 80% of the limit, through the real
SDK gateway and the LINE stand-in's quota endpoints, with an injected clock."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from shared.handoff.requeue import sweep_round
from shared.line.messaging import SdkLineGateway
from shared.push_count import PushCounter
from shared.staff import quota
from shared.sweep import sweep
from tests.conftest import TEST_TOKEN, FixedClock, all_text
from tests.unit.staff.conftest import GROUP, PUSH

#: 2026-11-30 23:50 in Taipei: ten minutes before December there (still 11/30 15:50 UTC).
NOVEMBER_END = datetime(2026, 11, 30, 15, 50, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def _info_lines(caplog):
    from shared.logs import configure

    configure()  # the project's handler first, so that caplog's sees the lines too
    caplog.set_level("INFO", logger="local")


@pytest.fixture
def line(line_standin):
    return SdkLineGateway(line_standin.url, TEST_TOKEN)


def warnings_told(line_standin) -> list[str]:
    return [all_text(c["body"]["messages"]) for c in line_standin.calls()
            if c["path"] == PUSH and c["status"] == 200 and c["body"]["to"] == GROUP]


def next_window(settings, clock: FixedClock) -> None:
    """Move the clock into the next sweep window."""
    start = sweep_round(settings, clock())
    while sweep_round(settings, clock()) == start:
        clock.at += timedelta(seconds=60)


def logged(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records]


def test_quota_below_80_percent_is_logged_and_warns_nobody(settings, store, line, line_standin, caplog):
    line_standin.set_quota(200, used=159)
    check = quota.check(settings, store, line, clock=FixedClock(NOVEMBER_END))
    assert (check.outcome, check.warned) == ("read", False)
    assert warnings_told(line_standin) == []
    assert "line quota read" in logged(caplog) and "line push quota nearly used" not in logged(caplog)


def test_quota_warning_once_per_month_in_plain_words(settings, store, line, line_standin, caplog):
    clock = FixedClock(NOVEMBER_END - timedelta(hours=3))
    line_standin.set_quota(200, used=160)  # 80%
    first = quota.check(settings, store, line, clock=clock)
    assert (first.outcome, first.warned) == ("nearly_used", True)
    [told] = warnings_told(line_standin)
    assert "11月" in told and "160" in told and "200" in told and "80%" in told
    assert "送不出去" in told and "每月 1 日" in told
    assert "line push quota nearly used" in logged(caplog)
    # the same window: LINE is not asked again
    assert quota.check(settings, store, line, clock=clock).outcome == "skipped"
    # a later window of the same month: read and logged again, never a second warning
    next_window(settings, clock)
    again = quota.check(settings, store, line, clock=clock)
    assert (again.outcome, again.warned) == ("nearly_used", False)
    assert len(warnings_told(line_standin)) == 1
    assert len([c for c in line_standin.calls() if c["path"] == "/v2/bot/message/quota"]) == 2
    assert logged(caplog).count("line push quota nearly used") == 2


def test_quota_warning_again_in_the_next_taipei_month_only(settings, store, line, line_standin):
    clock = FixedClock(NOVEMBER_END - timedelta(hours=1))  # 22:50 on 11/30 in Taipei
    line_standin.set_quota(200, used=190)
    assert quota.check(settings, store, line, clock=clock).warned
    next_window(settings, clock)
    assert clock().month == 11 and (clock() + timedelta(hours=8)).day == 30  # still November in Taipei
    assert quota.check(settings, store, line, clock=clock).outcome == "nearly_used"
    assert len(warnings_told(line_standin)) == 1
    clock.at = NOVEMBER_END + timedelta(minutes=11)  # 00:01 on 12/1 in Taipei, 11/30 in UTC
    next_window(settings, clock)
    assert clock().astimezone(timezone.utc).month == 11
    assert quota.check(settings, store, line, clock=clock).warned
    told = warnings_told(line_standin)
    assert len(told) == 2 and "12月" in told[1]


def test_quota_warning_push_that_failed_is_pushed_in_a_later_window_once(settings, store, line, line_standin):
    clock = FixedClock(NOVEMBER_END - timedelta(hours=2))
    line_standin.set_quota(100, used=95)
    line_standin.fail_next(PUSH, 500)
    assert not quota.check(settings, store, line, clock=clock).warned
    next_window(settings, clock)
    assert quota.check(settings, store, line, clock=clock).warned
    next_window(settings, clock)
    assert not quota.check(settings, store, line, clock=clock).warned
    assert len(warnings_told(line_standin)) == 1


def test_quota_unreadable_or_unlimited_warns_nobody(settings, store, line, line_standin):
    clock = FixedClock(NOVEMBER_END)
    line_standin.fail_next("/v2/bot/message/quota", 500)
    assert quota.check(settings, store, line, clock=clock).outcome == "unreadable"
    next_window(settings, clock)
    line_standin.set_quota(None, used=5000)
    assert quota.check(settings, store, line, clock=clock).outcome == "read"
    assert warnings_told(line_standin) == []


def test_quota_is_read_by_the_project_sweep_and_the_warning_is_counted(settings, store, line, line_standin):
    line_standin.set_quota(10, used=9)
    counts = sweep(settings, store, None, None, now=NOVEMBER_END, line=line)
    assert counts["quota_warned"] == 1
    assert sweep(settings, store, None, None, now=NOVEMBER_END, line=line)["quota_warned"] == 0
    assert "quota_warned" not in sweep(settings, store, None, None, now=NOVEMBER_END)
    assert PushCounter(store, settings.tenant_id, FixedClock(NOVEMBER_END)).this_month().by_flow == {"quota_warning": 1}


def test_quota_check_a_store_that_refuses_the_window_never_fails_the_sweep(settings, line, line_standin, caplog):
    from tests.unit.conftest import store_at

    line_standin.set_quota(10, used=10)
    read_only = store_at(settings.store_url, deadline_seconds=2.0, read_only=True)
    assert sweep(settings, read_only, None, None, now=NOVEMBER_END, line=line)["quota_warned"] == 0
    assert "line quota not checked" in logged(caplog)
    assert [c for c in line_standin.calls() if c["path"].startswith("/v2/bot/message/quota")] == []
