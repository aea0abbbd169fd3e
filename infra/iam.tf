# Service accounts: one per function and the tasks invoker (the OIDC identity of Cloud Tasks and
# Cloud Scheduler calls); the deployer and the image builder are in build.tf. Least privilege; the
# README's role table lists exactly these grants, and the run.invoker grants that cloudbuild.yaml
# makes after each deploy.

resource "google_service_account" "function" {
  for_each     = local.functions
  account_id   = "local-${each.key}"
  display_name = "LOCAL ${each.key} function"
  depends_on   = [google_project_service.apis]
}

resource "google_service_account" "tasks" {
  account_id   = "local-tasks"
  display_name = "LOCAL Cloud Tasks / Scheduler invoker (OIDC identity)"
  depends_on   = [google_project_service.apis]
}

# Every function reads and writes its documents (roles/datastore.user: Firestore read/write, no admin).
resource "google_project_iam_member" "function_datastore" {
  for_each   = local.functions
  project    = var.project_id
  role       = "roles/datastore.user"
  member     = "serviceAccount:${google_service_account.function[each.key].email}"
  depends_on = [google_project_service.apis]
}

# Functions that create tasks may enqueue on LOCAL's two queues only…
resource "google_cloud_tasks_queue_iam_member" "enqueuer" {
  for_each   = local.enqueuer_grants
  name       = google_cloud_tasks_queue.queue[each.value.queue].name
  location   = google_cloud_tasks_queue.queue[each.value.queue].location
  role       = "roles/cloudtasks.enqueuer"
  member     = "serviceAccount:${google_service_account.function[each.value.function].email}"
  depends_on = [google_project_service.apis]
}

# …and act as the tasks invoker, whose OIDC token each task carries (iam.serviceAccounts.actAs).
resource "google_service_account_iam_member" "enqueuer_acts_as_tasks" {
  for_each           = toset(local.enqueuers)
  service_account_id = google_service_account.tasks.name
  role               = "roles/iam.serviceAccountUser"
  member             = "serviceAccount:${google_service_account.function[each.value].email}"
  depends_on         = [google_project_service.apis]
}

# Each function reads only its own secrets.
resource "google_secret_manager_secret_iam_member" "function_secret" {
  for_each   = local.secret_grants
  secret_id  = google_secret_manager_secret.secret[each.value.secret_id].secret_id
  role       = "roles/secretmanager.secretAccessor"
  member     = "serviceAccount:${google_service_account.function[each.value.function].email}"
  depends_on = [google_project_service.apis]
}

# run.invoker on the private functions, each for its own callers (local.functions' invokers), is not
# declared here: the functions' Cloud Run services exist only after their first deploy, so
# cloudbuild.yaml grants it in each function's deploy step (gcloud functions
# add-invoker-policy-binding, idempotent). A later `terraform apply` neither needs nor removes it.

# Deployments made before this rule held these bindings in Terraform's state (a second apply): forget
# them without revoking, so that an upgrade's apply does not take run.invoker from the callers.
removed {
  from = google_cloud_run_v2_service_iam_member.invoker
  lifecycle {
    destroy = false
  }
}
