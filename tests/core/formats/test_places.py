"""Where a lint finding's element stands in its document (``formats.element_line``)."""

from __future__ import annotations

import doctest
import json

from chains.core import formats
from chains.core.formats import places

YAML = """\
id: c
actions:
  - id: search
    effect: read
  - id: book
    effect: commit
    idempotency: {mode: none}
verdict_table:
  - {id: D1, signal: [timeout], verdict: retry}
"""


def test_the_examples_in_the_module_hold():
    assert doctest.testmod(places).failed == 0


def test_a_bracketed_id_picks_the_element_with_that_id():
    assert formats.element_line(YAML, "actions[book].idempotency.mode") == 7
    assert formats.element_line(YAML, "verdict_table[D1]") == 9


def test_an_element_that_is_not_there_is_placed_at_the_nearest_value_above_it():
    assert formats.element_line(YAML, "actions[cancel].effect") == 2


def test_a_json_document_is_placed_the_same_way():
    text = json.dumps({"id": "c", "actions": [{"id": "a"}, {"id": "book"}]}, indent=2)
    assert text.splitlines()[formats.element_line(text, "actions[book]") - 1].strip() == "{"


def test_a_markdown_compile_places_an_element_where_its_id_is_defined():
    text = "# Booking\nbook is the commit.\n```yaml\nactions:\n  - id: book   # commit\n```\n"
    assert formats.element_line(text, "actions[book].effect", "md") == 5


def test_a_document_that_does_not_parse_places_nothing():
    assert formats.element_line("a: [unclosed\n", "actions[book]") is None
