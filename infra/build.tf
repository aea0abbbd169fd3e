# Artifact Registry (the functions' container images) and Cloud Build (lint, test, bundle, deploy).
#
# Two service accounts (docs/deploy.md, "Service accounts"):
# - local-build runs cloudbuild.yaml (the trigger's and `gcloud builds submit`'s account): it
#   deploys the functions and grants their invokers;
# - local-functions-build is the account Cloud Functions builds each function's image with
#   (`gcloud functions deploy --build-service-account`), instead of a project default whose
#   permissions on a project created since mid-2024 may not suffice.

resource "google_artifact_registry_repository" "functions" {
  # checkov:skip=CKV_GCP_84: images hold only this repository's code, no user data; Google-managed keys suffice
  repository_id = "local-functions"
  location      = var.region
  format        = "DOCKER"
  description   = "Container images of the LOCAL functions (gcloud functions deploy --docker-repository)."

  # A keep policy only exempts versions from a delete policy (Artifact Registry, "Cleanup policy
  # overview"): the delete policy is what removes images. Each function's newest versions stay, so
  # a rollback to a recent revision finds its image; dry run off, or nothing is deleted.
  cleanup_policy_dry_run = false
  cleanup_policies {
    id     = "delete-older-than-30-days"
    action = "DELETE"
    condition {
      tag_state  = "ANY"
      older_than = "2592000s"
    }
  }
  cleanup_policies {
    id     = "keep-10-most-recent"
    action = "KEEP"
    most_recent_versions {
      keep_count = 10
    }
  }

  depends_on = [google_project_service.apis]
}

resource "google_service_account" "build" {
  account_id   = "local-build"
  display_name = "LOCAL Cloud Build deployer"
  depends_on   = [google_project_service.apis]
}

resource "google_service_account" "functions_build" {
  account_id   = "local-functions-build"
  display_name = "LOCAL function image builder (gcloud functions deploy --build-service-account)"
  depends_on   = [google_project_service.apis]
}

# Project-wide roles of the two accounts, one grant each:
# - local-build deploys and updates the functions (roles/cloudfunctions.developer, not delete-project
#   powers); sets each function's invoker policy (--allow-unauthenticated / --no-allow-unauthenticated
#   and gcloud functions add-invoker-policy-binding on the 2nd-gen functions' Cloud Run services need
#   run.services.getIamPolicy and run.services.setIamPolicy: roles/run.admin); writes its build logs
#   (a user-chosen build account logs to Cloud Logging only);
# - local-functions-build writes its build logs. With its images (the repository grant below) and its
#   source (functions_build_source), these are exactly the three roles Cloud Functions' build needs
#   ("Custom service account for Cloud Build", Cloud Run functions docs).
locals {
  build_accounts = {
    build           = google_service_account.build.email
    functions_build = google_service_account.functions_build.email
  }
  build_project_roles = {
    "build/cloudfunctions.developer"    = { account = "build", role = "roles/cloudfunctions.developer" }
    "build/run.admin"                   = { account = "build", role = "roles/run.admin" }
    "build/logging.logWriter"           = { account = "build", role = "roles/logging.logWriter" }
    "functions_build/logging.logWriter" = { account = "functions_build", role = "roles/logging.logWriter" }
  }
}

resource "google_project_iam_member" "build" {
  for_each   = local.build_project_roles
  project    = var.project_id
  role       = each.value.role
  member     = "serviceAccount:${local.build_accounts[each.value.account]}"
  depends_on = [google_project_service.apis]
}

# The grants that were one resource each keep their state (no revoke-and-grant on the next apply).
moved {
  from = google_project_iam_member.build_functions
  to   = google_project_iam_member.build["build/cloudfunctions.developer"]
}
moved {
  from = google_project_iam_member.build_run
  to   = google_project_iam_member.build["build/run.admin"]
}
moved {
  from = google_project_iam_member.build_logs
  to   = google_project_iam_member.build["build/logging.logWriter"]
}

resource "google_artifact_registry_repository_iam_member" "functions_build_writer" {
  repository = google_artifact_registry_repository.functions.name
  location   = google_artifact_registry_repository.functions.location
  role       = "roles/artifactregistry.writer"
  member     = "serviceAccount:${google_service_account.functions_build.email}"
  depends_on = [google_project_service.apis]
}

# The source gcloud uploads lives in Cloud Functions' own buckets (gcf-v2-uploads-PROJECT_NUMBER-REGION
# and gcf-v2-sources-PROJECT_NUMBER-REGION, created at the first deploy, so not grantable by name
# here): read access to those buckets of this project only, through an IAM condition on the name.
resource "google_project_iam_member" "functions_build_source" {
  project = var.project_id
  role    = "roles/storage.objectViewer"
  member  = "serviceAccount:${google_service_account.functions_build.email}"
  condition {
    title       = "cloud-functions-source-buckets"
    description = "Only Cloud Functions' gcf-v2-uploads-* and gcf-v2-sources-* buckets."
    expression  = "resource.name.startsWith(\"projects/_/buckets/gcf-v2-sources-\") || resource.name.startsWith(\"projects/_/buckets/gcf-v2-uploads-\")"
  }
  depends_on = [google_project_service.apis]
}

