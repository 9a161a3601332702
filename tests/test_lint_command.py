"""``manage.py chain lint`` checks a file or a stored chain and exits by status."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from chains.core import formats
from chains.models import Chain

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# An unkeyed commit whose timeouts are retried: the double-booking bug.
RETRYING = """\
id: retrying
handles:
  - {id: quote, minted_by: price, staleness: {detect: [http:410], refresh: price}}
  - {id: booking, minted_by: book, derived_from: [quote], staleness: {ttl_hint: n/a}}
actions:
  - {id: price, effect: mint, output: {handles: [quote]}, idempotency: {mode: natural}}
  - id: book
    effect: commit
    input: {handles: [quote]}
    output: {handles: [booking]}
    idempotency: {mode: none}
    confirmation: {probe: find, signal: "a booking with our reference exists"}
    compensation: {action: none, ordering_note: "consent gate before the commit"}
  - {id: find, effect: read, idempotency: {mode: natural}}
verdict_table:
  - {id: D1, signal: [timeout], scope: {steps: [book]}, verdict: retry}
policy:
  per_chain: {max_rewinds: 3, max_repairs: 2, wall_clock: 10m}
"""

# The only probe looks the booking up by the locator the lost response carried.
BLOCKED = RETRYING.replace(
    "{id: D1, signal: [timeout], scope: {steps: [book]}, verdict: retry}",
    "{id: D1, signal: [timeout], scope: {steps: [book]}, verdict: reconcile}",
).replace(
    "{id: find, effect: read, idempotency: {mode: natural}}",
    "{id: find, effect: read, input: {handles: [booking]}, idempotency: {mode: natural}}",
)


def lint(*args: str) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("chain", "lint", *args, stdout=out)
    except SystemExit as exc:
        return int(exc.code), out.getvalue()
    return 0, out.getvalue()


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


UNSAFE = "unsafe-retry-booking.yaml"  # the explorer's known-bad example, unsafe on purpose


@pytest.mark.parametrize(
    "name", sorted(p.name for p in FIXTURES.glob("*.yaml") if p.name != UNSAFE)
)
def test_every_safe_fixture_lints_valid_or_with_warnings(name):
    code, out = lint(str(FIXTURES / name))
    assert code == 0, out


def test_the_deliberately_unsafe_fixture_is_invalid():
    code, out = lint(str(FIXTURES / UNSAFE))
    assert code == 1
    assert "table.no-side-effect-on-ambiguous-signal" in out


def test_an_unkeyed_commit_that_retries_timeouts_is_invalid(tmp_path):
    code, out = lint(write(tmp_path, "retrying.yaml", RETRYING))
    assert code == 1
    assert "chain retrying: INVALID" in out


def test_a_probe_that_needs_the_lost_output_is_blocked(tmp_path):
    code, out = lint(write(tmp_path, "blocked.yaml", BLOCKED))
    assert code == 2
    assert "chain retrying: BLOCKED" in out


def test_json_report_has_status_findings_unknowns_and_cascades(tmp_path):
    code, out = lint(write(tmp_path, "retrying.yaml", RETRYING), "--json")
    report = json.loads(out)
    assert code == 1
    assert report["status"] == "INVALID"
    assert set(report) >= {"status", "findings", "unknowns", "cascades"}
    assert {"rule", "severity", "element", "message", "hint"} <= set(report["findings"][0])
    # booking is the landed commit's output: a fact, never invalidated (I5).
    assert report["cascades"] == {"quote": [], "booking": []}


def test_a_stored_chain_is_linted_by_its_key(tmp_path):
    doc = formats.load(RETRYING, format="yaml").chains[0]
    Chain.objects.store(formats.to_document(doc))
    code, out = lint("retrying")
    assert (code, "chain retrying: INVALID" in out) == (1, True)


def test_a_compile_document_lints_every_chain_and_reports_the_worst_status():
    code, out = lint(str(FIXTURES / "hotel-compile.md"), "--json")
    report = json.loads(out)
    assert [c["chain"] for c in report["chains"]] == ["hotel_stay_booking", "hotel_stay_modify"]
    worst = max(
        (c["status"] for c in report["chains"]),
        key=["VALID", "WARNINGS", "INVALID", "BLOCKED"].index,
    )
    assert report["status"] == worst


def test_a_file_without_chains_is_invalid_and_says_why(tmp_path):
    code, out = lint(write(tmp_path, "broken.yaml", "id: [unclosed\n"))
    assert code == 1
    assert "import: line" in out


def test_an_unknown_target_is_an_error():
    with pytest.raises(CommandError, match="neither a file nor a stored chain"):
        lint("no-such-chain")
