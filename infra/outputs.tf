output "function_urls" {
  description = "HTTPS URL of every function (2nd gen: https://REGION-PROJECT.cloudfunctions.net/NAME). The webhook's is the LINE console's Webhook URL; reconcile's and memory's are RECONCILE_FUNCTION_URL and MEMORY_FUNCTION_URL."
  value       = local.function_urls
}

output "webhook_url" {
  description = "Paste into LINE Developers console > Messaging API > Webhook URL, then press Verify."
  value       = local.function_urls["webhook"]
}

output "queue_path" {
  description = "LOCAL_TASKS_QUEUE_PATH: projects/P/locations/L/queues/Q of the reconcile queue."
  value       = local.queue_path
}

output "agent_queue_path" {
  description = "LOCAL_AGENT_TASKS_QUEUE_PATH: projects/P/locations/L/queues/Q of the queued-events queue."
  value       = local.agent_queue_path
}

output "service_accounts" {
  description = "Email of each function's service account (gcloud functions deploy --service-account)."
  value       = { for fn, sa in google_service_account.function : fn => sa.email }
}

output "tasks_service_account" {
  description = "LOCAL_TASKS_SERVICE_ACCOUNT: the OIDC identity of Cloud Tasks and Cloud Scheduler calls."
  value       = google_service_account.tasks.email
}

output "build_service_account" {
  description = "The Cloud Build deployer (gcloud builds submit --service-account)."
  value       = google_service_account.build.id
}

output "functions_build_service_account" {
  description = "The account Cloud Functions builds the function images with (gcloud functions deploy --build-service-account)."
  value       = google_service_account.functions_build.id
}

output "build_source_staging_dir" {
  description = "gcloud builds submit --gcs-source-staging-dir value: a bucket the deployer may read (the default PROJECT_cloudbuild bucket is not granted)."
  value       = "gs://${google_storage_bucket.build_source.name}/source"
}

output "secret_ids" {
  description = "Secret Manager containers to fill (environment variable -> secret id)."
  value       = local.secrets
}

output "artifact_repository" {
  description = "gcloud functions deploy --docker-repository value."
  value       = google_artifact_registry_repository.functions.id
}
