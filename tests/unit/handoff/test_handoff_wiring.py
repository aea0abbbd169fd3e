"""wiring.task_queue: which queue adapter the configuration names, built without side effects."""
from __future__ import annotations

import sys

from shared import wiring
from shared.queue.cloudtasks import CloudTasksQueue
from shared.queue.embedded import EmbeddedQueue
from shared.store.sqlite import path_from_url


def test_wiring_embedded_queue_on_sqlite_with_reconcile_url(make_settings):
    settings = make_settings(RECONCILE_FUNCTION_URL="http://127.0.0.1:8081/", LOCAL_QUEUE_MIN_BACKOFF_SECONDS="0.2",
                             LOCAL_QUEUE_MAX_BACKOFF_SECONDS="1")
    queue = wiring.task_queue(settings)
    assert isinstance(queue, EmbeddedQueue)
    assert queue.path == path_from_url(settings.store_url)  # durable in the store's own file
    assert queue.target_url == "http://127.0.0.1:8081/"
    assert (queue.min_backoff_seconds, queue.max_backoff_seconds, queue.max_attempts) == (0.2, 1.0, 3)


def test_wiring_no_queue_without_a_reconcile_target(settings):
    assert wiring.task_queue(settings) is None


def test_wiring_cloud_tasks_when_queue_path_set_loads_no_client(make_settings):
    settings = make_settings(LOCAL_TASKS_QUEUE_PATH="projects/p/locations/asia-east1/queues/handoff-reconcile",
                             RECONCILE_FUNCTION_URL="https://reconcile.example/",
                             LOCAL_TASKS_SERVICE_ACCOUNT="tasks@p.iam.gserviceaccount.com")
    loaded_before = "google.cloud.tasks_v2" in sys.modules
    queue = wiring.task_queue(settings)
    assert isinstance(queue, CloudTasksQueue)
    assert (queue.target_url, queue.audience) == ("https://reconcile.example/", "https://reconcile.example/")
    assert queue.service_account_email == "tasks@p.iam.gserviceaccount.com"
    assert ("google.cloud.tasks_v2" in sys.modules) == loaded_before  # the client is built on first enqueue
