"""A save refused as stale: yours beside theirs, what was typed kept, and one click to re-apply."""

from __future__ import annotations

import html
import json
import re

import pytest

from chains.core import formats
from chains.models import Chain, Revision

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def small() -> Chain:
    chain = formats.load(
        """
        id: small
        handles:
          - {id: search_id, minted_by: search, description: The search result set.}
        actions:
          - {id: search, effect: read, timeout: 30s, output: {handles: [search_id]}}
        verdict_table:
          - {id: R1, signal: [http:410], verdict: "rewind(to: search)"}
        """,
        format="yaml",
    ).chains[0]
    return Chain.objects.store(formats.to_document(chain), message="import").chain


def post_edit(client, chain: Chain, op: str, base: int, htmx: bool = True, **fields):
    data = {"base": str(base), "op": op, **fields}
    return client.post(f"{chain.url()}edit", data, **(HTMX if htmx else {}))


def describe(client, chain: Chain, text: str, base: int = 1, **more):
    args = json.dumps({"id": "search_id", "fields": {"description": text}})
    fields = {"args": args, "select": "handle:search_id"}
    return post_edit(client, chain, "update_handle", base, **fields, **more)


def part(body: str, marker: str, end: str) -> str:
    return body.split(marker, 1)[1].split(end, 1)[0]


def reapply_fields(body: str) -> dict[str, str]:
    """The fields the re-apply form posts, as a browser would read them."""
    form = part(body, 'id="reapply-form"', "</form>")
    pairs = re.findall(r'name="([^"]+)" value="([^"]*)"', form)
    return {name: html.unescape(value) for name, value in pairs if name != "csrfmiddlewaretoken"}


def head(chain: Chain) -> dict:
    return chain.head().document


# --- the answer ----------------------------------------------------------------------


def test_a_stale_save_shows_yours_beside_theirs_for_the_field_it_writes(client, small):
    describe(client, small, "Their careful words.")
    response = describe(client, small, "My careful words.")
    body = response.content.decode()
    assert response.status_code == 409
    row = part(body, 'class="stale-sides"', "</table>")
    assert "handle search_id" in row and "<code>description</code>" in row
    assert part(row, '<pre class="yours">', "</pre>") == "My careful words."
    assert part(row, '<pre class="theirs">', "</pre>") == "Their careful words."


def test_a_field_both_changed_is_named_and_the_button_says_it_overwrites_theirs(client, small):
    describe(client, small, "Their careful words.")
    body = describe(client, small, "My careful words.").content.decode()
    assert "handle search_id: they changed description too" in part(
        body, 'id="stale-conflicts"', "</ul>"
    )
    assert "Apply yours over theirs" in body
    assert 'class="clash"' in body


def test_a_stale_save_that_clashes_with_nothing_offers_to_apply_it_on_the_new_head(client, small):
    post_edit(client, small, "add_handle", 1, **{"form": "add-handle", "id": "quote"})
    body = describe(client, small, "My careful words.").content.decode()
    assert 'id="stale-clean"' in body
    assert "Apply yours on revision 2" in body
    assert "handle quote added" in part(body, 'class="stale-changes"', "</details>")


def test_the_yaml_a_person_typed_is_kept_in_the_editor_after_a_stale_save(client, small):
    post_edit(client, small, "add_handle", 1, **{"form": "add-handle", "id": "quote"})
    typed = "description: my long careful text\nsingle_use: true"
    fields = {"form": "element-yaml", "target": "search_id", "fields": typed}
    fields["select"] = "handle:search_id"
    body = post_edit(client, small, "update_handle", 1, **fields).content.decode()
    textarea = part(body, 'id="element-yaml"', "</textarea>")
    assert "my long careful text" in html.unescape(textarea)
    yours = re.findall(r'<pre class="yours">(.*?)</pre>', body)
    assert yours == ["my long careful text", "true"]


def test_a_plain_form_post_gets_the_same_answer_as_a_whole_page(client, small):
    describe(client, small, "Their careful words.")
    response = describe(client, small, "My careful words.", htmx=False)
    body = response.content.decode()
    assert response.status_code == 409
    assert "<html" in body and 'id="reapply-form"' in body
    keep = part(body, 'id="reapply-form"', 'id="keep-theirs"')
    assert f'href="{small.url()}?select=handle%3Asearch_id&amp;tab=actions' in keep


def test_a_stale_policy_edit_names_the_setting_it_writes(client, small):
    post_edit(
        client,
        small,
        "update_policy",
        1,
        **{"form": "policy-yaml", "fields": "per_chain: {max_rewinds: 5}"},
    )
    body = post_edit(
        client,
        small,
        "update_policy",
        1,
        **{"form": "policy-yaml", "fields": "per_chain: {max_rewinds: 2}"},
    )
    row = part(body.content.decode(), 'class="stale-sides"', "</table>")
    assert "<td>policy</td><td><code>per_chain.max_rewinds</code></td>" in row
    assert part(row, '<pre class="yours">', "</pre>") == "2"
    assert part(row, '<pre class="theirs">', "</pre>") == "5"


# --- re-applying -------------------------------------------------------------------------


def test_the_reapply_form_posts_the_same_edit_on_the_new_head(client, small):
    post_edit(client, small, "add_handle", 1, **{"form": "add-handle", "id": "quote"})
    body = describe(client, small, "My careful words.").content.decode()
    fields = reapply_fields(body)
    assert fields["base"] == "2" and fields["op"] == "update_handle"
    assert json.loads(fields["args"]) == {
        "id": "search_id",
        "fields": {"description": "My careful words."},
    }
    response = client.post(f"{small.url()}edit", fields, **HTMX)
    assert response.status_code == 200
    saved = {h["id"]: h for h in head(small)["handles"]}
    assert saved["search_id"]["description"] == "My careful words."
    assert "quote" in saved  # theirs kept
    assert small.head().number == 3


def test_a_reapply_is_refused_again_when_the_head_moved_once_more(client, small):
    post_edit(client, small, "add_handle", 1, **{"form": "add-handle", "id": "quote"})
    fields = reapply_fields(describe(client, small, "My careful words.").content.decode())
    post_edit(
        client, small, "update_action", 2, args='{"id": "search", "fields": {"timeout": "5s"}}'
    )
    response = client.post(f"{small.url()}edit", fields, **HTMX)
    body = response.content.decode()
    assert response.status_code == 409
    assert "based on revision 2" in body and 'id="reapply-form"' in body
    assert reapply_fields(body)["base"] == "3"
    assert Revision.objects.filter(chain=small).count() == 3
    assert "description" in head(small)["handles"][0]
    assert head(small)["handles"][0]["description"] == "The search result set."


def test_an_edit_on_a_base_that_never_existed_can_still_be_applied_on_the_head(client, small):
    body = describe(client, small, "Mine.", base=9).content.decode()
    assert "Revision 9 cannot be compared" in body
    assert reapply_fields(body)["base"] == "1"


# --- the API -----------------------------------------------------------------------------


def test_the_apis_stale_409_says_what_clashes(client, small):
    describe(client, small, "Their careful words.")
    body = {
        "op": "update_handle",
        "base": 1,
        "args": {"id": "search_id", "fields": {"description": "x"}},
    }
    response = client.post(
        f"/api/chains/small/edits?team={small.team_slug}",
        json.dumps(body),
        content_type="application/json",
    )
    assert response.status_code == 409
    message = response.json()["error"]["message"]
    assert "based on revision 1" in message
    assert "handle search_id: they changed description too" in message
