"""infra/monitoring.tf against the code's own log lines and docs/runbook.md: every log-based metric's
filter names messages the code logs and fields those very log calls write; every alert notifies the
channel variable and has its runbook section; the dashboard shows every metric."""
from __future__ import annotations

import ast
import re
from functools import cache

from shared.config import Settings
from tests.deploy.deploy_support import REPO, hcl_text, locals_, resources, variables

#: Metrics of Google's own that a filter may name (Cloud Run's request count, by response code class).
BUILT_IN_METRICS = {"run.googleapis.com/request_count"}

FIELD_TEST = re.compile(r'jsonPayload\.([A-Za-z_]+)(>=|<=|!=|=|>|<)("[^"]*"|\$\{[^}]*\}|-?[\d.]+)')


@cache
def log_calls() -> dict[str, set[str]]:
    """``{message: the field names its log(...) calls write}`` for every ``log(SEVERITY, "message",
    field=...)`` in shared/ and functions/ whose message is a literal (``**fields`` adds none)."""
    calls: dict[str, set[str]] = {}
    for path in [*REPO.glob("shared/**/*.py"), *REPO.glob("functions/*/main.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "log"
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                    and isinstance(node.args[1].value, str)):
                fields = {k.arg for k in node.keywords if k.arg and k.arg != "exc_info"}
                calls.setdefault(node.args[1].value, set()).update(fields)
    return calls


@cache
def code_strings() -> set[str]:
    """Every string literal in shared/ (enum values such as ``reply_unknown`` among them)."""
    return {node.value for path in REPO.glob("shared/**/*.py") for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def _metrics() -> dict[str, dict]:
    return locals_()["log_metrics"]


def _filter(key: str) -> str:
    return hcl_text(_metrics()[key]["filter"])


def _messages(text: str) -> list[str]:
    return re.findall(r'jsonPayload\.message="([^"]+)"', text)


def test_monitoring_metric_filters_name_messages_and_fields_the_code_writes():
    # The reader sees the code's lines with their fields (a reader that saw nothing would pass all).
    assert log_calls()["webhook handled"] >= {"events", "retry", "elapsed_ms"}
    assert "delivery" in log_calls()["reply not delivered"] and len(log_calls()) > 100
    assert len(_metrics()) >= 9
    for key in _metrics():
        text = _filter(key)
        messages = _messages(text)
        assert messages, f"{key}: a filter on the code's lines names their message"
        for message in messages:
            assert message in log_calls(), f"{key}: no log call writes {message!r}"
        for field, _op, value in FIELD_TEST.findall(text):
            if field == "message":
                continue
            for message in messages:  # every line the filter can match writes the field
                assert field in log_calls()[message], f"{key}: {message!r} has no field {field!r}"
            if value.startswith('"'):
                assert value.strip('"') in code_strings(), f"{key}: {field}={value} is not a value the code writes"
        rest = FIELD_TEST.sub("", text).replace("(", " ").replace(")", " ").split()
        assert set(rest) <= {"AND", "OR"}, f"{key}: filter has terms this test cannot check: {rest}"


def test_monitoring_metrics_are_counters_of_the_functions_lines():
    metric = resources("google_logging_metric")["counter"]
    assert metric["for_each"] == "local.log_metrics" and metric["name"] == "local/${each.key}"
    assert hcl_text(metric["filter"]) == "${local.function_logs} AND ${each.value.filter}"
    assert hcl_text(locals_()["function_logs"]) == 'resource.type="cloud_run_revision"'
    descriptor = metric["metric_descriptor"][0]
    assert (descriptor["metric_kind"], descriptor["value_type"]) == ("DELTA", "INT64")
    elapsed = resources("google_logging_metric")["webhook_elapsed_ms"]
    assert hcl_text(elapsed["value_extractor"]) == "EXTRACT(jsonPayload.elapsed_ms)"
    assert "elapsed_ms" in log_calls()[_messages(hcl_text(elapsed["filter"]))[0]]


def test_monitoring_last_attempt_is_the_queues_last():
    # Cloud Tasks' X-CloudTasks-TaskRetryCount is 0 on the first attempt: the last is max_attempts - 1.
    text = _filter("tasks_exhausted")
    assert "jsonPayload.retry_count>=${var.queue_max_attempts - 1}" in text
    assert variables()["queue_max_attempts"]["default"] == Settings.from_env({}).queue_max_attempts


def _alerts() -> dict[str, dict]:
    """``{key: its entry in local.counter_alerts or local.ratio_alerts}`` (local.alerts merges them)."""
    return locals_()["counter_alerts"] | locals_()["ratio_alerts"]


def test_monitoring_every_fault_signal_has_an_alert():
    assert set(locals_()["counter_alerts"]) <= set(_metrics())
    assert {"webhook_slow_answers", "reply_unknown", "sends_refused", "tasks_exhausted", "needs_human_followup",
            "staff_reminders", "ingest_failures", "push_quota_nearly_used", "push_monthly_limit",
            "events_snapshot_stale"} <= set(locals_()["counter_alerts"])
    assert set(locals_()["ratio_alerts"]) == {"webhook_5xx", "model_failures"}
    merged = str(locals_()["alerts"])
    assert "local.counter_alerts" in merged and "local.ratio_alerts" in merged
    assert resources("google_monitoring_alert_policy")["alert"]["for_each"] == "local.alerts"


def _metric_type(text: str) -> str:
    return re.search(r'metric\.type="((?:\$\{[^}]*\}|[^"$])+)"', text).group(1)


def _user_metric(metric: str) -> str | None:
    """The log-based metric a ``metric.type`` names (``…/user/${google_logging_metric.counter[K].name}``)."""
    m = re.fullmatch(r'logging\.googleapis\.com/user/\$\{google_logging_metric\.counter\[(key|"\w+")\]\.name\}', metric)
    return m.group(1).strip('"') if m else None


def test_monitoring_alert_conditions_read_existing_metrics_and_notify_the_channels():
    policy = resources("google_monitoring_alert_policy")["alert"]
    assert policy["notification_channels"] == "local.notification_channels"
    assert "docs/runbook.md" in hcl_text(policy["documentation"][0]["content"])
    threshold = policy["conditions"][0]["condition_threshold"][0]
    assert (threshold["filter"], threshold["denominator_filter"]) == ("each.value.numerator", "each.value.denominator")
    # A counter alert's metric is its own key's counter; a ratio's, counters or Cloud Run's own.
    merged = hcl_text(str(locals_()["alerts"]))
    assert _user_metric(_metric_type(merged[merged.index("numerator"):])) == "key"
    assert re.search(r"denominator\s*=\s*null", merged)
    for key, alert in locals_()["ratio_alerts"].items():
        for side in ("numerator", "denominator"):
            metric = _metric_type(hcl_text(alert[side]))
            user = _user_metric(metric)
            assert (user in _metrics()) if user else (metric in BUILT_IN_METRICS), (key, metric)
    channels = variables()["notification_channels"]
    assert channels["type"] == "list(string)" and channels["default"] == []
    assert "var.notification_channels" in str(locals_()["notification_channels"])


def test_monitoring_dashboard_shows_every_metric():
    dashboard = str(resources("google_monitoring_dashboard")["local"]["dashboard_json"])
    assert "for i, key in sort(keys(local.log_metrics))" in dashboard
    assert "google_logging_metric.counter[key].name" in dashboard
    assert "google_logging_metric.webhook_elapsed_ms.name" in dashboard
    assert "run.googleapis.com/request_count" in dashboard


def _runbook_sections() -> dict[str, str]:
    text = (REPO / "docs" / "runbook.md").read_text()
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def test_runbook_has_a_section_per_alert_with_meaning_query_and_action():
    sections = _runbook_sections()
    metric_of = {k: k for k in locals_()["counter_alerts"]} | {"model_failures": "model_failures"}
    for key, alert in _alerts().items():
        title = alert["title"]
        assert title in sections, f"docs/runbook.md has no section '## {title}'"
        body = sections[title]
        for heading in ("What it means", "Look", "What to do"):
            assert f"**{heading}**" in body, (title, heading)
        queries = re.findall(r"```\n(.*?)```", body, re.S)
        assert queries, f"{title}: no log query"
        if key in metric_of:  # the query finds the same lines the alert counts
            for message in _messages(_filter(metric_of[key])):
                assert any(f'jsonPayload.message="{message}"' in q for q in queries), (title, message)
