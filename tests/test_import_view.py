"""The import page: upload or paste a document, see every problem with its line.

A document whose import lost something (an error) is not refused whole: the
page asks to confirm storing the chains that did import, lists the problems
errors first with links to their lines, and keeps the text in the form.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from chains.core import formats
from chains.models import Chain, Revision, Team
from chains.services.imports import digest

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# Two scopes of one compile; the second has one action whose effect is no SPEC
# effect (SPEC §1: read | mint | commit | compensate | select), so that action is
# an error at line 36 and is left out. An unknown key at line 16 is only a note.
LOCKERS = (FIXTURES / "import-problems" / "parcel-lockers.md").read_text()


def test_the_import_page_offers_upload_and_paste(client):
    body = client.get("/chains/import/").content.decode()
    assert 'type="file"' in body and "<textarea" in body


def test_uploading_a_chain_stores_it_and_opens_its_workspace(client):
    upload = SimpleUploadedFile("card.yaml", (FIXTURES / "card-payment.yaml").read_bytes())
    response = client.post("/chains/import/", {"file": upload})
    assert response.status_code == 302 and response["Location"] == Chain.objects.get().url()
    assert Chain.objects.get().head().message == "import card.yaml"


def test_pasting_a_compile_with_two_chains_stores_both_and_lists_them(client):
    text = (FIXTURES / "hotel-compile.md").read_text()
    response = client.post("/chains/import/", {"text": text, "name": "hotel.md"})
    assert response.status_code == 200
    assert Chain.objects.count() == 2
    assert "Stored 2 chains" in response.content.decode()


def test_malformed_yaml_is_a_400_naming_the_line_and_stores_nothing(client):
    response = client.post("/chains/import/", {"text": "id: x\nhandles: [a,\n", "name": "x.yaml"})
    body = response.content.decode()
    assert response.status_code == 400
    assert "line " in body
    assert not Revision.objects.exists()


def test_a_document_that_fails_validation_lists_the_path_and_stores_nothing(client):
    text = "id: x\nactions:\n  - {id: a, effect: teleport}\n"
    response = client.post("/chains/import/", {"text": text, "name": "x.yaml"})
    assert response.status_code == 400
    assert "actions[a].effect" in response.content.decode()
    assert not Chain.objects.exists()


def test_a_failed_import_keeps_what_was_saved_before(client):
    client.post("/chains/import/", {"text": "id: x\ndescription: first\n", "name": "x.yaml"})
    client.post("/chains/import/", {"text": "id: x\nactions: 3\n", "name": "x.yaml"})
    assert Chain.objects.get(key="x").head().document["description"] == "first"


def test_binary_garbage_is_a_400(client):
    upload = SimpleUploadedFile("x.yaml", b"\xff\xfe\x00garbage")
    assert client.post("/chains/import/", {"file": upload}).status_code == 400


def test_an_empty_submission_says_what_to_do(client):
    response = client.post("/chains/import/", {})
    assert response.status_code == 400
    assert "choose a file to upload or paste a document" in response.content.decode()


def test_an_upload_over_the_limit_is_refused(client, settings):
    settings.CHAIN_UPLOAD_MAX_BYTES = 10
    upload = SimpleUploadedFile("big.yaml", b"id: x\n" * 10)
    response = client.post("/chains/import/", {"file": upload})
    assert response.status_code == 400
    assert "the limit is 10 bytes" in response.content.decode()


def three_megabytes() -> str:
    """A valid chain document of about 3 MB, so only its size can be wrong with it."""
    return "id: big\ndescription: " + "x" * (3 * 1000 * 1000) + "\n"


def test_a_three_megabyte_upload_is_a_400_naming_the_limit_and_stores_nothing(client):
    upload = SimpleUploadedFile("big.yaml", three_megabytes().encode())
    response = client.post("/chains/import/", {"file": upload})
    assert response.status_code == 400
    assert "the limit is 2,097,152 bytes" in response.content.decode()
    assert not Revision.objects.exists()


@pytest.mark.parametrize("encoding", ["multipart", "urlencoded"])
def test_a_three_megabyte_paste_is_a_400_naming_the_limit_and_stores_nothing(client, encoding):
    data = {"text": three_megabytes(), "name": "big.yaml"}
    if encoding == "multipart":
        response = client.post("/chains/import/", data)
    else:
        body = urlencode(data)
        response = client.post("/chains/import/", body, "application/x-www-form-urlencoded")
    body = response.content.decode()
    assert response.status_code == 400
    assert 'id="bad-request"' in body
    assert "A chain document may be at most 2 MiB (2,097,152 bytes)" in body
    assert "Nothing was stored" in body
    assert not Revision.objects.exists()


def test_a_paste_over_the_document_limit_but_under_the_request_limit_is_refused_too(client):
    text = "id: big\ndescription: " + "x" * (2 * 1024 * 1024) + "\n"
    response = client.post("/chains/import/", {"text": text, "name": "big.yaml"})
    assert response.status_code == 400
    assert "the pasted document is over the limit of 2,097,152 bytes" in response.content.decode()
    assert not Revision.objects.exists()


def test_a_form_with_too_many_fields_is_a_400_saying_so(client):
    fields = "&".join(f"f{n}=1" for n in range(600))
    response = client.post("/chains/import/", fields, "application/x-www-form-urlencoded")
    assert response.status_code == 400
    assert "The form sent more than 500 fields" in response.content.decode()


# --- a document with problems: confirm, then store ----------------------------------


def paste(client, text: str = LOCKERS, **more: str):
    return client.post("/chains/import/", {"text": text, "name": "lockers.md", **more})


def test_a_document_with_an_error_asks_to_store_its_usable_chains_and_stores_nothing_yet(client):
    response = paste(client)
    body = response.content.decode()
    assert response.status_code == 200
    assert "Store 2 chains with 2 problems" in body
    assert not Chain.objects.exists()


def test_the_confirmation_lists_the_error_first_linked_to_its_line(client):
    body = paste(client).content.decode()
    error, note = body.index('href="#line-36"'), body.index('href="#line-16"')
    assert error < note
    assert "release_slot" in body[error : body.index("</li>", error)]
    assert 'id="line-36"' in body and 'id="line-16"' in body


def test_the_confirmation_keeps_the_submitted_text_and_name_in_the_form(client):
    body = paste(client).content.decode()
    assert "effect: vanish" in body.split('id="document-text"')[1]
    assert 'value="lockers.md"' in body


def test_an_uploaded_document_comes_back_as_text_so_it_can_be_confirmed(client):
    upload = SimpleUploadedFile("lockers.md", LOCKERS.encode())
    body = client.post("/chains/import/", {"file": upload}).content.decode()
    assert "effect: vanish" in body.split('id="document-text"')[1]
    assert 'value="lockers.md"' in body


def test_confirming_stores_the_usable_chains_and_lists_them_with_the_problems(client):
    response = paste(client, confirm=digest(LOCKERS))
    body = response.content.decode()
    assert response.status_code == 200
    assert sorted(Chain.objects.values_list("key", flat=True)) == [
        "locker_release",
        "locker_reserve",
    ]
    assert "Stored 2 chains" in body and 'href="#line-36"' in body
    actions = Chain.objects.get(key="locker_release").head().document["actions"]
    assert [a["id"] for a in actions] == ["open_door"]


def test_the_confirmation_holds_for_the_text_as_a_browser_sends_it_back(client):
    """A textarea comes back with CRLF line ends; that is the same text."""
    paste(client, LOCKERS.replace("\n", "\r\n"), confirm=digest(LOCKERS))
    assert Chain.objects.count() == 2


def test_a_confirmation_of_other_text_asks_again_and_stores_nothing(client):
    edited = LOCKERS.replace("colour: teal", "colour: plum")
    response = paste(client, edited, confirm=digest(LOCKERS))
    assert "Store 2 chains with 2 problems" in response.content.decode()
    assert not Chain.objects.exists()


def test_a_document_with_nothing_usable_is_a_400_naming_what_and_where_and_keeps_the_text(client):
    text = "id: x\nactions:\n  - {id: a, effect: teleport}\n"
    response = client.post("/chains/import/", {"text": text, "name": "x.yaml"})
    body = response.content.decode()
    assert response.status_code == 400
    assert "Nothing stored" in body and 'href="#line-3"' in body
    assert "actions[a].effect" in body
    assert "effect: teleport" in body.split('id="document-text"')[1]


def test_a_clean_compile_is_stored_without_asking(client):
    clean = LOCKERS.replace("effect: vanish", "effect: compensate")
    response = paste(client, clean)
    assert "Stored 2 chains" in response.content.decode()
    assert Chain.objects.count() == 2


# --- permissions ----------------------------------------------------------------------


def test_a_chain_the_person_may_only_view_is_refused_and_the_rest_may_be_confirmed(
    team, people, signed_in
):
    chain = formats.load(LOCKERS, filename="lockers.md").chains[0]
    stored = Chain.objects.store(formats.to_document(chain), team=team).chain
    stored.grant(people["editor"], "viewer")
    editor = signed_in(people["editor"])
    body = paste(editor).content.decode()
    assert "chain id &#x27;locker_reserve&#x27;: your role on this chain is viewer" in body
    assert "Store 1 chain with 3 problems" in body
    paste(editor, confirm=digest(LOCKERS))
    assert Chain.objects.get(key="locker_release").team == team
    assert stored.revisions.count() == 1


def test_a_person_in_two_teams_who_names_none_is_asked_to_choose_and_keeps_the_text(
    team, people, signed_in
):
    Team.objects.found("Second desk", owner=people["owner"], slug="second-desk")
    response = paste(signed_in(people["owner"]))
    body = response.content.decode()
    assert response.status_code == 400
    assert "team: choose the team the new chain belongs to" in body
    assert "effect: vanish" in body.split('id="document-text"')[1]
    assert not Chain.objects.exists()


def test_the_usable_chains_go_to_the_team_chosen(team, people, signed_in):
    Team.objects.found("Second desk", owner=people["owner"], slug="second-desk")
    paste(signed_in(people["owner"]), team="second-desk", confirm=digest(LOCKERS))
    assert {c.team.slug for c in Chain.objects.all()} == {"second-desk"}


def test_an_administrator_without_a_team_is_told_where_new_chains_go_not_that_they_cannot(client):
    """The page works for an administrator with no team; it must not say it does not."""
    page = client.get("/chains/import/").content.decode()
    assert "You edit in no team yet" not in page
    assert "belong to no team" in page
