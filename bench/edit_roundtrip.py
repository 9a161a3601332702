"""Server time of one designer edit against a bare Graphviz render of the same graph.

An edit is what the workspace does when a user draws an edge on the flight
fixture: POST the edit (htmx), apply it in core, store the new revision,
re-lint, and render the workspace partial with the graph's SVG. It is timed
in-process through Django's test client on a throwaway SQLite database, so
the number is the server's work without network or browser. In the same
run, ``dot -Tsvg`` renders the same graph's DOT text from a file, as a
bare subprocess. Target (issue 5): the edit's median within 2x the bare
render's median.

    .venv/bin/python bench/edit_roundtrip.py [--runs 40]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

from _django import ROOT, test_database  # first: it sets Django up

from chains.core import formats  # noqa: E402
from chains.core.render import handle_graph_dot  # noqa: E402

FLIGHT = ROOT / "fixtures" / "flight-roundtrip.yaml"
EDGE = {"kind": "derived_from", "source": "hold_session", "target": "seatmap_ref"}


def store_flight() -> str:
    from chains.models import Chain

    chain = formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]
    return Chain.objects.store(formats.to_document(chain), message="bench").chain.key


def edit_times(key: str, runs: int) -> list[float]:
    """Seconds per edit: remove the seat-map edge, add it back, and so on."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from chains.models import Chain

    client = Client()  # signed in: the sign-in middleware would answer 302
    who, _ = get_user_model().objects.get_or_create(username="bench", is_superuser=True)
    client.force_login(who)
    times = []
    for _ in range(runs):
        head = Chain.objects.get(key=key).head()
        has_edge = "seatmap_ref" in next(
            h for h in head.document["handles"] if h["id"] == "hold_session"
        ).get("derived_from", [])
        op = "remove_edge" if has_edge else "add_edge"
        data = {"base": str(head.number), "op": op, "args": json.dumps(EDGE)}
        started = time.perf_counter()
        response = client.post(f"/chains/{key}/edit", data, HTTP_HX_REQUEST="true")
        times.append(time.perf_counter() - started)
        if response.status_code != 200 or b'id="workspace"' not in response.content:
            raise SystemExit(f"edit {op} answered {response.status_code}")
    return times


def dot_times(runs: int) -> list[float]:
    chain = formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]
    with tempfile.NamedTemporaryFile("w", suffix=".dot", delete=False) as f:
        f.write(handle_graph_dot(chain))
    times = []
    try:
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run(["dot", "-Tsvg", f.name], check=True, capture_output=True)
            times.append(time.perf_counter() - started)
    finally:
        os.unlink(f.name)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    with test_database():
        key = store_flight()
        edit_times(key, 3)  # warm up: imports, template compilation
        # Interleave the two measurements in blocks so machine noise hits both alike.
        edits: list[float] = []
        renders: list[float] = []
        for _ in range(4):
            edits += edit_times(key, args.runs // 4)
            renders += dot_times(args.runs // 4)
    edit, bare = statistics.median(edits), statistics.median(renders)
    print(
        f"edit round trip (htmx POST add/remove edge, flight): median {edit * 1e3:.1f} ms, "
        f"p90 {statistics.quantiles(edits, n=10)[-1] * 1e3:.1f} ms, {len(edits)} edits"
    )
    print(f"bare dot -Tsvg of the same graph: median {bare * 1e3:.1f} ms, {len(renders)} renders")
    print(f"edit / bare render: {edit / bare:.2f}x (target <= 2x)")


if __name__ == "__main__":
    main()
