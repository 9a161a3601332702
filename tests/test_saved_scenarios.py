"""Scenarios kept with a chain: saved, replayed on each revision, exported as test vectors."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from django.core.management import CommandError, call_command

from chains.core.sim.session import decode
from chains.models import Chain, SavedScenario

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent
HAPPY = ROOT / "fixtures" / "scenarios" / "flight-happy-path.yaml"


def command(*args: str) -> str:
    out = StringIO()
    call_command("chain", *args, stdout=out)
    return out.getvalue()


def save(chain: Chain, name: str, expect: dict) -> None:
    data = yaml.safe_load(HAPPY.read_text())
    data["expect"] = expect
    SavedScenario.objects.create(chain=chain, name=name, document=data)


def test_adding_a_scenario_with_record_saves_its_outcome_as_expect(flight):
    command("scenario", "add", flight.key, "happy path", str(HAPPY), "--record")
    saved = flight.scenarios.get(name="happy path")
    assert saved.document["expect"]["state"] == "done"
    assert saved.document["expect"]["dispatches"]["book_trip"] == 1
    assert "held: happy path" in command("scenario", "check", flight.key)


def test_adding_a_scenario_under_a_name_over_200_characters_is_refused(flight):
    with pytest.raises(CommandError, match=r"^name: String should have at most 200 characters"):
        command("scenario", "add", flight.key, "x" * 201, str(HAPPY))
    assert not SavedScenario.objects.exists()


def test_a_scenario_whose_outcome_changed_fails_the_check_with_a_sentence(flight):
    save(flight, "happy path", {"state": "dead_end"})
    with pytest.raises(CommandError, match="changed outcome"):
        command("scenario", "check", flight.key)


def test_the_workspace_lists_each_saved_scenario_and_what_changed(client, flight):
    save(flight, "happy path", {"state": "dead_end"})
    save(flight, "still fine", {"state": "done"})
    body = client.get(f"/chains/{flight.key}/").content.decode()
    section = body.split('id="scenario-checks"')[1].split("</ul>")[0]
    assert "✓ still fine" in section
    assert "✗ happy path" in section
    assert "now ends in done instead of dead_end" in section


def test_a_saved_scenario_that_no_longer_loads_is_reported_not_skipped(client, flight):
    SavedScenario.objects.create(chain=flight, name="broken", document={"events": "nope"})
    body = client.get(f"/chains/{flight.key}/").content.decode()
    assert "scenario &#x27;broken&#x27; no longer loads" in body


def test_the_test_vectors_download_replays_every_scenario_on_the_head(client, flight):
    save(flight, "happy path", {"state": "done"})
    response = client.get(f"/chains/{flight.key}/scenarios.json")
    assert response.status_code == 200
    assert response["Content-Disposition"].endswith('-r1-vectors.json"')
    vectors = json.loads(response.content)
    assert vectors["chain"] == "flight_roundtrip" and vectors["revision"] == 1
    (vector,) = vectors["vectors"]
    assert vector["name"] == "happy path"
    assert vector["trace"]
    assert command("scenario", "export", flight.key).strip().startswith("{")


def test_the_workspace_header_counts_the_scenarios_that_pass_and_fail(client, flight):
    save(flight, "happy path", {"state": "dead_end"})
    save(flight, "still fine", {"state": "done"})
    save(flight, "also fine", {"state": "done"})
    body = client.get(f"/chains/{flight.key}/").content.decode()
    header = body.split('<header class="ws-head">')[1].split("</header>")[0]
    summary = header.split('id="scenario-summary"')[1].split("</a>")[0]
    assert summary.endswith(">scenarios: 2 pass, 1 fails")
    assert 'class="scenario-summary failing"' in header
    assert 'href="#failing-scenarios"' in summary


def test_a_failing_scenario_can_be_accepted_from_under_the_title(client, flight):
    save(flight, "happy path", {"state": "dead_end"})
    save(flight, "still fine", {"state": "done"})
    body = client.get(f"/chains/{flight.key}/").content.decode()
    header = body.split('<header class="ws-head">')[1].split("</header>")[0]
    failing = header.split('id="failing-scenarios"')[1].split("</details>")[0]
    assert "happy path" in failing and "still fine" not in failing
    assert "now ends in done instead of dead_end" in failing
    assert "Accept the new outcome" in failing and 'name="note"' in failing


def test_an_accepted_outcome_keeps_its_note_and_shows_it_beside_the_scenario(client, flight):
    save(flight, "happy path", {"state": "dead_end"})
    url = f"{flight.url()}scenarios/record"
    client.post(url, {"name": "happy path", "note": "  the booking now lands first  "})
    assert flight.scenarios.get(name="happy path").note == "the booking now lands first"
    body = client.get(f"/chains/{flight.key}/").content.decode()
    assert "Accepted because: the booking now lands first" in body


def test_a_note_too_long_is_refused_and_the_scenario_keeps_its_outcome(client, flight):
    save(flight, "happy path", {"state": "dead_end"})
    url = f"{flight.url()}scenarios/record"
    response = client.post(url, {"name": "happy path", "note": "x" * 1001})
    assert response.status_code == 400 and "note" in response.content.decode()
    assert flight.scenarios.get(name="happy path").document["expect"]["state"] == "dead_end"


def test_deleting_a_scenario_stops_keeping_it_and_says_so(client, flight):
    save(flight, "happy path", {"state": "done"})
    url = f"{flight.url()}scenarios/delete"
    body = client.post(url, {"name": "happy path"}, HTTP_HX_REQUEST="true").content.decode()
    assert not flight.scenarios.filter(name="happy path").exists()
    assert "Scenario “happy path” is no longer kept with this chain." in body


def test_the_delete_button_asks_before_it_deletes(client, flight):
    save(flight, "happy path", {"state": "done"})
    body = client.get(f"/chains/{flight.key}/").content.decode()
    assert 'hx-confirm="Delete the scenario happy path?' in body


def test_deleting_a_scenario_that_is_not_kept_is_a_400_naming_it(client, flight):
    response = client.post(f"{flight.url()}scenarios/delete", {"name": "nope"})
    assert response.status_code == 400
    assert "no scenario &#x27;nope&#x27;" in response.content.decode()


def test_a_viewer_sees_no_accept_or_delete_buttons(signed_in, people, team, flight):
    save(flight, "happy path", {"state": "dead_end"})
    body = signed_in(people["viewer"]).get(f"/chains/{flight.key}/").content.decode()
    assert "Accept the new outcome" not in body and "delete-scenario" not in body


def test_the_header_says_nothing_of_scenarios_when_none_is_saved(client, flight):
    body = client.get(f"/chains/{flight.key}/").content.decode()
    assert 'id="scenario-summary"' not in body


def record(client, chain: Chain, name: str, **htmx: str):
    url = f"{chain.url()}scenarios/record"
    return client.post(url, {"name": name, "select": "action:book_trip"}, **htmx)


def test_accepting_a_changed_outcome_makes_the_scenario_expect_what_the_head_does(client, flight):
    save(flight, "happy path", {"state": "dead_end"})
    response = record(client, flight, "happy path")
    assert response.status_code == 302
    assert response["Location"].endswith("?select=action%3Abook_trip#scenario-checks")
    kept = flight.scenarios.get(name="happy path")
    assert kept.document["expect"]["state"] == "done"
    inputs = yaml.safe_load(HAPPY.read_text())["events"]  # the same inputs, in order
    assert [list(event) for event in kept.document["events"]] == [list(e) for e in inputs]
    assert "held: happy path" in command("scenario", "check", flight.key)


def test_the_accept_button_shows_beside_a_failing_scenario_only(client, flight):
    save(flight, "happy path", {"state": "dead_end"})
    save(flight, "still fine", {"state": "done"})
    body = client.get(f"/chains/{flight.key}/").content.decode()
    section = body.split('id="scenario-checks"')[1].split("</ul>")[0]
    assert section.count("Accept the new outcome") == 1
    assert section.index("happy path") < section.index("Accept the new outcome")


def test_an_htmx_accept_answers_the_workspace_saying_so_and_the_header_clears(client, flight):
    save(flight, "happy path", {"state": "dead_end"})
    body = record(client, flight, "happy path", HTTP_HX_REQUEST="true").content.decode()
    assert "Scenario “happy path” now expects what revision 1 does." in body
    assert ">scenarios: 1 passes</a>" in body
    assert flight.head().number == 1  # the chain itself is not changed


def test_accepting_a_scenario_the_chain_does_not_keep_is_a_400_naming_it(client, flight):
    response = record(client, flight, "no such scenario", HTTP_HX_REQUEST="true")
    assert response.status_code == 400
    assert (
        "no scenario &#x27;no such scenario&#x27; is kept with this chain"
        in response.content.decode()
    )


def test_a_saved_scenario_opens_in_the_simulator_run_on_the_head(client, flight):
    save(flight, "happy path", {"state": "done"})
    body = client.get(f"/chains/{flight.key}/").content.decode()
    link = body.split('id="scenario-checks"')[1].split("open in the simulator")[0]
    assert link.endswith(f'href="{flight.url("open_scenario")}?name=happy%20path">')
    opened = client.get(f"{flight.url('open_scenario')}?name=happy path")
    assert opened.status_code == 302
    assert opened["Location"].startswith(f"{flight.url('simulate')}?r=1&s=")
    page = client.get(opened["Location"])
    assert page.status_code == 200
    assert 'id="run-state">done</span>' in page.content.decode()  # the whole run, booked


def test_opening_a_scenario_the_chain_does_not_keep_is_a_404(client, flight):
    assert client.get(f"{flight.url('open_scenario')}?name=nothing").status_code == 404


def test_opening_a_scenario_without_a_name_is_a_400_naming_the_field(client, flight):
    response = client.get(flight.url("open_scenario"))
    assert response.status_code == 400
    assert response.content.decode().startswith("name")


def test_a_scenario_that_stops_replaying_opens_after_the_last_event_that_still_applies(
    client, flight
):
    data = yaml.safe_load(HAPPY.read_text())
    data["events"][3] = {"select": "ret_9"}  # an option the return search no longer offers
    SavedScenario.objects.create(chain=flight, name="gone option", document=data)
    body = client.get(f"/chains/{flight.key}/").content.decode()
    assert "open where it stops replaying" in body.split('id="scenario-checks"')[1]
    opened = client.get(f"{flight.url('open_scenario')}?name=gone option")
    query = parse_qs(urlsplit(opened["Location"]).query)
    assert len(decode(query["s"][0]).events) == 3  # the searches and the outbound pick


def test_a_scenario_whose_verdicts_changed_opens_at_the_first_that_differs(client, flight):
    data = yaml.safe_load(HAPPY.read_text())
    data["expect"] = {"verdicts": ["ok", "ok", "ok", "ok", "retry", "ok", "ok"]}
    SavedScenario.objects.create(chain=flight, name="retried quote", document=data)
    body = client.get(f"/chains/{flight.key}/").content.decode()
    assert "open at the first verdict that differs" in body.split('id="scenario-checks"')[1]
    opened = client.get(f"{flight.url('open_scenario')}?name=retried quote")
    query = parse_qs(urlsplit(opened["Location"]).query)
    # Verdict 5 answers the seventh event (initiate_hold): the two picks give none.
    assert len(decode(query["s"][0]).events) == 7
