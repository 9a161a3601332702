"""The pseudo-YAML rewrite: quote what YAML cannot read, keep every line."""

import pytest
import yaml

from chains.core.formats.pseudo_yaml import normalize, rewrite


def load(text):
    return yaml.safe_load(normalize(text))


def test_unquoted_verdict_in_a_flow_mapping_becomes_a_string():
    text = "empty: {valid: true, route: repair(to: search, fields: [dates, cabin])}"
    assert load(text)["empty"]["route"] == "repair(to: search, fields: [dates, cabin])"


def test_verdict_in_a_flow_list_item_becomes_a_string():
    text = 'pre:\n  - {when: "a > b", verdict: gate(consent), reason: "drift"}\n'
    assert load(text)["pre"][0]["verdict"] == "gate(consent)"


def test_enum_type_in_a_flow_mapping_becomes_a_string():
    assert load("cabin: {type: enum[economy, business], required: false}")["cabin"] == {
        "type": "enum[economy, business]",
        "required": False,
    }


def test_optional_type_marker_in_a_flow_mapping_becomes_a_string():
    assert load("payload: {old: money?, new: money?}")["payload"] == {
        "old": "money?",
        "new": "money?",
    }


def test_verdict_spanning_lines_keeps_the_line_count():
    text = "e: {route: repair(to: s,\n        fields: [a, b])}\nnext: 1\n"
    rewritten = normalize(text)
    assert rewritten.count("\n") == text.count("\n")
    assert yaml.safe_load(rewritten)["e"]["route"] == "repair(to: s, fields: [a, b])"


def test_comment_inside_a_quoted_verdict_is_blanked():
    text = "e: {route: repair(to: s,   # why\n        fields: [a])}\n"
    assert load(text)["e"]["route"] == "repair(to: s, fields: [a])"


def test_block_verdict_value_with_arguments_becomes_a_string():
    assert load("verdict: rewind(to: quote)   # comment\n") == {"verdict": "rewind(to: quote)"}


def test_block_value_holding_key_value_pairs_is_quoted_and_listed():
    text, fixes = rewrite("idempotency:\n  mode: keyed, key_scope: run\n")
    assert yaml.safe_load(text)["idempotency"]["mode"] == "keyed, key_scope: run"
    assert [(f.line, f.text) for f in fixes] == [(2, "keyed, key_scope: run")]


@pytest.mark.parametrize(
    "text",
    [
        "a: {b: c, d: [1, 2]}\n",
        "staleness: {detect: [http:410, code:X], ttl_hint: ~5m}\n",
        "s: |\n  text: (with) colons\n",
        'w: "already (quoted): fine"\n',
        '? ""\n: - -5\n',
        'm:\n  ? "a\\nb"\n  : [1, 2]\n',
    ],
)
def test_valid_yaml_passes_through_unchanged(text):
    assert normalize(text) == text
