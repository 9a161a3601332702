"""A bare verdict name whose comment gives the whole expression is read as that expression."""

from __future__ import annotations

import doctest

from chains.core import formats
from chains.core.formats import arrows
from chains.core.formats.markdown import load_markdown


def compile_doc(body: str) -> str:
    return f"# Chain\n\n```yaml\n{body}```\n"


CARD = compile_doc(
    "actions:\n"
    "  - id: search\n"
    "    effect: read\n"
    "    preconditions:\n"
    '      - when: "results expired"\n'
    "        verdict: rewind    # → rewind(to: search) — the results went stale\n"
    "  - id: confirm\n"
    "    effect: commit\n"
    "    output:\n"
    "      empty:\n"
    "        valid: true\n"
    '        detect: "signal is http:402 code:card_declined"\n'
    "        route: gate               # → gate(new_instrument); a decline is an\n"
    "                                  # answer, not an error\n"
    "    idempotency: {mode: keyed}\n"
    "gates:\n"
    "  new_instrument:\n"
    "    audience: user\n"
    "    outcomes: {retry: ok}\n"
    "    timeout: {after: 1h, verdict: dead_end}   # → escalate(operator): unwind stuck\n"
)


def actions(text: str):
    result = load_markdown(text)
    (chain,) = result.chains
    return {a.id: a for a in chain.actions}, chain, result.problems


def test_a_bare_gate_with_the_full_gate_in_its_comment_is_read_as_that_gate():
    by_id, _, problems = actions(CARD)
    assert str(by_id["confirm"].output.empty.route) == "gate(new_instrument)"
    assert not [p for p in problems if p.severity == "error"]


def test_the_completed_verdict_is_reported_as_an_info_at_its_line():
    _, _, problems = actions(CARD)
    (info,) = [p for p in problems if "gate(new_instrument)" in p.message]
    assert info.severity == "info"
    assert "'gate'" in info.message
    assert info.line == next(n for n, t in enumerate(CARD.split("\n"), 1) if "route: gate" in t)


def test_a_bare_rewind_with_its_target_in_the_comment_is_read_with_it():
    by_id, _, problems = actions(CARD)
    assert str(by_id["search"].preconditions[0].verdict) == "rewind(to: search)"
    assert any("rewind(to: search)" in p.message and p.severity == "info" for p in problems)


def test_a_readable_verdict_keeps_its_value_whatever_its_comment_proposes():
    """`dead_end  # → escalate(operator): …` is a remark on the choice, not its spelling."""
    _, chain, problems = actions(CARD)
    (gate,) = chain.gates
    assert str(gate.timeout.verdict) == "dead_end"
    assert not [p for p in problems if "escalate" in p.message]


def test_a_comment_naming_another_verdict_does_not_complete_a_bare_name():
    text = CARD.replace("# → gate(new_instrument)", "# → repair(to: confirm, fields: [card])")
    by_id, _, problems = actions(text)
    assert by_id["confirm"].output.empty.route is None
    assert any(p.severity == "error" and p.path.endswith("output.empty.route") for p in problems)


def test_a_bare_gate_without_a_comment_is_still_an_error_and_dropped():
    text = CARD.replace("# → gate(new_instrument); a decline is an", "# a decline is an")
    by_id, _, problems = actions(text)
    assert by_id["confirm"].output.empty.route is None
    assert any("gate needs a gate id" in p.message for p in problems)


def test_a_yaml_chain_file_reads_the_comment_arrow_too():
    text = (
        "id: c\n"
        "actions:\n"
        "  - id: confirm\n"
        "    effect: read\n"
        "    output:\n"
        "      empty: {valid: true, detect: declined, route: gate}  # -> gate(new_card)\n"
        "gates:\n"
        "  - {id: new_card, audience: user, outcomes: {retry: ok}}\n"
    )
    result = formats.load(text, format="yaml")
    (chain,) = result.chains
    assert str(chain.actions[0].output.empty.route) == "gate(new_card)"
    assert any(p.severity == "info" and "gate(new_card)" in p.message for p in result.problems)


def test_the_module_examples_hold():
    assert doctest.testmod(arrows).failed == 0
