"""The structured forms in a real browser: a chain is drawn to VALID without typing YAML.

Each test drives the workspace's forms (templates/chains/_element_form.html,
_gate_form.html, _policy_forms.html, the adders and the verdict-row builder)
through Debian's Chromium. Clicks and keystrokes are counted, so the cost of
building a chain by hand stays visible. Screenshots land in ``var/screenshots/``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import Locator, Page, expect

from chains.models import Chain

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"
P3 = "Writes a correlation record before dispatch; runs under a cancellation shield."


class Hand:
    """A person at the page: every click, choice and keystroke is counted."""

    def __init__(self, page: Page):
        self.page, self.clicks, self.keys, self.revision = page, 0, 0, 1

    def click(self, target: Locator) -> None:
        self.clicks += 1
        target.click()

    def choose(self, select: Locator, *values: str) -> None:
        self.clicks += len(values)
        select.select_option(list(values))

    def type(self, box: Locator, text: str, tab: bool = False) -> None:
        """Type into ``box``: already focused, reached with Tab (``tab``), or clicked."""
        if tab and not _focused(box):
            for _ in range(8):
                self.keys += 1
                self.page.keyboard.press("Tab")
                if _focused(box):
                    break
            expect(box).to_be_focused()
        elif not _focused(box):
            self.click(box)
        self.keys += len(text)
        box.fill(text)

    def save(self, button: Locator) -> None:
        """Submit, and wait until the workspace says the next revision is saved."""
        self.click(button)
        self.revision += 1
        expect(self.page.locator("#saved-note")).to_contain_text(f"Saved revision {self.revision}")
        expect(self.page.locator("#workspace[data-ready]")).to_have_count(1)

    def select(self, tab: str, name: str) -> Locator:
        """Open ``name`` from its tab's list; the element form it shows."""
        tab_link = self.page.locator("nav.tabs a", has_text=re.compile(f"^{tab}$", re.I))
        if "active" not in (tab_link.get_attribute("class") or ""):
            self.click(tab_link)
        self.click(self.page.locator(f"#tab-{tab} a", has_text=re.compile(f"^{name}$")))
        expect(self.page.locator("#element-panel h2 code")).to_have_text(name)
        return self.page.locator("#element-fields")


def _focused(box: Locator) -> bool:
    return box.evaluate("element => element === document.activeElement")


def head(key: str) -> dict:
    return Chain.objects.get(key=key).head().document


def element(key: str, section: str, ident: str) -> dict:
    return next(e for e in head(key).get(section, []) if e["id"] == ident)


@pytest.fixture
def hand(live_server, page: Page) -> Hand:
    Chain.objects.store({"id": "hotel"}, "new")
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/chains/hotel/")
    expect(page.locator("#workspace[data-ready]")).to_be_visible()
    return Hand(page)


def add_action(hand: Hand, name: str, effect: str) -> None:
    form = hand.page.locator("#add-action-form")
    hand.type(form.get_by_label("Action id"), name)
    if effect != "read":
        hand.choose(form.get_by_label("Effect"), effect)
    hand.save(form.get_by_role("button", name="Add action"))


def add_handle(hand: Hand, name: str, minted_by: str, single_use: bool = False) -> None:
    form = hand.page.locator("#add-handle-form")
    hand.type(form.get_by_label("Handle id"), name)  # the caret is there after an add
    hand.choose(form.get_by_label("Minted by"), minted_by)
    if single_use:
        hand.click(form.get_by_label("single use"))
    hand.save(form.get_by_role("button", name="Add handle"))


def add_gate(hand: Hand) -> None:
    hand.click(hand.page.locator("#add-gate > summary"))
    form = hand.page.locator("#add-gate-form")
    expect(form.get_by_label("Gate id")).to_be_focused()  # opening the adder puts the caret there
    hand.type(form.get_by_label("Gate id"), "book_consent")
    hand.choose(form.get_by_label("Audience"), "user")
    hand.type(form.locator('[name="outcomes-0-name"]'), "accept", tab=True)
    hand.type(form.locator('[name="outcomes-0-verdict"]'), "ok", tab=True)
    hand.type(form.locator('[name="outcomes-1-name"]'), "decline", tab=True)
    hand.type(form.locator('[name="outcomes-1-verdict"]'), "dead_end", tab=True)
    hand.type(form.get_by_label("After"), "10m", tab=True)
    hand.type(form.locator('[name="timeout__outcome"]'), "decline", tab=True)
    hand.save(form.get_by_role("button", name="Add gate"))


