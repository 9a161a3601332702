"""Campaign pages: the explorer launched, watched, cancelled and recovered from the browser.

Most tests stub the task queue (``sent``) and run shards in this process;
the last one launches from the page and lets a real worker thread, fed by
the configured broker (filesystem locally, Redis under CI=true), run it.
"""

from __future__ import annotations

import html
import re
import textwrap
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from django.utils import timezone
from kombu.exceptions import OperationalError

from chains.core import formats
from chains.core.sim.causes import Cause
from chains.core.sim.explorer import ExploreResult
from chains.core.sim.scenario import Scenario
from chains.core.sim.session import decode
from chains.models import MAX_ATTEMPTS, Chain, Exploration, ExplorationShard
from chains.tasks import explore_shard

UNSAFE = Path(__file__).resolve().parent.parent / "fixtures" / "unsafe-retry-booking.yaml"
HTMX = {"HTTP_HX_REQUEST": "true"}
POLLING = 'hx-trigger="every 1s"'
LAUNCH = {"revision": "1", "max_faults": "1", "max_events": "60", "shards": "1", "crashes": "on"}


def store(text: str) -> Chain:
    loaded = formats.load(textwrap.dedent(text), format="yaml")
    return Chain.objects.store(formats.to_document(loaded.chains[0])).chain


@pytest.fixture
def unsafe(db) -> Chain:
    return store(UNSAFE.read_text())


@pytest.fixture
def sent(monkeypatch):
    """The shard tasks that would have gone to the broker, as (exploration id, index)."""
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(explore_shard, "delay", lambda *args: calls.append(args))
    return calls


def launch(chain: Chain, shards: int = 1, **bounds) -> Exploration:
    """A launch whose shards' tasks went out (the stub ``sent`` does not record them)."""
    exploration = Exploration.objects.launch(
        chain.head(), {"max_faults": 1, **bounds}, shards=shards
    )
    exploration.shards.update(sent_at=timezone.now())
    return exploration


def run(exploration: Exploration) -> Exploration:
    """Every shard run in this process, as a worker would."""
    for index in range(exploration.shard_count):
        explore_shard.apply(args=(exploration.pk, index))
    exploration.refresh_from_db()
    return exploration


def page(client, exploration: Exploration, **headers) -> str:
    chain = exploration.revision.chain
    response = client.get(f"{chain.url()}campaigns/{exploration.pk}/", **headers)
    assert response.status_code == 200
    return response.content.decode()


# The list and the launch form


@pytest.mark.django_db
def test_the_list_shows_the_chains_campaigns_newest_first(client, unsafe, sent):
    first, second = launch(unsafe), launch(unsafe, max_faults=2)
    body = client.get(f"{unsafe.url()}campaigns/").content.decode()
    newer = body.index(f'href="{unsafe.url()}campaigns/{second.pk}/"')
    older = body.index(f'href="{unsafe.url()}campaigns/{first.pk}/"')
    assert newer < older
    assert "2 faults, 60 events" in body
    assert "queued" in body


@pytest.mark.django_db
def test_the_list_counts_the_violations_of_a_finished_campaign(client, unsafe, sent):
    run(launch(unsafe))
    body = client.get(f"{unsafe.url()}campaigns/").content.decode()
    assert '<strong class="violations">1</strong>' in body


@pytest.mark.django_db
def test_the_list_leaves_out_campaigns_of_other_chains(client, unsafe, flight, sent):
    other = launch(flight)  # another chain
    body = client.get(f"{unsafe.url()}campaigns/").content.decode()
    assert f"/campaigns/{other.pk}/" not in body


@pytest.mark.django_db
def test_the_launch_form_starts_at_the_head_with_the_usual_bounds(client, unsafe):
    body = client.get(f"{unsafe.url()}campaigns/").content.decode()
    assert 'name="revision" min="1" max="1" value="1"' in body
    assert 'name="max_faults" min="0" max="6" value="2"' in body
    assert 'name="max_events" min="1" max="500" value="60"' in body
    assert 'name="shards" min="1" max="16" value="1"' in body
    assert '<input type="checkbox" name="crashes" checked>' in body


