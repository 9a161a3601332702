"""A document near the 2 MB upload limit: lint it, import it and open it, timed.

Generates the chain of ``bench/workspace_scale.py`` at a size whose JSON is
just under the limit (and the same chain as YAML, which is smaller at the same
size), then through Django's test client on a throwaway SQLite database,
signed in with an API token: ``POST /api/lint``, ``POST /api/chains`` (the
import, which stores it) and ``GET /chains/<key>/`` (the workspace, cold).
Target (issue 14): each well inside the 30 s request timeout, aim under 10 s.

    .venv/bin/python bench/large_document.py [--actions 4200] [--no-pages]
"""

from __future__ import annotations

import argparse
import json
import time

import yaml
from _django import test_database  # first: it sets Django up
from workspace_scale import generate  # noqa: E402


def timed(label: str, size: int, call) -> None:
    started = time.perf_counter()
    response = call()
    elapsed = time.perf_counter() - started
    print(f"{label:28} {size / 1e6:5.2f} MB  {response.status_code}  {elapsed:6.2f} s")
    if response.status_code >= 400:
        print("   ", response.content[:300])


def main() -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from chains.models import ApiToken, Team

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=4200)
    parser.add_argument("--no-pages", action="store_true", help="skip the workspace page")
    args = parser.parse_args()
    with test_database():
        who = get_user_model().objects.create_user("bench")
        Team.objects.found("Bench", owner=who, slug="bench")
        _, secret = ApiToken.objects.issue(who, "bench")
        api = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
        pages = Client()
        pages.force_login(who)
        document = generate(args.actions, "large")
        texts = {
            "json": json.dumps(document, separators=(",", ":")),
            "yaml": yaml.safe_dump(json.loads(json.dumps(document)), sort_keys=False, width=200),
        }
        for fmt, text in texts.items():
            body = json.dumps({"document": text, "filename": f"large.{fmt}"})
            timed(
                f"POST /api/lint ({fmt})",
                len(text),
                lambda b=body: api.post("/api/lint", b, content_type="application/json"),
            )
        body = json.dumps({"document": texts["json"], "filename": "large.json"})
        timed(
            "POST /api/chains (json)",
            len(texts["json"]),
            lambda: api.post("/api/chains", body, content_type="application/json"),
        )
        if not args.no_pages:
            size = len(texts["json"])
            timed("GET /chains/large/ (cold)", size, lambda: pages.get("/chains/large/"))
            timed("GET /chains/large/ (again)", size, lambda: pages.get("/chains/large/"))


if __name__ == "__main__":
    main()
