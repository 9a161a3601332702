"""Celery tasks: thin wrappers that take ids and call the core."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="chains.ping")
def ping() -> str:
    """Health check: answers "pong" once a worker has taken it off the broker."""
    return "pong"