@pytest.mark.django_db
def test_launch_creates_a_campaign_with_the_posted_bounds_and_redirects_to_it(
    client, unsafe, sent, django_capture_on_commit_callbacks
):
    form = {**LAUNCH, "max_faults": "3", "max_events": "40", "shards": "2"}
    del form["crashes"]
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"{unsafe.url()}campaigns/", form)
    exploration = Exploration.objects.get()
    assert response.status_code == 303
    assert response["Location"] == f"{unsafe.url()}campaigns/{exploration.pk}/"
    asked = {"max_faults": 3, "max_events": 40, "crashes": False}
    assert {name: exploration.bounds[name] for name in asked} == asked
    assert exploration.shard_count == 2
    assert exploration.revision == unsafe.head()
    assert sent == [(exploration.pk, 0), (exploration.pk, 1)]


@pytest.mark.django_db
def test_a_launched_campaign_names_who_launched_it_on_its_page_and_in_the_api(
    client, admin_user, unsafe, sent
):
    client.post(f"{unsafe.url()}campaigns/", LAUNCH)
    exploration = Exploration.objects.get()
    assert exploration.author == admin_user
    page = client.get(f"{unsafe.url()}campaigns/{exploration.pk}/").content.decode()
    assert f'<span id="campaign-author">{admin_user.username}</span>' in page
    shown = client.get(f"/api/chains/{unsafe.key}/campaigns/{exploration.pk}").json()
    assert shown["author"] == admin_user.username


@pytest.mark.django_db
def test_an_htmx_launch_is_sent_to_the_campaign_page_by_header(client, unsafe, sent):
    response = client.post(f"{unsafe.url()}campaigns/", LAUNCH, **HTMX)
    exploration = Exploration.objects.get()
    assert response["HX-Redirect"] == f"{unsafe.url()}campaigns/{exploration.pk}/"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("field", "typed", "says"),
    [
        (
            "max_faults",
            "7",
            "max_faults: faults per path must be a whole number from 0 to 6, not 7",
        ),
        (
            "max_faults",
            "-1",
            "max_faults: faults per path must be a whole number from 0 to 6, not -1",
        ),
        (
            "max_events",
            "0",
            "max_events: inputs per path must be a whole number from 1 to 500, not 0",
        ),
        (
            "shards",
            "17",
            "shards: shards (one task each) must be a whole number from 1 to 16, not 17",
        ),
        ("max_events", "many", "max_events: inputs per path must be a whole number from 1 to 500"),
        ("revision", "r1", "revision: Input should be a valid integer"),
    ],
)
def test_a_launch_out_of_bounds_is_refused_naming_the_field_and_keeps_the_form(
    client, unsafe, sent, field, typed, says
):
    response = client.post(f"{unsafe.url()}campaigns/", {**LAUNCH, field: typed})
    body = response.content.decode()
    assert response.status_code == 400
    assert says in body
    assert f'name="{field}"' in body
    assert f'value="{typed}" required aria-invalid="true"' in body
    assert not Exploration.objects.exists()


@pytest.mark.django_db
def test_a_launch_of_an_unknown_revision_is_refused(client, unsafe, sent):
    response = client.post(f"{unsafe.url()}campaigns/", {**LAUNCH, "revision": "9"})
    assert response.status_code == 400
    assert "revision: unsafe_retry_booking has no revision 9 (its head is 1)" in (
        response.content.decode()
    )
    assert not Exploration.objects.exists()


@pytest.mark.django_db
def test_an_htmx_launch_refused_answers_the_form_partial(client, unsafe, sent):
    response = client.post(f"{unsafe.url()}campaigns/", {**LAUNCH, "max_faults": "9"}, **HTMX)
    body = response.content.decode()
    assert response.status_code == 400
    assert body.lstrip().startswith('<div id="campaigns">')
    assert "<h1>" not in body


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("headers", [{}, HTMX], ids=["plain", "htmx"])
def test_a_launch_with_the_worker_queue_down_is_a_503_and_leaves_no_queued_campaign(
    client, unsafe, monkeypatch, headers
):
    def refuse(*args):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(explore_shard, "delay", refuse)
    response = client.post(f"{unsafe.url()}campaigns/", {**LAUNCH, "shards": "2"}, **headers)
    reason = "the worker queue is down: OperationalError: Error 111 connecting to 127.0.0.1:6379"
    assert response.status_code == 503
    assert reason in response.content.decode()
    exploration = Exploration.objects.get()
    assert exploration.status == "failed"
    assert exploration.error.startswith(reason)
    assert not ExplorationShard.objects.filter(status__in=["queued", "running"]).exists()