def add_row(hand: Hand, row: str, signal: str, verdict: str, to: str = "", step: str = "") -> None:
    page = hand.page
    if not page.locator("#add-row").evaluate("details => details.open"):
        hand.click(page.locator("details.add-row > summary"))
    form = page.locator("#add-row-form")
    hand.type(form.get_by_label("Row id"), row)
    hand.type(form.get_by_label("Signals (comma-separated)"), signal, tab=True)
    if step:
        hand.choose(form.get_by_label("Scope: steps"), step)
    hand.choose(form.get_by_label("Type"), verdict)
    if to:
        hand.choose(form.get_by_label("To (step)"), to)
    hand.save(form.get_by_role("button", name="Add row"))


def screenshot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def test_a_gate_an_idempotency_and_a_verdict_row_are_made_through_the_forms(hand):
    page = hand.page
    expect(page.locator("details.adders")).to_have_attribute("open", "")  # an empty chain opens it
    add_action(hand, "quote", "mint")
    adder = page.locator("#add-action-form")
    expect(adder.get_by_label("Action id")).to_be_focused()  # open, ready for the next one
    expect(adder.get_by_label("Action id")).to_have_value("")
    add_action(hand, "reserve", "commit")
    add_gate(hand)
    assert element("hotel", "gates", "book_consent") == {
        "id": "book_consent",
        "audience": "user",
        "outcomes": {"accept": {"verdict": "ok"}, "decline": {"verdict": "dead_end"}},
        "timeout": {"after": "10m", "outcome": "decline"},
    }

    form = hand.select("actions", "reserve")
    hand.choose(form.get_by_label("Mode"), "keyed")
    hand.choose(form.get_by_label("Key scope"), "run")
    hand.save(form.get_by_role("button", name="Save"))
    assert element("hotel", "actions", "reserve")["idempotency"] == {
        "mode": "keyed",
        "key_scope": "run",
    }
    expect(page.locator("#element-fields").get_by_label("Mode")).to_have_value("keyed")

    hand.click(page.locator("nav.tabs a", has_text="Table"))
    add_row(hand, "QX", "code:QUOTE_EXPIRED", "rewind", to="quote")
    assert head("hotel")["verdict_table"] == [
        {"id": "QX", "signal": ["code:QUOTE_EXPIRED"], "verdict": "rewind(to: quote)"}
    ]
    screenshot(page, "forms-table-row")


def test_a_refused_idempotency_keeps_what_was_typed_beside_the_field(hand):
    page = hand.page
    expect(page.locator("details.adders")).to_have_attribute("open", "")  # an empty chain opens it
    add_action(hand, "reserve", "commit")
    form = hand.select("actions", "reserve")
    hand.choose(form.get_by_label("Key scope"), "run")  # no mode: the grammar needs one
    hand.type(form.get_by_label("Timeout"), "45s")
    form.get_by_role("button", name="Save").click()

    section = page.locator("#idempotency-fields")
    expect(section.locator("#element-idempotency__mode_error")).to_contain_text("required")
    expect(section.locator(".field-error")).to_be_in_viewport()
    expect(section.get_by_label("Key scope")).to_have_value("run")
    expect(page.locator("#element-fields").get_by_label("Timeout")).to_have_value("45s")
    screenshot(page, "forms-refused-idempotency")
    assert "idempotency" not in element("hotel", "actions", "reserve")


