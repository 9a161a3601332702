"""How the simulator page's time grows with the events in its address.

Builds simulation addresses of 1,000 to 10,000 events on the flight fixture
(the run is started, then each event waits zero seconds, so every event
applies and writes a trace event: a token of a few hundred characters once
compressed), and times ``GET /chains/<key>/simulate?s=...`` through Django's
test client on a throwaway SQLite database. Linear replay shows as a time
ratio close to the events ratio. Target (issue 14): 10,000 events well under
10 s.

    .venv/bin/python bench/simulator_scale.py [--events 1000 2000 5000 10000]
"""

from __future__ import annotations

import argparse
import time

from _django import ROOT, test_database  # first: it sets Django up

FLIGHT = ROOT / "fixtures" / "flight-roundtrip.yaml"


def main() -> None:
    from urllib.parse import urlencode

    from django.contrib.auth import get_user_model
    from django.test import Client

    from chains.core import formats
    from chains.core.sim.scenario import Scenario
    from chains.core.sim.session import encode
    from chains.models import Chain

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, nargs="+", default=[1000, 2000, 5000, 10000])
    args = parser.parse_args()
    with test_database():
        chain = formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]
        key = Chain.objects.store(formats.to_document(chain), message="bench").chain.key
        client = Client()
        who, _ = get_user_model().objects.get_or_create(username="bench", is_superuser=True)
        client.force_login(who)
        print("events  token chars  status  seconds")
        for n in [10, *args.events]:
            token = encode(Scenario(chain=chain.id, events=[{"wait": 0}] * n))
            url = f"/chains/{key}/simulate?{urlencode({'r': 1, 's': token})}"
            started = time.perf_counter()
            response = client.get(url)
            elapsed = time.perf_counter() - started
            print(f"{n:6}  {len(token):11}  {response.status_code:6}  {elapsed:7.2f}")


if __name__ == "__main__":
    main()
