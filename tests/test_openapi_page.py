"""Actions from a provider's OpenAPI document, on a chain's page: uploaded once and kept,
listed a page at a time by address, ticked across pages, added as one revision."""

from __future__ import annotations

import functools
import hashlib
import json
import re
import secrets
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from chains.core import formats, openapi
from chains.core.lint import lint
from chains.models import Chain, OpenApiUpload, uploads
from chains.services.access import spec_of
from tests.core.sim.builders import fixture
from tests.core.test_openapi import recording_listener, self_referring, with_error_schema

pytestmark = pytest.mark.django_db

SKYLOOM = Path(__file__).resolve().parent.parent / "fixtures" / "openapi" / "skyloom-air.yaml"


@pytest.fixture
def chain() -> Chain:
    return Chain.objects.store(
        formats.to_document(fixture("unsafe-retry-booking.yaml")), message="r1"
    ).chain


def uploaded(client, chain, text: str | None = None, name: str = "skyloom-air.yaml") -> str:
    """The address of the upload of ``text`` (Skyloom's by default), as the redirect names it."""
    data = SKYLOOM.read_bytes() if text is None else text.encode()
    answer = client.post(chain.url("openapi"), {"document": SimpleUploadedFile(name, data)})
    assert answer.status_code == 302, answer.content.decode()[:500]
    return answer["Location"]


def listed(client, address: str, **query) -> str:
    answer = client.get(address, query)
    assert answer.status_code == 200, answer.content.decode()[:500]
    return answer.content.decode()


def test_an_uploaded_document_lists_every_operation_with_its_guessed_effect(client, chain):
    html = listed(client, uploaded(client, chain))
    assert html.count('name="pick"') == 13
    assert (
        '<option value="commit" selected>' in html.split('id="op-book_order"')[1].split("</tr>")[0]
    )


def test_the_ticked_operations_are_added_as_one_revision_with_their_documented_errors(
    client, chain
):
    form = {"base": "1", "pick": ["book_order", "refund_payment"]}
    answer = client.post(
        uploaded(client, chain) + "add", {**form, "effect-refund_payment": "compensate"}
    )
    assert answer.status_code == 302
    head = chain.head()
    doc = spec_of(head)
    added = {a.id: a for a in doc.actions if a.id in ("book_order", "refund_payment")}
    assert head.number == 2 and added["refund_payment"].effect == "compensate"
    assert "http:409 && code:HOLD_EXPIRED" in added["book_order"].documented_errors
    rules = {f.rule for f in lint(doc).findings}
    assert "table.documented-error-uncovered" in rules


def test_adding_on_a_stale_base_is_a_409_and_stores_nothing(client, chain):
    form = {"base": "7", "pick": ["get_order"]}
    assert client.post(uploaded(client, chain) + "add", form).status_code == 409
    assert chain.head().number == 1


def test_an_id_the_chain_has_already_is_a_400_naming_it(client, chain):
    text = SKYLOOM.read_text().replace("operationId: getOrder", "operationId: findRoom")
    form = {"base": "1", "pick": ["find_room"]}
    answer = client.post(uploaded(client, chain, text) + "add", form)
    assert answer.status_code == 400 and "find_room" in answer.content.decode()
    assert chain.head().number == 1


def test_a_document_that_is_not_openapi_is_a_400_saying_why(client, chain):
    answer = client.post(chain.url("openapi"), {"text": "asyncapi: '2.6.0'\n"})
    assert answer.status_code == 400 and "no `openapi` (3.x)" in answer.content.decode()


def test_a_reference_to_a_url_is_refused_naming_it_and_nothing_is_fetched(client, chain):
    with recording_listener() as (url, asked):
        text = with_error_schema({"$ref": f"{url}/error.json"})
        answer = client.post(chain.url("openapi"), {"text": text})
    html = answer.content.decode()
    assert answer.status_code == 400 and asked == []
    assert f"$ref: {url}/error.json` points outside the document" in html
    assert "/paths/~1orders/post/responses/409/content/application~1json/schema" in html


