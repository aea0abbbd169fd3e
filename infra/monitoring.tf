# Observability: log-based metrics over the lines the functions write, alert policies on them, a
# notification channel and a dashboard.
#
# shared/logs.py writes one JSON object per line on stderr; Cloud Logging keeps its fields under
# jsonPayload (jsonPayload.message is the line's message) and files each line under the function's
# Cloud Run service (resource.type "cloud_run_revision", resource.labels.service_name). Every filter
# below names messages and fields that the code writes today: tests/deploy/test_monitoring.py reads
# every log(...) call in shared/ and functions/ and fails on a message or a field no call writes.
# A line written for a request also carries its trace (shared/trace.py) in Cloud Logging's special
# fields, which Cloud Logging lifts out of jsonPayload into the entry's trace, spanId and
# traceSampled: no filter here reads them; docs/runbook.md, "Following one event", does.
# docs/runbook.md: for each alert, what it means, a log query to look, and what to do.

locals {
  # Every line a 2nd-gen function writes is an entry of its Cloud Run service.
  function_logs = "resource.type=\"cloud_run_revision\""

  # Counters (DELTA, INT64): one per matching line, labelled with the function that wrote it.
  log_metrics = {
    webhook_slow_answers = {
      description = "Webhook deliveries answered in 2 s or more, LINE's answer budget (shared/webhook/service.py: 'webhook handled', elapsed_ms)."
      filter      = "jsonPayload.message=\"webhook handled\" AND jsonPayload.elapsed_ms>=2000"
    }
    webhook_redelivery_asked = {
      description = "Webhook deliveries answered 503 so that LINE delivers them again (shared/webhook/service.py: 'webhook handled', retry > 0)."
      filter      = "jsonPayload.message=\"webhook handled\" AND jsonPayload.retry>0"
    }
    reply_unknown = {
      description = "Events finished with a reply of unknown outcome, never repeated (shared/webhook/service.py: 'event finished', outcome reply_unknown)."
      filter      = "jsonPayload.message=\"event finished\" AND jsonPayload.outcome=\"reply_unknown\""
    }
    sends_refused = {
      description = "Replies and pushes that LINE refused (delivery refused: a 4xx other than a rate-limit 429; a push refused for the monthly limit is counted here too, and by push_monthly_limit), on every send path."
      filter      = "jsonPayload.delivery=\"refused\" AND (jsonPayload.message=\"reply not delivered\" OR jsonPayload.message=\"queued answer not delivered\" OR jsonPayload.message=\"reconcile push failed\" OR jsonPayload.message=\"staff notice push failed\" OR jsonPayload.message=\"follow-up push failed\")"
    }
    tasks_exhausted = {
      description = "Cloud Tasks attempts that failed on the queue's last attempt: the task is dropped (retry_count is X-CloudTasks-TaskRetryCount; the last is queue_max_attempts - 1)."
      filter      = "(jsonPayload.message=\"reconcile answered\" OR jsonPayload.message=\"queued event answered\" OR jsonPayload.message=\"staff task answered\") AND jsonPayload.status>=500 AND jsonPayload.retry_count>=${var.queue_max_attempts - 1}"
    }
    needs_human_followup = {
      description = "Handoff operations reconcile could not settle: a person must follow up (shared/handoff/reconcile_notify.py)."
      filter      = "(jsonPayload.message=\"operation needs human follow-up\" OR jsonPayload.message=\"needs_human_followup could not be recorded\")"
    }
    staff_reminders = {
      description = "Staff sweeps that reminded staff of a request awaiting acceptance past LOCAL_STAFF_REMIND_AFTER_SECONDS (shared/staff/reminders.py: 'staff sweep done', reminders > 0)."
      filter      = "jsonPayload.message=\"staff sweep done\" AND jsonPayload.reminders>0"
    }
    model_turns = {
      description = "Turns the model answered or tried to (shared/turn/engine.py: 'turn', source model)."
      filter      = "jsonPayload.message=\"turn\" AND jsonPayload.source=\"model\""
    }
    model_failures = {
      description = "Model turns that failed or could not start: timeout, upstream unavailable, quota (shared/agent/agent.py)."
      filter      = "(jsonPayload.message=\"model turn failed\" OR jsonPayload.message=\"model turn not started\")"
    }
    push_quota_nearly_used = {
      description = "Sweeps that read LINE's push quota at 80% or more of the month's limit (shared/staff/quota.py: 'line push quota nearly used'; the staff group is warned once a month)."
      filter      = "jsonPayload.message=\"line push quota nearly used\""
    }
    push_monthly_limit = {
      description = "Pushes LINE refused because the month's messages are used up (429 'You have reached your monthly limit.'; shared/outbox.py): never retried, each notice on the staff follow-up list."
      filter      = "jsonPayload.message=\"push refused: monthly limit\""
    }
    events_snapshot_stale = {
      description = "Events ingest runs after which the events data residents are answered from is older than LOCAL_EVENTS_STALE_AFTER_SECONDS since the source last confirmed it (shared/events/ingest.py: 'events snapshot stale')."
      filter      = "jsonPayload.message=\"events snapshot stale\""
    }
    ingest_failures = {
      description = "Events ingest runs that left the snapshot as it was: fetch failed, no valid record, store error, refused caller (shared/events/ingest.py, functions/ingest)."
      filter      = "(jsonPayload.message=\"events fetch failed\" OR jsonPayload.message=\"events fetch had no valid record\" OR jsonPayload.message=\"ingest store error\" OR jsonPayload.message=\"ingest call refused\")"
    }
  }

  # Threshold alerts on one counter: more than `above` matching lines summed over `window`.
  counter_alerts = {
    webhook_slow_answers   = { title = "Webhook answers over 2 s", above = 5, window = "900s", severity = "WARNING" }
    reply_unknown          = { title = "Replies of unknown outcome", above = 2, window = "3600s", severity = "WARNING" }
    sends_refused          = { title = "LINE refused a reply or push", above = 0, window = "900s", severity = "ERROR" }
    tasks_exhausted        = { title = "Task failed its last attempt", above = 0, window = "300s", severity = "CRITICAL" }
    needs_human_followup   = { title = "Handoff needs human follow-up", above = 0, window = "300s", severity = "CRITICAL" }
    staff_reminders        = { title = "Request waiting for staff", above = 0, window = "300s", severity = "WARNING" }
    ingest_failures        = { title = "Events ingest failed", above = 0, window = "3600s", severity = "WARNING" }
    push_quota_nearly_used = { title = "LINE pushes nearly used up this month", above = 0, window = "3600s", severity = "WARNING" }
    push_monthly_limit     = { title = "LINE refused pushes: monthly limit", above = 0, window = "300s", severity = "CRITICAL" }
    events_snapshot_stale  = { title = "Events data out of date", above = 0, window = "3600s", severity = "ERROR" }
  }

  # Ratio alerts: the share of one count in another over `window`, above `above`. The webhook's 5xx
  # among all its answers comes from Cloud Run's own request_count (by response code class): a 503
  # is the webhook asking LINE to deliver again, a 500 a crash that no line of ours records.
  ratio_alerts = {
    webhook_5xx = {
      title       = "Webhook 5xx rate"
      description = "More than 5% of the webhook's answers over 5 minutes were 5xx."
      numerator   = "metric.type=\"run.googleapis.com/request_count\" AND resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"webhook\" AND metric.labels.response_code_class=\"5xx\""
      denominator = "metric.type=\"run.googleapis.com/request_count\" AND resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"webhook\""
      above       = 0.05
      window      = "300s"
      duration    = "300s"
      aligner     = "ALIGN_DELTA"
      severity    = "ERROR"
    }
    model_failures = {
      title       = "Model failure rate"
      description = "More than 20% of the model's turns over 15 minutes failed or could not start."
      numerator   = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.counter["model_failures"].name}\" AND resource.type=\"cloud_run_revision\""
      denominator = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.counter["model_turns"].name}\" AND resource.type=\"cloud_run_revision\""
      above       = 0.2
      window      = "900s"
      duration    = "0s"
      aligner     = "ALIGN_SUM"
      severity    = "ERROR"
    }
  }

  # One entry per alert policy: the counters' (a sum over the window, no denominator) and the ratios.
  alerts = merge({
    for key, alert in local.counter_alerts : key => merge(alert, {
      description = local.log_metrics[key].description
      numerator   = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.counter[key].name}\" AND resource.type=\"cloud_run_revision\""
      denominator = null
      duration    = "0s"
      aligner     = "ALIGN_SUM"
    })
  }, local.ratio_alerts)

  notification_channels = concat(var.notification_channels, google_monitoring_notification_channel.email[*].name)
}

