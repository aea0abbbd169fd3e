# Secret Manager: containers only. Values are added by hand (infra/README.md, step 3) and never
# appear in this repository, in Terraform state or in cloudbuild.yaml.

resource "google_secret_manager_secret" "secret" {
  for_each  = toset(values(local.secrets))
  secret_id = each.value

  replication {
    user_managed {
      replicas {
        location = var.region
      }
    }
  }

  depends_on = [google_project_service.apis]
}
