# LOCAL on Google Cloud: the resources every function needs. The functions themselves are deployed
# by Cloud Build (cloudbuild.yaml); this file declares who they run as and what they may touch.
# The table of roles in infra/README.md is the contract (tests/deploy/test_infra.py checks both).
# Every other resource depends on google_project_service.apis: on a new project an API is enabled
# before anything (a service account, a grant, a bucket) that needs it is created.

locals {
  # One entry per function: its service account, its Secret Manager secrets (env name -> secret id
  # comes from local.secrets), whether it creates Cloud Tasks (handoff reconcile tasks and the
  # re-queue sweep), and who may invoke it (public = anyone on the internet, LINE included).
  # `invokers` get roles/run.invoker on the function's Cloud Run service from cloudbuild.yaml, right
  # after the function's deploy (the service does not exist before it): never a second apply.
  functions = {
    webhook = {
      public   = true
      secrets  = ["LINE_CHANNEL_SECRET", "LINE_CHANNEL_ACCESS_TOKEN", "LOCAL_SIGNING_KEY"]
      enqueues = true
      invokers = []
    }
    reconcile = {
      public   = false
      secrets  = ["LINE_CHANNEL_ACCESS_TOKEN"]
      enqueues = true
      invokers = ["tasks"]
    }
    memory = {
      public   = false
      secrets  = ["LOCAL_SIGNING_KEY"]
      enqueues = false
      invokers = ["webhook", "agent"]
    }
    ingest = {
      public   = false
      secrets  = ["TDX_CLIENT_ID", "TDX_CLIENT_SECRET"]
      enqueues = false
      invokers = ["tasks"]
    }
    agent = {
      public   = false
      secrets  = ["LINE_CHANNEL_ACCESS_TOKEN", "LOCAL_SIGNING_KEY", "GEMINI_API_KEY"]
      enqueues = true
      invokers = ["tasks"]
    }
  }

  # Environment variable -> Secret Manager secret id (a container: values are added by hand).
  secrets = {
    LINE_CHANNEL_SECRET       = "line-channel-secret"
    LINE_CHANNEL_ACCESS_TOKEN = "line-channel-access-token"
    LOCAL_SIGNING_KEY         = "local-signing-key"
    GEMINI_API_KEY            = "gemini-api-key"
    TDX_CLIENT_ID             = "tdx-client-id"
    TDX_CLIENT_SECRET         = "tdx-client-secret"
  }

  # Every (function, secret) pair that gets secretAccessor on that one secret.
  secret_grants = merge([
    for fn, cfg in local.functions : {
      for env in cfg.secrets : "${fn}/${env}" => { function = fn, secret_id = local.secrets[env] }
    }
  ]...)

  enqueuers = [for fn, cfg in local.functions : fn if cfg.enqueues]

  # The two queues (same retry policy): handoff reconcile tasks and queued webhook events.
  queues = {
    reconcile = var.queue_name
    events    = var.agent_queue_name
  }
  # Every (enqueuing function, queue) pair that gets cloudtasks.enqueuer on that queue.
  enqueuer_grants = merge([
    for fn in local.enqueuers : { for q, _ in local.queues : "${fn}/${q}" => { function = fn, queue = q } }
  ]...)

  function_urls    = { for fn, _ in local.functions : fn => "https://${var.region}-${var.project_id}.cloudfunctions.net/${fn}" }
  queue_path       = "projects/${var.project_id}/locations/${var.region}/queues/${var.queue_name}"
  agent_queue_path = "projects/${var.project_id}/locations/${var.region}/queues/${var.agent_queue_name}"
}

# Every API a resource here or a deploy step uses: cloudresourcemanager for the project IAM grants,
# monitoring for the alert policies and the dashboard, storage for the build's source bucket.
resource "google_project_service" "apis" {
  for_each = toset([
    "artifactregistry.googleapis.com",
    "cloudbuild.googleapis.com",
    "cloudfunctions.googleapis.com",
    "cloudresourcemanager.googleapis.com",
    "cloudscheduler.googleapis.com",
    "cloudtasks.googleapis.com",
    "firestore.googleapis.com",
    "iam.googleapis.com",
    "logging.googleapis.com",
    "monitoring.googleapis.com",
    "run.googleapis.com",
    "secretmanager.googleapis.com",
    "storage.googleapis.com",
  ])
  service            = each.value
  disable_on_destroy = false
}
