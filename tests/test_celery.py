"""A real round trip through the configured broker and result backend.

With CI=true the environment points Celery at Redis; otherwise the defaults
apply: kombu's filesystem transport and the file result backend under var/.
Either way a worker runs in this process and answers the health-check task.
"""

from __future__ import annotations

import os

from django.conf import settings

from chains.tasks import ping
from designer.celery import app


def test_the_app_uses_the_configured_broker():
    assert app.conf.broker_url == settings.CELERY_BROKER_URL
    assert app.conf.result_backend == settings.CELERY_RESULT_BACKEND


def test_ping_is_answered_by_a_worker_through_the_broker(celery_worker):
    result = ping.delay()
    assert result.get(timeout=20) == "pong"
    assert result.successful()
    result.forget()


def test_a_test_process_sends_to_a_queue_no_other_process_consumes():
    """Not `make run`'s queue, nor another test process's (a stopped suite's shards once
    sat in the queue the next suite's worker took)."""
    assert app.conf.task_default_queue not in ("celery", settings.CELERY_TASK_DEFAULT_QUEUE)
    assert app.conf.task_default_queue.endswith(f"-{os.getpid()}")
