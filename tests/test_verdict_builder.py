"""One verdict builder for the row adder and the row editor: parts in, a verdict out."""

from __future__ import annotations

from django.http import QueryDict

from chains.core import formats
from chains.views.element_forms import BUILDER_PARTS, VerdictRowForm

SPEC = formats.load(
    """
id: hotel
gates:
  - {id: price_consent, audience: user, outcomes: {accept: ok}}
actions:
  - {id: search, effect: read, input: {intent: {dates: date}}}
  - {id: quote, effect: mint}
verdict_table:
  - {id: R1, signal: [code:SOLD_OUT], verdict: "dead_end(reason: sold_out, permanent: false)"}
  - {id: R2, signal: [http:503], verdict: "escalate(audience: billing)"}
""",
    format="yaml",
).chains[0]


def form(row: str, **posted: str) -> VerdictRowForm:
    stored = formats.to_document(SPEC)["verdict_table"][int(row[1]) - 1]
    if not posted:
        return VerdictRowForm(SPEC, stored, row)
    data = QueryDict(mutable=True)
    data.update({"id": row, "signal": ", ".join(stored["signal"]), **posted})
    bound = VerdictRowForm(SPEC, stored, row, data)
    assert bound.is_valid(), bound.errors
    return bound


def test_the_row_editor_shows_the_stored_verdict_in_the_builder_s_boxes():
    initial = form("R1").initial
    assert initial["verdict_type"] == "dead_end"
    assert initial["verdict_reason"] == "sold_out"
    assert initial["verdict_permanent"] == "false"


def test_a_verdict_built_in_the_row_editor_is_the_row_s_new_verdict():
    saved = form("R1", verdict_type="rewind", verdict_to="quote")
    assert saved.args()["fields"]["verdict"] == "rewind(to: quote)"


def test_an_argument_the_builder_does_not_show_stays_while_the_type_does():
    saved = form("R2", verdict_type="escalate")
    assert saved.args()["fields"]["verdict"] == "escalate(billing)"


def test_a_builder_part_emptied_is_removed_from_the_verdict():
    saved = form("R1", verdict_type="dead_end", verdict_reason="sold_out", verdict_permanent="")
    assert saved.args()["fields"]["verdict"] == "dead_end(reason: sold_out)"


def test_the_builder_shows_a_box_for_every_part_it_builds():
    assert {f"verdict_{p}" for p in BUILDER_PARTS} <= set(form("R1").fields)
