"""``chain-designer openapi`` with ``--tag``, ``--path`` and globs in ``--pick``."""

from __future__ import annotations

import json
from io import StringIO

import pytest
import yaml

from chains import cli

OK = {"200": {"description": "ok"}}

# A provider of our own with tags on its operations (a real one like Stripe's has none:
# there --path is what narrows the list).
DOCUMENT = {
    "openapi": "3.0.3",
    "info": {"title": "Payments and air", "version": "1"},
    "paths": {
        "/v1/payment_intents": {
            "post": {"operationId": "PostPaymentIntents", "tags": ["Payments"], "responses": OK}
        },
        "/v1/payment_intents/{intent}/cancel": {
            "post": {"operationId": "cancelIntent", "tags": ["Payments"], "responses": OK}
        },
        "/v1/refunds": {
            "get": {"operationId": "GetRefunds", "tags": ["Refunds"], "responses": OK},
            "post": {"operationId": "PostRefunds", "tags": ["Refunds"], "responses": OK},
        },
        "/air/orders/{order_id}": {
            "get": {"operationId": "getOrder", "tags": ["Air"], "responses": OK}
        },
    },
}


@pytest.fixture
def provider(tmp_path) -> str:
    path = tmp_path / "provider.json"
    path.write_text(json.dumps(DOCUMENT))
    return str(path)


def run(*args: str) -> tuple[int, str]:
    out = StringIO()
    return cli.main(list(args), out), out.getvalue()


def listed(*args: str) -> list[str]:
    code, out = run(*args, "--json")
    assert code == 0
    return [o["id"] for o in json.loads(out)]


def test_a_tag_lists_only_its_operations(provider):
    assert listed("openapi", provider, "--tag", "refunds") == ["get_refunds", "post_refunds"]


def test_tags_given_twice_list_the_operations_of_either(provider):
    assert listed("openapi", provider, "--tag", "Air", "--tag", "Refunds") == [
        "get_refunds",
        "post_refunds",
        "get_order",
    ]


def test_a_path_glob_lists_the_operations_below_a_prefix(provider):
    assert listed("openapi", provider, "--path", "/v1/payment_intents*") == [
        "post_payment_intents",
        "cancel_intent",
    ]


def test_the_plain_listing_is_filtered_too(provider):
    code, out = run("openapi", provider, "--path", "/air/orders/{order_id}")
    assert code == 0 and out.startswith("get_order: GET /air/orders/{order_id}")
    assert "refunds" not in out


def test_a_glob_in_pick_prints_every_operation_it_matches_as_actions(provider):
    code, out = run("openapi", provider, "--pick", "*refund*")
    actions = yaml.safe_load(out)["actions"]
    assert code == 0 and [a["id"] for a in actions] == ["get_refunds", "post_refunds"]


def test_pick_mixes_ids_and_globs_and_may_be_repeated(provider):
    code, out = run("openapi", provider, "--pick", "get_order,*cancel*", "--pick", "PostRefunds")
    actions = yaml.safe_load(out)["actions"]
    assert [a["id"] for a in actions] == ["cancel_intent", "post_refunds", "get_order"]


def test_pick_with_a_tag_prints_only_the_operations_both_choose(provider):
    code, out = run("openapi", provider, "--tag", "Refunds", "--pick", "post_*", "--json")
    assert code == 0 and [a["id"] for a in json.loads(out)["actions"]] == ["post_refunds"]


def test_a_whole_tag_is_printed_as_actions_with_a_star(provider):
    code, out = run("openapi", provider, "--tag", "Payments", "--pick", "*")
    assert [a["id"] for a in yaml.safe_load(out)["actions"]] == [
        "post_payment_intents",
        "cancel_intent",
    ]


def test_a_confirmed_effect_applies_to_an_operation_a_glob_picked(provider):
    code, out = run("openapi", provider, "--pick", "*cancel*", "--effect", "cancel_intent=commit")
    assert yaml.safe_load(out)["actions"][0]["effect"] == "commit"


def test_a_tag_the_document_lacks_exits_1_naming_it_and_the_tags_it_has(provider, capsys):
    assert run("openapi", provider, "--tag", "Billing")[0] == 1
    err = capsys.readouterr().err
    assert "no operation has the tag `Billing` (the document's tags: Payments, Refunds, Air)" in err


def test_a_glob_that_matches_nothing_exits_1_naming_it(provider, capsys):
    assert run("openapi", provider, "--pick", "*teleport*")[0] == 1
    assert "no operation id matches `*teleport*`" in capsys.readouterr().err


def test_a_path_and_tag_that_share_no_operation_exit_1_saying_so(provider, capsys):
    assert run("openapi", provider, "--tag", "Air", "--path", "/v1/*")[0] == 1
    assert "no operation has the tag `Air` and a path matching `/v1/*`" in capsys.readouterr().err


def test_the_help_names_the_filters(capsys):
    with pytest.raises(SystemExit):
        cli.main(["openapi", "--help"], StringIO())
    shown = capsys.readouterr().out
    assert "--tag TAG" in shown and "--path GLOB" in shown


def test_without_filters_every_operation_is_listed(provider):
    assert len(listed("openapi", provider)) == 5
