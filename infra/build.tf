# Artifact Registry (the functions' container images) and Cloud Build (test, bundle, deploy).

resource "google_artifact_registry_repository" "functions" {
  # checkov:skip=CKV_GCP_84: images hold only this repository's code, no user data; Google-managed keys suffice
  repository_id = "local-functions"
  location      = var.region
  format        = "DOCKER"
  description   = "Container images of the LOCAL functions (gcloud functions deploy --docker-repository)."

  cleanup_policies {
    id     = "keep-recent"
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
}

# Deploy and update the functions (not delete-project powers): roles/cloudfunctions.developer.
resource "google_project_iam_member" "build_functions" {
  project = var.project_id
  role    = "roles/cloudfunctions.developer"
  member  = "serviceAccount:${google_service_account.build.email}"
}

# Set each function's invoker policy (--allow-unauthenticated / --no-allow-unauthenticated on the
# 2nd-gen functions' Cloud Run services needs run.services.setIamPolicy).
resource "google_project_iam_member" "build_run" {
  project = var.project_id
  role    = "roles/run.admin"
  member  = "serviceAccount:${google_service_account.build.email}"
}

# Write build logs (a user-chosen build service account logs to Cloud Logging only).
resource "google_project_iam_member" "build_logs" {
  project = var.project_id
  role    = "roles/logging.logWriter"
  member  = "serviceAccount:${google_service_account.build.email}"
}

# Push the functions' images to this repository only.
resource "google_artifact_registry_repository_iam_member" "build_writer" {
  repository = google_artifact_registry_repository.functions.name
  location   = google_artifact_registry_repository.functions.location
  role       = "roles/artifactregistry.writer"
  member     = "serviceAccount:${google_service_account.build.email}"
}

# Deploy each function as its own service account (iam.serviceAccounts.actAs on those only).
resource "google_service_account_iam_member" "build_acts_as_function" {
  for_each           = local.functions
  service_account_id = google_service_account.function[each.key].name
  role               = "roles/iam.serviceAccountUser"
  member             = "serviceAccount:${google_service_account.build.email}"
}

# The smoke step signs LINE's empty Verify body with the channel secret.
resource "google_secret_manager_secret_iam_member" "build_channel_secret" {
  secret_id = google_secret_manager_secret.secret["line-channel-secret"].secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${google_service_account.build.email}"
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
