# Inputs. Every queue default equals shared/config.py's default for the same setting
# (tests/deploy/test_infra.py checks it), so reconcile's idea of "the last attempt" is the queue's.

variable "project_id" {
  description = "Google Cloud project id that hosts LOCAL (one project per environment)."
  type        = string
}

variable "region" {
  description = "Region of the functions, the queue, the scheduler job and the Artifact Registry repository (cloudbuild.yaml's _REGION must be the same)."
  type        = string
  default     = "asia-east1"
}

variable "firestore_location" {
  description = "Firestore location id (a region such as asia-east1, or a multi-region such as nam5). Cannot be changed after creation."
  type        = string
  default     = "asia-east1"
}

variable "tenant_id" {
  description = "LOCAL_TENANT_ID: one LINE channel = one tenant (cloudbuild.yaml's _TENANT)."
  type        = string
  default     = "changhua"
}

variable "staff_group_id" {
  description = "LOCAL_STAFF_GROUP_ID: the LINE group of staff (C + 32 hex) told about new handoff requests; empty = nobody is told (cloudbuild.yaml's _STAFF_GROUP_ID)."
  type        = string
  default     = ""
}

variable "queue_name" {
  description = "Cloud Tasks queue for handoff reconcile tasks (LOCAL_QUEUE_NAME; shared/config.py default)."
  type        = string
  default     = "handoff-reconcile"
}

variable "queue_min_backoff_seconds" {
  description = "Delay before the first retry, in seconds (LOCAL_QUEUE_MIN_BACKOFF_SECONDS)."
  type        = number
  default     = 1
}

variable "queue_max_backoff_seconds" {
  description = "Longest delay between retries, in seconds (LOCAL_QUEUE_MAX_BACKOFF_SECONDS)."
  type        = number
  default     = 300
}

variable "queue_max_attempts" {
  description = "Attempts per task, the first included (LOCAL_QUEUE_MAX_ATTEMPTS; passed to reconcile by cloudbuild.yaml's _QUEUE_MAX_ATTEMPTS so the two agree)."
  type        = number
  default     = 10
}

variable "queue_max_doublings" {
  description = "Doublings of the retry delay before it grows linearly (LOCAL_QUEUE_MAX_DOUBLINGS); 16 keeps it min x 2^retries capped at max, as the embedded queue does."
  type        = number
  default     = 16
}

variable "agent_queue_name" {
  description = "Cloud Tasks queue of queued webhook events, target functions/agent (LOCAL_AGENT_QUEUE_NAME; shared/config.py default). Same retry policy as the reconcile queue."
  type        = string
  default     = "queued-events"
}

variable "queue_dispatch_deadline_seconds" {
  description = "How long Cloud Tasks waits for a target, in seconds (LOCAL_QUEUE_DISPATCH_DEADLINE_SECONDS): set on each task by shared/queue/cloudtasks.py, below every target's timeout."
  type        = number
  default     = 30
}

variable "queue_max_dispatches_per_second" {
  description = "Rate cap of the reconcile queue (tasks per second)."
  type        = number
  default     = 10
}

variable "queue_max_concurrent_dispatches" {
  description = "Tasks of the reconcile queue in flight at once."
  type        = number
  default     = 20
}

variable "sweep_schedule" {
  description = "Cron (Asia/Taipei) of the sweep (shared/sweep.py): reconcile re-queues what the store shows unsettled. Every minute = LOCAL_SWEEP_INTERVAL_SECONDS' default."
  type        = string
  default     = "* * * * *"
}

variable "ingest_schedule" {
  description = "Cron (Asia/Taipei) of the events ingestion from TDX (functions/ingest)."
  type        = string
  default     = "30 5 * * *"
}

variable "notification_channels" {
  description = "Cloud Monitoring notification channels every LOCAL alert notifies, as full names (projects/PROJECT_ID/notificationChannels/CHANNEL_ID): e.g. an SMS or a chat channel made in the console. Empty = incidents open in the console only, unless alert_email is set."
  type        = list(string)
  default     = []
}

variable "alert_email" {
  description = "Email address of the operator; when set, an email notification channel is created and every alert notifies it as well."
  type        = string
  default     = ""
}

variable "github_owner" {
  description = "Owner of the GitHub repository the Cloud Build trigger watches (connected to Cloud Build beforehand)."
  type        = string
  default     = ""
}

variable "github_repo" {
  description = "Name of the GitHub repository the Cloud Build trigger watches; empty = no trigger (run `gcloud builds submit` by hand)."
  type        = string
  default     = ""
}

variable "deploy_branch" {
  description = "Branch whose pushes are built and deployed (regular expression, Cloud Build trigger syntax)."
  type        = string
  default     = "^main$"
}

variable "secret_versions" {
  description = "Secret Manager version number each function pins (cloudbuild.yaml's _SECRET_VERSION_* substitutions; never `latest`)."
  type        = map(string)
  default = {
    line-channel-secret       = "1"
    line-channel-access-token = "1"
    local-signing-key         = "1"
    gemini-api-key            = "1"
    tdx-client-id             = "1"
    tdx-client-secret         = "1"
  }
}
