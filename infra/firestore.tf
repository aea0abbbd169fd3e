# Firestore (native mode): the store of every function (LOCAL_STORE_URL=firestore://PROJECT).

resource "google_firestore_database" "main" {
  name                              = "(default)"
  location_id                       = var.firestore_location
  type                              = "FIRESTORE_NATIVE"
  concurrency_mode                  = "PESSIMISTIC"
  point_in_time_recovery_enablement = "POINT_IN_TIME_RECOVERY_ENABLED"
  delete_protection_state           = "DELETE_PROTECTION_ENABLED"
  deletion_policy                   = "ABANDON"
  depends_on                        = [google_project_service.apis]
}

# Queries with equality on several fields (shared/handoff/worker.py, shared/handoff/status.py, shared/turn/follow_up.py,
# tools/user_data.py). Firestore can merge single-field indexes for these, but a composite index
# keeps them one index scan as the collections grow.
locals {
  composite_indexes = {
    operations_notice = { collection = "handoff_operations", fields = ["tenant_id", "notice_state"] }
    operations_state  = { collection = "handoff_operations", fields = ["tenant_id", "state"] }
    followups_status  = { collection = "handoff_followups", fields = ["tenant_id", "user_id", "status"] }
    audit_by_user     = { collection = "turn_audit", fields = ["tenant_id", "user_hash"] }
    requests_by_user  = { collection = "handoff_requests", fields = ["tenant_id", "user_id"] }
  }

  # Collections whose documents carry `expire_at` (a Timestamp): Firestore deletes each document
  # within about 24 hours after that time (Firestore docs, "Manage data retention with TTL policies").
  ttl_collections = ["webhook_inbox", "turn_audit", "memory_cards"]
}

resource "google_firestore_index" "composite" {
  for_each   = local.composite_indexes
  database   = google_firestore_database.main.name
  collection = each.value.collection

  dynamic "fields" {
    for_each = each.value.fields
    content {
      field_path = fields.value
      order      = "ASCENDING"
    }
  }
}

resource "google_firestore_field" "ttl" {
  for_each   = toset(local.ttl_collections)
  database   = google_firestore_database.main.name
  collection = each.value
  field      = "expire_at"

  ttl_config {}

  # A TTL field needs no index of its own (it is never queried).
  index_config {}
}
