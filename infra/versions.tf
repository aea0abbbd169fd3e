# Terraform and the Google provider. Nothing here holds a secret value or a credential:
# `terraform apply` runs with the operator's application default credentials.
terraform {
  required_version = ">= 1.7.0" # removed blocks (iam.tf)
  required_providers {
    google = {
      source  = "hashicorp/google"
      version = "~> 6.0"
    }
  }
}

provider "google" {
  project = var.project_id
  region  = var.region
}