resource "google_logging_metric" "counter" {
  for_each    = local.log_metrics
  name        = "local/${each.key}"
  description = each.value.description
  filter      = "${local.function_logs} AND ${each.value.filter}"

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
    unit        = "1"
    labels {
      key         = "service"
      value_type  = "STRING"
      description = "The function (Cloud Run service) that wrote the line."
    }
  }
  label_extractors = {
    service = "EXTRACT(resource.labels.service_name)"
  }

  depends_on = [google_project_service.apis]
}

# How long the webhook took per delivery, for the dashboard's percentiles.
resource "google_logging_metric" "webhook_elapsed_ms" {
  name            = "local/webhook_elapsed_ms"
  description     = "Time the webhook took per delivery, in ms (shared/webhook/service.py: 'webhook handled', elapsed_ms)."
  filter          = "${local.function_logs} AND jsonPayload.message=\"webhook handled\""
  value_extractor = "EXTRACT(jsonPayload.elapsed_ms)"

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "DISTRIBUTION"
    unit        = "ms"
  }
  bucket_options {
    exponential_buckets {
      num_finite_buckets = 24
      growth_factor      = 1.4
      scale              = 10
    }
  }

  depends_on = [google_project_service.apis]
}

resource "google_monitoring_notification_channel" "email" {
  count        = var.alert_email == "" ? 0 : 1
  display_name = "LOCAL operator"
  type         = "email"
  labels = {
    email_address = var.alert_email
  }
  depends_on = [google_project_service.apis]
}

