"""``/healthz``: can this instance serve? Its database and its Celery broker both answer.

For load balancers and container orchestrators. 200 with ``{"status": "ok",
"database": "ok", "broker": "ok"}`` when both answer within a second, else
503 with the failing one marked ``"unavailable"`` and the reason's class
name (never a URL or a password). No sign-in, no cookies, never cached, and
plain HTTP is answered (a load balancer probes the instance directly):
``SECURE_REDIRECT_EXEMPT`` in settings.
"""

from __future__ import annotations

import os
from pathlib import Path

import redis
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from kombu import Connection

TIMEOUT = 1.0  # seconds each check may take


def database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def broker() -> None:
    """Redis is pinged; the filesystem broker's folders must be there and writable."""
    url = settings.CELERY_BROKER_URL
    if url.startswith(("redis://", "rediss://")):
        client = redis.Redis.from_url(url, socket_connect_timeout=TIMEOUT, socket_timeout=TIMEOUT)
        try:
            client.ping()
        finally:
            client.close()
    elif url.startswith("filesystem://"):
        options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
        for key in ("data_folder_in", "data_folder_out", "processed_folder"):
            folder = Path(options[key])
            if not folder.is_dir() or not os.access(folder, os.W_OK):
                raise OSError(f"broker folder {key} is missing or read-only")
    else:
        with Connection(url, connect_timeout=TIMEOUT) as conn:
            conn.ensure_connection(max_retries=1, timeout=TIMEOUT)


CHECKS = {"database": database, "broker": broker}


@require_GET
@never_cache
@login_not_required
def healthz(request: HttpRequest) -> JsonResponse:
    body: dict[str, str] = {}
    for name, check in CHECKS.items():
        try:
            check()
            body[name] = "ok"
        except Exception as exc:  # any failure means "cannot serve"; the class says which
            body[name] = "unavailable"
            body[f"{name}_error"] = type(exc).__name__
    healthy = all(body[name] == "ok" for name in CHECKS)
    body = {"status": "ok" if healthy else "unavailable", **body}
    return JsonResponse(body, status=200 if healthy else 503)
