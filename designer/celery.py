"""The Celery app: configured from Django settings (CELERY_* names), tasks autodiscovered.

A worker rides out a broker that goes away (a Redis restart, a dropped
connection): the settings make it retry the connection for ever, notice a
dead one within seconds and keep running its tasks meanwhile (a shard
already running finishes; its message, not acknowledged, comes back and is
skipped by the claim); once connected again it sends anew what a broker
without persistence lost (:class:`Reconnected`). Whatever still makes a
worker exit, ``designer.supervise`` starts it again (``make run``,
``deploy/entrypoint.sh``).
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery, bootsteps

from designer import broker

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "designer.settings")
broker.register()


app = Celery("designer")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


class Reconnected(bootsteps.StartStopStep):
    """Once the worker is connected again after losing its broker, send what was lost.

    The consumer's steps start again on every new connection; the first start is
    the worker's own (``chains.tasks.recover_on_start`` covers it).
    """

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.starts = 0

    def start(self, parent: Any) -> None:
        self.starts += 1
        if self.starts > 1:
            from chains.tasks import resend_after_reconnect

            resend_after_reconnect()


app.steps["consumer"].add(Reconnected)
