"""The new-chain wizard: the fit test, its refusals, and creating the chain."""

from __future__ import annotations

import pytest

from chains.core.fit import QUESTIONS
from chains.core.patterns import PATTERNS
from chains.models import Chain

pytestmark = pytest.mark.django_db

FIT = {
    "single_call": "no",
    "mints_handles": "yes",
    "things_expire": "yes",
    "commits": "yes",
    "all_repeatable": "no",
    "provider_polls": "no",
    "human_paced": "no",
    "atomic_across_providers": "no",
}


def test_the_wizard_asks_every_fit_question(client):
    body = client.get("/chains/new/").content.decode()
    assert all(f'name="{q.id}"' in body for q in QUESTIONS)


def test_a_fitting_flow_is_told_so(client):
    body = client.post("/chains/new/", FIT).content.decode()
    assert "A chain config fits" in body


def test_a_single_call_is_refused_and_told_what_to_use_instead(client):
    body = client.post("/chains/new/", {**FIT, "single_call": "yes"}).content.decode()
    assert "probably not the right tool" in body
    assert "retry helper" in body
    assert "Continue anyway" in body


def test_creating_the_chain_stores_revision_1_with_the_fit_answers(client):
    response = client.post("/chains/new/", {**FIT, "create": "1", "key": "trip", "title": "Trip"})
    assert (
        response.status_code == 302 and response["Location"] == Chain.objects.get(key="trip").url()
    )
    revision = Chain.objects.get(key="trip").head()
    assert revision.document == {"id": "trip", "title": "Trip", "extras": {"fit_test": FIT}}
    assert '"verdict": "fit"' in revision.message


def test_the_fit_answers_are_in_the_new_chains_design_document(client):
    client.post("/chains/new/", {**FIT, "create": "1", "key": "trip", "title": "Trip"})
    chain = Chain.objects.get(key="trip")
    design = client.get(chain.url("export", 1, "md")).content.decode()
    assert "was not recorded for this chain" not in design
    assert "**Verdict: a chain fits.**" in design
    assert "`single_call` `no`" in design


def test_a_chain_created_without_answers_stores_no_fit_test(client):
    client.post("/chains/new/", {"create": "1", "key": "bare"})
    assert Chain.objects.get(key="bare").head().document == {"id": "bare", "title": "bare"}


def test_a_refused_flow_can_still_be_created(client):
    data = {**FIT, "single_call": "yes", "create": "1", "key": "one_call"}
    assert client.post("/chains/new/", data).status_code == 302
    assert Chain.objects.filter(key="one_call").exists()


def test_a_taken_or_malformed_id_is_a_400_that_says_so(client):
    Chain.objects.store({"id": "trip"})
    taken = client.post("/chains/new/", {**FIT, "create": "1", "key": "trip"})
    assert taken.status_code == 400 and "exists already" in taken.content.decode()
    bad = client.post("/chains/new/", {**FIT, "create": "1", "key": "<b>"})
    assert bad.status_code == 400 and "chain id" in bad.content.decode()
    assert Chain.objects.count() == 1


def test_an_answer_outside_the_choices_is_a_400(client):
    response = client.post("/chains/new/", {**FIT, "commits": "maybe"})
    assert response.status_code == 400
    assert "commits" in response.content.decode()


def test_a_refused_id_keeps_what_was_typed_and_the_fit_result(client):
    data = {**FIT, "create": "1", "key": "bad id", "title": "Trip"}
    body = client.post("/chains/new/", data).content.decode()
    assert "key: a chain id has letters, digits" in body
    assert 'value="bad id"' in body and 'value="Trip"' in body
    assert "A chain config fits" in body
    assert not Chain.objects.exists()


def test_the_create_step_offers_every_pattern_and_an_empty_chain(client):
    body = client.post("/chains/new/", FIT).content.decode()
    assert 'name="pattern" value="" checked' in body
    assert all(f'name="pattern" value="{p}"' in body for p in PATTERNS)


def test_a_chain_started_from_a_pattern_holds_the_pattern_under_its_own_id(client):
    data = {**FIT, "create": "1", "key": "vm", "title": "VM", "pattern": "search_price_book"}
    assert client.post("/chains/new/", data).status_code == 302
    revision = Chain.objects.get(key="vm").head()
    actions = [a["id"] for a in revision.document["actions"]]
    assert (revision.document["id"], revision.document["title"]) == ("vm", "VM")
    assert actions == [a["id"] for a in PATTERNS["search_price_book"].document["actions"]]
    assert revision.document["extras"] == {"fit_test": FIT}
    assert revision.message.startswith("new chain from the pattern search_price_book;")
    assert revision.lint_status() == "VALID"


def test_an_unknown_pattern_is_refused_beside_the_choice_and_nothing_is_created(client):
    data = {**FIT, "create": "1", "key": "vm", "pattern": "no_such"}
    response = client.post("/chains/new/", data)
    assert response.status_code == 400
    assert "no pattern &#x27;no_such&#x27;" in response.content.decode()
    assert not Chain.objects.filter(key="vm").exists()


def test_a_new_empty_chain_opens_on_a_canvas_that_says_what_to_do_first(client):
    client.post("/chains/new/", {**FIT, "create": "1", "key": "bare2"})
    body = client.get(Chain.objects.get(key="bare2").url()).content.decode()
    assert 'id="empty-canvas"' in body and "No steps yet." in body
    assert '<details class="adders" id="adders" open>' in body


def test_a_chain_with_steps_shows_no_empty_canvas_hint(client):
    client.post("/chains/new/", {**FIT, "create": "1", "key": "vm2", "pattern": "hold_and_capture"})
    body = client.get(Chain.objects.get(key="vm2").url()).content.decode()
    assert 'id="empty-canvas"' not in body


def test_checking_the_fit_refuses_nothing_about_the_chain_not_yet_named(client):
    body = client.post("/chains/new/", FIT).content.decode()
    assert "a chain id has letters" not in body and 'class="field-error"' not in body
