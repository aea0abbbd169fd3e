# Cloud Tasks: the handoff reconcile queue and the queued-events queue (target functions/agent).
# Their retry policy equals shared/config.py's queue settings, which the embedded queue uses and
# reconcile reads (LOCAL_QUEUE_MAX_ATTEMPTS decides when an attempt is the last). The dispatch
# deadline is per task: shared/queue/cloudtasks.py sets it (LOCAL_QUEUE_DISPATCH_DEADLINE_SECONDS),
# below every target's --timeout in cloudbuild.yaml.

resource "google_cloud_tasks_queue" "queue" {
  for_each = local.queues
  name     = each.value
  location = var.region

  retry_config {
    max_attempts       = var.queue_max_attempts
    min_backoff        = "${var.queue_min_backoff_seconds}s"
    max_backoff        = "${var.queue_max_backoff_seconds}s"
    max_doublings      = var.queue_max_doublings
    max_retry_duration = "0s"
  }

  rate_limits {
    max_dispatches_per_second = var.queue_max_dispatches_per_second
    max_concurrent_dispatches = var.queue_max_concurrent_dispatches
  }

  stackdriver_logging_config {
    sampling_ratio = 1.0
  }

  depends_on = [google_project_service.apis]
}

# Cloud Scheduler: the re-queue sweep. Serverless instances get no CPU after answering and cold
# starts are not a schedule, so the start-up re-queue (shared/sweep.py, requeue_at_start) also runs here:
# POST {"kind": "handoff_sweep"} to reconcile with an OIDC token of the tasks invoker.
resource "google_cloud_scheduler_job" "sweep" {
  name             = "handoff-requeue-sweep"
  region           = var.region
  description      = "Re-queue what the store shows unsettled: confirmations, undelivered notices, unanswered queued events."
  schedule         = var.sweep_schedule
  time_zone        = "Asia/Taipei"
  attempt_deadline = "60s"

  retry_config {
    retry_count = 1
  }

  http_target {
    http_method = "POST"
    uri         = local.function_urls["reconcile"]
    headers     = { "Content-Type" = "application/json" }
    body        = base64encode(jsonencode({ kind = "handoff_sweep" }))

    oidc_token {
      service_account_email = google_service_account.tasks.email
      audience              = local.function_urls["reconcile"]
    }
  }

  depends_on = [google_project_service.apis]
}

# Cloud Scheduler: the daily events ingestion (functions/ingest), same OIDC identity; ingest checks
# it (LOCAL_INGEST_CALLER_EMAIL = the tasks invoker, INGEST_FUNCTION_URL = the audience).
resource "google_cloud_scheduler_job" "ingest" {
  name             = "events-ingest"
  region           = var.region
  description      = "Fetch Changhua County's activities from TDX into a new events snapshot."
  schedule         = var.ingest_schedule
  time_zone        = "Asia/Taipei"
  attempt_deadline = "300s"

  retry_config {
    retry_count = 2
  }

  http_target {
    http_method = "POST"
    uri         = local.function_urls["ingest"]
    headers     = { "Content-Type" = "application/json" }
    body        = base64encode(jsonencode({}))

    oidc_token {
      service_account_email = google_service_account.tasks.email
      audience              = local.function_urls["ingest"]
    }
  }

  depends_on = [google_project_service.apis]
}
