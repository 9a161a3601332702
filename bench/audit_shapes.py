"""How long the trace audit page takes for a trace of N divergences (issue 34).

The shape from the adversarial pass: one transition that invalidates an
offer (``offer_id#1``), then ``N - 1`` attempts that present it again, one
compact JSON line each (a 1,500-line trace is about 100 KB). Each attempt
is an ``invalidated_handle`` divergence, and the first one also leaves the
chain's path (``out_of_order``): N divergences. The trace is posted to the
audit page of ``fixtures/unsafe-retry-booking.yaml`` (stored on a throwaway
SQLite database) through Django's test client, signed in; then the last
divergence is opened in the simulator (the page's button: a POST with
``simulate=<seq>``, answered with a 303 to the simulator's address) and
that address fetched.
Target: the page of 1,500 divergences under 2 s, and the time linear in N.

    .venv/bin/python bench/audit_shapes.py [--sizes 500 1000 1500] [--runs 1]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from _django import ROOT, test_database  # first: it sets Django up


def dead_alias(divergences: int) -> str:
    """The trace of ``divergences`` lines: one invalidation, then attempts presenting it."""
    lines = [{"seq": 1, "event_type": "transition", "handles_invalidated": ["offer_id#1"]}]
    lines += [
        {"seq": seq, "event_type": "attempt", "handles_consumed": ["offer_id#1"]}
        for seq in range(2, divergences + 1)
    ]
    return "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)


def timed_post(client: Any, url: str, data: dict[str, str], status: int) -> tuple[float, Any]:
    started = time.perf_counter()
    response = client.post(url, data)
    elapsed = time.perf_counter() - started
    if response.status_code != status:
        raise SystemExit(f"POST {url} answered {response.status_code}, not {status}")
    return elapsed, response


def main() -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from chains.core import formats
    from chains.models import Chain

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 1500])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    with test_database():
        text = (ROOT / "fixtures" / "unsafe-retry-booking.yaml").read_text()
        spec = formats.load(text, format="yaml").chains[0]
        chain = Chain.objects.store(formats.to_document(spec), message="bench").chain
        url = chain.url("audit")
        client = Client()
        who, _ = get_user_model().objects.get_or_create(username="bench", is_superuser=True)
        client.force_login(who)
        timed_post(client, url, {"text": dead_alias(5)}, 200)  # warm up: imports, templates
        print("divergences  trace KB  page s  page KB  ms/divergence  open last s  simulator s")
        for n in args.sizes:
            trace = dead_alias(n)
            for _ in range(args.runs):
                page, response = timed_post(client, url, {"text": trace}, 200)
                shown = len(response.context["result"].divergences)
                if shown != n:
                    raise SystemExit(f"the trace of {n} has {shown} divergences")
                opened, redirect = timed_post(client, url, {"text": trace, "simulate": str(n)}, 303)
                started = time.perf_counter()
                simulator = client.get(redirect["Location"])
                there = time.perf_counter() - started
                if simulator.status_code != 200:
                    raise SystemExit(f"the simulator answered {simulator.status_code}")
                print(
                    f"{n:11,}  {len(trace) / 1000:8.0f}  {page:6.2f}  "
                    f"{len(response.content) / 1000:7.0f}  {page * 1000 / n:13.2f}  "
                    f"{opened:11.2f}  {there:11.2f}"
                )


if __name__ == "__main__":
    main()