def test_the_hotel_chain_is_built_to_valid_through_the_forms(hand, capsys):
    page = hand.page
    expect(page.locator("details.adders")).to_have_attribute("open", "")  # an empty chain opens it
    for name, effect in [
        ("search", "read"),
        ("pick_room", "select"),
        ("quote", "mint"),
        ("reserve", "commit"),
        ("find_by_label", "read"),
        ("cancel_reservation", "compensate"),
    ]:
        add_action(hand, name, effect)
    add_handle(hand, "search_id", "search")
    add_handle(hand, "room_pick", "pick_room")
    add_handle(hand, "quote_token", "quote", single_use=True)
    add_gate(hand)

    form = hand.select("handles", "search_id")
    hand.type(form.get_by_label("Detected by (signals, comma-separated)"), "http:410")
    hand.save(form.get_by_role("button", name="Save"))
    form = hand.select("handles", "room_pick")
    hand.choose(form.get_by_label("Derives from"), "search_id")
    hand.type(form.get_by_label("Key (intent fields, comma-separated)"), "room_type")
    hand.save(form.get_by_role("button", name="Save"))
    form = hand.select("handles", "quote_token")
    hand.choose(form.get_by_label("Derives from"), "room_pick")
    hand.type(form.get_by_label("Detected by (signals, comma-separated)"), "code:QUOTE_EXPIRED")
    hand.type(form.get_by_label("TTL hint (never enforced)"), "15m", tab=True)
    hand.save(form.get_by_role("button", name="Save"))

    for step, consumed in [("pick_room", "search_id"), ("quote", "room_pick")]:
        form = hand.select("actions", step)
        hand.choose(form.get_by_label("Handles it consumes"), consumed)
        hand.save(form.get_by_role("button", name="Save"))
    form = hand.select("actions", "reserve")
    hand.choose(form.get_by_label("Handles it consumes"), "quote_token")
    hand.choose(form.get_by_label("Entry gate"), "book_consent")
    hand.choose(form.get_by_label("Mode"), "none")
    hand.choose(form.get_by_label("Probe action"), "find_by_label")
    hand.choose(form.locator('[name="compensation__action"]'), "cancel_reservation")
    hand.type(form.get_by_label("Description"), P3)
    hand.save(form.get_by_role("button", name="Save"))
    form = hand.select("actions", "cancel_reservation")
    hand.choose(form.get_by_label("Probe action"), "find_by_label")
    hand.type(form.get_by_label("Description"), P3)
    hand.save(form.get_by_role("button", name="Save"))
    # the lookup only confirms the booking: a probe, off the forward path, where a row that
    # rewinds (R2 below) cannot send a landed booking back to be made again
    form = hand.select("actions", "find_by_label")
    hand.click(form.get_by_label("probe only (called only to confirm a commit)"))
    hand.save(form.get_by_role("button", name="Save"))

    hand.click(page.locator("nav.tabs a", has_text="Policy"))
    budgets = page.locator("#policy-form")
    hand.type(budgets.get_by_label("Max rewinds"), "3")
    hand.type(budgets.get_by_label("Max repairs"), "2", tab=True)
    hand.type(budgets.get_by_label("Wall clock (parked time excluded)"), "30m", tab=True)
    hand.save(budgets.get_by_role("button", name="Save budgets"))

    hand.click(page.locator("nav.tabs a", has_text="Table"))
    add_row(hand, "R1", "timeout", "reconcile", step="reserve")
    add_row(hand, "R2", "code:QUOTE_EXPIRED", "rewind", to="quote")

    expect(page.locator("#status-badge")).to_have_text("VALID")
    reserve = element("hotel", "actions", "reserve")
    assert (reserve["effect"], reserve["entry_gate"]) == ("commit", "book_consent")
    assert reserve["confirmation"]["probe"] == "find_by_label"
    assert reserve["compensation"]["action"] == "cancel_reservation"
    assert element("hotel", "actions", "find_by_label")["probe_only"] is True
    quote_token = element("hotel", "handles", "quote_token")
    assert quote_token["single_use"] is True and quote_token["minted_by"] == "quote"
    assert quote_token["staleness"]["ttl_hint"] == "15m"
    rows = {r["id"]: (r["signal"], r["verdict"]) for r in head("hotel")["verdict_table"]}
    assert rows["R1"][1].startswith("reconcile") and rows["R2"][1] == "rewind(to: quote)"
    screenshot(page, "forms-hotel-valid")
    with capsys.disabled():
        print(f"\nhotel chain to VALID: {hand.clicks} clicks, {hand.keys} keystrokes")
    assert hand.clicks <= 80


def test_a_rename_from_the_id_box_keeps_the_element_selected_and_a_refusal_keeps_the_typed_id(
    hand,
):
    page = hand.page
    expect(page.locator("details.adders")).to_have_attribute("open", "")  # an empty chain opens it
    add_action(hand, "search", "read")
    add_action(hand, "quote", "mint")
    form = hand.select("actions", "quote")
    hand.type(form.get_by_label("Id", exact=True), "search")
    hand.type(form.get_by_label("Timeout"), "45s")
    form.get_by_role("button", name="Save").click()

    form = page.locator("#element-fields")
    error = form.locator('label:has([name="id"]) + .term + .field-error')
    expect(error).to_contain_text("already exists")
    expect(error).to_be_in_viewport()
    expect(form.get_by_label("Id", exact=True)).to_have_value("search")
    expect(form.get_by_label("Timeout")).to_have_value("45s")
    screenshot(page, "forms-refused-rename")

    hand.type(form.get_by_label("Id", exact=True), "get_quote")
    hand.save(form.get_by_role("button", name="Save"))
    expect(page.locator("#element-panel h2 code")).to_have_text("get_quote")
    assert element("hotel", "actions", "get_quote")["timeout"] == "45s"


