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

# Composite indexes: only what a query needs beyond the automatic single-field indexes. Firestore
# answers equality filters on several fields by merging single-field indexes, and orders on one
# field with its single-field index; a composite index is needed where equality filters come with an
# order on another field (Firestore docs, "Standard edition index overview" and "Index types").
# Every store.query(...) in shared/ and tools/ today is equality-only or ordered with no filter
# (events_snapshots by fetched_at), so none is declared: each would only cost index writes.
# tests/deploy/test_infra.py derives this map from the queries and fails when they disagree.
locals {
  composite_indexes = {}

  # Collections whose documents carry `expire_at` (a Timestamp): Firestore deletes each document
  # within about 24 hours after that time (Firestore docs, "Manage data retention with TTL policies").
  # conversations: the short conversation state, 30 minutes from the last turn (docs/conversation.md);
  # its readers also compare expire_at with their own clock, since the delete comes late.
  ttl_collections = ["webhook_inbox", "turn_audit", "memory_cards", "conversations"]
}

resource "google_firestore_index" "composite" {
  for_each   = local.composite_indexes
  database   = google_firestore_database.main.name
  collection = each.value.collection

  dynamic "fields" {
    for_each = each.value.fields
    content {
      field_path = fields.value.field
      order      = fields.value.order
    }
  }

  depends_on = [google_project_service.apis]
}

resource "google_firestore_field" "ttl" {
  for_each   = toset(local.ttl_collections)
  database   = google_firestore_database.main.name
  collection = each.value
  field      = "expire_at"

  ttl_config {}

  # A TTL field needs no index of its own (it is never queried).
  index_config {}

  depends_on = [google_project_service.apis]
}
