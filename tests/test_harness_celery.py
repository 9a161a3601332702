"""``manage.py chain harness --celery``: the schedules run on a real Celery worker (the
embedded broker, or Redis with CI=true) and come back as the same report."""

from __future__ import annotations

import json
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

SAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "harness"


@pytest.mark.django_db(transaction=True)
def test_schedules_sent_to_a_worker_come_back_audited(celery_worker, tmp_path):
    out = StringIO()
    code = 0
    try:
        call_command(
            "chain", "harness", str(SAMPLES / "booking.yaml"), "--celery",
            "--client", f"{sys.executable} {SAMPLES / 'naive_client.py'}",
            "--provider", f"{sys.executable} {SAMPLES / 'provider.py'} --port 0",
            "--env", "CLIENT_TIMEOUT=1", "--hold", "1.2", "--sample", "3", "--seed", "4",
            "--out", str(tmp_path / "runs"), "--json", stdout=out,
        )  # fmt: skip
    except SystemExit as exc:  # 1 when a run diverged
        code = int(exc.code or 0)
    report = json.loads(out.getvalue())
    assert code == (0 if report["clean"] else 1) and len(report["schedules"]) == 3
    assert report["schedules"][0]["label"] == "no fault" and report["schedules"][0]["clean"]
    assert (tmp_path / "runs" / "0" / "trace.har.json").exists()  # written by the worker