# Every alert: `numerator` over `window` (divided by `denominator` for a ratio) above `above`.
resource "google_monitoring_alert_policy" "alert" {
  for_each              = local.alerts
  display_name          = "LOCAL: ${each.value.title}"
  combiner              = "OR"
  severity              = each.value.severity
  notification_channels = local.notification_channels

  conditions {
    display_name = "${each.value.title}: above ${each.value.above} over ${each.value.window}"
    condition_threshold {
      filter                  = each.value.numerator
      denominator_filter      = each.value.denominator
      comparison              = "COMPARISON_GT"
      threshold_value         = each.value.above
      duration                = each.value.duration
      evaluation_missing_data = "EVALUATION_MISSING_DATA_INACTIVE"
      aggregations {
        alignment_period     = each.value.window
        per_series_aligner   = each.value.aligner
        cross_series_reducer = "REDUCE_SUM"
      }
      dynamic "denominator_aggregations" {
        for_each = each.value.denominator == null ? [] : [each.value.aligner]
        content {
          alignment_period     = each.value.window
          per_series_aligner   = denominator_aggregations.value
          cross_series_reducer = "REDUCE_SUM"
        }
      }
    }
  }

  alert_strategy {
    auto_close = "86400s"
  }

  documentation {
    mime_type = "text/markdown"
    content   = "${each.value.description}\n\nWhat it means, a log query, what to do: docs/runbook.md, \"${each.value.title}\"."
  }

  depends_on = [google_project_service.apis]
}

resource "google_monitoring_dashboard" "local" {
  dashboard_json = jsonencode({
    displayName = "LOCAL"
    mosaicLayout = {
      columns = 48
      tiles = concat(
        [
          {
            xPos = 0, yPos = 0, width = 24, height = 16
            widget = {
              title = "Webhook answers by response class (Cloud Run)"
              xyChart = {
                dataSets = [{
                  plotType = "STACKED_BAR"
                  timeSeriesQuery = {
                    timeSeriesFilter = {
                      filter = "metric.type=\"run.googleapis.com/request_count\" AND resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"webhook\""
                      aggregation = {
                        alignmentPeriod    = "300s"
                        perSeriesAligner   = "ALIGN_DELTA"
                        crossSeriesReducer = "REDUCE_SUM"
                        groupByFields      = ["metric.label.response_code_class"]
                      }
                    }
                  }
                }]
              }
            }
          },
          {
            xPos = 24, yPos = 0, width = 24, height = 16
            widget = {
              title = "Webhook time per delivery, p50 and p95 (ms; LINE's budget is 2000)"
              xyChart = {
                dataSets = [for aligner in ["ALIGN_PERCENTILE_50", "ALIGN_PERCENTILE_95"] : {
                  plotType = "LINE"
                  timeSeriesQuery = {
                    timeSeriesFilter = {
                      filter = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.webhook_elapsed_ms.name}\" AND resource.type=\"cloud_run_revision\""
                      aggregation = {
                        alignmentPeriod    = "300s"
                        perSeriesAligner   = aligner
                        crossSeriesReducer = "REDUCE_MAX"
                      }
                    }
                  }
                }]
              }
            }
          },
        ],
        [for i, key in sort(keys(local.log_metrics)) : {
          xPos   = (i % 3) * 16
          yPos   = 16 + floor(i / 3) * 12
          width  = 16
          height = 12
          widget = {
            title = key
            xyChart = {
              dataSets = [{
                plotType = "STACKED_BAR"
                timeSeriesQuery = {
                  timeSeriesFilter = {
                    filter = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.counter[key].name}\" AND resource.type=\"cloud_run_revision\""
                    aggregation = {
                      alignmentPeriod    = "300s"
                      perSeriesAligner   = "ALIGN_SUM"
                      crossSeriesReducer = "REDUCE_SUM"
                      groupByFields      = ["metric.label.service"]
                    }
                  }
                }
              }]
            }
          }
        }]
      )
    }
  })

  depends_on = [google_project_service.apis]
}