@pytest.mark.django_db
def test_campaign_pages_of_an_unknown_chain_are_not_found(client):
    assert client.get("/chains/nope/campaigns/").status_code == 404


@pytest.mark.django_db
def test_a_campaign_of_another_chain_is_not_found(client, unsafe, flight, sent):
    other = launch(flight)  # another chain
    assert client.get(f"{unsafe.url()}campaigns/{other.pk}/").status_code == 404
    assert client.post(f"{unsafe.url()}campaigns/{other.pk}/cancel").status_code == 404
    other.refresh_from_db()
    assert other.status == "queued"


# One campaign: progress, result, cancel


@pytest.mark.django_db
def test_the_campaign_page_shows_its_bounds_and_links_back_to_the_campaigns(client, unsafe, sent):
    body = page(client, launch(unsafe, max_events=30, crashes=False))
    assert f'<a href="{unsafe.url()}campaigns/">Campaigns</a>' in body
    assert "<dt>Inputs per path</dt><dd>at most 30</dd>" in body
    assert "<dt>Crashes</dt><dd>left out</dd>" in body


@pytest.mark.django_db
def test_the_progress_partial_polls_itself_while_the_campaign_is_active(client, unsafe, sent):
    exploration = launch(unsafe, shards=2)
    shard = ExplorationShard.objects.claim(exploration.pk, 0, worker="w")
    shard.beat(17)
    body = page(client, exploration, **HTMX)
    url = f"{unsafe.url()}campaigns/{exploration.pk}/"
    assert body.lstrip().startswith('<section id="progress"')
    assert f'hx-get="{url}"' in body
    assert POLLING in body
    assert 'hx-swap="outerHTML"' in body
    assert '<progress id="states-bar">' in body  # no cap: the bar moves without an end
    assert "17 states explored · 0 of 2 shards done" in body
    assert "<h1>" not in body


@pytest.mark.django_db
def test_a_single_shard_campaign_fills_its_bar_with_the_states_its_shard_writes(
    client, unsafe, sent
):
    exploration = launch(unsafe, max_states=400)
    shard = ExplorationShard.objects.claim(exploration.pk, 0, worker="w")
    shard.beat(100)
    body = page(client, exploration, **HTMX)
    assert '<progress id="states-bar" max="400" value="100">' in body
    assert "100 states explored of at most 400" in body
    assert "shards done" not in body  # one shard: nothing to count


@pytest.mark.django_db
def test_the_progress_partial_stops_polling_once_the_campaign_is_done(client, unsafe, sent):
    exploration = run(launch(unsafe, shards=2))
    body = page(client, exploration, **HTMX)
    assert exploration.status == "done"
    assert POLLING not in body
    assert "hx-get" not in body
    assert '<progress id="states-bar" max="1" value="1">' in body


@pytest.mark.django_db
def test_a_finished_campaign_charts_its_terminal_states_by_kind(client, unsafe, sent):
    exploration = run(launch(unsafe, max_faults=2))
    terminals = exploration.result()["terminals"]
    total = sum(terminals.values())
    body = page(client, exploration)
    for kind, count in terminals.items():
        meter = f'<meter min="0" max="{total}" value="{count}" class="terminal-{kind}">'
        assert meter in body
        assert f"{count} ({round(100 * count / total)}%)" in body
    assert "style=" not in body


@pytest.mark.django_db
def test_a_finished_campaign_shows_its_counts(client, unsafe, sent):
    exploration = run(launch(unsafe))
    result = exploration.result()
    body = page(client, exploration)
    assert f"<strong>{result['states']}</strong> states" in body
    assert f"<strong>{result['paths']}</strong> paths" in body
    assert "searched to the bounds" in body


