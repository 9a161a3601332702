"""``chain-designer openapi``: a provider-wide key, picks printed as a chain that lints,
picks attached onto a chain file, and warnings on standard error."""

from __future__ import annotations

import json
from io import StringIO

import pytest
import yaml

from chains import cli
from tests.core.test_openapi_fidelity import bound_chain, broken_document, orders_document


@pytest.fixture
def provider(tmp_path) -> str:
    path = tmp_path / "orders.json"
    path.write_text(orders_document())
    return str(path)


def run(*args: str) -> tuple[int, str]:
    out = StringIO()
    return cli.main(list(args), out), out.getvalue()


def test_a_stated_key_header_keys_every_post(provider):
    code, out = run("openapi", provider, "--key-header", "Idempotency-Key", "--json")
    keyed = {o["id"]: o["idempotency"] for o in json.loads(out) if o["method"] == "post"}
    assert code == 0 and keyed == {"create_order": "keyed", "cancel_order": "keyed"}


def test_picked_operations_print_as_a_chain_the_lint_reads(provider, tmp_path):
    code, out = run("openapi", provider, "--pick", "create_order,get_order")
    chain = yaml.safe_load(out)
    assert code == 0 and chain["id"] == "t"
    assert chain["handles"] == [{"id": "order_id", "minted_by": "create_order"}]
    path = tmp_path / "picked.yaml"
    path.write_text(out)
    _, linted = run("lint", str(path), "--json")
    report = json.loads(linted)
    # read as the chain it names and judged by the rules
    assert report["chain"] == "t" and report["findings"]


def test_picks_onto_a_chain_attach_to_its_bound_action_and_a_rename(provider, tmp_path):
    chain = tmp_path / "orders.yaml"
    chain.write_text(yaml.safe_dump(bound_chain()))
    code, out = run(
        "openapi", provider, "--pick", "create_order,get_order",
        "--onto", str(chain), "--rename", "create_order=book", "--json",
    )  # fmt: skip
    merged = json.loads(out)
    assert code == 0 and [a["id"] for a in merged["actions"]] == ["book", "look"]
    assert merged["actions"][0]["http"]["path"] == "/air/orders"


def test_a_rename_that_is_no_pair_is_refused_naming_the_flag(provider, tmp_path):
    chain = tmp_path / "orders.yaml"
    chain.write_text(yaml.safe_dump(bound_chain()))
    code, _ = run("openapi", provider, "--pick", "get_order", "--onto", str(chain), "--rename", "x")
    assert code != 0


def test_a_schema_break_inside_is_a_warning_on_standard_error(tmp_path, capsys):
    path = tmp_path / "api.json"
    path.write_text(broken_document())
    code, out = run("openapi", str(path))
    assert code == 0 and "get_a: GET /a" in out
    assert "warning: /paths/~1a/get" in capsys.readouterr().err