# --- local-build: the deployer

# The manual path (`gcloud builds submit --gcs-source-staging-dir=gs://BUCKET/source`) uploads the
# repository here; the trigger path reads it from GitHub. Sources are kept a week.
resource "google_storage_bucket" "build_source" {
  # checkov:skip=CKV_GCP_62: holds only uploaded copies of this public repository's source for a week; Cloud Audit Logs record access
  name                        = "${var.project_id}-local-build-source"
  location                    = var.region
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  versioning {
    enabled = true
  }
  lifecycle_rule {
    condition {
      age = 7
    }
    action {
      type = "Delete"
    }
  }
  lifecycle_rule {
    condition {
      days_since_noncurrent_time = 1
    }
    action {
      type = "Delete"
    }
  }
  depends_on = [google_project_service.apis]
}

resource "google_storage_bucket_iam_member" "build_reads_source" {
  bucket     = google_storage_bucket.build_source.name
  role       = "roles/storage.objectViewer"
  member     = "serviceAccount:${google_service_account.build.email}"
  depends_on = [google_project_service.apis]
}

# Deploy each function with local-functions-build as its build account (iam.serviceAccounts.actAs).
resource "google_service_account_iam_member" "build_acts_as_functions_build" {
  service_account_id = google_service_account.functions_build.name
  role               = "roles/iam.serviceAccountUser"
  member             = "serviceAccount:${google_service_account.build.email}"
  depends_on         = [google_project_service.apis]
}

# Deploy each function as its own service account (iam.serviceAccounts.actAs on those only).
resource "google_service_account_iam_member" "build_acts_as_function" {
  for_each           = local.functions
  service_account_id = google_service_account.function[each.key].name
  role               = "roles/iam.serviceAccountUser"
  member             = "serviceAccount:${google_service_account.build.email}"
  depends_on         = [google_project_service.apis]
}

# The smoke step signs LINE's empty Verify body with the channel secret.
resource "google_secret_manager_secret_iam_member" "build_channel_secret" {
  secret_id  = google_secret_manager_secret.secret["line-channel-secret"].secret_id
  role       = "roles/secretmanager.secretAccessor"
  member     = "serviceAccount:${google_service_account.build.email}"
  depends_on = [google_project_service.apis]
}

# The rich menu step (make richmenu) calls the Messaging API with the channel access token.
resource "google_secret_manager_secret_iam_member" "build_access_token" {
  secret_id  = google_secret_manager_secret.secret["line-channel-access-token"].secret_id
  role       = "roles/secretmanager.secretAccessor"
  member     = "serviceAccount:${google_service_account.build.email}"
  depends_on = [google_project_service.apis]
}

resource "google_cloudbuild_trigger" "deploy" {
  count           = var.github_repo == "" ? 0 : 1
  name            = "local-deploy"
  location        = var.region
  description     = "Test, bundle and deploy LOCAL on every push to the deploy branch."
  filename        = "cloudbuild.yaml"
  service_account = google_service_account.build.id

  github {
    owner = var.github_owner
    name  = var.github_repo
    push {
      branch = var.deploy_branch
    }
  }

  substitutions = {
    _REGION                     = var.region
    _TENANT                     = var.tenant_id
    _STAFF_GROUP_ID             = var.staff_group_id
    _QUEUE_NAME                 = var.queue_name
    _QUEUE_MAX_ATTEMPTS         = tostring(var.queue_max_attempts)
    _QUEUE_MIN_BACKOFF_SECONDS  = tostring(var.queue_min_backoff_seconds)
    _QUEUE_MAX_BACKOFF_SECONDS  = tostring(var.queue_max_backoff_seconds)
    _QUEUE_MAX_DOUBLINGS        = tostring(var.queue_max_doublings)
    _QUEUE_DISPATCH_DEADLINE    = tostring(var.queue_dispatch_deadline_seconds)
    _AGENT_QUEUE_NAME           = var.agent_queue_name
    _SECRET_VERSION_LINE_SECRET = var.secret_versions["line-channel-secret"]
    _SECRET_VERSION_LINE_TOKEN  = var.secret_versions["line-channel-access-token"]
    _SECRET_VERSION_SIGNING_KEY = var.secret_versions["local-signing-key"]
    _SECRET_VERSION_GEMINI_KEY  = var.secret_versions["gemini-api-key"]
    _SECRET_VERSION_TDX_ID      = var.secret_versions["tdx-client-id"]
    _SECRET_VERSION_TDX_SECRET  = var.secret_versions["tdx-client-secret"]
  }

  depends_on = [google_project_service.apis]
}