@pytest.mark.django_db
def test_a_campaign_whose_shards_ran_different_explorer_versions_gives_an_upper_bound(
    client, unsafe, sent
):
    exploration = run(launch(unsafe, shards=2))
    shard = exploration.shards.get(index=0)
    shard.result = {**shard.result, "digest_version": 0}  # written before an upgrade
    shard.save(update_fields=["result"])
    Exploration.objects.filter(pk=exploration.pk).update(finished_at=None, merged=None)
    exploration.settle()
    exploration.refresh_from_db()
    states = sum(s.result["states"] for s in exploration.shards.all())
    body = page(client, exploration)
    assert f"at most <strong>{states}</strong> states" in body
    assert 'id="states-inexact"' in body


@pytest.mark.django_db
def test_a_violation_links_to_the_simulator_with_its_counterexample(client, unsafe, sent):
    exploration = run(launch(unsafe))
    [violation] = exploration.result()["violations"]
    body = page(client, exploration)
    assert "<code>unkeyed_redispatch</code>" in body
    assert "counterexample of 2 events" in body.lower()
    href = re.search(r'<a href="([^"]+)">open in the simulator</a>', body).group(1)
    link = urlsplit(href.replace("&amp;", "&"))
    query = {k: v[0] for k, v in parse_qs(link.query).items()}
    assert link.path == f"{unsafe.url()}simulate"
    assert query["r"] == "1"
    assert query["violation"] == "unkeyed_redispatch"
    stored = Scenario.model_validate(violation["scenario"], strict=False)
    assert decode(query["s"]).events == stored.events
    assert client.get(link.path, query).status_code == 200


# A causal line as the explorer stores it with each violation (Violation.as_dict): the row
# that retried the booking, a budget on the Policy tab, and a generic row the chain cannot change.
CAUSE = [
    Cause("book_room", "timeout", "row U2", "retry", "verdict_table[U2]").as_dict(),
    Cause("book_room", "", "attempt budget spent", "dead_end", "policy.per_step").as_dict(),
    Cause("book_room", "http:503", "generic row #6", "reconcile").as_dict(),
]


def explained(exploration: Exploration, cause: list[dict] | None = CAUSE) -> Exploration:
    """The campaign's stored result with ``cause`` on its violation (None: no cause key)."""
    merged = exploration.result()
    for violation in merged["violations"]:
        violation.pop("cause", None)
        if cause is not None:
            violation["cause"] = cause
    Exploration.objects.filter(pk=exploration.pk).update(merged=merged)
    return exploration


def violation_html(body: str) -> str:
    return body.split('<ol class="violation-list">')[1].split("</section>")[0]


@pytest.mark.django_db
def test_a_violation_shows_its_causal_line_first_then_its_message_then_its_scenario(
    client, unsafe, sent
):
    body = violation_html(page(client, explained(run(launch(unsafe)))))
    places = [
        body.index("<code>unkeyed_redispatch</code>"),
        body.index("book_room on timeout: row U2 -&gt; retry"),
        body.index("book_room: attempt budget spent -&gt; dead_end"),
        body.index("row U2 (timeout -&gt; retry) re-dispatched unkeyed commit book_room"),
        body.index('<div class="violation-replay">'),  # the simulator link, then the events
        body.index("observes timeout at book_room"),
    ]
    assert places == sorted(places)
    assert places[-2] < body.index("open in the simulator") < places[-1]


@pytest.mark.django_db
def test_each_event_of_the_counterexample_names_the_step_it_answers(client, unsafe, sent):
    body = page(client, explained(run(launch(unsafe))))
    events = re.search(r'<ol class="scenario-events">(.*?)</ol>', body).group(1)
    assert re.findall(r"<li>(.*?)</li>", events) == [
        "observes http:200 at find_room",
        "observes timeout at book_room",
    ]


@pytest.mark.django_db
def test_a_cause_links_its_row_to_the_row_selected_in_the_workspace(client, unsafe, sent):
    body = page(client, explained(run(launch(unsafe))))
    href = re.search(
        r'<a href="([^"]+)" class="cause-element"[^>]*><code>verdict_table\[U2\]', body
    )
    link = urlsplit(html.unescape(href.group(1)))
    assert link.path == unsafe.url()
    assert parse_qs(link.query) == {"select": ["row:U2"], "tab": ["table"]}
    workspace = client.get(link.path, parse_qs(link.query)).content.decode()
    assert 'data-select="row:U2"' in workspace


