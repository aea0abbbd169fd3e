"""The scheduled re-queue sweep (infra/tasks.tf's Cloud Scheduler job → functions/reconcile)."""
from __future__ import annotations

import requests

from shared.store.sqlite import SqliteStore, path_from_url
from tests.functions.handoff_support import USER, env_with

SWEEP = {"sweep": "requeue"}


def _pending_operation(store_url: str, tenant: str) -> None:
    store = SqliteStore(path_from_url(store_url))
    store.set("handoff_operations", f"op-{USER}", {
        "tenant_id": tenant, "user_id": USER, "idempotency_key": "a" * 32, "content_hash": "b" * 64,
        "state": "pending_verification", "checked_event": None, "notice_state": None})


def _queued_task_names(store_url: str) -> list[str]:
    import sqlite3

    with sqlite3.connect(path_from_url(store_url)) as db:
        return [row[0] for row in db.execute("SELECT name FROM queue_tasks")]


def test_reconcile_sweep_requeues_pending_operations_once(start_function, base_env, store_url):
    _pending_operation(store_url, base_env["LOCAL_TENANT_ID"])
    # A queue target that does not answer: the sweep's claim is the task it queues, not its run.
    reconcile = start_function("reconcile", env_with(base_env, RECONCILE_FUNCTION_URL="http://127.0.0.1:9/"))
    auth = {"Authorization": f"Bearer {base_env['LOCAL_INTERNAL_TOKEN']}"}

    assert requests.post(reconcile.url, json=SWEEP, timeout=5).status_code == 401
    first = requests.post(reconcile.url, json=SWEEP, headers=auth, timeout=5)
    assert first.status_code == 200 and first.json() == {"requeued": 1}
    names = _queued_task_names(store_url)
    assert len(names) == 1
    # The same state swept again queues under the same name: nothing new.
    again = requests.post(reconcile.url, json=SWEEP, headers=auth, timeout=5)
    assert again.status_code == 200 and _queued_task_names(store_url) == names


def test_reconcile_sweep_without_a_queue_is_refused(start_function, base_env):
    reconcile = start_function("reconcile", env_with(base_env))  # no RECONCILE_FUNCTION_URL: no queue
    answer = requests.post(reconcile.url, json=SWEEP, timeout=5,
                           headers={"Authorization": f"Bearer {base_env['LOCAL_INTERNAL_TOKEN']}"})
    assert answer.status_code == 400 and "queue" in answer.json()["error"]