def test_a_reference_to_a_file_is_refused_and_the_file_never_shows(client, chain, tmp_path):
    secret = secrets.token_hex(16)
    marker = tmp_path / "env.yaml"
    marker.write_text(f"SECRET_KEY: {secret}\n")
    for ref in (marker.as_uri(), "env.yaml"):
        upload = SimpleUploadedFile("api.json", with_error_schema({"$ref": ref}).encode())
        answer = client.post(chain.url("openapi"), {"document": upload})
        html = answer.content.decode()
        assert answer.status_code == 400 and secret not in html
        assert f"$ref: {ref}` points outside the document" in html


@pytest.mark.parametrize("shape", ["recursive", "all_of"])
def test_schemas_that_refer_back_to_themselves_are_listed(client, chain, shape):
    schemas = (
        self_referring(12)
        if shape == "recursive"
        else {"S1": {"allOf": [{"$ref": "#/components/schemas/S1"}], "required": ["x"]}}
    )
    text = with_error_schema({"$ref": "#/components/schemas/S1"}, components={"schemas": schemas})
    assert 'id="op-create_order"' in listed(client, uploaded(client, chain, text, "api.json"))


@pytest.mark.parametrize("base", ["abc", "1.5", "-3", "0"])
def test_a_base_that_is_not_a_revision_number_is_a_400_naming_the_field(client, chain, base):
    form = {"base": base, "pick": ["get_order"]}
    answer = client.post(uploaded(client, chain) + "add", form)
    assert answer.status_code == 400 and "base:" in answer.content.decode()
    assert chain.head().number == 1