@pytest.mark.django_db
def test_a_budget_cause_links_to_the_policy_tab_and_an_unplaced_one_is_not_linked(
    client, unsafe, sent
):
    body = page(client, explained(run(launch(unsafe))))
    assert f'<a href="{unsafe.url()}?tab=policy" class="cause-element"' in body
    assert "generic row #6 -&gt; reconcile</span></li>" in body


@pytest.mark.parametrize(
    "element, query",
    [
        ("verdict_table[#2]", "?select=row%3A%232&tab=table"),
        ("actions[book_room].preconditions[#1]", "?select=action%3Abook_room&tab=actions"),
        ("gates[price_ok].outcomes.decline", "?select=gate%3Aprice_ok&tab=gates"),
        ("handles[room_hold].staleness", "?select=handle%3Aroom_hold&tab=handles"),
        ("policy.per_chain.wall_clock", "?tab=policy"),
    ],
)
@pytest.mark.django_db
def test_a_cause_links_each_element_form_to_where_the_workspace_shows_it(
    client, unsafe, sent, element, query
):
    cause = [{**CAUSE[0], "element": element}]
    body = page(client, explained(run(launch(unsafe)), cause=cause))
    assert f'<a href="{unsafe.url()}{query}" class="cause-element"' in html.unescape(body)


@pytest.mark.django_db
def test_a_violation_stored_before_causes_shows_as_before(client, unsafe, sent):
    body = page(client, explained(run(launch(unsafe)), cause=None))
    assert (
        "<code>unkeyed_redispatch</code>: row U2 (timeout -&gt; retry) re-dispatched unkeyed"
        in body
    )
    assert 'class="cause-line"' not in body and 'class="scenario-events"' not in body


@pytest.mark.django_db
def test_causes_of_a_campaign_on_an_older_revision_say_the_workspace_shows_the_head(
    client, unsafe, sent
):
    exploration = explained(run(launch(unsafe)))
    assert 'id="elements-at-head"' not in page(client, exploration)
    head = unsafe.head()
    unsafe.revisions.create(number=2, document=head.document, content_hash=head.content_hash)
    assert "shows the head revision (r2); this campaign explored r1" in page(client, exploration)


# A select whose handle no step's result fills (the explorer's coverage tests share it).
NO_OPTIONS = (Path(__file__).resolve().parent / "core/sim/fixtures/no-options.yaml").read_text()


@pytest.mark.django_db
def test_a_finished_campaign_shows_its_coverage_as_bars(client, unsafe, sent):
    exploration = run(launch(unsafe))
    coverage = exploration.result()["coverage"]
    body = page(client, exploration)
    steps = coverage["steps"]
    assert (len(steps["reached"]), steps["total"]) == (2, 2)
    assert '<meter min="0" max="2" value="2" class="coverage-steps">100%</meter>' in body
    assert "<dt>rows fired</dt>" in body and "<dt>compensations run</dt>" in body
    assert "<dt>outcomes taken</dt><dd><span>none declared</span>" in body
    assert 'id="never-reached"' not in body


@pytest.mark.django_db
def test_a_clean_campaign_that_never_reached_a_step_is_not_shown_as_a_pass(client, sent):
    exploration = run(launch(store(NO_OPTIONS), shards=2))
    body = page(client, exploration)
    assert exploration.result()["violations"] == []
    assert "No invariant broke" not in body.split('id="not-a-pass"')[0]
    assert 'class="notice"' not in body
    assert "<strong>Not a pass.</strong>" in body
    assert "Never reached: <code>create_order</code>" in body
    assert (
        "explored 2 of 3 steps: select_offer never received options "
        "(dead_end: no_options_to_select); never reached: create_order"
    ) in body


@pytest.mark.django_db
def test_the_list_shows_the_steps_reached_and_flags_an_incomplete_campaign(client, sent):
    chain = store(NO_OPTIONS)
    run(launch(chain))
    body = client.get(f"{chain.url()}campaigns/").content.decode()
    assert '<strong class="incomplete-count">2 of 3</strong> <small>incomplete</small>' in body


