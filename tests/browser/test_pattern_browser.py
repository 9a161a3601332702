"""A chain built from a pattern in a real browser: the cloud-provisioning chain to VALID.

Issue 38's measure: list images → quote with an expiring quote_id → unkeyed
create_instance with a probe by tag → keyed attach_volume, a price consent gate,
a timeout → reconcile row and a QUOTE_EXPIRED → rewind row, from the pattern
"search, price, unkeyed booking with a probe", with forms only (no YAML),
every click and keystroke counted (``Hand``). Prose is not counted as input
that has to be typed: the pattern's descriptions stay.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from chains.models import Chain
from tests.browser.test_forms_browser import Hand, element, head, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def rename(hand: Hand, tab: str, old: str, new: str) -> None:
    form = hand.select(tab, old)
    hand.type(form.get_by_label("Id", exact=True), new)
    hand.save(form.get_by_role("button", name="Save"))


def test_the_cloud_chain_is_built_from_a_pattern_to_valid_in_few_clicks(
    live_server, page: Page, capsys
):
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/chains/new/")
    hand = Hand(page)
    hand.click(page.get_by_role("button", name="Check the fit"))
    hand.click(page.get_by_label("Search, price, unkeyed booking with a probe"))
    hand.type(page.locator("#key"), "cloud_vm")
    hand.click(page.get_by_role("button", name="Create chain"))
    expect(page.locator("#workspace[data-ready]")).to_be_visible()
    expect(page.locator("#status-badge")).to_have_text("VALID")

    for old, new in [
        ("search", "list_images"),
        ("price", "quote"),
        ("book", "create_instance"),
        ("find_booking", "find_instance_by_tag"),
        ("cancel_booking", "delete_instance"),
    ]:
        rename(hand, "actions", old, new)
    rename(hand, "handles", "booking_id", "instance_id")

    form = hand.select("actions", "create_instance")
    hand.type(form.get_by_label("Signal that confirms it"), "one instance with our tag")
    hand.save(form.get_by_role("button", name="Save"))

    adder = page.locator("#add-action-form")
    hand.click(page.locator("details.adders > summary"))
    hand.type(adder.get_by_label("Action id"), "attach_volume")
    hand.choose(adder.get_by_label("Effect"), "commit")
    hand.save(adder.get_by_role("button", name="Add action"))

    gate = page.locator("#add-gate-form")
    hand.click(page.locator("#add-gate > summary"))
    hand.type(gate.get_by_label("Gate id"), "price_consent")
    hand.choose(gate.get_by_label("Audience"), "user")
    hand.type(gate.locator('[name="outcomes-0-name"]'), "accept")
    hand.type(gate.locator('[name="outcomes-0-verdict"]'), "ok")
    hand.type(gate.locator('[name="outcomes-1-name"]'), "decline")
    hand.type(gate.locator('[name="outcomes-1-verdict"]'), "dead_end")
    hand.type(gate.locator('[name="timeout__after"]'), "15m")
    hand.type(gate.locator('[name="timeout__outcome"]'), "decline")
    hand.save(gate.get_by_role("button", name="Add gate"))

    form = hand.select("actions", "create_instance")
    hand.choose(form.get_by_label("Entry gate"), "price_consent")
    hand.save(form.get_by_role("button", name="Save"))

    form = hand.select("actions", "attach_volume")
    hand.choose(form.get_by_label("Handles it consumes"), "instance_id")
    hand.choose(form.get_by_label("Mode"), "keyed")
    hand.choose(form.get_by_label("Key scope"), "run")
    hand.type(form.get_by_label("Key retention"), "24h")
    hand.choose(form.locator("[name=idempotency__replay_semantics]"), "returns_cached")
    hand.click(
        form.get_by_label("by key replay (repeating with the same key answers whether it landed)")
    )
    hand.choose(form.locator('[name="compensation__action"]'), "none")
    hand.save(form.get_by_role("button", name="Save"))

    expect(page.locator("#status-badge")).to_have_text("VALID")
    key = "cloud_vm"
    actions = [a["id"] for a in head(key)["actions"]]
    assert actions == [
        "list_images",
        "quote",
        "create_instance",
        "find_instance_by_tag",
        "delete_instance",
        "attach_volume",
    ]
    create = element(key, "actions", "create_instance")
    assert create["idempotency"] == {"mode": "none"}
    assert create["confirmation"]["probe"] == "find_instance_by_tag"
    assert create["entry_gate"] == "price_consent"
    attach = element(key, "actions", "attach_volume")
    assert attach["idempotency"]["mode"] == "keyed" and attach["input"]["handles"] == [
        "instance_id"
    ]
    quote_id = element(key, "handles", "quote_id")
    assert (
        quote_id["minted_by"] == "quote" and "code:QUOTE_EXPIRED" in quote_id["staleness"]["detect"]
    )
    rows = {r["id"]: (r["signal"], r["verdict"]) for r in head(key)["verdict_table"]}
    assert rows["lost_answer"] == (["timeout", "http:5xx"], "reconcile")
    assert rows["quote_expired"][1] == "rewind(to: quote)"
    assert element(key, "gates", "price_consent")["audience"] == "user"
    assert Chain.objects.get(key=key).head().lint_status() == "VALID"
    screenshot(page, "pattern-cloud-valid")
    with capsys.disabled():
        print(
            f"\ncloud chain from a pattern to VALID: {hand.clicks} clicks, {hand.keys} keystrokes"
        )
    assert hand.clicks <= 60 and hand.keys <= 300
