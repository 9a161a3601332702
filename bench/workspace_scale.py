"""How long one workspace page takes for a chain of N actions and N gates.

Generates a chain of ``N`` actions and ``N`` gates with the findings a large
draft has: every gate lacks a timeout (``gates.no-timeout``, each with a
quick fix), every tenth action is an unkeyed commit retried by the policy
(``commit.unkeyed-retried``), and every seventh handle is consumed without
the ``derived_from`` edge its minter needs (``edges.missing-derivation``).
Each action mints one handle and reads the one before it; a verdict row
every second action. It is stored on a throwaway SQLite database and the
workspace page (``GET /chains/<key>``) and its Coverage tab
(``?tab=coverage``) are fetched through Django's test client, signed in, as
a cold first view: each run stores the chain under a new id, so no cache
keyed by content helps. Target (issue 14): the workspace of 300 actions and
300 gates under 5 s.

    .venv/bin/python bench/workspace_scale.py [--sizes 100 300 500] [--runs 1]
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from typing import Any

from _chains import reject_row
from _django import test_database  # first: it sets Django up

_ids = itertools.count()


def generate(n: int, name: str = "") -> dict[str, Any]:
    """The document of a chain with ``n`` actions and ``n`` gates (see the module doc)."""
    handles, actions, gates, rows = [], [], [], []
    for i in range(n):
        parent = [f"h{i - 1}"] if i else []
        skip_edge = i % 7 == 6
        handles.append(
            {
                "id": f"h{i}",
                "minted_by": f"a{i}",
                "derived_from": [] if skip_edge else parent,
                "staleness": {"detect": [f"code:H{i}_EXPIRED"], "refresh": f"a{i}"},
            }
        )
        commit = i % 10 == 9
        actions.append(
            {
                "id": f"a{i}",
                "effect": "commit" if commit else ("read" if i % 3 == 0 else "mint"),
                "input": {"intent": {f"f{i % 7}": "string"}, "handles": parent},
                "output": {"handles": [f"h{i}"]},
                "idempotency": {"mode": "none" if commit else "natural"},
                **({"compensation": {"action": "none", "ordering_note": "x"}} if commit else {}),
            }
        )
        gates.append(
            {
                "id": f"g{i}",
                "audience": "user",
                "after": f"a{i}",
                "outcomes": {"accept": "ok", "decline": "dead_end"},
            }
        )
        if i % 2 == 0:
            rows.append(reject_row(i))
    return {
        "id": name or f"scale-{n}",
        "handles": handles,
        "actions": actions,
        "gates": gates,
        "verdict_table": rows,
        "policy": {
            "per_step": {"commit": {"unkeyed": {"attempts": 3}}},
            "per_chain": {"max_rewinds": 3, "max_repairs": 2, "wall_clock": "20m"},
        },
    }


def store(n: int) -> tuple[str, int]:
    """A new chain of size ``n`` under a fresh id, its key and its document's size in bytes."""
    from chains.core import formats
    from chains.models import Chain

    document = generate(n, f"scale-{n}-{next(_ids)}")
    spec = formats.load(json.dumps(document).encode(), filename="bench.json").chains[0]
    stored = Chain.objects.store(formats.to_document(spec), message="bench")
    return stored.chain.key, len(json.dumps(document))


def timed_get(client: Any, url: str) -> float:
    started = time.perf_counter()
    response = client.get(url)
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise SystemExit(f"GET {url} answered {response.status_code}")
    return elapsed


def main() -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 500])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    with test_database():
        client = Client()
        who, _ = get_user_model().objects.get_or_create(username="bench", is_superuser=True)
        client.force_login(who)
        timed_get(client, f"/chains/{store(5)[0]}/")  # warm up: imports, templates
        print("actions  gates  document KB  workspace s  coverage tab s  (cold, per run)")
        for n in args.sizes:
            for _ in range(args.runs):
                key, size = store(n)
                page = timed_get(client, f"/chains/{key}/")
                key, _ = store(n)
                tab = timed_get(client, f"/chains/{key}/?tab=coverage")
                print(f"{n:7}  {n:5}  {size / 1000:11.0f}  {page:11.2f}  {tab:14.2f}")


if __name__ == "__main__":
    main()