@pytest.mark.django_db
def test_a_campaign_stored_before_coverage_says_so_and_keeps_its_old_verdict(client, unsafe, sent):
    exploration = run(launch(unsafe))
    merged = exploration.result()
    for key in ("coverage", "not_covered", "warnings", "complete", "happy_path"):
        del merged[key]
    merged["violations"] = []
    Exploration.objects.filter(pk=exploration.pk).update(merged=merged)
    body = page(client, exploration)
    assert "ran before the explorer recorded coverage" in body
    assert "No invariant broke within these bounds." in body


@pytest.mark.django_db
def test_cancel_stops_an_active_campaign_and_returns_to_its_page(client, unsafe, sent):
    exploration = launch(unsafe)
    url = f"{unsafe.url()}campaigns/{exploration.pk}/"
    response = client.post(f"{url}cancel")
    exploration.refresh_from_db()
    assert response.status_code == 302
    assert response["Location"] == url
    assert exploration.status == "cancelled"
    assert "No shard had explored anything" in page(client, exploration)


@pytest.mark.django_db
def test_an_htmx_cancel_answers_the_progress_partial_without_polling(client, unsafe, sent):
    exploration = launch(unsafe)
    response = client.post(f"{unsafe.url()}campaigns/{exploration.pk}/cancel", **HTMX)
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="progress"')
    assert POLLING not in body
    assert 'id="campaign-status">cancelled</span>' in body


@pytest.mark.django_db
def test_cancel_accepts_only_post(client, unsafe, sent):
    exploration = launch(unsafe)
    assert client.get(f"{unsafe.url()}campaigns/{exploration.pk}/cancel").status_code == 405


@pytest.mark.django_db
def test_the_cancel_button_shows_only_while_the_campaign_is_active(client, unsafe, sent):
    exploration = launch(unsafe)
    assert ">Cancel</button>" in page(client, exploration)
    exploration.cancel()
    assert ">Cancel</button>" not in page(client, exploration)


@pytest.mark.django_db
def test_a_cancelled_campaign_shows_what_it_explored_as_truncated(client, unsafe, sent):
    exploration = launch(unsafe)
    shard = ExplorationShard.objects.claim(exploration.pk, 0, worker="w")
    exploration.cancel()
    partial = ExploreResult(
        states=9, paths=2, terminals={"done": 2}, violations=[], seconds=0.1, truncated=True
    )
    shard.finish(partial, stopped=True)
    body = page(client, exploration)
    assert "Cancelled. Below is what the shards explored" in body
    assert "<strong>truncated</strong>" in body
    assert "No invariant broke in the part explored" in body