@pytest.mark.parametrize("width", [1280, 1440])
def test_a_long_gate_verdict_is_shown_whole_in_its_box(hand, width):
    page = hand.page
    page.set_viewport_size({"width": width, "height": 900})
    expect(page.locator("details.adders")).to_have_attribute("open", "")  # an empty chain opens it
    add_action(hand, "select_return", "select")
    add_gate(hand)
    form = hand.select("gates", "book_consent")
    verdict = form.locator('[name="outcomes-1-verdict"]')
    hand.type(verdict, "reselect(to: select_return)")
    hand.save(form.get_by_role("button", name="Save"))
    verdict = page.locator('#element-fields [name="outcomes-1-verdict"]')
    expect(verdict).to_have_value("reselect(to: select_return)")
    fits = verdict.evaluate("box => box.scrollWidth <= box.clientWidth")
    assert fits, "the verdict is cut off in its box"
    verdict.scroll_into_view_if_needed()
    screenshot(page, f"forms-gate-verdict-{width}")


def test_the_escalation_ladder_and_a_backoff_are_set_in_the_policy_tab(hand):
    page = hand.page
    hand.click(page.locator("nav.tabs a", has_text="Policy"))
    budgets = page.locator("#policy-form")
    hand.choose(budgets.locator('[name="escalation-0-audience"]'), "user")
    hand.type(budgets.locator('[name="escalation-0-may"]'), "approve a new price")
    hand.type(budgets.locator('[name="per_step__read__backoff__base"]'), "500ms")
    hand.save(budgets.get_by_role("button", name="Save budgets"))
    budgets = page.locator("#policy-form")
    hand.choose(budgets.locator('[name="escalation-1-audience"]'), "operator")
    hand.type(budgets.locator('[name="escalation-1-may"]'), "resolve a lost booking")
    hand.save(budgets.get_by_role("button", name="Save budgets"))
    assert head("hotel")["policy"] == {
        "per_step": {"read": {"backoff": {"base": "500ms"}}},
        "escalation": [
            {"audience": "user", "may": ["approve a new price"]},
            {"audience": "operator", "may": ["resolve a lost booking"]},
        ],
    }
    page.locator("#escalation-fields").scroll_into_view_if_needed()
    screenshot(page, "forms-policy-escalation")


def test_a_compensation_ladder_and_a_per_action_backoff_are_set_through_the_forms(hand):
    page = hand.page
    expect(page.locator("details.adders")).to_have_attribute("open", "")  # an empty chain opens it
    add_action(hand, "reserve", "commit")
    add_action(hand, "cancel", "compensate")
    add_action(hand, "release", "compensate")
    form = hand.select("actions", "reserve")
    rung = form.locator(".ladder-row").first
    hand.type(rung.get_by_label("When"), "state == 'held'")
    hand.choose(rung.get_by_label("Action"), "cancel")
    hand.save(form.get_by_role("button", name="Save"))
    form = page.locator("#element-fields")
    hand.type(form.locator('[name="compensation__ladder-1-else"]'), "escalate(operator)")
    hand.choose(form.locator('[name="compensation__chain-0-step"]'), "release")
    hand.save(form.get_by_role("button", name="Save"))
    assert element("hotel", "actions", "reserve")["compensation"] == {
        "chain": ["release"],
        "ladder": [{"when": "state == 'held'", "action": "cancel"}, {"else": "escalate(operator)"}],
    }
    page.locator("#compensation-fields").scroll_into_view_if_needed()
    screenshot(page, "forms-compensation-ladder")
    hand.click(page.locator("nav.tabs a", has_text="Policy"))
    adder = page.locator("#per-action-form")
    hand.choose(adder.get_by_label("Action"), "reserve")
    hand.type(adder.get_by_label("Attempts"), "2")
    hand.save(adder.get_by_role("button", name="Add entry"))
    budgets = page.locator("#policy-form")
    hand.type(budgets.locator('[name="per_step__reserve__backoff__base"]'), "1s")
    hand.save(budgets.get_by_role("button", name="Save budgets"))
    assert head("hotel")["policy"]["per_step"] == {
        "reserve": {"attempts": 2, "backoff": {"base": "1s"}}
    }
    page.locator("#per-action-fields").scroll_into_view_if_needed()
    screenshot(page, "forms-per-action-backoff")