def many_operations(count: int) -> str:
    paths = {
        f"/things{i}": {
            "post": {"operationId": f"makeThing{i}", "responses": {"409": {"description": "c"}}}
        }
        for i in range(count)
    }
    return json.dumps({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": paths})


def test_a_long_document_is_listed_a_page_at_a_time(client, chain):
    address = uploaded(client, chain, many_operations(250), "things.json")
    first, last = listed(client, address), listed(client, address, page="3")
    assert first.count('name="pick"') == 100 and 'id="op-make_thing0"' in first
    assert last.count('name="pick"') == 50 and 'id="op-make_thing249"' in last
    assert "page 3 of 3" in last and 'id="openapi-next"' not in last


def test_the_filter_lists_only_the_operations_it_matches(client, chain):
    address = uploaded(client, chain, many_operations(250), "things.json")
    html = listed(client, address, q="thing24")
    assert html.count('name="pick"') == 11  # make_thing24 and make_thing240..249
    assert "Operations 1–11 of 11 matching “thing24” (of 250)" in html


def test_ticks_on_other_pages_are_kept_and_added(client, chain):
    address = uploaded(client, chain, many_operations(250), "things.json")
    page_one = {"effect-make_thing3": "read", "effect-make_thing4": "commit"}
    moved = client.post(address, {**page_one, "pick": ["make_thing3"], "go": "2"})
    assert moved.status_code == 302 and moved["Location"] == f"{address}?page=2"
    assert said(listed(client, address, page="2"), "openapi-ticked").startswith(
        "1 ticked (0 on this page, 1 on other pages"
    )
    form = {"pick": ["make_thing150"], "effect-make_thing150": "commit", "base": "1"}
    assert client.post(address + "add", form).status_code == 302
    added = {a.id: a.effect for a in spec_of(chain.head()).actions}
    assert added["make_thing3"] == "read" and added["make_thing150"] == "commit"


def test_a_document_with_too_many_operations_is_a_400_saying_how_many(client, chain, monkeypatch):
    monkeypatch.setattr(openapi.reading, "MAX_OPERATIONS", 200)
    answer = client.post(chain.url("openapi"), {"text": many_operations(250)})
    assert (
        answer.status_code == 400 and "has 250 operations; at most 200" in answer.content.decode()
    )


def test_a_document_over_the_upload_limit_is_a_400_before_it_is_read(client, chain, settings):
    settings.OPENAPI_UPLOAD_MAX_BYTES = 1000
    upload = SimpleUploadedFile("skyloom-air.yaml", SKYLOOM.read_bytes())
    answer = client.post(chain.url("openapi"), {"document": upload})
    assert answer.status_code == 400 and "the limit is 1,000" in answer.content.decode()


def test_an_openapi_document_larger_than_any_chain_is_read(client, chain, settings):
    settings.CHAIN_UPLOAD_MAX_BYTES = 1000  # the provider's document has a limit of its own
    assert "book_order" in listed(client, uploaded(client, chain))


TAGS = ["Payments", "Refunds", "Customers", "Air Orders"]


@functools.cache
def provider_document(count: int = 468, padding: int = 0) -> str:
    """A provider of our own as large as a real one: ``count`` tagged, keyed operations in
    turn of :data:`TAGS` (``create_payments0``, ``create_refunds1`` …), each body with
    ``padding`` more described properties (about 4 MB in all at 100), as JSON."""
    paths = {}
    for i in range(count):
        tag = TAGS[i % len(TAGS)]
        described = {
            f"detail_{k}": {"type": "string", "description": f"Detail {k} of {tag}, at length."}
            for k in range(padding)
        }
        body = {"type": "object", "properties": {"amount": {"type": "integer"}, **described}}
        paths[f"/v1/{tag.lower().replace(' ', '_')}/{i}"] = {
            "post": {
                "operationId": f"create{tag.replace(' ', '')}{i}",
                "tags": [tag],
                "summary": f"Create {tag.lower()} number {i}",
                "parameters": [
                    {"name": "Idempotency-Key", "in": "header", "schema": {"type": "string"}}
                ],
                "requestBody": {"content": {"application/json": {"schema": body}}},
                "responses": {
                    "200": {"description": "done"},
                    "409": {
                        "description": "conflict",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                        },
                    },
                },
            }
        }
    error = {"type": "object", "properties": {"code": {"type": "string", "enum": ["BUSY"]}}}
    return json.dumps(
        {
            "openapi": "3.0.3",
            "info": {"title": "A provider of our own", "version": "1"},
            "paths": paths,
            "components": {"schemas": {"Error": error}},
        }
    )


def said(html: str, element: str) -> str:
    """The text of the paragraph ``element`` of ``html``, its tags left out."""
    inside = html.split(f'id="{element}"', 1)[1].split(">", 1)[1].split("</p>", 1)[0]
    return re.sub(r"<[^>]+>", "", inside)


def shown_ids(html: str) -> list[str]:
    return [part.split('"')[0] for part in html.split('name="pick" value="')[1:]]


def page_form(html: str, ticked: int) -> dict:
    """What a browser posts from a page of the list: every row's effect, the first ``ticked``
    rows ticked."""
    ids = shown_ids(html)
    return {"pick": ids[:ticked], **{f"effect-{op}": "commit" for op in ids}}


def test_an_upload_is_answered_with_a_redirect_to_its_own_address(client, chain):
    address = uploaded(client, chain)
    kept = OpenApiUpload.objects.get()
    assert address == chain.url("openapi_upload", kept.pk)
    assert (kept.name, kept.size, len(kept.operations)) == (
        "skyloom-air.yaml",
        SKYLOOM.stat().st_size,
        13,
    )
    assert kept.sha256 == hashlib.sha256(SKYLOOM.read_bytes()).hexdigest()


def test_a_pasted_document_is_kept_the_same_way(client, chain):
    answer = client.post(chain.url("openapi"), {"text": SKYLOOM.read_text()})
    assert answer.status_code == 302 and "book_order" in listed(client, answer["Location"])


def test_a_new_upload_replaces_the_earlier_one_whose_address_then_finds_nothing(client, chain):
    first = uploaded(client, chain)
    second = uploaded(client, chain, many_operations(3), "things.json")
    assert client.get(first).status_code == 404
    assert "make_thing2" in listed(client, second) and OpenApiUpload.objects.count() == 1


def test_the_upload_form_offers_to_go_on_with_the_upload_kept(client, chain):
    address = uploaded(client, chain)
    html = client.get(chain.url("openapi")).content.decode()
    assert f'href="{address}">skyloom-air.yaml</a>' in html


def test_the_tag_menu_offers_the_documents_tags(client, chain):
    html = listed(client, uploaded(client, chain, provider_document(), "provider.json"))
    menu = html.split('id="openapi-tag"')[1].split("</select>")[0]
    assert [o.split(">")[1].split("<")[0] for o in menu.split("<option")[1:]] == [
        "every tag",
        *TAGS,
    ]


def test_a_tag_in_the_address_lists_only_its_operations(client, chain):
    address = uploaded(client, chain, provider_document(), "provider.json")
    html = listed(client, address, tag="air orders")
    assert shown_ids(html)[:2] == ["create_air_orders3", "create_air_orders7"]
    assert "Operations 1–100 of 117 matching the tag <strong>air orders</strong> (of 468)" in html


def test_a_document_without_tags_has_a_tag_per_resource_and_says_so(client, chain):
    html = listed(client, uploaded(client, chain))
    menu = html.split('id="openapi-tag"')[1].split("</select>")[0]
    assert "<option>offers</option>" in menu and "The document tags no operation" in html


def test_a_word_starting_with_a_slash_filters_by_path_prefix(client, chain):
    address = uploaded(client, chain, provider_document(), "provider.json")
    assert shown_ids(listed(client, address, q="/v1/refunds/1")) == [
        "create_refunds1",
        *[f"create_refunds{i}" for i in range(13, 200, 4) if str(i).startswith("1")],
    ]


def test_a_page_of_the_list_holds_no_document_and_posts_few_fields(client, chain):
    html = listed(client, uploaded(client, chain, provider_document(), "provider.json"))
    form = html.split('id="openapi-pick"')[1].split("</form>")[0]
    # three fields a row (tick, effect, onto) for a hundred rows, and a few more: under
    # the 500 a request may carry (DATA_UPLOAD_MAX_NUMBER_FIELDS)
    assert 'name="text"' not in form and form.count(" name=") < 320


def test_moving_to_another_page_keeps_the_ticks_and_goes_there(client, chain):
    address = uploaded(client, chain, provider_document(), "provider.json")
    first = listed(client, address, tag="Payments")
    moved = client.post(address, {**page_form(first, 3), "tag": "Payments", "go": "2"})
    assert moved["Location"] == f"{address}?tag=Payments&page=2"
    second = listed(client, address, tag="Payments", page="2")
    assert said(second, "openapi-ticked").startswith("3 ticked (0 on this page, 3 on other")
    assert shown_ids(first)[0] in OpenApiUpload.objects.get().ticked


def test_unticking_a_row_drops_its_tick_and_leaves_the_other_pages_ticks(client, chain):
    address = uploaded(client, chain, provider_document(), "provider.json")
    first, second = listed(client, address), listed(client, address, page="2")
    client.post(address, {**page_form(first, 2), "go": "2"})
    client.post(address, page_form(second, 1))
    client.post(address, {**page_form(first, 1), "page": "1"})
    kept = OpenApiUpload.objects.get()
    assert kept.ticked == sorted([shown_ids(first)[0], shown_ids(second)[0]])


def test_forty_operations_ticked_across_two_pages_are_added_as_one_revision(client, chain):
    address = uploaded(client, chain, provider_document(), "provider.json")
    first = listed(client, address, tag="Refunds")
    client.post(address, {**page_form(first, 20), "tag": "Refunds", "go": "2"})
    second = listed(client, address, tag="Refunds", page="2")
    form = {**page_form(second, 17), "tag": "Refunds", "page": "2", "base": "1"}
    form["effect-create_refunds465"] = "compensate"  # the last row's effect changed
    form["pick"] += ["create_refunds465"]
    assert len(form["pick"]) == 18 and len(shown_ids(second)) == 17
    answer = client.post(address + "add", form)
    assert answer.status_code == 302 and answer["Location"] == chain.url()
    ticked = shown_ids(first)[:20] + shown_ids(second)
    actions = {a.id: a for a in spec_of(chain.head()).actions}
    assert chain.head().number == 2 and chain.revisions.count() == 2
    assert set(ticked) <= set(actions) and len(ticked) == 37
    assert actions["create_refunds465"].effect == "compensate"
    assert not OpenApiUpload.objects.exists()


def test_another_persons_upload_is_not_found(flight, people, signed_in):
    editor = signed_in(people["editor"])
    address = uploaded(editor, flight)
    owner = signed_in(people["owner"])
    assert owner.get(address).status_code == 404
    assert owner.post(address + "add", {"pick": ["get_order"], "base": "1"}).status_code == 404
    assert flight.head().number == 1


def test_a_viewer_is_refused_an_upload_address_with_403(flight, people, signed_in):
    address = uploaded(signed_in(people["editor"]), flight)
    viewer = signed_in(people["viewer"])
    assert viewer.get(address).status_code == 403
    assert viewer.post(address + "add", {"pick": ["get_order"], "base": "1"}).status_code == 403


def test_a_stale_base_is_a_409_that_keeps_the_ticks_for_the_next_add(client, chain):
    address = uploaded(client, chain)
    stale = client.post(address + "add", {"pick": ["get_order"], "base": "7"})
    html = stale.content.decode()
    assert stale.status_code == 409 and "your ticks are kept" in html
    assert 'value="get_order" id="pick-get_order" checked' in html
    assert client.post(address + "add", {"base": "1"}).status_code == 302
    assert "get_order" in {a.id for a in spec_of(chain.head()).actions}


def test_an_expired_upload_says_so_with_410_and_is_deleted(client, chain):
    address = uploaded(client, chain)
    OpenApiUpload.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    answer = client.get(address)
    assert answer.status_code == 410
    assert "the upload of skyloom-air.yaml expired" in answer.content.decode()
    assert not OpenApiUpload.objects.exists()


def test_an_add_on_an_expired_upload_stores_nothing(client, chain):
    address = uploaded(client, chain)
    OpenApiUpload.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client.post(address + "add", {"pick": ["get_order"], "base": "1"}).status_code == 410
    assert chain.head().number == 1


def test_any_new_upload_sweeps_the_expired_ones_away(client, chain, people, flight, signed_in):
    uploaded(signed_in(people["editor"]), flight)
    OpenApiUpload.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    uploaded(client, chain)
    assert [u.user.username for u in OpenApiUpload.objects.all()] == ["admin"]


def test_a_page_view_lists_the_stored_operations_without_reading_the_document(
    client, chain, monkeypatch
):
    address = uploaded(client, chain)
    monkeypatch.setattr(uploads, "read_provider", refuse_to_read)
    assert 'id="op-book_order"' in listed(client, address, page="1")


def test_operations_stored_by_older_code_are_read_again_once(client, chain, monkeypatch):
    address = uploaded(client, chain)
    OpenApiUpload.objects.update(reader="older code", operations=[{"id": "gone"}])
    assert 'id="op-book_order"' in listed(client, address)
    assert OpenApiUpload.objects.get().reader == uploads.reader_version()
    monkeypatch.setattr(uploads, "read_provider", refuse_to_read)
    assert 'id="op-book_order"' in listed(client, address)


def refuse_to_read(*args, **kwargs):
    raise AssertionError("the document was read again")


def test_an_effect_that_is_not_one_is_refused_and_the_earlier_ticks_stay(client, chain):
    address = uploaded(client, chain)
    client.post(address, {"pick": ["get_order"], "effect-get_order": "read"})
    answer = client.post(address, {"pick": ["book_order"], "effect-book_order": "teleport"})
    assert (
        answer.status_code == 400 and "book_order: &#x27;teleport&#x27;" in answer.content.decode()
    )
    assert OpenApiUpload.objects.get().ticked == ["get_order"]


def test_an_id_the_document_lacks_is_refused_by_name(client, chain):
    answer = client.post(uploaded(client, chain), {"pick": ["pay_twice"]})
    assert (
        answer.status_code == 400
        and "no operation pay_twice in the document" in answer.content.decode()
    )


def test_adding_with_nothing_ticked_is_a_400_saying_what_to_do(client, chain):
    answer = client.post(uploaded(client, chain) + "add", {"base": "1"})
    assert answer.status_code == 400 and "tick at least one operation" in answer.content.decode()
    assert OpenApiUpload.objects.exists()


def test_a_page_number_that_is_not_one_is_a_400_naming_it(client, chain):
    answer = client.get(uploaded(client, chain), {"page": "two"})
    assert answer.status_code == 400 and "page:" in answer.content.decode()


def test_moving_between_pages_is_not_counted_against_the_import_limit(client, chain, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "import": (1, 60)}
    address = uploaded(client, chain)
    assert client.post(address, {"pick": ["get_order"], "go": "1"}).status_code == 302
    assert client.post(address + "add", {"base": "1"}).status_code == 429
    assert OpenApiUpload.objects.get().ticked == ["get_order"]


def test_only_the_ticked_ones_are_listed_when_asked_and_the_address_says_so(client, chain):
    address = uploaded(client, chain, provider_document(), "provider.json")
    first = listed(client, address)
    moved = client.post(address, {**page_form(first, 2), "ticked": "1", "go": "1"})
    assert moved["Location"] == f"{address}?ticked=1"
    assert shown_ids(listed(client, address, ticked="1")) == shown_ids(first)[:2]