@pytest.mark.django_db
def test_a_failed_campaign_shows_its_error(client, unsafe, sent, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("chains.tasks.explore", broken)
    body = page(client, run(launch(unsafe)))
    assert "The campaign failed: shard 0: RuntimeError: boom" in body
    assert POLLING not in body


# Recovery: a page view takes back abandoned work


def queued_long_ago(exploration: Exploration) -> None:
    """Its shards' tasks were sent long ago and never claimed: the messages were lost."""
    long_ago = timezone.now() - timedelta(minutes=10)
    exploration.shards.update(queued_at=long_ago, sent_at=long_ago)


@pytest.mark.django_db
def test_a_shard_queued_long_ago_gets_its_task_sent_again_once_when_polled_twice(
    client, unsafe, sent, django_capture_on_commit_callbacks
):
    exploration = launch(unsafe)
    queued_long_ago(exploration)
    with django_capture_on_commit_callbacks(execute=True):
        page(client, exploration, **HTMX)
        page(client, exploration, **HTMX)
    assert sent == [(exploration.pk, 0)]


@pytest.mark.django_db
def test_a_shard_queued_a_moment_ago_is_not_sent_again(
    client, unsafe, sent, django_capture_on_commit_callbacks
):
    exploration = launch(unsafe)
    with django_capture_on_commit_callbacks(execute=True):
        page(client, exploration, **HTMX)
    assert sent == []


@pytest.mark.django_db
def test_a_page_poll_requeues_a_stale_running_shard(
    client, unsafe, sent, django_capture_on_commit_callbacks
):
    exploration = launch(unsafe)
    shard = ExplorationShard.objects.claim(exploration.pk, 0, worker="gone")
    ExplorationShard.objects.filter(pk=shard.pk).update(
        heartbeat_at=timezone.now() - timedelta(minutes=5)
    )
    with django_capture_on_commit_callbacks(execute=True):
        body = page(client, exploration, **HTMX)
    shard.refresh_from_db()
    assert shard.status == "queued"
    assert sent == [(exploration.pk, 0)]
    assert POLLING in body


@pytest.mark.django_db
def test_a_page_poll_fails_a_stale_shard_out_of_attempts_naming_the_worker(client, unsafe, sent):
    exploration = launch(unsafe)
    shard = ExplorationShard.objects.claim(exploration.pk, 0, worker="gone")
    ExplorationShard.objects.filter(pk=shard.pk).update(
        attempts=MAX_ATTEMPTS, heartbeat_at=timezone.now() - timedelta(minutes=5)
    )
    body = page(client, exploration, **HTMX)
    assert f"The campaign failed: shard 0: no heartbeat from {shard.claimed_by}" in body
    assert POLLING not in body


# Through a real broker and worker


@pytest.mark.django_db(transaction=True)
def test_a_campaign_launched_from_the_page_runs_until_its_result_shows(
    celery_worker, client, wait_until
):
    chain = store(UNSAFE.read_text())
    form = {**LAUNCH, "shards": "2"}
    url = client.post(f"{chain.url()}campaigns/", form)["Location"]

    def page() -> str:
        return client.get(url, **HTMX).content.decode()

    wait_until(lambda: POLLING not in page(), interval=0.2, message="the campaign did not finish")
    body = page()
    assert 'id="campaign-status">done</span>' in body
    assert '<progress id="states-bar" max="1" value="1">' in body
    assert "open in the simulator" in body


# Caps and turns: what the pages say about them


@pytest.mark.django_db
def test_the_launch_form_shows_the_caps_every_campaign_runs_under(client, unsafe, settings):
    settings.CAMPAIGN_MAX_STATES = 12345
    settings.CAMPAIGN_TIME_LIMIT = 90
    settings.CAMPAIGN_MAX_MEMORY_MB = 640
    settings.CAMPAIGN_TEAM_CAMPAIGNS = 3
    body = client.get(f"{unsafe.url()}campaigns/").content.decode()
    caps = re.search(r'<p class="help" id="campaign-caps">(.*?)</p>', body, re.S)
    assert caps, body
    assert "12,345 states" in caps[1]
    assert "90 s" in caps[1]
    assert "640 MB" in caps[1]
    assert "3 campaigns" in caps[1]


@pytest.mark.django_db
def test_a_campaign_stopped_at_a_cap_says_which_with_the_coverage_it_reached(
    client, unsafe, sent, settings
):
    exploration = Exploration.objects.launch(unsafe.head(), {"max_faults": 2, "max_states": 20})
    body = page(client, run(exploration))
    stopped = re.search(r'<p class="incomplete" id="stopped-by">(.*?)</p>', body, re.S)
    assert stopped, body
    assert "state cap" in stopped[1]
    assert "20 states" in stopped[1]
    assert 'id="coverage"' in body


@pytest.mark.django_db
def test_the_list_flags_a_campaign_stopped_at_a_cap(client, unsafe, sent):
    run(Exploration.objects.launch(unsafe.head(), {"max_faults": 2, "max_states": 20}))
    body = client.get(f"{unsafe.url()}campaigns/").content.decode()
    assert "<small>state cap</small>" in body


@pytest.mark.django_db
def test_a_campaign_waiting_for_its_team_says_so_on_its_page(client, unsafe, sent, settings):
    settings.CAMPAIGN_TEAM_CAMPAIGNS = 1
    launch(unsafe)
    body = html.unescape(page(client, launch(unsafe)))
    assert "Waiting for the team's earlier campaigns" in body


@pytest.mark.django_db
def test_the_list_marks_a_campaign_waiting_for_its_team(client, unsafe, sent, settings):
    settings.CAMPAIGN_TEAM_CAMPAIGNS = 1
    launch(unsafe)
    launch(unsafe)
    body = html.unescape(client.get(f"{unsafe.url()}campaigns/").content.decode())
    assert body.count("<small>waiting for the team's earlier campaigns</small>") == 1
